// Narrow phase, analytic pairs: plane-{sphere, capsule, cylinder, box, ellipsoid}, sphere-sphere,
// sphere-capsule, capsule-capsule. Each routine reproduces the arithmetic of MuJoCo 2.2.2's
// engine_collision_primitive.c (docs/references/mujoco-2.2.2-constraints.md §2), so that counts,
// dist, pos and frames agree with libmujoco to rounding.
//
// Conventions (all routines): g1, g2 are in MuJoCo's order (type(g1) <= type(g2)); the normal
// frame[0..2] points from g1 to g2; only contacts with dist <= margin are written; the return
// value is the number written to `out` (room for kMaxContactsPerPair). frame[3..8] are zero
// except for plane-capsule, which prefills frame[3..5] with the capsule axis;
// make_contact_frame (kernels/collision/collision.hpp) completes the frame as mju_makeFrame does.
#pragma once

#include "kernels/base/config.hpp"
#include "kernels/collision/contact_types.hpp"
#include "kernels/base/math3.hpp"

namespace stiffgrad::kern {

namespace coll {

// r = M^T a (MuJoCo's mju_rotVecMatT), M row-major 3x3
template <class Real> SG_HD SG_INLINE void mat_t_vec3(Real r[3], const Real M[9], const Real a[3]) {
  r[0] = M[0] * a[0] + M[3] * a[1] + M[6] * a[2];
  r[1] = M[1] * a[0] + M[4] * a[1] + M[7] * a[2];
  r[2] = M[2] * a[0] + M[5] * a[1] + M[8] * a[2];
}
template <class Real> SG_HD SG_INLINE void scl3(Real r[3], const Real a[3], Real s) {
  r[0] = a[0] * s; r[1] = a[1] * s; r[2] = a[2] * s;
}
// r += a * s (mju_addToScl3)
template <class Real> SG_HD SG_INLINE void add_to_scl3(Real r[3], const Real a[3], Real s) {
  r[0] += a[0] * s; r[1] += a[1] * s; r[2] += a[2] * s;
}
template <class Real> SG_HD SG_INLINE void zero3(Real r[3]) { r[0] = Real(0); r[1] = Real(0); r[2] = Real(0); }
// Column k of a rotation (the geom's local axis k in the world frame).
template <class Real> SG_HD SG_INLINE void mat_col(Real r[3], const Real M[9], int k) {
  r[0] = M[k]; r[1] = M[3 + k]; r[2] = M[6 + k];
}
// |a - b| (mju_dist3)
template <class Real> SG_HD SG_INLINE Real dist3(const Real a[3], const Real b[3]) {
  const Real d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return sg_sqrt(dot3(d, d));
}
// A contact with the normal set and the rest of the frame cleared (MuJoCo zeroes frame+3 and
// leaves the third row to mju_makeFrame).
template <class Real> SG_HD SG_INLINE void set_normal(Contact<Real>& c, const Real n[3]) {
  for (int k = 0; k < 9; ++k) c.frame[k] = Real(0);
  c.frame[0] = n[0]; c.frame[1] = n[1]; c.frame[2] = n[2];
}

// Plane (normal = local z of g1) against a sphere of radius r at c (MuJoCo's _PlaneSphere,
// also used by plane-capsule at the two end centres). pos is half the distance back from the
// sphere's deepest point.
template <class Real>
SG_HD SG_INLINE int plane_sphere_at(const Real ppos[3], const Real pmat[9], const Real c[3],
                                    Real r, Real margin, Contact<Real>* out) {
  Real n[3], tmp[3];
  mat_col(n, pmat, 2);
  sub3(tmp, c, ppos);
  const Real cdist = dot3(tmp, n);
  if (cdist > margin + r) return 0;
  set_normal(*out, n);
  out->dist = cdist - r;
  scl3(tmp, n, -out->dist / Real(2) - r);
  add3(out->pos, c, tmp);
  return 1;
}

// Two spheres (centres c1, c2, radii r1, r2; mat1/mat2 only for coincident centres): MuJoCo's
// _SphereSphere, the core of sphere-capsule and capsule-capsule.
template <class Real>
SG_HD SG_INLINE int sphere_sphere_at(const Real c1[3], const Real mat1[9], Real r1,
                                     const Real c2[3], const Real mat2[9], Real r2, Real margin,
                                     Contact<Real>* out) {
  const Real cdist = dist3(c1, c2);
  if (cdist > margin + r1 + r2) return 0;
  Real n[3];
  sub3(n, c2, c1);
  const Real len = normalize3(n);
  // coincident centres: normal = z1 x z2, or (1, 0, 0) when the z axes are parallel
  if (len < min_norm<Real>()) {
    Real z1[3], z2[3];
    mat_col(z1, mat1, 2);
    mat_col(z2, mat2, 2);
    cross3(n, z1, z2);
    normalize3(n);
  }
  set_normal(*out, n);
  out->dist = cdist - r1 - r2;
  scl3(out->pos, n, r1 + out->dist / Real(2));
  out->pos[0] += c1[0]; out->pos[1] += c1[1]; out->pos[2] += c1[2];
  return 1;
}

template <class Real> SG_HD SG_INLINE Real clamp_unit(Real x) {
  return x > Real(1) ? Real(1) : (x < Real(-1) ? Real(-1) : x);
}

}  // namespace coll

// plane : sphere (facts §2: dist = n.(c - p) - r, pos = c - n (r + dist/2))
template <class Real>
SG_HD int collide_plane_sphere(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                               Contact<Real>* out) {
  return coll::plane_sphere_at(g1.pos, g1.mat, g2.pos, g2.size[0], margin, out);
}

// plane : capsule: sphere tests at the end centres (+axis end first), t1 prefilled with the
// capsule axis (facts §1 "Contact frame").
template <class Real>
SG_HD int collide_plane_capsule(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                Contact<Real>* out) {
  Real axis[3], seg[3], c[3];
  coll::mat_col(axis, g2.mat, 2);
  coll::scl3(seg, axis, g2.size[1]);
  add3(c, g2.pos, seg);
  const int n1 = coll::plane_sphere_at(g1.pos, g1.mat, c, g2.size[0], margin, out);
  sub3(c, g2.pos, seg);
  const int n2 = coll::plane_sphere_at(g1.pos, g1.mat, c, g2.size[0], margin, out + n1);
  for (int i = 0; i < n1 + n2; ++i) copy3(out[i].frame + 3, axis);
  return n1 + n2;
}

// plane : cylinder (mjc_PlaneCylinder): the deepest rim point of the disc nearer the plane,
// the same rim point on the far disc, then two near-disc rim points at +-120 degrees.
template <class Real>
SG_HD int collide_plane_cylinder(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                 Contact<Real>* out) {
  Real normal[3], axis[3], vec[3];
  coll::mat_col(normal, g1.mat, 2);
  coll::mat_col(axis, g2.mat, 2);
  const Real radius = g2.size[0], half = g2.size[1];

  // make the axis point towards the plane
  Real prjaxis = dot3(normal, axis);
  if (prjaxis > Real(0)) {
    axis[0] = -axis[0]; axis[1] = -axis[1]; axis[2] = -axis[2];
    prjaxis = -prjaxis;
  }
  sub3(vec, g2.pos, g1.pos);
  const Real dist0 = dot3(vec, normal);

  // rim direction: -normal with its axis component removed, scaled to the radius
  coll::scl3(vec, axis, prjaxis);
  vec[0] -= normal[0]; vec[1] -= normal[1]; vec[2] -= normal[2];
  const Real len = sg_sqrt(dot3(vec, vec));
  if (len >= min_norm<Real>()) {
    const Real scl = radius / len;
    vec[0] *= scl; vec[1] *= scl; vec[2] *= scl;
  } else {  // disc parallel to the plane: the local x axis
    vec[0] = g2.mat[0] * radius; vec[1] = g2.mat[3] * radius; vec[2] = g2.mat[6] * radius;
  }
  const Real prjvec = dot3(vec, normal);
  coll::scl3(axis, axis, half);
  prjaxis = prjaxis * half;

  int cnt = 0;
  auto emit = [&](Real dist, const Real p[3]) {
    Contact<Real>& c = out[cnt++];
    coll::set_normal(c, normal);
    c.dist = dist;
    copy3(c.pos, p);
    coll::add_to_scl3(c.pos, normal, -dist * Real(0.5));
  };
  Real p[3];
  const Real d1 = dist0 + prjaxis + prjvec;
  if (!(d1 <= margin)) return 0;  // nearest point above the margin: nothing
  add3(p, g2.pos, vec);
  p[0] += axis[0]; p[1] += axis[1]; p[2] += axis[2];
  emit(d1, p);

  const Real d2 = dist0 - prjaxis + prjvec;
  if (d2 <= margin) {
    add3(p, g2.pos, vec);
    p[0] -= axis[0]; p[1] -= axis[1]; p[2] -= axis[2];
    emit(d2, p);
  }

  const Real prjvec1 = -prjvec * Real(0.5);
  const Real d3 = dist0 + prjaxis + prjvec1;
  if (d3 <= margin) {
    Real vec1[3];
    cross3(vec1, vec, axis);
    normalize3(vec1);
    coll::scl3(vec1, vec1, radius * sg_sqrt(Real(3)) / Real(2));
    for (int s = 0; s < 2; ++s) {
      if (s == 0) add3(p, g2.pos, vec1); else sub3(p, g2.pos, vec1);
      p[0] += axis[0]; p[1] += axis[1]; p[2] += axis[2];
      coll::add_to_scl3(p, vec, Real(-0.5));
      emit(d3, p);
    }
  }
  return cnt;
}

// plane : box (mjc_PlaneBox): corners below the centre's level (n.(corner - centre) <= 0) and
// within the margin, in corner-index order, at most 4.
template <class Real>
SG_HD int collide_plane_box(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                            Contact<Real>* out) {
  Real norm[3], dif[3];
  coll::mat_col(norm, g1.mat, 2);
  sub3(dif, g2.pos, g1.pos);
  const Real dist = dot3(dif, norm);
  int cnt = 0;
  for (int i = 0; i < 8; ++i) {
    const Real v[3] = {(i & 1) ? g2.size[0] : -g2.size[0], (i & 2) ? g2.size[1] : -g2.size[1],
                       (i & 4) ? g2.size[2] : -g2.size[2]};
    Real corner[3];
    mat_vec3(corner, g2.mat, v);
    const Real ldist = dot3(norm, corner);
    if (dist + ldist > margin || ldist > Real(0)) continue;
    Contact<Real>& c = out[cnt];
    coll::set_normal(c, norm);
    c.dist = dist + ldist;
    add3(corner, corner, g2.pos);
    Real tmp[3];
    coll::scl3(tmp, norm, -c.dist / Real(2));
    add3(c.pos, corner, tmp);
    if (++cnt >= 4) return 4;
  }
  return cnt;
}

// plane : ellipsoid (mjc_PlaneConvex, not MPR): the support point in -n (facts §2).
template <class Real>
SG_HD int collide_plane_ellipsoid(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                  Contact<Real>* out) {
  Real normal[3], dir[3], loc[3], res[3], pnt[3], dif[3];
  coll::mat_col(normal, g1.mat, 2);
  const Real mdir[3] = {-normal[0], -normal[1], -normal[2]};
  coll::mat_t_vec3(dir, g2.mat, mdir);
  // support of an ellipsoid: normalize(dir * size) * size (mjccd_support)
  for (int i = 0; i < 3; ++i) loc[i] = dir[i] * g2.size[i];
  normalize3(loc);
  for (int i = 0; i < 3; ++i) res[i] = loc[i] * g2.size[i];
  mat_vec3(pnt, g2.mat, res);
  pnt[0] += g2.pos[0]; pnt[1] += g2.pos[1]; pnt[2] += g2.pos[2];
  sub3(dif, pnt, g1.pos);
  const Real dist = dot3(normal, dif);
  if (dist > margin) return 0;
  coll::set_normal(*out, normal);
  out->dist = dist;
  copy3(out->pos, pnt);
  coll::add_to_scl3(out->pos, normal, Real(-0.5) * dist);
  return 1;
}

// sphere : sphere
template <class Real>
SG_HD int collide_sphere_sphere(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                Contact<Real>* out) {
  return coll::sphere_sphere_at(g1.pos, g1.mat, g1.size[0], g2.pos, g2.mat, g2.size[0], margin, out);
}

// sphere : capsule: the nearest point of the capsule segment, then sphere-sphere.
template <class Real>
SG_HD int collide_sphere_capsule(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                 Contact<Real>* out) {
  Real axis[3], vec[3];
  coll::mat_col(axis, g2.mat, 2);
  coll::scl3(axis, axis, g2.size[1]);
  sub3(vec, g1.pos, g2.pos);
  const Real x = coll::clamp_unit(dot3(axis, vec) / dot3(axis, axis));
  coll::scl3(vec, axis, x);
  vec[0] += g2.pos[0]; vec[1] += g2.pos[1]; vec[2] += g2.pos[2];
  return coll::sphere_sphere_at(g1.pos, g1.mat, g1.size[0], vec, g2.mat, g2.size[0], margin, out);
}

// capsule : capsule (mjc_CapsuleCapsule): closest points of the clipped segments; when the
// axes are parallel to within det < mjMINVAL, up to 2 contacts from the four segment ends
// (facts §2 and §9: only exactly parallel capsules give 2).
template <class Real>
SG_HD int collide_capsule_capsule(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                  Contact<Real>* out) {
  Real axis1[3], axis2[3], dif[3], vec1[3], vec2[3];
  coll::mat_col(axis1, g1.mat, 2);
  coll::scl3(axis1, axis1, g1.size[1]);
  coll::mat_col(axis2, g2.mat, 2);
  coll::scl3(axis2, axis2, g2.size[1]);
  sub3(dif, g1.pos, g2.pos);
  const Real ma = dot3(axis1, axis1);
  const Real mb = -dot3(axis1, axis2);
  const Real mc = dot3(axis2, axis2);
  const Real u = -dot3(axis1, dif);
  const Real v = dot3(axis2, dif);
  const Real det = ma * mc - mb * mb;
  const Real r1 = g1.size[0], r2 = g2.size[0];

  // segment points at parameters x1, x2, then the sphere test
  auto test = [&](Real x1, Real x2, Contact<Real>* c) {
    coll::scl3(vec1, axis1, x1);
    vec1[0] += g1.pos[0]; vec1[1] += g1.pos[1]; vec1[2] += g1.pos[2];
    coll::scl3(vec2, axis2, x2);
    vec2[0] += g2.pos[0]; vec2[1] += g2.pos[1]; vec2[2] += g2.pos[2];
    return coll::sphere_sphere_at(vec1, g1.mat, r1, vec2, g2.mat, r2, margin, c);
  };

  // the segment parameters to test: one pair, or four when parallel
  Real x1[4], x2[4];
  int tests = 1;
  if (sg_abs(det) >= min_norm<Real>()) {
    x1[0] = (mc * u - mb * v) / det;
    x2[0] = (ma * v - mb * u) / det;
    if (x1[0] > Real(1)) {
      x1[0] = Real(1);
      x2[0] = (v - mb) / mc;
    } else if (x1[0] < Real(-1)) {
      x1[0] = Real(-1);
      x2[0] = (v + mb) / mc;
    }
    if (x2[0] > Real(1)) {
      x2[0] = Real(1);
      x1[0] = coll::clamp_unit((u - mb) / ma);
    } else if (x2[0] < Real(-1)) {
      x2[0] = Real(-1);
      x1[0] = coll::clamp_unit((u + mb) / ma);
    }
  } else {
    // parallel: ends of segment 1 projected on segment 2, then ends of segment 2
    tests = 4;
    x1[0] = Real(1), x2[0] = coll::clamp_unit((v - mb) / mc);
    x1[1] = Real(-1), x2[1] = coll::clamp_unit((v + mb) / mc);
    x1[2] = coll::clamp_unit((u - mb) / ma), x2[2] = Real(1);
    x1[3] = coll::clamp_unit((u + mb) / ma), x2[3] = Real(-1);
  }
  // one copy of the sphere test in a loop, not five inlined (the Dual adjoint's frame), stopping
  // at 2 contacts
  int n = 0;
#if defined(__CUDACC__)
#pragma unroll 1
#endif
  for (int i = 0; i < tests && n < 2; ++i) n += test(x1[i], x2[i], out + n);
  return n;
}

}  // namespace stiffgrad::kern
