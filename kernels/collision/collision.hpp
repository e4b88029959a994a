// Narrow-phase dispatcher: the routine for a geom pair chosen by the two types as MuJoCo 2.2.2's
// mjCOLLISIONFUNC table does (docs/references/mujoco-2.2.2-constraints.md §2), and the contact
// frame completion (mju_makeFrame, facts §1 "Contact frame").
#pragma once

#include <type_traits>

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
// implement it: every pair of plane, sphere, capsule, ellipsoid, cylinder, box and mesh except
// plane-plane. Height fields are not collided here.
SG_HD SG_INLINE bool has_collision_routine(int t1, int t2) {
  if (t1 > t2) { const int t = t1; t1 = t2; t2 = t; }
  if (t1 == kGeomHField || t2 == kGeomHField) return false;
  return !(t1 == kGeomPlane && t2 == kGeomPlane);
}

// The narrow-phase routines, one per (ordered) type pair that has one. The staged CUDA pipeline
// launches one narrow-phase kernel per routine over (candidate pair, environment), so that the
// routine is uniform across a warp (docs/gpu.md, "Staged contact step"); collide_geoms
// dispatches on the same ids, so both paths run the same routine code.
enum PairRoutine : int {
  kRoutineNone = 0,
  kRoutinePlaneSphere,
  kRoutinePlaneCapsule,
  kRoutinePlaneEllipsoid,
  kRoutinePlaneCylinder,
  kRoutinePlaneBox,
  kRoutineSphereSphere,
  kRoutineSphereCapsule,
  kRoutineCapsuleCapsule,
  kRoutineSphereBox,
  kRoutineCapsuleBox,
  kRoutineBoxBox,
  kRoutineConvex,  // sphere/capsule/ellipsoid/cylinder against ellipsoid/cylinder/box (facts §2),
                   // and every geom but the plane against a mesh
  kRoutinePlaneMesh,
  kPairRoutines
};

// The routine for geoms of types t1 <= t2 (MuJoCo's order), or kRoutineNone.
SG_HD SG_INLINE int pair_routine(int t1, int t2) {
  if (t1 == kGeomPlane) {
    switch (t2) {
      case kGeomSphere: return kRoutinePlaneSphere;
      case kGeomCapsule: return kRoutinePlaneCapsule;
      case kGeomEllipsoid: return kRoutinePlaneEllipsoid;
      case kGeomCylinder: return kRoutinePlaneCylinder;
      case kGeomBox: return kRoutinePlaneBox;
      case kGeomMesh:
        return kRoutinePlaneMesh;
      default: return kRoutineNone;
    }
  }
  if (t1 == kGeomSphere && t2 == kGeomSphere) return kRoutineSphereSphere;
  if (t1 == kGeomSphere && t2 == kGeomCapsule) return kRoutineSphereCapsule;
  if (t1 == kGeomCapsule && t2 == kGeomCapsule) return kRoutineCapsuleCapsule;
  if (t1 == kGeomSphere && t2 == kGeomBox) return kRoutineSphereBox;
  if (t1 == kGeomCapsule && t2 == kGeomBox) return kRoutineCapsuleBox;
  if (t1 == kGeomBox && t2 == kGeomBox) return kRoutineBoxBox;
  if (t1 >= kGeomSphere && t1 <= kGeomBox && t2 >= kGeomEllipsoid && t2 <= kGeomBox && t1 <= t2)
    return kRoutineConvex;
  if (t1 >= kGeomSphere && t2 == kGeomMesh) return kRoutineConvex;
  return kRoutineNone;
}

// Most contacts routine r returns: the room a caller needs for its output (Model::cpair_maxcon
// of its type pairs, core/collision_pairs.cpp). kRoutineNone (the run-time dispatch, any routine):
// kMaxContactsPerPair. Sizing a per-routine buffer by it keeps the short routines' Dual outputs
// (kernels/collision/collision_adjoint.hpp) out of the nine-contact frame box-box needs.
SG_HD constexpr int routine_max_contacts(int r) {
  switch (r) {
    case kRoutinePlaneCapsule:
    case kRoutineCapsuleCapsule:
    case kRoutineCapsuleBox:
      return 2;
    case kRoutinePlaneMesh:
      return coll::kMaxPlaneMeshContacts;
    case kRoutinePlaneCylinder:
    case kRoutinePlaneBox:
      return 4;
    case kRoutineBoxBox:
    case kRoutineNone:
      return kMaxContactsPerPair;
    default:
      return 1;  // spheres, the plane-ellipsoid support point, the general convex (MPR)
  }
}

// Calls f(std::integral_constant<int, R>{}) for the routine id r (host or device).
template <class F>
SG_HD SG_INLINE void with_pair_routine(int r, F&& f) {
  switch (r) {
    case kRoutinePlaneSphere: f(std::integral_constant<int, kRoutinePlaneSphere>{}); break;
    case kRoutinePlaneCapsule: f(std::integral_constant<int, kRoutinePlaneCapsule>{}); break;
    case kRoutinePlaneEllipsoid: f(std::integral_constant<int, kRoutinePlaneEllipsoid>{}); break;
    case kRoutinePlaneCylinder: f(std::integral_constant<int, kRoutinePlaneCylinder>{}); break;
    case kRoutinePlaneBox: f(std::integral_constant<int, kRoutinePlaneBox>{}); break;
    case kRoutineSphereSphere: f(std::integral_constant<int, kRoutineSphereSphere>{}); break;
    case kRoutineSphereCapsule: f(std::integral_constant<int, kRoutineSphereCapsule>{}); break;
    case kRoutineCapsuleCapsule: f(std::integral_constant<int, kRoutineCapsuleCapsule>{}); break;
    case kRoutineSphereBox: f(std::integral_constant<int, kRoutineSphereBox>{}); break;
    case kRoutineCapsuleBox: f(std::integral_constant<int, kRoutineCapsuleBox>{}); break;
    case kRoutineBoxBox: f(std::integral_constant<int, kRoutineBoxBox>{}); break;
    case kRoutineConvex: f(std::integral_constant<int, kRoutineConvex>{}); break;
    case kRoutinePlaneMesh:
      f(std::integral_constant<int, kRoutinePlaneMesh>{});
      break;
    default: break;
  }
}

// Contacts between g1 and g2 by routine R (R == pair_routine(g1.type, g2.type); the normal
// points from g1 to g2) with dist <= margin, written to out (room for kMaxContactsPerPair), their
// frames' normal (and for plane-capsule t1) only; returns their number.
template <int R, class Real>
SG_HD SG_INLINE int collide_routine(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                    Contact<Real>* out) {
  if constexpr (R == kRoutinePlaneSphere) return collide_plane_sphere(g1, g2, margin, out);
  else if constexpr (R == kRoutinePlaneCapsule) return collide_plane_capsule(g1, g2, margin, out);
  else if constexpr (R == kRoutinePlaneEllipsoid) return collide_plane_ellipsoid(g1, g2, margin, out);
  else if constexpr (R == kRoutinePlaneCylinder) return collide_plane_cylinder(g1, g2, margin, out);
  else if constexpr (R == kRoutinePlaneBox) return collide_plane_box(g1, g2, margin, out);
  else if constexpr (R == kRoutineSphereSphere) return collide_sphere_sphere(g1, g2, margin, out);
  else if constexpr (R == kRoutineSphereCapsule) return collide_sphere_capsule(g1, g2, margin, out);
  else if constexpr (R == kRoutineCapsuleCapsule) return collide_capsule_capsule(g1, g2, margin, out);
  else if constexpr (R == kRoutineSphereBox) return collide_sphere_box(g1, g2, margin, out);
  else if constexpr (R == kRoutineCapsuleBox) return collide_capsule_box(g1, g2, margin, out);
  else if constexpr (R == kRoutineBoxBox) return collide_box_box(g1, g2, margin, out);
  else if constexpr (R == kRoutineConvex) return collide_convex(g1, g2, margin, out);
  else if constexpr (R == kRoutinePlaneMesh)
    return collide_plane_mesh(g1, g2, margin, out);
  else return 0;
}

// The same with complete frames (make_contact_frame): what collide_geoms returns for such a pair.
template <int R, class Real>
SG_HD int collide_with(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin, Contact<Real>* out) {
  const int n = collide_routine<R>(g1, g2, margin, out);
  for (int i = 0; i < n; ++i) make_contact_frame(out[i]);
  return n;
}

// Contacts between g1 and g2 (already in MuJoCo's order: type(g1) <= type(g2); the normal points
// from g1 to g2) with dist <= margin, written to out (room for kMaxContactsPerPair) with complete
// frames; returns their number (0 for pairs without a routine).
template <class Real>
SG_HD int collide_geoms(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                        Contact<Real>* out) {
  int n = 0;
  switch (pair_routine(g1.type, g2.type)) {
    case kRoutinePlaneSphere: n = collide_routine<kRoutinePlaneSphere>(g1, g2, margin, out); break;
    case kRoutinePlaneCapsule: n = collide_routine<kRoutinePlaneCapsule>(g1, g2, margin, out); break;
    case kRoutinePlaneEllipsoid: n = collide_routine<kRoutinePlaneEllipsoid>(g1, g2, margin, out); break;
    case kRoutinePlaneCylinder: n = collide_routine<kRoutinePlaneCylinder>(g1, g2, margin, out); break;
    case kRoutinePlaneBox: n = collide_routine<kRoutinePlaneBox>(g1, g2, margin, out); break;
    case kRoutineSphereSphere: n = collide_routine<kRoutineSphereSphere>(g1, g2, margin, out); break;
    case kRoutineSphereCapsule: n = collide_routine<kRoutineSphereCapsule>(g1, g2, margin, out); break;
    case kRoutineCapsuleCapsule: n = collide_routine<kRoutineCapsuleCapsule>(g1, g2, margin, out); break;
    case kRoutineSphereBox: n = collide_routine<kRoutineSphereBox>(g1, g2, margin, out); break;
    case kRoutineCapsuleBox: n = collide_routine<kRoutineCapsuleBox>(g1, g2, margin, out); break;
    case kRoutineBoxBox: n = collide_routine<kRoutineBoxBox>(g1, g2, margin, out); break;
    case kRoutineConvex: n = collide_routine<kRoutineConvex>(g1, g2, margin, out); break;
    case kRoutinePlaneMesh:
      n = collide_routine<kRoutinePlaneMesh>(g1, g2, margin, out);
      break;
    default: break;
  }
  for (int i = 0; i < n; ++i) make_contact_frame(out[i]);
  return n;
}

}  // namespace stiffgrad::kern
