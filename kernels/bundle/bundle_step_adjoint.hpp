// Adjoint of kernels/bundle/bundle_step.hpp: one bundled control step in reverse, replaying every
// branch from its recorded state (adj_control_step_env), and, at the bundle's first step, the
// perturbation q ⊕ δq with δq constant.
#pragma once

#include "kernels/step/batch_adjoint.hpp"
#include "kernels/bundle/bundle_step.hpp"
#include "kernels/integrators/integrate_adjoint.hpp"

namespace stiffgrad::kern {

// Reverse of bundle_step_env, in three parts so that a caller can run every branch's
// adj_control_step_env from one call site (the CUDA adjoint kernel does: one inlined copy of the
// adjoint, not two); adj_bundle_step_env below composes them.
//
// Begin: when `first` (the bundle's first step), rebuild the branch states (qb, vb, wb) from the
// environment's state (qpos0, qvel0, warm0) and the recorded perturbations (dq, dv) by
// bundle_branch_starts. Then the average's adjoint: on entry adj_qpos, adj_qvel (LS) hold the
// adjoint of the environment's state after the step; 1/B of it goes to every branch's running
// adjoint adj_qb, adj_vb (B x nq, B x nv; through the quaternions' normalization) and adj_qpos,
// adj_qvel are cleared. The control is copied into `u` (nu) for the branches, adj_ctrl cleared.
template <class Real, class LS, class LB>
SG_HD void adj_bundle_step_begin(const ModelView<Real>& m, const BundleParams& p, bool first, View<Real, LS> qpos0,
                                 View<Real, LS> qvel0, View<Real, LS> warm0, View<Real, LS> ctrl, View<Real, LB> qb,
                                 View<Real, LB> vb, View<Real, LB> wb, View<Real, LB> qb1, View<Real, LB> dq,
                                 View<Real, LB> dv, View<Real, LS> adj_qpos, View<Real, LS> adj_qvel,
                                 View<Real, LS> adj_ctrl, View<Real, LB> adj_qb, View<Real, LB> adj_vb,
                                 View<Real, LB> u, View<Real, LB> tq, View<Real, LB> tv) {
  const int nq = m.nq, nv = m.nv, nu = m.nu, B = p.branches;
  if (first) bundle_branch_starts(m, B, qpos0, qvel0, warm0, dq, dv, qb, vb, wb);
  for (int i = 0; i < nq; ++i) { tq[i] = adj_qpos[i]; adj_qpos[i] = Real(0); }
  for (int i = 0; i < nv; ++i) { tv[i] = adj_qvel[i]; adj_qvel[i] = Real(0); }
  adj_bundle_mean_state(m, qb1, B, tq, tv, adj_qb, adj_vb);
  for (int i = 0; i < nu; ++i) { u[i] = ctrl[i]; adj_ctrl[i] = Real(0); }
}

// End, after every branch's adj_control_step_env (each adding its control adjoint to adj_ctrl):
// at the bundle's first step the branches' adjoints go back through q_b = qpos0 ⊕ δq_b,
// v_b = qvel0 + δv_b (δ constant) into adj_qpos, adj_qvel and are cleared. `tq` (nq) and `sink`
// (nv) are scratch.
template <class Real, class LS, class LB>
SG_HD void adj_bundle_step_end(const ModelView<Real>& m, const BundleParams& p, bool first, View<Real, LS> qpos0,
                               View<Real, LB> dq, View<Real, LS> adj_qpos, View<Real, LS> adj_qvel,
                               View<Real, LB> adj_qb, View<Real, LB> adj_vb, View<Real, LB> tq, View<Real, LB> sink) {
  if (!first) return;
  const int nq = m.nq, nv = m.nv;
  for (int i = 0; i < nq; ++i) tq[i] = qpos0[i];
  for (int b = 0; b < p.branches; ++b) {
    const View<Real, LB> aq = adj_qb.at(b * nq), av = adj_vb.at(b * nv);
    adj_integrate_pos(m, tq, dq.at(b * nv), Real(1), aq, sink);  // δq constant: its adjoint is dropped
    for (int i = 0; i < nq; ++i) { adj_qpos[i] += aq[i]; aq[i] = Real(0); }
    for (int i = 0; i < nv; ++i) { adj_qvel[i] += av[i]; av[i] = Real(0); }
  }
}

// The whole reverse of bundle_step_env from branch states (qb, vb, wb) to (qb1, vb1): begin,
// every branch's adj_control_step_env (control adjoints summed into adj_ctrl), end. `u`, `adj_u`
// (nu), `tq` (nq), `tv` (nv), `sink` (nv) are scratch. Returns whether every branch replayed its
// recorded next state bit for bit.
template <class Real, class LS, class LW, class LB>
SG_HD bool adj_bundle_step_env(const ModelView<Real>& m, const ModelView<Real>& mg, const DataLayout& o,
                               const BundleParams& p, bool first, View<Real, LS> qpos0, View<Real, LS> qvel0,
                               View<Real, LS> warm0, View<Real, LS> ctrl, View<Real, LB> qb, View<Real, LB> vb,
                               View<Real, LB> wb, View<Real, LB> qb1, View<Real, LB> vb1, View<Real, LB> dq,
                               View<Real, LB> dv, View<Real, LS> adj_qpos, View<Real, LS> adj_qvel,
                               View<Real, LS> adj_ctrl, View<Real, LB> adj_qb, View<Real, LB> adj_vb,
                               const Data<Real, LW>& d, const Data<Real, LW>& d_keep, const Data<Real, LW>& a,
                               View<Real, LW> adj_buffer, View<Real, LW> replay, int substeps, View<Real, LB> u,
                               View<Real, LB> adj_u, View<Real, LB> tq, View<Real, LB> tv, View<Real, LB> sink) {
  const int nq = m.nq, nv = m.nv, nu = m.nu;
  adj_bundle_step_begin(m, p, first, qpos0, qvel0, warm0, ctrl, qb, vb, wb, qb1, dq, dv, adj_qpos, adj_qvel, adj_ctrl,
                        adj_qb, adj_vb, u, tq, tv);
  bool identical = true;
  for (int b = 0; b < p.branches; ++b) {
    identical = adj_control_step_env(m, mg, o, qb.at(b * nq), vb.at(b * nv), u, wb.p ? wb.at(b * nv) : View<Real, LB>{},
                                     qb1.at(b * nq), vb1.at(b * nv), adj_qb.at(b * nq), adj_vb.at(b * nv), adj_u, d,
                                     d_keep, a, adj_buffer, replay, substeps) &&
                identical;
    for (int i = 0; i < nu; ++i) adj_ctrl[i] += adj_u[i];
  }
  adj_bundle_step_end(m, p, first, qpos0, dq, adj_qpos, adj_qvel, adj_qb, adj_vb, tq, sink);
  return identical;
}

// The reverse of the bundled step with its branches' adjoints run elsewhere, all at once (the
// CUDA backend: each branch's adjoint is one launch of the staged adjoint over the bundled
// environments, kern::staged_adjoint_*). Begin: every branch's state at the step's start goes
// to (qb, vb, wb), where the branch adjoints read their checkpoints: rebuilt from the
// perturbations at the bundle's first step (adj_bundle_step_begin), else copied from the
// recorded branch states at time t (qb_t, vb_t, wb_t); then adj_bundle_step_begin.
template <class Real, class LS, class LB>
SG_HD void adj_bundle_branches_begin_env(const ModelView<Real>& m, const BundleParams& p,
                                         bool first, View<Real, LS> qpos0, View<Real, LS> qvel0,
                                         View<Real, LS> warm0, View<Real, LS> ctrl,
                                         View<Real, LB> qb_t, View<Real, LB> vb_t,
                                         View<Real, LB> wb_t, View<Real, LB> qb, View<Real, LB> vb,
                                         View<Real, LB> wb, View<Real, LB> qb1, View<Real, LB> dq,
                                         View<Real, LB> dv, View<Real, LS> adj_qpos,
                                         View<Real, LS> adj_qvel, View<Real, LS> adj_ctrl,
                                         View<Real, LB> adj_qb, View<Real, LB> adj_vb,
                                         View<Real, LB> u, View<Real, LB> tq, View<Real, LB> tv) {
  if (!first)
    for (int b = 0; b < p.branches; ++b) bundle_branch_begin(m, b, qb_t, vb_t, wb_t, qb, vb, wb);
  adj_bundle_step_begin(m, p, first, qpos0, qvel0, warm0, ctrl, qb, vb, wb, qb1, dq, dv, adj_qpos,
                        adj_qvel, adj_ctrl, adj_qb, adj_vb, u, tq, tv);
}

// End, after every branch's adjoint (branch b's control adjoint at branch_adj_u.at(b * nu)): the
// control adjoints summed in branch order, adj_bundle_step_end, then the loss gradient of the
// state at the step's start (dl_q, dl_v; null views: none), as adj_bundle_step_env and the
// adjoint kernels do.
template <class Real, class LS, class LB>
SG_HD void adj_bundle_branches_end_env(const ModelView<Real>& m, const BundleParams& p, bool first,
                                       View<Real, LS> qpos0, View<Real, LB> dq,
                                       View<Real, LS> adj_qpos, View<Real, LS> adj_qvel,
                                       View<Real, LS> adj_ctrl, View<Real, LB> branch_adj_u,
                                       View<Real, LB> adj_qb, View<Real, LB> adj_vb,
                                       View<Real, LB> tq, View<Real, LB> sink, View<Real, LS> dl_q,
                                       View<Real, LS> dl_v) {
  for (int b = 0; b < p.branches; ++b)
    for (int i = 0; i < m.nu; ++i) adj_ctrl[i] += branch_adj_u[b * m.nu + i];
  adj_bundle_step_end(m, p, first, qpos0, dq, adj_qpos, adj_qvel, adj_qb, adj_vb, tq, sink);
  if (dl_q.p)
    for (int i = 0; i < m.nq; ++i) adj_qpos[i] += dl_q[i];
  if (dl_v.p)
    for (int i = 0; i < m.nv; ++i) adj_qvel[i] += dl_v[i];
}

}  // namespace stiffgrad::kern
