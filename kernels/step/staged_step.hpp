// The staged control step: a substep cut into stages that a GPU runs as separate kernels, each
// over the items it is independent in. Every model, integrator and contact model runs this way
// on the CUDA backend (the Runge–Kutta methods below; without constraints the narrow, rows and
// solve stages are left out). The Euler family with soft constraints (kernels/step/step.hpp):
//
//   begin        per environment         control_step_begin (load state, control, warm start)
//   per substep:
//     smooth     per environment         kinematics .. qacc_smooth, geom poses
//     narrow     per (pair, environment) one candidate pair's narrow phase into its slots
//     rows       per environment         gather the slots in pair order, the constraint rows
//     solve      per environment, a team constraint_solve: the Newton solve with rows and dofs
//                                        across the team's lanes and its sums in the order of
//                                        m.team_width (a warp per environment on the GPU)
//     finish     per environment         the Euler solve and integration, statistics
//   end          per environment         control_step_end (finite check, store)
//
// and the contact search alone (a bundle's start): staged_contacts_begin per environment, the
// narrow stage, staged_gather_contacts per environment.
//
// and the Impulse model (kernels/impulse/impulse_step.hpp), whose substep is six stages:
//     half step  per environment         impulse_substep_half_step (start state saved, q_mid)
//     smooth     per environment         impulse_substep_kinematics, geom poses
//     narrow     per (pair, environment) as above
//     rows       per environment         impulse_substep_smooth (τ, M̃'s factor, qacc_smooth),
//                                        gather the slots, impulse_rows
//     solve      per environment, a team impulse_substep_solve: Y, G and c row by row across the
//                                        team's lanes, then the Gauss–Seidel sweeps with each
//                                        residual summed across them (a warp per environment on
//                                        the GPU; its sums follow m.team_width)
//     finish     per environment         impulse_substep_finish (qacc, v', q'), statistics
//
// The narrow stage is launched once per routine (kernels/collision/collision.hpp PairRoutine)
// over that routine's pairs, so the routine and the pair index are uniform across a warp and the
// environment-minor workspace is read coalesced (docs/gpu.md, "Staged contact step").
//
// The Runge–Kutta methods: per substep a controller begins (rk begin), then a fixed number of
// dynamics evaluations (rk_evaluations_bound: 4 for RK4, 2 + max_steps (s - 1) for the adaptive
// methods), each the stages smooth, narrow, rows, solve and rk finish (the controller's step:
// kernels/integrators/integrator_rk_substep.hpp) over the environments whose substep is not done.
//
// One source of physics: every stage calls the functions the fused substep calls
// (fwd_position .. fwd_acceleration_smooth, collide_candidate_pair, append_pair_contacts,
// fwd_constraint_rows, constraint_solve, fwd_acceleration_finish, integrate_euler;
// impulse_substep_half_step, impulse_substep_kinematics, impulse_substep_smooth,
// impulse_rows, impulse_substep_solve, impulse_substep_finish), in the same order on the same
// data, so a staged step equals control_step_env bit for bit (a team computes each item on one
// lane with a single thread's code, and sums in the order of m.team_width, which the fused step's
// SerialTeam{m.team_width} follows); the gather appends the pairs' contacts in pair order with
// fwd_collision's overflow rule, which makes the contact list MuJoCo 2.2.2's (deterministic: no
// atomics, fixed slots per pair). The adjoint replays the fused substep, and the replay check
// (Rollout::replay_bitwise) compares the two. The solve stages are constraint_solve,
// impulse_substep_half_step and impulse_substep_solve themselves.
//
// Per-environment slots (pair_slots_size Reals; environment-minor on the device):
//   slots[c]                                       contacts pair c found this substep, c < ncpair
//   slots[ncpair + kSlotReals * (cpair_contactadr[c] + k) + j]
//                                                  contact k of pair c: dist, pos (3), frame (9)
#pragma once

#include "kernels/step/batch.hpp"

namespace stiffgrad::kern {

constexpr int kSlotReals = 13;  // one Contact: dist, pos[3], frame[9]

// The staged pipeline covers every model: the Impulse model with constraints (its own substep
// whatever the integrator: kernels/step/substep.hpp), the Euler family and the Runge–Kutta
// methods, with soft constraints or without constraints (then a substep has no narrow, rows or
// solve stage).
template <class Real>
SG_HD SG_INLINE bool staged_step_is_impulse(const ModelView<Real>& m) {
  return m.contact_model == kContactImpulse && m.nefc_max > 0;
}

template <class Real>
SG_HD SG_INLINE int pair_slots_size(const ModelView<Real>& m) {
  return m.ncpair + kSlotReals * m.cpair_contactadr[m.ncpair];
}

// Stage smooth: everything of the substep before the narrow phase.
template <class Real, class L>
SG_HD void staged_smooth(const ModelView<Real>& m, const Data<Real, L>& d) {
  fwd_position(m, d);
  fwd_velocity(m, d);
  fwd_actuation(m, d);
  fwd_acceleration_smooth(m, d);
  if (m.nefc_max > 0) geom_poses(m, d);  // for the narrow stage (no collision without constraints)
}

// Stage smooth of the Impulse model, after its half step; kernels of their own (the split keeps
// each within 128 registers without spilling, sm_90: the Euler smooth stage and this one in one
// kernel took 152 registers in double, and the half step, kinematics and M̃'s factor in one
// kernel spilled 12 to 32 bytes). M̃'s factor goes with the rows stage.
template <class Real, class L>
SG_HD void staged_impulse_smooth(const ModelView<Real>& m, const Data<Real, L>& d) {
  impulse_substep_kinematics(m, d);
  geom_poses(m, d);
}

// Stage narrow: candidate pair c's contacts into its slots, by routine R (its pair_routine;
// kRoutineNone dispatches at run time).
template <int R, class Real, class L, class LS>
SG_HD void staged_narrow(const ModelView<Real>& m, const Data<Real, L>& d, int c, View<Real, LS> slots) {
  Contact<Real> found[kMaxContactsPerPair];
  int n = m.contact_enabled ? collide_candidate_pair<R>(m, d, c, found) : 0;
  const int room = m.cpair_contactadr[c + 1] - m.cpair_contactadr[c];
  if (n > room) n = room;  // cpair_maxcon bounds every routine (test_model_constraints_vs_mujoco)
  slots[c] = Real(n);
  const int base = m.ncpair + kSlotReals * m.cpair_contactadr[c];
  for (int k = 0; k < n; ++k) {
    const int o = base + kSlotReals * k;
    slots[o] = found[k].dist;
    for (int j = 0; j < 3; ++j) slots[o + 1 + j] = found[k].pos[j];
    for (int j = 0; j < 9; ++j) slots[o + 4 + j] = found[k].frame[j];
  }
}

// The contact list from the slots, in pair order with fwd_collision's overflow rule; d.ncon.
// Returns the status bits raised (kEnvConstraintOverflow when the contacts exceed ncon_max).
template <class Real, class L, class LS>
SG_HD int staged_gather_contacts(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> slots) {
  int ncon = 0, status = 0;
  if (m.contact_enabled)
    for (int c = 0; c < m.ncpair && status == 0; ++c) {
      const int n = sg_int(slots[c]);
      const int base = m.ncpair + kSlotReals * m.cpair_contactadr[c];
      for (int k = 0; k < n && status == 0; ++k) {
        Contact<Real> one;
        const int o = base + kSlotReals * k;
        one.dist = slots[o];
        for (int j = 0; j < 3; ++j) one.pos[j] = slots[o + 1 + j];
        for (int j = 0; j < 9; ++j) one.frame[j] = slots[o + 4 + j];
        status = append_pair_contacts(m, d, c, &one, 1, &ncon);
      }
    }
  d.ncon()[0] = Real(ncon);
  return status;
}

// The contact search alone (a bundle's start, kernels/bundle/bundle_step.hpp): this stage per
// environment loads (qpos, qvel) into d and computes the kinematics and geom poses; the narrow
// stage and staged_gather_contacts follow. d then holds what fwd_position and fwd_collision
// leave there (the contact list bit for bit, as the staged step's).
template <class Real, class LS, class L>
SG_HD void staged_contacts_begin(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                                 const Data<Real, L>& d) {
  for (int i = 0; i < m.nq; ++i) d.qpos()[i] = qpos[i];
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] = qvel[i];
  fwd_position(m, d);
  geom_poses(m, d);
}

// Stage rows (Euler family): the contact list, then the constraint rows (fwd_constraint_from_contacts
// up to its solve). Returns the status bits raised.
template <class Real, class L, class LS>
SG_HD int staged_constraint_rows(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> slots) {
  const int status = staged_gather_contacts(m, d, slots);
  return status | fwd_constraint_rows(m, d);
}

// Stage finish (Euler family): after constraint_solve, the rest of the Euler substep; its
// statistics into stats.
template <class Real, class L, class LS>
SG_HD void staged_constraint_finish(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> stats) {
  fwd_acceleration_finish(m, d, m.timestep);
  integrate_euler(m, d);
  accumulate_substep_stats(m, d, stats);
}

// The Runge–Kutta methods (kernels/integrators/integrator_rk_substep.hpp): per substep
//   rk begin   per environment         rk_substep_begin (the controller's state in `c`)
//   then rk_evaluations_bound(m) evaluations, each over the environments whose controller is not
//   done (the others skip every stage of it):
//     rk smooth  per environment       rk_dynamics_begin, then the smooth stage
//     narrow, rows, solve              as the Euler family's (with constraints)
//     rk finish  per environment       fwd_acceleration_finish without implicit damping,
//                                      rk_dynamics_end, rk_substep_advance; the substep's
//                                      statistics when its controller is done
// which is rk_substep's loop (rk_dynamics = rk_dynamics_begin, fwd_dynamics, rk_dynamics_end).
template <class Real, class L>
SG_HD void staged_rk_smooth(const ModelView<Real>& m, const Data<Real, L>& d) {
  rk_dynamics_begin(m, d);
  staged_smooth(m, d);
}

// The end of one evaluation of the dynamics (rk_dynamics after its constraint solve).
template <class Real, class L>
SG_HD SG_INLINE void staged_rk_evaluation_finish(const ModelView<Real>& m, const Data<Real, L>& d) {
  fwd_acceleration_finish(m, d, Real(0));
  rk_dynamics_end(m, d);
}

// Returns the status bits the controller raised.
template <class Real, class L, class LS>
SG_HD int staged_rk_finish(const ModelView<Real>& m, const Data<Real, L>& d, RkControl& c,
                           View<Real, LS> stats) {
  staged_rk_evaluation_finish(m, d);
  const int status = rk_substep_advance(m, d, c);
  if (c.phase == kRkDone) accumulate_substep_stats(m, d, stats);
  return status;
}

// Stage rows (Impulse): M̃'s factor and qacc_smooth, the contact list, then the blocks. Returns
// the status bits raised.
template <class Real, class L, class LS>
SG_HD int staged_impulse_rows(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> slots) {
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  impulse_substep_smooth(m, d);
  const int status = staged_gather_contacts(m, d, slots);
  return status | impulse_rows(m, d, w.mu, w.sigma, w.dim);
}

// Stage finish (Impulse): the rest of the substep; its statistics into stats.
template <class Real, class L, class LS>
SG_HD void staged_impulse_finish(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> stats) {
  impulse_substep_finish(m, d);
  accumulate_substep_stats(m, d, stats);
}

}  // namespace stiffgrad::kern
