// The bundle's averaged state (BCG, issue 9; docs/architecture.md "Bundles"): what observations and
// rewards see and what the nominal rollout resumes from after the bundle's H steps, with its
// adjoint (1/B of the mean's adjoint to every branch, through the quaternion normalization).
//
// qpos: hinge, slide and free-joint translations are averaged; free and ball quaternions are
// sign-aligned to branch 0 (q and -q are one rotation), averaged and normalized (normalize4,
// MuJoCo's semantics); qvel: averaged. The alignment signs are constants of the adjoint (they
// change only where a branch's quaternion is orthogonal to branch 0's, 90 degrees away).
//
// Branch b's state starts at element b * nq of `qpos_branches` (b * nv of `qvel_branches`):
// branch-major in the element index of the view, whatever the view's layout.
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/math3.hpp"
#include "kernels/base/math3_adjoint.hpp"

namespace stiffgrad::kern {

// Calls f(adr, is_quaternion) for every block of qpos: a quaternion's first element (4 wide),
// or a scalar coordinate.
template <class Real, class F>
SG_HD SG_INLINE void for_each_qpos_block(const ModelView<Real>& m, F&& f) {
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) f(pa + c, false);
      pa += 3;
    }
    if (type == kJntFree || type == kJntBall) f(pa, true);
    else f(pa, false);
  }
}

// The sign aligning branch b's quaternion at qpos adr with branch 0's: +1, or -1 when their
// dot product is negative.
template <class Real, class L>
SG_HD SG_INLINE Real bundle_quat_sign(View<Real, L> q, int nq, int b, int adr) {
  Real dot(0);
  for (int k = 0; k < 4; ++k) dot += q[b * nq + adr + k] * q[adr + k];
  return dot < Real(0) ? Real(-1) : Real(1);
}

template <class Real, class L>
SG_HD void bundle_mean_state(const ModelView<Real>& m, View<Real, L> qpos_branches, View<Real, L> qvel_branches,
                             int B, View<Real, L> qpos, View<Real, L> qvel) {
  const int nq = m.nq, nv = m.nv;
  const Real inv_B = Real(1) / Real(B);
  for_each_qpos_block(m, [&](int adr, bool quaternion) {
    if (!quaternion) {
      Real s(0);
      for (int b = 0; b < B; ++b) s += qpos_branches[b * nq + adr];
      qpos[adr] = s * inv_B;
      return;
    }
    Real q[4] = {Real(0), Real(0), Real(0), Real(0)};
    for (int b = 0; b < B; ++b) {
      const Real sign = bundle_quat_sign(qpos_branches, nq, b, adr);
      for (int k = 0; k < 4; ++k) q[k] += sign * qpos_branches[b * nq + adr + k];
    }
    for (int k = 0; k < 4; ++k) q[k] *= inv_B;
    normalize4(q);
    for (int k = 0; k < 4; ++k) qpos[adr + k] = q[k];
  });
  for (int i = 0; i < nv; ++i) {
    Real s(0);
    for (int b = 0; b < B; ++b) s += qvel_branches[b * nv + i];
    qvel[i] = s * inv_B;
  }
}

// Adjoint: given qpos_bar (nq) and qvel_bar (nv) of the mean, adds the branches' adjoints into
// qpos_branches_bar and qvel_branches_bar (same arrangement as the branches).
template <class Real, class L>
SG_HD void adj_bundle_mean_state(const ModelView<Real>& m, View<Real, L> qpos_branches, int B, View<Real, L> qpos_bar,
                                 View<Real, L> qvel_bar, View<Real, L> qpos_branches_bar,
                                 View<Real, L> qvel_branches_bar) {
  const int nq = m.nq, nv = m.nv;
  const Real inv_B = Real(1) / Real(B);
  for_each_qpos_block(m, [&](int adr, bool quaternion) {
    if (!quaternion) {
      for (int b = 0; b < B; ++b) qpos_branches_bar[b * nq + adr] += qpos_bar[adr] * inv_B;
      return;
    }
    // recompute the unnormalized mean, then back through normalize4 and the average
    Real q[4] = {Real(0), Real(0), Real(0), Real(0)}, q_bar[4] = {Real(0), Real(0), Real(0), Real(0)};
    for (int b = 0; b < B; ++b) {
      const Real sign = bundle_quat_sign(qpos_branches, nq, b, adr);
      for (int k = 0; k < 4; ++k) q[k] += sign * qpos_branches[b * nq + adr + k];
    }
    for (int k = 0; k < 4; ++k) q[k] *= inv_B;
    Real out_bar[4];
    for (int k = 0; k < 4; ++k) out_bar[k] = qpos_bar[adr + k];
    adj_normalize4(q, q_bar, out_bar);
    for (int b = 0; b < B; ++b) {
      const Real sign = bundle_quat_sign(qpos_branches, nq, b, adr);
      for (int k = 0; k < 4; ++k) qpos_branches_bar[b * nq + adr + k] += sign * inv_B * q_bar[k];
    }
  });
  for (int i = 0; i < nv; ++i)
    for (int b = 0; b < B; ++b) qvel_branches_bar[b * nv + i] += qvel_bar[i] * inv_B;
}

}  // namespace stiffgrad::kern
