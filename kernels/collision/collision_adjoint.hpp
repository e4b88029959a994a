// Adjoint (vector-Jacobian product) of the narrow phase, collide_geoms
// (kernels/collision/collision.hpp): the contacts' dist, pos and full frame (after
// make_contact_frame) pulled back to the two geoms' world pos and mat (sizes and margin are
// constants).
//
// Method: local forward mode. The narrow phase is ~1500 lines over 14 routines with many
// branches; hand-written adjoints of each would be a second copy of the geometry to keep in step.
// Instead the same collide_geoms runs on Dual<Real, K> copies of the two poses, seeded with K of
// the 24 input directions (g1.pos 3, g1.mat 9, g2.pos 3, g2.mat 9) per pass, 24/K passes, and
// each pass adds sum over contacts of <contact_bar, tangent> to the input adjoints. Comparisons
// in Dual look at the value only and the value arithmetic is the primal's, so every pass takes
// the forward pass's branches: the result is the exact derivative of the piece the forward pass
// was on (same arithmetic path, one source of geometry).
//
// Choice of K = 8 (3 passes): every scalar of the routine becomes K + 1 numbers, so device
// registers and local memory grow with K while the number of re-runs of the value path falls
// as 24/K. Box-box keeps ~100 scalars of candidate points and the 9 output contacts hold 117, so
// K = 24 means ~25 x 220 live values per thread (~22 KB in float) against ~9 x 220 at K = 8;
// K = 6 would add a fourth pass of the whole value path (MPR: up to ~50 support iterations) for
// little saving. K is a template parameter of adj_collide_geoms_k for callers that measure
// otherwise; the result does not depend on K (each lane's arithmetic is the same; the test
// checks it bit for bit). One pass is adj_collide_geoms_pass: the staged adjoint on CUDA runs
// the passes of a pair in separate threads with a K per routine and precision that fits the
// kernel limits (kern::pair_adjoint_directions in kernels/step/staged_adjoint.hpp), and sizes a
// pass's Dual contacts by the routine's own maximum (routine_max_contacts).
//
// What the derivative means where the geometry is not smooth:
//  - Branches (face/edge choice, clamps, contact counts, make_contact_frame's choice of t1): the
//    derivative of the branch taken, i.e. a one-sided derivative at a switch.
//  - General convex pairs (MPR, kernels/collision/collision_convex.hpp): the derivative of the
//    returned dist and point along the iteration path MPR took (which support points formed the
//    final portal, stopped at the 1e-6 tolerance). It is the derivative of MPR's approximation, NOT
//    the true geometric derivative of the penetration: the two differ by up to the effect of the
//    portal's tolerance (tests/test_collision_adjoint.cpp measures it against finite differences
//    and against an exact answer). The analytic normals of mjc_fixNormal are differentiated
//    through their closed forms and, for the ellipsoid, through the fixed iterations taken.
//  - Degenerate configurations where the Dual run meets sqrt(0) (coincident sphere centres or
//    intersecting capsule segments: the distance |c2 - c1| has no derivative at 0) or a 0/0:
//    there the tangent is NaN or Inf. Such a tangent never leaks: every non-finite tangent
//    entry of an output (one lane of dist, pos[i] or frame[i]) counts as 0, i.e. that output is
//    treated as locally constant in that direction. For coincident sphere centres this keeps
//    the frame's derivative (the normal z1 x z2 is smooth in the rotations) and gives zero for
//    dist and pos.
//  - If the Dual pass finds a different contact count than the caller's ncontacts (possible only
//    if the forward pass was computed with different rounding, e.g. a differently fused device
//    build, at a pose within rounding of a switch), only the first min(count, ncontacts) contacts
//    are differentiated.
#pragma once

#include "kernels/collision/collision.hpp"
#include "kernels/base/dual.hpp"

namespace stiffgrad::kern {

namespace coll {
// MPR's zero test uses the machine epsilon of the scalar; a Dual<float> must compare with
// float's epsilon as the float forward pass does (the primary template holds double's), or the
// Dual pass could take other MPR branches than the float forward pass.
template <int N> struct MprEps<Dual<float, N>> { static constexpr double value = MprEps<float>::value; };
}  // namespace coll

namespace coll_adj {

constexpr int kInputs = 24;  // g1.pos, g1.mat, g2.pos, g2.mat

// x if finite, else 0 (x - x is NaN exactly for Inf and NaN; no fast-math in this project).
template <class T> SG_HD SG_INLINE T finite_or_zero(T x) { return (x - x == T(0)) ? x : T(0); }

// Dual copy of a pose whose pos/mat entry j (0..11: pos 0..2, mat 3..11) carries tangent lane
// k = (base + j) - first when that lies in [0, K).
// (Two loops: one loop over the 12 entries choosing pos[j] or mat[j - 3] made GCC form pos[j]'s
// address for j >= 3 once the routine was known at compile time: -Waggressive-loop-optimizations.)
template <class Real, int K>
SG_HD SG_INLINE void seed_entry(Real value, int k, Dual<Real, K>& x) {
  x = Dual<Real, K>(value);
  if (k >= 0 && k < K) x.d[k] = Real(1);
}
template <class Real, int K>
SG_HD SG_INLINE void seed_pose(const GeomPose<Real>& g, int base, int first, GeomPose<Dual<Real, K>>& gd) {
  gd.type = g.type;
  gd.mesh_vert = g.mesh_vert;
  gd.mesh_graph = g.mesh_graph;
  gd.mesh_nvert = g.mesh_nvert;
  for (int i = 0; i < 3; ++i) gd.size[i] = Dual<Real, K>(g.size[i]);
  for (int j = 0; j < 3; ++j) seed_entry(g.pos[j], base + j - first, gd.pos[j]);
  for (int j = 0; j < 9; ++j) seed_entry(g.mat[j], base + 3 + j - first, gd.mat[j]);
}

// acc[k] += bar * tangent lane k of x, skipping non-finite lanes (see the header comment).
template <class Real, int K>
SG_HD SG_INLINE void accumulate(Real acc[K], Real bar, const Dual<Real, K>& x) {
  if (bar == Real(0)) return;
  for (int k = 0; k < K; ++k) acc[k] += bar * finite_or_zero(x.d[k]);
}

// One routine's dual-number pass (collide_with<R> on Dual poses), outlined on the device: the
// adjoint kernel then holds one routine's dual frame at a time instead of all twelve inlined
// side by side, and ptxas compiles twelve moderate functions instead of one huge one.
template <int R, class D>
SG_HD SG_OUTLINE int dual_pass(const GeomPose<D>& g1, const GeomPose<D>& g2, D margin, Contact<D>* out) {
  return collide_with<R>(g1, g2, margin, out);
}

// collide_geoms on Dual poses, through dual_pass: the same routine and arithmetic.
template <class D>
SG_HD SG_INLINE int dual_collide(const GeomPose<D>& g1, const GeomPose<D>& g2, D margin, Contact<D>* out) {
  int n = 0;
  with_pair_routine(pair_routine(g1.type, g2.type), [&](auto r) { n = dual_pass<decltype(r)::value>(g1, g2, margin, out); });
  return n;
}

}  // namespace coll_adj

// One Dual pass: directions first .. first + K - 1 of the 24 inputs (g1.pos, g1.mat, g2.pos,
// g2.mat; a direction past 23 is not seeded and its acc is 0). acc[k] = sum over the first
// min(count, ncontacts) contacts c of <bar(c), tangent k of contact c> (bar(c): contact c's
// adjoint as a Contact<Real>, by value or reference), non-finite tangents counted as 0.
// R: the pair's routine (its Dual outputs sized by routine_max_contacts(R)) or kRoutineNone. A
// pass does not depend on K or on the other passes, so callers may split the 24 directions
// among threads (the staged adjoint's pairs stage) and get adj_collide_geoms's sums bit for bit.
template <class Real, int K, int R, class Bar>
SG_HD void adj_collide_geoms_pass(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                                  const Bar& bar, int ncontacts, int first, Real acc[K]) {
  using D = Dual<Real, K>;
  GeomPose<D> d1, d2;
  coll_adj::seed_pose(g1, 0, first, d1);
  coll_adj::seed_pose(g2, 12, first, d2);
  Contact<D> out[routine_max_contacts(R)];
  // the pair's routine R when the caller knows it (the staged adjoint's per-routine kernels),
  // else the dispatch on the geom types
  int n = 0;
  if constexpr (R == kRoutineNone)
    n = coll_adj::dual_collide(d1, d2, D(margin), out);
  else
    n = coll_adj::dual_pass<R>(d1, d2, D(margin), out);
  const int m = n < ncontacts ? n : ncontacts;
  for (int k = 0; k < K; ++k) acc[k] = Real(0);
  for (int c = 0; c < m; ++c) {
    const auto& b = bar(c);
    coll_adj::accumulate<Real, K>(acc, b.dist, out[c].dist);
    for (int i = 0; i < 3; ++i) coll_adj::accumulate<Real, K>(acc, b.pos[i], out[c].pos[i]);
    for (int i = 0; i < 9; ++i) coll_adj::accumulate<Real, K>(acc, b.frame[i], out[c].frame[i]);
  }
}

// adj_collide_geoms with an explicit number K of directions per Dual pass (1 <= K <= 24), and the
// pair's routine R (kRoutineNone: from the geom types).
template <class Real, int K, int R = kRoutineNone>
SG_HD void adj_collide_geoms_k(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                               const Contact<Real>* contact_bar, int ncontacts, Real g1_pos_bar[3],
                               Real g1_mat_bar[9], Real g2_pos_bar[3], Real g2_mat_bar[9]) {
  static_assert(K >= 1 && K <= coll_adj::kInputs, "K directions per pass, 1..24");
  if (ncontacts <= 0) return;
  const auto bar = [contact_bar](int c) -> const Contact<Real>& { return contact_bar[c]; };
  // one loop per pass: on the device, unrolling would copy the whole narrow phase 24/K times
#if defined(__CUDACC__)
#pragma unroll 1
#endif
  for (int first = 0; first < coll_adj::kInputs; first += K) {
    Real acc[K];
    adj_collide_geoms_pass<Real, K, R>(g1, g2, margin, bar, ncontacts, first, acc);
    for (int k = 0; k < K; ++k) {
      const int j = first + k;
      if (j < 3) g1_pos_bar[j] += acc[k];
      else if (j < 12) g1_mat_bar[j - 3] += acc[k];
      else if (j < 15) g2_pos_bar[j - 12] += acc[k];
      else if (j < 24) g2_mat_bar[j - 15] += acc[k];
    }
  }
}

// Vector-Jacobian product of collide_geoms(g1, g2, margin, .) at this pose: contact_bar[c]
// (c < ncontacts, in the order collide_geoms returned them) holds the adjoints of contact c's
// dist, pos[3] and frame[9]; the products are ADDED to g1_pos_bar, g1_mat_bar, g2_pos_bar and
// g2_mat_bar (mat entries as collide_geoms reads them, row-major). K = 8 directions per pass.
// R: the pair's routine, or kRoutineNone (from the geom types); the result does not depend on it.
template <class Real, int R = kRoutineNone>
SG_HD void adj_collide_geoms(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                             const Contact<Real>* contact_bar, int ncontacts, Real g1_pos_bar[3],
                             Real g1_mat_bar[9], Real g2_pos_bar[3], Real g2_mat_bar[9]) {
  adj_collide_geoms_k<Real, 8, R>(g1, g2, margin, contact_bar, ncontacts, g1_pos_bar, g1_mat_bar,
                                  g2_pos_bar, g2_mat_bar);
}

}  // namespace stiffgrad::kern
