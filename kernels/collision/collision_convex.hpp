// Narrow phase for the primitive pairs without an analytic routine in MuJoCo 2.2.2 (ellipsoid or
// cylinder against sphere, capsule, ellipsoid, cylinder or box; facts §2 "General convex"):
// Minkowski Portal Refinement on support functions, one contact, as MuJoCo's mjc_Convex does
// with libccd's ccdMPRPenetration (supports inflated by margin/2, dist = margin - depth), then
// the normal replaced by the analytic surface normal of sphere/capsule/ellipsoid/cylinder geoms
// (mjc_fixNormal). Our own implementation of the same algorithm (not a libccd port for bit
// parity): it agrees with MuJoCo within the tolerance measured in
// tests/test_collision_vs_mujoco.cpp, and with analytic answers where they exist.
#pragma once

#include "kernels/collision/collision_mesh.hpp"
#include "kernels/collision/collision_primitive.hpp"

namespace stiffgrad::kern {

namespace coll {

// MuJoCo's defaults opt.mpr_iterations and opt.mpr_tolerance (facts §0).
constexpr int kMprIterations = 50;
constexpr double kMprTolerance = 1e-6;

// libccd's CCD_EPS: the machine epsilon of the scalar (a Dual compares its value).
template <class Real> struct MprEps { static constexpr double value = 2.220446049250313e-16; };
template <> struct MprEps<float> { static constexpr double value = 1.1920928955078125e-07; };
template <class Real> SG_HD SG_INLINE bool mpr_is_zero(Real x) { return sg_abs(x) < Real(MprEps<Real>::value); }

// Support point of one geom in the world direction `dir` (unit), inflated by margin/2 along the
// local direction (mjccd_support).
template <class Real>
SG_HD SG_INLINE void geom_support(const GeomPose<Real>& g, Real half_margin, const Real dir[3], Real out[3]) {
  Real d[3], res[3];
  mat_t_vec3(d, g.mat, dir);
  const Real* size = g.size;
  auto sign = [](Real x) { return x < Real(0) ? Real(-1) : (x > Real(0) ? Real(1) : Real(0)); };
  switch (g.type) {
    case kGeomSphere:
      scl3(res, d, size[0]);
      break;
    case kGeomCapsule:
      scl3(res, d, size[0]);
      res[2] = res[2] + sign(d[2]) * size[1];
      break;
    case kGeomEllipsoid:
      for (int i = 0; i < 3; ++i) res[i] = d[i] * size[i];
      normalize3(res);
      for (int i = 0; i < 3; ++i) res[i] = res[i] * size[i];
      break;
    case kGeomCylinder: {
      const Real t = sg_sqrt(d[0] * d[0] + d[1] * d[1]);
      if (t > min_norm<Real>()) {
        res[0] = d[0] / t * size[0];
        res[1] = d[1] / t * size[0];
      } else {
        res[0] = Real(0); res[1] = Real(0);
      }
      res[2] = sign(d[2]) * size[1];
      break;
    }
    case kGeomMesh: {
      int local;
      mesh_vertex(g, mesh_support_vertex(g, d, &local), res);
      break;
    }
    default:  // box
      for (int i = 0; i < 3; ++i) res[i] = sign(d[i]) * size[i];
      break;
  }
  add_to_scl3(res, d, half_margin);
  mat_vec3(out, g.mat, res);
  out[0] += g.pos[0]; out[1] += g.pos[1]; out[2] += g.pos[2];
}

// A point of the Minkowski difference g1 - g2 with the two points that made it.
template <class Real> struct MprPoint {
  Real v[3], v1[3], v2[3];
};

template <class Real>
SG_HD SG_INLINE void mpr_support(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real hm,
                                 const Real dir[3], MprPoint<Real>& p) {
  geom_support(g1, hm, dir, p.v1);
  const Real nd[3] = {-dir[0], -dir[1], -dir[2]};
  geom_support(g2, hm, nd, p.v2);
  sub3(p.v, p.v1, p.v2);
}

template <class Real> SG_HD SG_INLINE void mpr_normalize(Real a[3]) {
  const Real n2 = dot3(a, a);
  if (n2 > Real(0)) {
    const Real k = Real(1) / sg_sqrt(n2);
    a[0] *= k; a[1] *= k; a[2] *= k;
  }
}

// Outward normal of the portal face (v1, v2, v3).
template <class Real> SG_HD SG_INLINE void mpr_portal_dir(const MprPoint<Real> P[4], Real dir[3]) {
  Real a[3], b[3];
  sub3(a, P[2].v, P[1].v);
  sub3(b, P[3].v, P[1].v);
  cross3(dir, a, b);
  mpr_normalize(dir);
}

// True when the portal cannot move further than the tolerance along dir.
template <class Real>
SG_HD SG_INLINE bool mpr_reach_tolerance(const MprPoint<Real> P[4], const MprPoint<Real>& v4, const Real dir[3]) {
  const Real dv4 = dot3(v4.v, dir);
  Real m = dv4 - dot3(P[1].v, dir);
  const Real d2 = dv4 - dot3(P[2].v, dir), d3 = dv4 - dot3(P[3].v, dir);
  if (d2 < m) m = d2;
  if (d3 < m) m = d3;
  return m <= Real(kMprTolerance) || mpr_is_zero(m - Real(kMprTolerance));
}

// Replace one portal vertex by v4 so that the portal keeps facing away from v0.
template <class Real> SG_HD SG_INLINE void mpr_expand(MprPoint<Real> P[4], const MprPoint<Real>& v4) {
  Real v4v0[3];
  cross3(v4v0, v4.v, P[0].v);
  if (dot3(P[1].v, v4v0) > Real(0)) {
    if (dot3(P[2].v, v4v0) > Real(0)) P[1] = v4; else P[3] = v4;
  } else {
    if (dot3(P[3].v, v4v0) > Real(0)) P[2] = v4; else P[1] = v4;
  }
}

// Squared distance from the origin to segment (a, b), with the closest point.
template <class Real>
SG_HD SG_INLINE Real origin_segment_dist2(const Real a[3], const Real b[3], Real w[3]) {
  Real d[3];
  sub3(d, b, a);
  const Real t = -dot3(a, d) / dot3(d, d);
  if (t < Real(0) || mpr_is_zero(t)) copy3(w, a);
  else if (t > Real(1) || mpr_is_zero(t - Real(1))) copy3(w, b);
  else { copy3(w, a); add_to_scl3(w, d, t); }
  return dot3(w, w);
}

// Squared distance from the origin to triangle (x0, b, c), with the closest point.
template <class Real>
SG_HD SG_INLINE Real origin_triangle_dist2(const Real x0[3], const Real b[3], const Real c[3], Real w[3]) {
  Real d1[3], d2[3];
  sub3(d1, b, x0);
  sub3(d2, c, x0);
  const Real v = dot3(d1, d1), ww = dot3(d2, d2), p = dot3(x0, d1), q = dot3(x0, d2), r = dot3(d1, d2);
  const Real det = ww * v - r * r;
  Real s = Real(-1), t = Real(-1);
  if (!mpr_is_zero(det)) {
    s = (q * r - ww * p) / det;
    t = (-s * r - q) / ww;
  }
  auto ge0 = [](Real x) { return mpr_is_zero(x) || x > Real(0); };
  auto le1 = [](Real x) { return mpr_is_zero(x - Real(1)) || x < Real(1); };
  if (ge0(s) && le1(s) && ge0(t) && le1(t) && le1(t + s)) {
    copy3(w, x0);
    add_to_scl3(w, d1, s);
    add_to_scl3(w, d2, t);
    return dot3(w, w);
  }
  Real w2[3];
  Real dist = origin_segment_dist2(x0, b, w);
  Real d = origin_segment_dist2(x0, c, w2);
  if (d < dist) { dist = d; copy3(w, w2); }
  d = origin_segment_dist2(b, c, w2);
  if (d < dist) { dist = d; copy3(w, w2); }
  return dist;
}

// Contact position: barycentric weights of the origin in the final portal tetrahedron, applied to
// the two bodies' support points, midpoint of the two.
template <class Real> SG_HD SG_INLINE void mpr_position(const MprPoint<Real> P[4], Real pos[3]) {
  Real dir[3], vec[3], b[4];
  mpr_portal_dir(P, dir);
  cross3(vec, P[1].v, P[2].v); b[0] = dot3(vec, P[3].v);
  cross3(vec, P[3].v, P[2].v); b[1] = dot3(vec, P[0].v);
  cross3(vec, P[0].v, P[1].v); b[2] = dot3(vec, P[3].v);
  cross3(vec, P[2].v, P[1].v); b[3] = dot3(vec, P[0].v);
  Real sum = b[0] + b[1] + b[2] + b[3];
  if (mpr_is_zero(sum) || sum < Real(0)) {
    b[0] = Real(0);
    cross3(vec, P[2].v, P[3].v); b[1] = dot3(vec, dir);
    cross3(vec, P[3].v, P[1].v); b[2] = dot3(vec, dir);
    cross3(vec, P[1].v, P[2].v); b[3] = dot3(vec, dir);
    sum = b[1] + b[2] + b[3];
  }
  const Real inv = Real(1) / sum;
  Real p1[3] = {Real(0), Real(0), Real(0)}, p2[3] = {Real(0), Real(0), Real(0)};
  for (int i = 0; i < 4; ++i) {
    add_to_scl3(p1, P[i].v1, b[i]);
    add_to_scl3(p2, P[i].v2, b[i]);
  }
  for (int k = 0; k < 3; ++k) pos[k] = (p1[k] * inv + p2[k] * inv) * Real(0.5);
}

// MPR penetration (the algorithm of libccd's ccdMPRPenetration): returns false when the
// inflated geoms are separate; else depth >= 0, the unit direction from g1 to g2 (zero for a
// touching contact) and the contact position.
template <class Real>
SG_HD bool mpr_penetration(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                           Real& depth, Real dir_out[3], Real pos[3]) {
  const Real hm = margin / Real(2);
  MprPoint<Real> P[4];
  Real dir[3], va[3], vb[3];
  const int kMaxDiscover = 200;

  // v0: an interior point of the difference (the centre difference), nudged off the origin
  copy3(P[0].v1, g1.pos);
  copy3(P[0].v2, g2.pos);
  sub3(P[0].v, P[0].v1, P[0].v2);
  if (mpr_is_zero(P[0].v[0]) && mpr_is_zero(P[0].v[1]) && mpr_is_zero(P[0].v[2]))
    P[0].v[0] = P[0].v[0] + Real(10 * MprEps<Real>::value);

  // v1: support towards the origin
  scl3(dir, P[0].v, Real(-1));
  mpr_normalize(dir);
  mpr_support(g1, g2, hm, dir, P[1]);
  Real d = dot3(P[1].v, dir);
  if (mpr_is_zero(d) || d < Real(0)) return false;

  cross3(dir, P[0].v, P[1].v);
  if (mpr_is_zero(dot3(dir, dir))) {
    // the origin lies on the segment v0-v1 (or on v1: a touching contact)
    for (int k = 0; k < 3; ++k) pos[k] = (P[1].v1[k] + P[1].v2[k]) * Real(0.5);
    if (mpr_is_zero(P[1].v[0]) && mpr_is_zero(P[1].v[1]) && mpr_is_zero(P[1].v[2])) {
      depth = Real(0);
      zero3(dir_out);
    } else {
      copy3(dir_out, P[1].v);
      depth = sg_sqrt(dot3(dir_out, dir_out));
      mpr_normalize(dir_out);
    }
    return true;
  }
  mpr_normalize(dir);
  mpr_support(g1, g2, hm, dir, P[2]);
  d = dot3(P[2].v, dir);
  if (mpr_is_zero(d) || d < Real(0)) return false;

  sub3(va, P[1].v, P[0].v);
  sub3(vb, P[2].v, P[0].v);
  cross3(dir, va, vb);
  mpr_normalize(dir);
  if (dot3(dir, P[0].v) > Real(0)) {
    const MprPoint<Real> t = P[1];
    P[1] = P[2];
    P[2] = t;
    scl3(dir, dir, Real(-1));
  }

  // v3: grow the portal until the origin ray passes through (v1, v2, v3)
  bool found = false;
  for (int it = 0; it < kMaxDiscover && !found; ++it) {
    mpr_support(g1, g2, hm, dir, P[3]);
    d = dot3(P[3].v, dir);
    if (mpr_is_zero(d) || d < Real(0)) return false;
    bool cont = false;
    cross3(va, P[1].v, P[3].v);
    d = dot3(va, P[0].v);
    if (d < Real(0) && !mpr_is_zero(d)) {
      P[2] = P[3];
      cont = true;
    }
    if (!cont) {
      cross3(va, P[3].v, P[2].v);
      d = dot3(va, P[0].v);
      if (d < Real(0) && !mpr_is_zero(d)) {
        P[1] = P[3];
        cont = true;
      }
    }
    if (cont) {
      sub3(va, P[1].v, P[0].v);
      sub3(vb, P[2].v, P[0].v);
      cross3(dir, va, vb);
      mpr_normalize(dir);
    } else {
      found = true;
    }
  }
  if (!found) return false;

  // refinement: expand the portal until it contains the origin (else: separate)
  MprPoint<Real> v4;
  bool inside = false;
  for (int it = 0; it < kMaxDiscover && !inside; ++it) {
    mpr_portal_dir(P, dir);
    d = dot3(dir, P[1].v);
    if (mpr_is_zero(d) || d > Real(0)) { inside = true; break; }
    mpr_support(g1, g2, hm, dir, v4);
    d = dot3(v4.v, dir);
    if (!(mpr_is_zero(d) || d > Real(0)) || mpr_reach_tolerance(P, v4, dir)) return false;
    mpr_expand(P, v4);
  }
  if (!inside) return false;

  // penetration: push the portal to the boundary, then the origin's distance to it
  for (int it = 0;; ++it) {
    mpr_portal_dir(P, dir);
    mpr_support(g1, g2, hm, dir, v4);
    if (mpr_reach_tolerance(P, v4, dir) || it > kMprIterations) {
      const Real d2 = origin_triangle_dist2(P[1].v, P[2].v, P[3].v, dir_out);
      depth = sg_sqrt(d2);
      if (mpr_is_zero(depth)) zero3(dir_out); else mpr_normalize(dir_out);
      mpr_position(P, pos);
      return true;
    }
    mpr_expand(P, v4);
  }
}

// Normal of an ellipsoid at the surface point where the ray pos + x nrm leaves it, iterated
// (MuJoCo's mjc_ellipsoidInside); returns false if it cannot improve the normal.
template <class Real>
SG_HD SG_INLINE bool ellipsoid_normal_inside(Real nrm[3], const Real pos[3], const Real size[3]) {
  const Real s2inv[3] = {Real(1) / (size[0] * size[0]), Real(1) / (size[1] * size[1]),
                         Real(1) / (size[2] * size[2])};
  const Real C = pos[0] * pos[0] * s2inv[0] + pos[1] * pos[1] * s2inv[1] + pos[2] * pos[2] * s2inv[2] - Real(1);
  if (C > Real(0)) return false;
  normalize3(nrm);
  for (int iter = 0; iter < 30; ++iter) {
    const Real A = nrm[0] * nrm[0] * s2inv[0] + nrm[1] * nrm[1] * s2inv[1] + nrm[2] * nrm[2] * s2inv[2];
    const Real B = pos[0] * nrm[0] * s2inv[0] + pos[1] * nrm[1] * s2inv[1] + pos[2] * nrm[2] * s2inv[2];
    const Real det = B * B - A * C;
    if (det < min_norm<Real>() || A < min_norm<Real>()) return iter > 0;
    const Real x = (-B + sg_sqrt(det)) / A;
    if (x < Real(0)) return iter > 0;
    Real pnt[3];
    copy3(pnt, pos);
    add_to_scl3(pnt, nrm, x);
    Real nn[3] = {pnt[0] * s2inv[0], pnt[1] * s2inv[1], pnt[2] * s2inv[2]};
    normalize3(nn);
    const Real change = dist3(nrm, nn);
    copy3(nrm, nn);
    if (change < Real(1e-6)) break;
  }
  return true;
}

// Normal of an ellipsoid at the point nearest an outside point (Newton on the Lagrange
// multiplier; MuJoCo's mjc_ellipsoidOutside).
template <class Real>
SG_HD SG_INLINE bool ellipsoid_normal_outside(Real nrm[3], const Real pos[3], const Real size[3]) {
  const Real S2[3] = {size[0] * size[0], size[1] * size[1], size[2] * size[2]};
  const Real PS2[3] = {pos[0] * pos[0] * S2[0], pos[1] * pos[1] * S2[1], pos[2] * pos[2] * S2[2]};
  Real la = Real(0);
  for (int iter = 0; iter < 30; ++iter) {
    const Real R[3] = {Real(1) / (S2[0] + la), Real(1) / (S2[1] + la), Real(1) / (S2[2] + la)};
    const Real val = PS2[0] * R[0] * R[0] + PS2[1] * R[1] * R[1] + PS2[2] * R[2] * R[2] - Real(1);
    if (val < Real(1e-6)) break;
    const Real deriv = Real(-2) * (PS2[0] * R[0] * R[0] * R[0] + PS2[1] * R[1] * R[1] * R[1] +
                                   PS2[2] * R[2] * R[2] * R[2]);
    if (deriv > -min_norm<Real>()) break;
    const Real delta = -val / deriv;
    if (delta < Real(1e-6)) break;
    la = la + delta;
  }
  nrm[0] = pos[0] / (S2[0] + la);
  nrm[1] = pos[1] / (S2[1] + la);
  nrm[2] = pos[2] / (S2[2] + la);
  normalize3(nrm);
  return true;
}

// Analytic outward normal of geom g at the contact position (local frame), if its type has one
// (mjc_fixNormal's per-type rules); `nrm` holds the MPR normal in the local frame on entry.
template <class Real>
SG_HD SG_INLINE bool analytic_normal(const GeomPose<Real>& g, const Real cpos[3], Real nrm[3]) {
  Real dif[3], pos[3];
  sub3(dif, cpos, g.pos);
  mat_t_vec3(pos, g.mat, dif);
  const Real* size = g.size;
  switch (g.type) {
    case kGeomSphere:
      copy3(nrm, pos);
      return true;
    case kGeomCapsule:
      if (pos[2] < -size[1]) nrm[2] = pos[2] + size[1];
      else if (pos[2] > size[1]) nrm[2] = pos[2] - size[1];
      else nrm[2] = Real(0);
      nrm[0] = pos[0];
      nrm[1] = pos[1];
      return true;
    case kGeomEllipsoid: {
      if (size[0] < min_norm<Real>() || size[1] < min_norm<Real>() || size[2] < min_norm<Real>()) return false;
      const Real e = pos[0] * pos[0] / (size[0] * size[0]) + pos[1] * pos[1] / (size[1] * size[1]) +
                     pos[2] * pos[2] / (size[2] * size[2]);
      return e <= Real(1) ? ellipsoid_normal_inside(nrm, pos, size) : ellipsoid_normal_outside(nrm, pos, size);
    }
    case kGeomCylinder: {
      // only on the round wall: not within 5% of the flat ends, and 4x closer to round than flat
      if (sg_abs(pos[2]) > Real(0.95) * size[1]) return false;
      const Real dflat = sg_abs(size[1] - sg_abs(pos[2]));
      const Real dround = sg_abs(size[0] - sg_sqrt(pos[0] * pos[0] + pos[1] * pos[1]));
      if (dflat < Real(0.25) * dround) return false;
      nrm[0] = pos[0];
      nrm[1] = pos[1];
      nrm[2] = Real(0);
      return true;
    }
    default:
      return false;
  }
}

// mjc_fixNormal: replace the MPR normal by the geoms' analytic normals (the average of both
// when both have one).
template <class Real>
SG_HD SG_INLINE void fix_normal(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Contact<Real>& c) {
  Real normal[2][3] = {{c.frame[0], c.frame[1], c.frame[2]}, {-c.frame[0], -c.frame[1], -c.frame[2]}};
  bool done[2] = {false, false};
  const GeomPose<Real>* g[2] = {&g1, &g2};
  for (int i = 0; i < 2; ++i) {
    Real nrm[3];
    mat_t_vec3(nrm, g[i]->mat, normal[i]);
    done[i] = analytic_normal(*g[i], c.pos, nrm);
    if (done[i]) {
      normalize3(nrm);
      mat_vec3(normal[i], g[i]->mat, nrm);
    }
  }
  if (done[0] && done[1]) {
    sub3(c.frame, normal[0], normal[1]);
    normalize3(c.frame);
  } else if (done[0]) {
    copy3(c.frame, normal[0]);
  } else if (done[1]) {
    scl3(c.frame, normal[1], Real(-1));
  }
}

}  // namespace coll

// General convex pair (mjc_Convex without multiccd): one contact from MPR with margin-inflated
// supports, dist = margin - depth; no contact when MPR finds the geoms separate or only touching
// with an undefined normal.
template <class Real>
SG_HD int collide_convex(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                         Contact<Real>* out) {
  Real depth, dir[3], pos[3];
  if (!coll::mpr_penetration(g1, g2, margin, depth, dir, pos)) return 0;
  if (dir[0] == Real(0) && dir[1] == Real(0) && dir[2] == Real(0)) return 0;
  coll::set_normal(*out, dir);
  out->dist = margin - depth;
  copy3(out->pos, pos);
  coll::fix_normal(g1, g2, *out);
  return 1;
}

}  // namespace stiffgrad::kern
