// Narrow-phase dispatcher: the routine for a geom pair chosen by the two types as MuJoCo 2.2.2's
// mjCOLLISIONFUNC table does (docs/references/mujoco-2.2.2-constraints.md §2), and the contact
// frame completion (mju_makeFrame, facts §1 "Contact frame").
#pragma once

#include "kernels/collision/collision_box.hpp"
#include "kernels/collision/collision_convex.hpp"
#include "kernels/collision/collision_primitive.hpp"

namespace stiffgrad::kern {

// Completes rows t1 = frame[3..5] and t2 = frame[6..8] from the normal frame[0..2] and the
// optionally prefilled t1 (plane-capsule: the capsule axis), as mju_makeFrame: normalize n;
// if |t1| < 0.5 take (0, 1, 0) when |n_y| < 0.5, else (0, 0, 1); t1 <- normalize(t1 - n (n.t1));
// t2 = n x t1. (MuJoCo errors when |n| < 0.5; every routine here returns a unit normal.)
template <class Real> SG_HD SG_INLINE void make_contact_frame(Contact<Real>& c) {
  Real* f = c.frame;
  normalize3(f);
  Real* y = f + 3;
  if (sg_sqrt(dot3(y, y)) < Real(0.5)) {
    y[0] = Real(0); y[1] = Real(0); y[2] = Real(0);
    if (f[1] < Real(0.5) && f[1] > Real(-0.5)) y[1] = Real(1); else y[2] = Real(1);
  }
  const Real ny = dot3(f, y);
  y[0] -= f[0] * ny; y[1] -= f[1] * ny; y[2] -= f[2] * ny;
  normalize3(y);
  cross3(f + 6, f, y);
}

// True when MuJoCo 2.2.2 has a narrow-phase routine for the (ordered) type pair and we
// implement it: every pair of plane, sphere, capsule, ellipsoid, cylinder and box except
// plane-plane. Height fields and meshes are not collided here.
SG_HD SG_INLINE bool has_collision_routine(int t1, int t2) {
  if (t1 > t2) { const int t = t1; t1 = t2; t2 = t; }
  if (t1 == kGeomHField || t1 == kGeomMesh || t2 == kGeomHField || t2 == kGeomMesh) return false;
  return !(t1 == kGeomPlane && t2 == kGeomPlane);
}

// Contacts between g1 and g2 (already in MuJoCo's order: type(g1) <= type(g2); the normal points
// from g1 to g2) with dist <= margin, written to out (room for kMaxContactsPerPair) with complete
// frames; returns their number (0 for pairs without a routine).
template <class Real>
SG_HD int collide_geoms(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                        Contact<Real>* out) {
  int n = 0;
  const int t1 = g1.type, t2 = g2.type;
  if (t1 == kGeomPlane) {
    switch (t2) {
      case kGeomSphere: n = collide_plane_sphere(g1, g2, margin, out); break;
      case kGeomCapsule: n = collide_plane_capsule(g1, g2, margin, out); break;
      case kGeomEllipsoid: n = collide_plane_ellipsoid(g1, g2, margin, out); break;
      case kGeomCylinder: n = collide_plane_cylinder(g1, g2, margin, out); break;
      case kGeomBox: n = collide_plane_box(g1, g2, margin, out); break;
      default: n = 0; break;
    }
  } else if (t1 == kGeomSphere && t2 == kGeomSphere) {
    n = collide_sphere_sphere(g1, g2, margin, out);
  } else if (t1 == kGeomSphere && t2 == kGeomCapsule) {
    n = collide_sphere_capsule(g1, g2, margin, out);
  } else if (t1 == kGeomCapsule && t2 == kGeomCapsule) {
    n = collide_capsule_capsule(g1, g2, margin, out);
  } else if (t1 == kGeomSphere && t2 == kGeomBox) {
    n = collide_sphere_box(g1, g2, margin, out);
  } else if (t1 == kGeomCapsule && t2 == kGeomBox) {
    n = collide_capsule_box(g1, g2, margin, out);
  } else if (t1 == kGeomBox && t2 == kGeomBox) {
    n = collide_box_box(g1, g2, margin, out);
  } else if (t1 >= kGeomSphere && t1 <= kGeomBox && t2 >= kGeomEllipsoid && t2 <= kGeomBox && t1 <= t2) {
    // sphere/capsule/ellipsoid/cylinder against ellipsoid/cylinder/box (facts §2 "General convex")
    n = collide_convex(g1, g2, margin, out);
  }
  for (int i = 0; i < n; ++i) make_contact_frame(out[i]);
  return n;
}

}  // namespace stiffgrad::kern
