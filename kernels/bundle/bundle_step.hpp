// One environment's bundled control step (Bundled Contact Gradients, issue 9;
// stiffgrad/bundle.hpp has the rules): the start of a bundle (B perturbed copies of the
// environment's state) and one of its H control steps (every branch stepped by
// control_step_env with the environment's control, then the environment's state set to the
// branches' average). Both backends call these per environment; the scheduling (trigger, pool)
// is theirs.
//
// Branch arrays hold branch b at element b * n of their view (n = nq or nv; bundle_mean.hpp's
// arrangement): qb, vb (and wb, the soft model's warm starts; null without) at one time index.
#pragma once

#include "kernels/step/batch.hpp"
#include "kernels/bundle/bundle_mean.hpp"
#include "kernels/bundle/bundle_perturbation.hpp"

namespace stiffgrad::kern {

struct BundleParams {
  int branches;                     // B
  double sigma_p, sigma_v, lambda;  // bundle_perturbation
  std::uint64_t seed;
};

// The bodies the perturbation moves: those (world excluded) of the contacts touching (dist < 0)
// at d's state, after fwd_position and fwd_collision; if none touches, the bodies of the closest
// contact. At most kBundleMaxBodies, in contact order. Returns their count.
template <class Real, class L>
SG_HD int bundle_contact_bodies(const ModelView<Real>& m, const Data<Real, L>& d, int* bodies) {
  const int ncon = sg_int(d.ncon()[0]);
  int K = 0, closest = -1;
  auto add = [&](int body) {
    if (body <= 0 || K >= kBundleMaxBodies) return;
    for (int i = 0; i < K; ++i)
      if (bodies[i] == body) return;
    bodies[K++] = body;
  };
  for (int k = 0; k < ncon; ++k) {
    if (closest < 0 || d.contact_dist()[k] < d.contact_dist()[closest]) closest = k;
    if (!(d.contact_dist()[k] < Real(0))) continue;
    const int pair = sg_int(d.contact_pair()[k]);
    add(m.geom_bodyid[m.cpair_geom1[pair]]);
    add(m.geom_bodyid[m.cpair_geom2[pair]]);
  }
  if (K == 0 && closest >= 0) {
    const int pair = sg_int(d.contact_pair()[closest]);
    add(m.geom_bodyid[m.cpair_geom1[pair]]);
    add(m.geom_bodyid[m.cpair_geom2[pair]]);
  }
  return K;
}

// The branches' starting states from the environment's (qpos, qvel, warm) and the
// perturbations: q_b = qpos ⊕ δq_b, v_b = qvel + δv_b, w_b = warm (zero when null). The forward
// pass and the adjoint's replay both build them here, bit for bit alike.
template <class Real, class LS, class LB>
SG_HD void bundle_branch_starts(const ModelView<Real>& m, int B, View<Real, LS> qpos, View<Real, LS> qvel,
                                View<Real, LS> warm, View<Real, LB> dq, View<Real, LB> dv, View<Real, LB> qb,
                                View<Real, LB> vb, View<Real, LB> wb) {
  const int nq = m.nq, nv = m.nv;
  for (int b = 0; b < B; ++b) {
    const View<Real, LB> q_b = qb.at(b * nq);
    for (int i = 0; i < nq; ++i) q_b[i] = qpos[i];
    integrate_pos(m, q_b, dq.at(b * nv), Real(1));
    for (int i = 0; i < nv; ++i) vb[b * nv + i] = qvel[i] + dv[b * nv + i];
    if (wb.p)
      for (int i = 0; i < nv; ++i) wb[b * nv + i] = warm.p ? warm[i] : Real(0);
  }
}

// The branches of a bundle starting at control step `step` of environment `env`, from its state
// (qpos, qvel, warm) and the contacts at that state, which d holds with its kinematics
// (fwd_position and fwd_collision, or on CUDA the staged contact search: staged_contacts_begin,
// the narrow stage, staged_gather_contacts): draws every branch's perturbation (δq_b, δv_b) into
// dq, dv (B x nv, kept for the adjoint) and builds the branches' states (bundle_branch_starts)
// into qb, vb, wb. `scratch`: bundle_perturbation_scratch_size Reals.
template <class Real, class LS, class LW, class LB>
SG_HD void bundle_start_from_contacts(const ModelView<Real>& m, const BundleParams& p, int env,
                                      int step, View<Real, LS> qpos, View<Real, LS> qvel,
                                      View<Real, LS> warm, const Data<Real, LW>& d,
                                      View<Real, LB> dq, View<Real, LB> dv, View<Real, LB> qb,
                                      View<Real, LB> vb, View<Real, LB> wb,
                                      View<Real, LB> scratch) {
  int bodies[kBundleMaxBodies];
  const int K = bundle_contact_bodies(m, d, bodies);
  for (int b = 0; b < p.branches; ++b) {
    const RandomStream stream{p.seed, static_cast<std::uint32_t>(env), static_cast<std::uint32_t>(step),
                              static_cast<std::uint32_t>(b)};
    bundle_perturbation(m, d, bodies, K, Real(p.sigma_p), Real(p.sigma_v), Real(p.lambda), stream, scratch,
                        dq.at(b * m.nv), dv.at(b * m.nv));
  }
  bundle_branch_starts(m, p.branches, qpos, qvel, warm, dq, dv, qb, vb, wb);
}

// Starts a bundle at control step `step` of environment `env` from its state (qpos, qvel, warm):
// the kinematics and contacts at that state in d, then bundle_start_from_contacts. Uses d and
// `scratch` (bundle_perturbation_scratch_size Reals).
template <class Real, class LS, class LW, class LB>
SG_HD void bundle_start_env(const ModelView<Real>& m, const BundleParams& p, int env, int step,
                            View<Real, LS> qpos, View<Real, LS> qvel, View<Real, LS> warm,
                            const Data<Real, LW>& d, View<Real, LB> dq, View<Real, LB> dv,
                            View<Real, LB> qb, View<Real, LB> vb, View<Real, LB> wb,
                            View<Real, LB> scratch) {
  for (int i = 0; i < m.nq; ++i) d.qpos()[i] = qpos[i];
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] = qvel[i];
  fwd_position(m, d);
  fwd_collision(m, d);
  bundle_start_from_contacts(m, p, env, step, qpos, qvel, warm, d, dq, dv, qb, vb, wb, scratch);
}

// The pieces of a bundled control step (bundle_step_env below runs them with each branch's
// control_step_env in between; the CUDA backend runs each branch as the nominal step over the
// bundled environments: bundle_branches_begin_env, the steps, bundle_branches_finish_env).
//
// Branch b's start: its state at the step's start (qb, vb, wb) copied to where its control step
// leaves its end (qb1, vb1, wb1; the step updates them in place). wb1 may be null.
template <class Real, class LB>
SG_HD SG_INLINE void bundle_branch_begin(const ModelView<Real>& m, int b, View<Real, LB> qb,
                                         View<Real, LB> vb, View<Real, LB> wb, View<Real, LB> qb1,
                                         View<Real, LB> vb1, View<Real, LB> wb1) {
  const int nq = m.nq, nv = m.nv;
  for (int i = 0; i < nq; ++i) qb1[b * nq + i] = qb[b * nq + i];
  for (int i = 0; i < nv; ++i) vb1[b * nv + i] = vb[b * nv + i];
  if (wb1.p)
    for (int i = 0; i < nv; ++i) wb1[b * nv + i] = wb[b * nv + i];
}

// One branch's statistics (branch_stats, kContactStats) into the environment's (stats), in
// branch order: over the branches the most contacts, the largest force and penetration, the
// mean impulse, and the summed integrator steps, evaluations and iterations (the bundle's cost).
template <class Real, class LS, class LB>
SG_HD SG_INLINE void bundle_merge_branch_stats(int B, View<Real, LS> stats,
                                               View<Real, LB> branch_stats) {
  for (const int k : {int(kStatActiveContacts), int(kStatMaxNormalForce), int(kStatMaxPenetration)})
    if (branch_stats[k] > stats[k]) stats[k] = branch_stats[k];
  stats[kStatNormalImpulse] += branch_stats[kStatNormalImpulse] / Real(B);
  for (const int k :
       {int(kStatIntegratorSteps), int(kStatDynamicsEvals), int(kStatSolverIterations)})
    stats[k] += branch_stats[k];
}

// The end, after every branch's step (`raised`: their status bits): a branch that turned
// non-finite sets kEnvNonFinite in *status and the environment keeps its state (as
// control_step_env does); otherwise its state (qpos, qvel) is the branches' average and its warm
// start branch 0's. d's qpos and qvel are scratch.
template <class Real, class LS, class LW, class LB>
SG_HD void bundle_step_end(const ModelView<Real>& m, int B, int raised, View<Real, LB> qb1,
                           View<Real, LB> vb1, View<Real, LB> wb1, const Data<Real, LW>& d,
                           View<Real, LS> qpos, View<Real, LS> qvel, View<Real, LS> warm,
                           int* status) {
  *status |= raised;
  if (raised & kEnvNonFinite) return;
  bundle_mean_state(m, qb1, vb1, B, d.qpos(), d.qvel());
  for (int i = 0; i < m.nq; ++i) qpos[i] = d.qpos()[i];
  for (int i = 0; i < m.nv; ++i) qvel[i] = d.qvel()[i];
  if (warm.p && wb1.p)
    for (int i = 0; i < m.nv; ++i) warm[i] = wb1[i];
}

// One control step of a bundle: branch b from (qb, vb, wb) to (qb1, vb1, wb1) with control
// `ctrl`, then the environment's state (qpos, qvel) is the branches' average and its warm start
// branch 0's (bundle_step_end). `u` (nu) and `branch_stats` (kContactStats) are scratch. The
// environment's `stats` (may be null) get the branches' statistics (bundle_merge_branch_stats).
// Nothing happens to an environment already non-finite.
template <class Real, class LS, class LW, class LB>
SG_HD void bundle_step_env(const ModelView<Real>& m, const BundleParams& p, View<Real, LS> qpos, View<Real, LS> qvel,
                           View<Real, LS> ctrl, View<Real, LS> warm, const Data<Real, LW>& d, int substeps,
                           int* status, View<Real, LS> stats, View<Real, LB> qb, View<Real, LB> vb, View<Real, LB> wb,
                           View<Real, LB> qb1, View<Real, LB> vb1, View<Real, LB> wb1, View<Real, LB> u,
                           View<Real, LB> branch_stats) {
  const int nq = m.nq, nv = m.nv, B = p.branches;
  if (*status & kEnvNonFinite) return;
  for (int i = 0; i < m.nu; ++i) u[i] = ctrl[i];
  const bool with_stats = stats.p != nullptr;
  if (with_stats) clear_contact_stats(stats);
  int raised = 0;
  for (int b = 0; b < B; ++b) {
    bundle_branch_begin(m, b, qb, vb, wb, qb1, vb1, wb1);
    int st = 0;
    control_step_env(m, qb1.at(b * nq), vb1.at(b * nv), u, wb1.p ? wb1.at(b * nv) : View<Real, LB>{}, d, substeps, &st,
                     with_stats ? branch_stats : View<Real, LB>{});
    raised |= st;
    if (with_stats) bundle_merge_branch_stats(B, stats, branch_stats);
  }
  bundle_step_end(m, B, raised, qb1, vb1, wb1, d, qpos, qvel, warm, status);
}

// The bundled step with its branches stepped elsewhere, all at once (the CUDA backend: each
// branch is one launch of the nominal control step over the bundled environments).
// Begin: nothing for an environment already non-finite (its branches must not step either: the
// caller's skip flag); else the environment's statistics cleared, every branch's start copied
// (bundle_branch_begin) from (qb, vb, wb) and its status bits branch_status[b * status_stride]
// cleared.
template <class Real, class LS, class LB>
SG_HD void bundle_branches_begin_env(const ModelView<Real>& m, int B, const int* status,
                                     View<Real, LS> stats, View<Real, LB> qb, View<Real, LB> vb,
                                     View<Real, LB> wb, View<Real, LB> qb1, View<Real, LB> vb1,
                                     View<Real, LB> wb1, int* branch_status, int status_stride) {
  if (*status & kEnvNonFinite) return;
  if (stats.p != nullptr) clear_contact_stats(stats);
  for (int b = 0; b < B; ++b) {
    bundle_branch_begin(m, b, qb, vb, wb, qb1, vb1, wb1);
    branch_status[b * status_stride] = 0;
  }
}

// Finish, after every branch's control step (its status bits in branch_status[b * status_stride],
// its statistics at branch_stats.at(b * kContactStats)): the statistics merged in branch order
// and bundle_step_end, as bundle_step_env. Nothing for an environment already non-finite.
template <class Real, class LS, class LW, class LB>
SG_HD void bundle_branches_finish_env(const ModelView<Real>& m, int B, View<Real, LS> qpos,
                                      View<Real, LS> qvel, View<Real, LS> warm,
                                      const Data<Real, LW>& d, int* status, View<Real, LS> stats,
                                      View<Real, LB> qb1, View<Real, LB> vb1, View<Real, LB> wb1,
                                      const int* branch_status, int status_stride,
                                      View<Real, LB> branch_stats) {
  if (*status & kEnvNonFinite) return;
  int raised = 0;
  for (int b = 0; b < B; ++b) {
    raised |= branch_status[b * status_stride];
    if (stats.p != nullptr) bundle_merge_branch_stats(B, stats, branch_stats.at(b * kContactStats));
  }
  bundle_step_end(m, B, raised, qb1, vb1, wb1, d, qpos, qvel, warm, status);
}

}  // namespace stiffgrad::kern
