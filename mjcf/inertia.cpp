// stiffgrad — MJCF loader: geom mass properties and body inertia.
//
// Formulas are those of MuJoCo 2.2.2's compiler (mjCGeom::SetInertia), checked empirically
// against mj_loadXML for each primitive:
//   sphere r:        V = 4/3 pi r^3,        I = 2/5 m r^2
//   box a,b,c:       V = 8abc,              Ixx = m/3 (b^2 + c^2), ...
//   ellipsoid a,b,c: V = 4/3 pi abc,        Ixx = m/5 (b^2 + c^2), ...
//   cylinder r,h/2:  V = pi r^2 h,          Ixx = m (3r^2 + h^2)/12, Izz = m r^2/2
//   capsule r,h/2:   cylinder (mass mc) plus two hemispheres (mass ms), with the hemisphere
//                    term of MuJoCo: Ixx += ms (2r^2/5 + h^2/4 + 3hr/8), Izz += ms 2r^2/5.
#include "mjcf/inertia.hpp"

#include <cmath>

#include <Eigen/Dense>

namespace stiffgrad::mjcf {
namespace {
constexpr double kPi = 3.14159265358979323846;
// MuJoCo's mjMINVAL: the smallest mass it accepts when dividing by a total mass.
constexpr double kMinVal = 1e-15;
}  // namespace

GeomMass geom_mass(GeomType type, const double size[3], double density, bool has_mass, double mass) {
  GeomMass g;
  double volume = 0;
  const double r = size[0];
  switch (type) {
    case GeomType::Sphere: volume = 4.0 / 3.0 * kPi * r * r * r; break;
    case GeomType::Capsule: {
      const double h = 2 * size[1];
      volume = kPi * r * r * h + 4.0 / 3.0 * kPi * r * r * r;
      break;
    }
    case GeomType::Cylinder: volume = kPi * r * r * 2 * size[1]; break;
    case GeomType::Ellipsoid: volume = 4.0 / 3.0 * kPi * size[0] * size[1] * size[2]; break;
    case GeomType::Box: volume = 8.0 * size[0] * size[1] * size[2]; break;
    default: return g;  // planes (static only) and dropped meshes carry no mass
  }
  const double rho = has_mass ? (volume > 0 ? mass / volume : 0.0) : density;
  g.mass = has_mass ? mass : rho * volume;
  const double m = g.mass;
  switch (type) {
    case GeomType::Sphere:
      g.inertia[0] = g.inertia[1] = g.inertia[2] = 2.0 / 5.0 * m * r * r;
      break;
    case GeomType::Capsule: {
      const double h = 2 * size[1];
      const double mc = rho * kPi * r * r * h;             // cylinder part
      const double ms = rho * 4.0 / 3.0 * kPi * r * r * r; // both hemispheres
      g.inertia[0] = g.inertia[1] = mc * (3 * r * r + h * h) / 12.0 +
                                    ms * (2 * r * r / 5.0 + h * h / 4.0 + 3 * h * r / 8.0);
      g.inertia[2] = mc * r * r / 2.0 + ms * 2 * r * r / 5.0;
      break;
    }
    case GeomType::Cylinder: {
      const double h = 2 * size[1];
      g.inertia[0] = g.inertia[1] = m * (3 * r * r + h * h) / 12.0;
      g.inertia[2] = m * r * r / 2.0;
      break;
    }
    case GeomType::Ellipsoid: {
      const double a = size[0], b = size[1], c = size[2];
      g.inertia[0] = m * (b * b + c * c) / 5.0;
      g.inertia[1] = m * (a * a + c * c) / 5.0;
      g.inertia[2] = m * (a * a + b * b) / 5.0;
      break;
    }
    case GeomType::Box: {
      const double a = size[0], b = size[1], c = size[2];
      g.inertia[0] = m * (b * b + c * c) / 3.0;
      g.inertia[1] = m * (a * a + c * c) / 3.0;
      g.inertia[2] = m * (a * a + b * b) / 3.0;
      break;
    }
    default: break;
  }
  return g;
}

bool diagonalize(const double full[6], double moments[3], double quat[4]) {
  Eigen::Matrix3d I;
  I << full[0], full[3], full[4],
       full[3], full[1], full[5],
       full[4], full[5], full[2];
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(I);
  if (es.info() != Eigen::Success) return false;
  // Eigen sorts ascending; MuJoCo reports principal moments in descending order.
  Eigen::Matrix3d R;
  for (int k = 0; k < 3; ++k) {
    moments[k] = es.eigenvalues()(2 - k);
    R.col(k) = es.eigenvectors().col(2 - k);
  }
  if (R.determinant() < 0) R.col(2) = -R.col(2);  // a proper rotation
  const double scale = std::max(1.0, std::abs(moments[0]));
  if (moments[2] < -1e-14 * scale) return false;
  for (int k = 0; k < 3; ++k) moments[k] = std::max(moments[k], 0.0);
  double m[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m[3 * r + c] = R(r, c);
  mat_to_quat(m, quat);
  return true;
}

bool satisfies_triangle(const double m[3], double tol) {
  const double slack = tol * (m[0] + m[1] + m[2]);
  return m[0] + m[1] + slack >= m[2] && m[1] + m[2] + slack >= m[0] &&
         m[0] + m[2] + slack >= m[1];
}

BodyInertia combine_geoms(const std::vector<GeomMass>& geoms, const Elem& where) {
  BodyInertia b;
  if (geoms.empty()) return b;
  if (geoms.size() == 1) {
    const GeomMass& g = geoms[0];
    b.mass = g.mass;
    for (int i = 0; i < 3; ++i) b.ipos[i] = g.pos[i], b.inertia[i] = g.inertia[i];
    for (int i = 0; i < 4; ++i) b.iquat[i] = g.quat[i];
    return b;
  }
  double com[3] = {0, 0, 0};
  for (const GeomMass& g : geoms) {
    b.mass += g.mass;
    for (int i = 0; i < 3; ++i) com[i] += g.mass * g.pos[i];
  }
  if (b.mass < kMinVal) where.fail("body mass is too small to compute the centre of mass of its geoms");
  for (int i = 0; i < 3; ++i) b.ipos[i] = com[i] / b.mass;

  // Sum R diag(I) R^T + m (|d|^2 1 - d d^T) about the combined centre of mass.
  double full[6] = {0, 0, 0, 0, 0, 0};  // xx yy zz xy xz yz
  for (const GeomMass& g : geoms) {
    double R[9];
    quat_to_mat(g.quat, R);
    double Ig[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        Ig[r][c] = R[3 * r] * g.inertia[0] * R[3 * c] + R[3 * r + 1] * g.inertia[1] * R[3 * c + 1] +
                   R[3 * r + 2] * g.inertia[2] * R[3 * c + 2];
    const double d[3] = {g.pos[0] - b.ipos[0], g.pos[1] - b.ipos[1], g.pos[2] - b.ipos[2]};
    const double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    full[0] += Ig[0][0] + g.mass * (dd - d[0] * d[0]);
    full[1] += Ig[1][1] + g.mass * (dd - d[1] * d[1]);
    full[2] += Ig[2][2] + g.mass * (dd - d[2] * d[2]);
    full[3] += Ig[0][1] - g.mass * d[0] * d[1];
    full[4] += Ig[0][2] - g.mass * d[0] * d[2];
    full[5] += Ig[1][2] - g.mass * d[1] * d[2];
  }
  if (!diagonalize(full, b.inertia, b.iquat))
    where.fail("could not find the principal axes of the combined geom inertia");
  return b;
}

}  // namespace stiffgrad::mjcf
