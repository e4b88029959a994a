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

// Starts a bundle at control step `step` of environment `env` from its state (qpos, qvel, warm):
// draws every branch's perturbation (δq_b, δv_b) into dq, dv (B x nv, kept for the adjoint) and
// builds the branches' states (bundle_branch_starts) into qb, vb, wb. Uses d and `scratch`
// (bundle_perturbation_scratch_size Reals).
template <class Real, class LS, class LW, class LB>
SG_HD void bundle_start_env(const ModelView<Real>& m, const BundleParams& p, int env, int step, View<Real, LS> qpos,
                            View<Real, LS> qvel, View<Real, LS> warm, const Data<Real, LW>& d, View<Real, LB> dq,
                            View<Real, LB> dv, View<Real, LB> qb, View<Real, LB> vb, View<Real, LB> wb,
                            View<Real, LB> scratch) {
  for (int i = 0; i < m.nq; ++i) d.qpos()[i] = qpos[i];
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] = qvel[i];
  fwd_position(m, d);
  fwd_collision(m, d);
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

// One control step of a bundle: branch b from (qb, vb, wb) to (qb1, vb1, wb1) with control
// `ctrl`, then the environment's state (qpos, qvel) is the branches' average and its warm start
// branch 0's. `u` (nu) and `branch_stats` (kContactStats) are scratch. The environment's `stats`
// (may be null) get over the branches the most contacts, the largest force and penetration, the
// mean impulse, and the summed integrator steps, evaluations and iterations (the bundle's cost).
// A branch that turns non-finite sets kEnvNonFinite in *status, and the environment keeps its
// state (as control_step_env does).
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
    for (int i = 0; i < nq; ++i) qb1[b * nq + i] = qb[b * nq + i];
    for (int i = 0; i < nv; ++i) vb1[b * nv + i] = vb[b * nv + i];
    if (wb1.p)
      for (int i = 0; i < nv; ++i) wb1[b * nv + i] = wb[b * nv + i];
    int st = 0;
    control_step_env(m, qb1.at(b * nq), vb1.at(b * nv), u, wb1.p ? wb1.at(b * nv) : View<Real, LB>{}, d, substeps, &st,
                     with_stats ? branch_stats : View<Real, LB>{});
    raised |= st;
    if (!with_stats) continue;
    for (const int k : {int(kStatActiveContacts), int(kStatMaxNormalForce), int(kStatMaxPenetration)})
      if (branch_stats[k] > stats[k]) stats[k] = branch_stats[k];
    stats[kStatNormalImpulse] += branch_stats[kStatNormalImpulse] / Real(B);
    for (const int k : {int(kStatIntegratorSteps), int(kStatDynamicsEvals), int(kStatSolverIterations)})
      stats[k] += branch_stats[k];
  }
  *status |= raised;
  if (raised & kEnvNonFinite) return;
  bundle_mean_state(m, qb1, vb1, B, d.qpos(), d.qvel());
  for (int i = 0; i < nq; ++i) qpos[i] = d.qpos()[i];
  for (int i = 0; i < nv; ++i) qvel[i] = d.qvel()[i];
  if (warm.p && wb1.p)
    for (int i = 0; i < nv; ++i) warm[i] = wb1[i];
}

}  // namespace stiffgrad::kern
