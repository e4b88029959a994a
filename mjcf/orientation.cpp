// stiffgrad — MJCF loader: orientation forms (MuJoCo XML reference, "Frame orientations").
#include "mjcf/orientation.hpp"

#include <cmath>

namespace stiffgrad::mjcf {
namespace {

constexpr double kPi = 3.14159265358979323846;

double norm3(const double v[3]) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

void cross3(const double a[3], const double b[3], double out[3]) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

// Below this a direction is treated as zero (MuJoCo uses mjMINVAL = 1e-15 for such checks).
constexpr double kMinNorm = 1e-15;

}  // namespace

double AngleSettings::to_radians(double a) const { return degree ? a * kPi / 180.0 : a; }

bool quat_normalize(double q[4]) {
  double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(n > kMinNorm) || !std::isfinite(n)) return false;
  for (int i = 0; i < 4; ++i) q[i] /= n;
  return true;
}

void quat_mul(const double a[4], const double b[4], double out[4]) {
  double r[4] = {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                 a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                 a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                 a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
  for (int i = 0; i < 4; ++i) out[i] = r[i];
}

void quat_to_mat(const double q[4], double m[9]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  m[0] = w * w + x * x - y * y - z * z;
  m[1] = 2 * (x * y - w * z);
  m[2] = 2 * (x * z + w * y);
  m[3] = 2 * (x * y + w * z);
  m[4] = w * w - x * x + y * y - z * z;
  m[5] = 2 * (y * z - w * x);
  m[6] = 2 * (x * z - w * y);
  m[7] = 2 * (y * z + w * x);
  m[8] = w * w - x * x - y * y + z * z;
}

// Shepperd's method: pick the largest of w, x, y, z to divide by, for stability.
void mat_to_quat(const double m[9], double q[4]) {
  const double tr = m[0] + m[4] + m[8];
  if (tr > 0) {
    q[0] = 0.5 * std::sqrt(1 + tr);
    q[1] = 0.25 * (m[7] - m[5]) / q[0];
    q[2] = 0.25 * (m[2] - m[6]) / q[0];
    q[3] = 0.25 * (m[3] - m[1]) / q[0];
  } else if (m[0] > m[4] && m[0] > m[8]) {
    q[1] = 0.5 * std::sqrt(1 + m[0] - m[4] - m[8]);
    q[0] = 0.25 * (m[7] - m[5]) / q[1];
    q[2] = 0.25 * (m[1] + m[3]) / q[1];
    q[3] = 0.25 * (m[2] + m[6]) / q[1];
  } else if (m[4] > m[8]) {
    q[2] = 0.5 * std::sqrt(1 - m[0] + m[4] - m[8]);
    q[0] = 0.25 * (m[2] - m[6]) / q[2];
    q[1] = 0.25 * (m[1] + m[3]) / q[2];
    q[3] = 0.25 * (m[5] + m[7]) / q[2];
  } else {
    q[3] = 0.5 * std::sqrt(1 - m[0] - m[4] + m[8]);
    q[0] = 0.25 * (m[3] - m[1]) / q[3];
    q[1] = 0.25 * (m[2] + m[6]) / q[3];
    q[2] = 0.25 * (m[5] + m[7]) / q[3];
  }
  quat_normalize(q);
}

// The rotation about axis k = cross(z, v)/|cross(z, v)| by the angle between z and v. When v
// is parallel to z the axis is taken as x, so zaxis="0 0 -1" is a half turn about x (as MuJoCo).
bool z_to_quat(const double vec[3], double q[4]) {
  if (!(norm3(vec) > kMinNorm)) return false;
  const double z[3] = {0, 0, 1};
  double axis[3];
  cross3(z, vec, axis);
  const double s = norm3(axis);
  if (s < 1e-10) {
    axis[0] = 1;
    axis[1] = axis[2] = 0;
  } else {
    for (double& a : axis) a /= s;
  }
  const double ang = std::atan2(s, vec[2]);
  q[0] = std::cos(ang / 2);
  for (int i = 0; i < 3; ++i) q[i + 1] = axis[i] * std::sin(ang / 2);
  return true;
}

bool read_orientation(const Elem& e, const AngleSettings& angles, double q[4]) {
  int forms = 0;
  for (const char* a : {"quat", "axisangle", "euler", "xyaxes", "zaxis"})
    if (e.has(a)) ++forms;
  if (forms == 0) return false;
  if (forms > 1)
    e.fail("<" + std::string(e.tag()) +
           "> has more than one orientation (quat, axisangle, euler, xyaxes, zaxis)");

  double v[6] = {0, 0, 0, 0, 0, 0};
  if (e.exact("quat", v, 4)) {
    for (int i = 0; i < 4; ++i) q[i] = v[i];
    if (!quat_normalize(q)) e.fail("zero quaternion in 'quat'");
  } else if (e.exact("axisangle", v, 4)) {
    const double n = norm3(v);
    if (!(n > kMinNorm)) e.fail("zero axis in 'axisangle'");
    const double ang = angles.to_radians(v[3]);
    q[0] = std::cos(ang / 2);
    for (int i = 0; i < 3; ++i) q[i + 1] = v[i] / n * std::sin(ang / 2);
    quat_normalize(q);
  } else if (e.exact("euler", v, 3)) {
    // Each elementary rotation r is composed as q = q*r for a lowercase (intrinsic, rotating)
    // axis and q = r*q for an uppercase (extrinsic, fixed) axis: MuJoCo's eulerseq semantics.
    double acc[4] = {1, 0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      const char c = angles.eulerseq[i];
      const double ang = angles.to_radians(v[i]);
      double r[4] = {std::cos(ang / 2), 0, 0, 0};
      const int axis = (c == 'x' || c == 'X') ? 0 : (c == 'y' || c == 'Y') ? 1 : 2;
      r[axis + 1] = std::sin(ang / 2);
      if (c >= 'a' && c <= 'z')
        quat_mul(acc, r, acc);
      else
        quat_mul(r, acc, acc);
    }
    for (int i = 0; i < 4; ++i) q[i] = acc[i];
    quat_normalize(q);
  } else if (e.exact("xyaxes", v, 6)) {
    // x is normalized, y is made orthogonal to x and normalized, z = x cross y.
    double x[3] = {v[0], v[1], v[2]}, y[3] = {v[3], v[4], v[5]}, z[3];
    const double nx = norm3(x);
    if (!(nx > kMinNorm)) e.fail("zero x axis in 'xyaxes'");
    for (double& c : x) c /= nx;
    const double d = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    for (int i = 0; i < 3; ++i) y[i] -= d * x[i];
    const double ny = norm3(y);
    if (!(ny > kMinNorm)) e.fail("y axis in 'xyaxes' is zero or parallel to x");
    for (double& c : y) c /= ny;
    cross3(x, y, z);
    const double m[9] = {x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]};
    mat_to_quat(m, q);
  } else if (e.exact("zaxis", v, 3)) {
    if (!z_to_quat(v, q)) e.fail("zero vector in 'zaxis'");
  }
  return true;
}

}  // namespace stiffgrad::mjcf
