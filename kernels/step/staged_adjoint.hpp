// The staged adjoint of a control step: the replay keeps every substep's primal (a tape of S
// Data, one per substep), so no adjoint substep recomputes its primal, and each adjoint substep
// is cut into stages that a GPU runs as separate kernels. For the Euler family with soft
// constraints and the Impulse model (staged_adjoint_applies); everything else keeps
// adj_control_step_env
// (kernels/step/batch_adjoint.hpp).
//
//   replay
//     begin       per environment   staged_replay_begin: the checkpoint into tape slot 0, saved
//     substep s   the staged step's stages over slot s (kernels/step/staged_step.hpp: smooth,
//                 narrow per (pair, environment), rows, solve a team per environment, finish)
//     carry s     per environment   staged_replay_carry: slot s's result into slot s + 1, saved
//     check       per environment   staged_replay_matches: slot S - 1's result against the next
//                                   checkpoint, bit for bit (Rollout::replay_bitwise)
//   adjoint
//     begin       per environment   the running state adjoint into a, the control's zeroed
//     per substep s = S - 1 .. 0, over slot s:
//       gradient model, with contacts from distance only (mg.cfd): staged_gradient_restore (per
//                                   environment: the state before substep s back into slot s),
//                                   then the staged step's stages in mg over slot s: the primal
//                                   that adj_substep(mg) recomputes in the fused adjoint
//       state     per environment   staged_adjoint_state: slot s's state restored from the
//                                   replay buffer (its finish integrated it), adj_substep_begin,
//                                   adj_constraint_forces_begin
//       hessian   per environment   adj_constraint_solve_begin (H at the solution, factored)
//       solve     per environment   adj_constraint_solve_end
//       rows      per environment   adj_constraint_forces_rows (the optimality condition's RNEA,
//                                   the rows' adjoint)
//       pairs     per (pair, environment), one launch per routine: staged_adjoint_pair, the
//                                   pair's contacts pulled back to its geoms' poses (the Dual
//                                   narrow phase of that routine only) into its adjoint slots
//       collision per environment   staged_adjoint_collision: the slots added in pair order,
//                                   then the geom poses' adjoint (adj_fwd_collision's order)
//       finish    per environment   adj_constraint_forces_end, adj_fwd_dynamics_end
//     with the Impulse model the state, solve and rows stages are four
//     (kernels/impulse/impulse_step_adjoint.hpp): begin (adj_impulse_begin: the integration's
//     and qacc's adjoint; the state the dynamics saw is in the workspace, nothing is restored),
//     solve (adj_impulse_solve_out: the Gauss–Seidel sweeps' adjoint from the tape's record),
//     Delassus (adj_impulse_delassus) and rows (adj_impulse_rows), and finish is adj_impulse_end
//     end         per environment   the adjoints out (staged_adjoint_end)
//
// One source of physics: adj_substep is adj_substep_begin, adj_constraint_forces (begin, solve,
// rows, collision (adj_pair_contacts per pair, then the poses), end) and adj_fwd_dynamics_end
// (kernels/step/step_adjoint.hpp), adj_impulse_substep is the primal and its five stages; the
// staged adjoint calls the same functions in the same order, and the staged step equals the
// fused substep bit for bit (the Gauss–Seidel record included), so the staged adjoint equals
// adj_control_step_env bit for bit (tests/test_staged_adjoint.cpp).
// What changes is the cost: S replayed substeps and S adjoint substeps, where the fused adjoint
// replays S - 1 and recomputes S - 1 primals (the Impulse model: replays S and recomputes S); and
// the memory: S Data per environment instead of two.
//
// The tape slot s of an environment is a Data over its own DataLayout::size Reals; the replay
// buffer (kernels/step/batch_adjoint.hpp replay_size) holds the state before each substep.
#pragma once

#include "kernels/step/batch_adjoint.hpp"
#include "kernels/step/staged_step.hpp"

namespace stiffgrad::kern {

// The staged adjoint covers every model (since 2026-12-08), for the model simulated m and the one
// differentiated mg: m itself, or with contacts from distance (mg.cfd) the second contact model,
// whose primal of each substep the gradient-model stages below put in the slot before the adjoint
// reads it. mg has m's pairs, sizes and capacities (contacts_from_distance_model changes margins
// and solimp only), so it adds no condition.
template <class Real>
SG_HD SG_INLINE bool staged_adjoint_applies(const ModelView<Real>& /*m*/,
                                            const ModelView<Real>& /*mg*/) {
  return true;
}

// Gradient model (contacts from distance), before substep s's adjoint: slot s, which holds the
// simulated model's substep, gets back the state before it (qpos, qvel, the warm start; the
// control was carried into it) so that the staged step's stages in mg recompute that substep's
// primal in the gradient model, as adj_control_step_env's adj_substep(mg) does from the same
// replayed state.
template <class Real, class LW>
SG_HD void staged_gradient_restore(const ModelView<Real>& mg, View<Real, LW> replay, int s,
                                   const Data<Real, LW>& slot) {
  load_replay_state(mg, replay, s, slot);
}

// Replay begin: the checkpoint (state, control, warm start) into slot 0, and its state saved
// as the state before substep 0.
template <class Real, class LS, class LW>
SG_HD void staged_replay_begin(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                               View<Real, LS> ctrl, View<Real, LS> warm, const Data<Real, LW>& slot0,
                               View<Real, LW> replay) {
  load_env(m, qpos, qvel, ctrl, slot0);
  load_warmstart(m, warm, slot0);
  save_replay_state(m, slot0, replay, 0);
}

// Replay carry: substep s's result (slot s, after its finish) is the state before substep s + 1:
// into slot s + 1 with the control, and saved.
// Each value is read once and written to both places (save_replay_state's layout): reading next
// back after writing it made the device kernel spill (ptxas cannot rule out aliasing).
template <class Real, class LW>
SG_HD void staged_replay_carry(const ModelView<Real>& m, const Data<Real, LW>& slot, const Data<Real, LW>& next,
                               View<Real, LW> replay, int s) {
  const int base = (s + 1) * replay_state_size(m);
  for (int i = 0; i < m.nq; ++i) {
    const Real x = slot.qpos()[i];
    next.qpos()[i] = x;
    replay[base + i] = x;
  }
  for (int i = 0; i < m.nv; ++i) {
    const Real x = slot.qvel()[i];
    next.qvel()[i] = x;
    replay[base + m.nq + i] = x;
  }
  for (int i = 0; i < m.nu; ++i) next.ctrl()[i] = slot.ctrl()[i];
  if (has_warmstart(m))
    for (int i = 0; i < m.nv; ++i) {
      const Real x = slot.qacc_warmstart()[i];
      next.qacc_warmstart()[i] = x;
      replay[base + m.nq + m.nv + i] = x;
    }
}

// Whether the last substep's result (its slot, after its finish) is the next checkpoint, bit for
// bit.
template <class Real, class LS, class LW>
SG_HD bool staged_replay_matches(const ModelView<Real>& m, const Data<Real, LW>& last, View<Real, LS> next_qpos,
                                 View<Real, LS> next_qvel) {
  bool identical = true;
  for (int i = 0; i < m.nq; ++i) identical = identical && last.qpos()[i] == next_qpos[i];
  for (int i = 0; i < m.nv; ++i) identical = identical && last.qvel()[i] == next_qvel[i];
  return identical;
}

// Adjoint begin: a holds the adjoint of the state at the end of the control step.
template <class Real, class LS, class LW>
SG_HD void staged_adjoint_begin(const ModelView<Real>& m, View<Real, LS> adj_qpos, View<Real, LS> adj_qvel,
                                const Data<Real, LW>& a) {
  for (int i = 0; i < m.nq; ++i) a.qpos()[i] = adj_qpos[i];
  for (int i = 0; i < m.nv; ++i) a.qvel()[i] = adj_qvel[i];
  for (int i = 0; i < m.nu; ++i) a.ctrl()[i] = Real(0);
}

// Adjoint state stage of substep s: slot s holds the substep's primal with its state advanced
// by the finish stage; the state before it comes back from the replay buffer (as
// adj_control_step_env does for its kept substep), then adj_substep_begin and (with constraints)
// adj_constraint_forces_begin.
template <class Real, class LW>
SG_HD void staged_adjoint_state(const ModelView<Real>& m, const DataLayout& o, View<Real, LW> replay, int s,
                                const Data<Real, LW>& slot, const Data<Real, LW>& a, View<Real, LW> adj_buffer) {
  load_replay_state(m, replay, s, slot);
  adj_substep_begin(m, o, slot, a, adj_buffer);
  if (m.nefc_max > 0)
    adj_constraint_forces_begin(m, slot, a, adj_dynamics_euler_solve(m, m.timestep));
}

// Per-environment adjoint slots of the pairs stage (adjoint_pair_slots_size Reals;
// environment-minor on the device):
//   slots[c]                          pair c's contacts in the contact list (0: none)
//   slots[ncpair + kPairAdjointReals c + j]   j < 12: geom1's pos (3) and mat (9) adjoints,
//                                     j >= 12: geom2's
constexpr int kPairAdjointReals = 24;

template <class Real>
SG_HD SG_INLINE int adjoint_pair_slots_size(const ModelView<Real>& m) {
  return (1 + kPairAdjointReals) * m.ncpair;
}

// Directions per Dual pass of the pairs stage for routine R: the 24 pose directions are split
// into pair_adjoint_chunks passes, one thread each (blockIdx.z on the device), so that a thread
// holds one routine's Dual<Real, K> frame with its outputs sized by routine_max_contacts, where
// adj_pair_contacts holds Dual<Real, 8> outputs for nine contacts (5.9 KB of stack in float and
// 11.7 KB in double whatever the routine). K is the largest divisor of 24 with which the kernel
// fits 128 registers and 2 KB of stack without spilling (sm_90, scripts/kernel_resources.sh; the
// table in docs/gpu.md): a pass costs a run of the routine's value path, (24 / K)(K + 1) Reals of
// arithmetic per scalar operation in all, so K = 1 costs 1.8 times K = 8. Box-box and the general
// convex (MPR) fit at no K, nor does capsule-box in double (scripts/kernel_resources_allow.txt);
// they take K = 1, their smallest frame (box-box in double: 31 KB of stack and 8.9 KB of spills
// at K = 8, 5.0 KB and none at K = 1; MPR: 9.4 KB and 24 KB of spills, 1.2 KB and 0.5 KB).
template <class Real>
SG_HD constexpr int pair_adjoint_directions(int r) {
  if constexpr (sizeof(Real) == 8) {
    switch (r) {
      case kRoutinePlaneSphere:
        return 3;
      case kRoutinePlaneCapsule:
      case kRoutinePlaneBox:
      case kRoutineSphereSphere:
      case kRoutineSphereCapsule:
        return 2;
      default:
        return 1;  // plane-ellipsoid, plane-cylinder, capsule-capsule, sphere-box, capsule-box,
                   // box-box, convex
    }
  } else {
    switch (r) {
      case kRoutinePlaneSphere:
      case kRoutineSphereSphere:
      case kRoutineSphereCapsule:
        return 6;
      case kRoutineCapsuleCapsule:
      case kRoutineCapsuleBox:
        return 2;
      case kRoutineBoxBox:
      case kRoutineConvex:
        return 1;
      default:
        return 4;  // plane-capsule, plane-ellipsoid, plane-cylinder, plane-box, sphere-box
    }
  }
}
template <class Real>
SG_HD constexpr int pair_adjoint_chunks(int r) {
  return kPairAdjointReals / pair_adjoint_directions<Real>(r);
}

// Adjoint pairs stage, pass `chunk` of pair_adjoint_chunks(R): candidate pair c's contacts
// (routine R) pulled back to its geoms' poses along directions chunk K .. chunk K + K - 1, into
// those of its slots (adj_pair_contacts_pass). Pass 0 also writes the pair's contact count.
template <int R, class Real, class L, class LS>
SG_HD void staged_adjoint_pair(const ModelView<Real>& m, const Data<Real, L>& d,
                               const Data<Real, L>& a, int c, int chunk, View<Real, LS> slots) {
  constexpr int K = pair_adjoint_directions<Real>(R);
  static_assert(kPairAdjointReals % K == 0, "the passes split the 24 directions evenly");
  int n = 0;
  const int k = pair_contacts_in_list(d, c, &n);
  if (chunk == 0) slots[c] = Real(n);
  if (n == 0) return;
  Real acc[K];
  adj_pair_contacts_pass<R, K>(m, d, a, c, k, n, chunk * K, acc);
  // 0 + acc: what adj_pair_contacts's zeroed outputs hold after the pass adds to them (-0 -> +0)
  const int base = m.ncpair + kPairAdjointReals * c + chunk * K;
  for (int i = 0; i < K; ++i) slots[base + i] = Real(0) + acc[i];
}

// Adjoint collision stage: the pairs' slots added in pair order (the contact list's: the order
// adj_fwd_collision adds them in), then the geom poses' adjoint. Without contacts (contact
// disabled) the pairs stage did not run and the slots are not read.
template <class Real, class L, class LS>
SG_HD void staged_adjoint_collision(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                    View<Real, LS> slots) {
  if (sg_int(d.ncon()[0]) > 0)
    for (int c = 0; c < m.ncpair; ++c) {
      if (sg_int(slots[c]) == 0) continue;
      Real pos_bar[2][3], mat_bar[2][9];
      const int base = m.ncpair + kPairAdjointReals * c;
      for (int side = 0; side < 2; ++side) {
        for (int i = 0; i < 3; ++i) pos_bar[side][i] = slots[base + 12 * side + i];
        for (int i = 0; i < 9; ++i) mat_bar[side][i] = slots[base + 12 * side + 3 + i];
      }
      add_pair_pose_adjoint(m, a, c, pos_bar, mat_bar);
    }
  adj_geom_poses(m, d, a);
}

// Adjoint finish stage of substep s: the rest of adj_substep after the collision adjoint (the
// rest of adj_fwd_dynamics in a Runge–Kutta stage's adjoint).
template <class Real, class LW>
SG_HD void staged_adjoint_finish(const ModelView<Real>& m, const Data<Real, LW>& slot, const Data<Real, LW>& a) {
  if (m.nefc_max > 0) adj_constraint_forces_end(m, slot, a);
  adj_fwd_dynamics_end(m, slot, a);
}

// The Runge–Kutta methods (adj_rk_substep, kernels/integrators/integrator_rk_adjoint.hpp): slot s
// holds the replayed substep (its accepted steps' records, rk_count[0] of them, and the warm
// start every evaluation starts from); the accepted steps are differentiated last to first, step
// n of an environment in round n of rounds max_steps − 1 .. 0 (the environments with fewer steps
// skip the round: staged_rk_adjoint_active). A round's stages over slot s, with `c` the
// environment's controller in the evaluating staged step (its phase marks the environments the
// evaluations run for; its event fields carry the round's event location):
//   rk step begin    per environment  adj_rk_step_begin from record n, stage 0's state
//   per stage i = 0 .. s-1 (the stages' primal, rk_step):
//     the staged step's evaluation stages (rk smooth, narrow, rows, solve)
//     rk record      per environment  staged_rk_evaluation_finish, rk_stage_record, the stage's
//                                     constraint signature (event location), the next stage's
//                                     state
//   with event gradients, where the step is a located event (rk_located_event): the saltation's
//     rate (rk_event_rate in pieces: rk_event_begin, then three evaluations, each followed by
//     rk_event_end_contacts, rk_event_start_contacts or rk_event_finish) and adj_rk_event
//   rk output        per environment  adj_rk_step_output, the last used stage's state
//   per used stage i = s-1 .. 0 (its dynamics' primal again, then their adjoint):
//     the staged step's evaluation stages
//     rk stage begin per environment  staged_rk_evaluation_finish, adj_rk_stage_begin,
//                                     adj_fwd_dynamics_begin, adj_constraint_forces_begin
//     hessian, solve, rows, pairs, collision (with constraints), finish: as the Euler family's
//     rk stage end   per environment  adj_rk_stage_end, then the next used stage's state, or
//                                     after stage 0 adj_rk_step_end
// which is adj_rk_step's order (its final rk_combine of rk_step is the output's own).
template <class Real, class LW>
SG_HD SG_INLINE bool staged_rk_adjoint_active(const Data<Real, LW>& slot, int n) {
  return n < sg_int(slot.rk_count()[0]);
}

// The used stage before stage i (rk_stage_used), or -1.
SG_HD SG_INLINE int rk_used_stage_before(const RkTableau& t, int i) {
  for (int j = i - 1; j >= 0; --j)
    if (rk_stage_used(t, j)) return j;
  return -1;
}

template <class Real, class LW>
SG_HD SG_INLINE Real staged_rk_step_size(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                         int n) {
  return rk_step_record(m, slot, n)[m.nq + m.nv];
}

template <class Real, class LW>
SG_HD void staged_rk_adjoint_step_begin(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                        const Data<Real, LW>& a, int n, RkControl& c) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  const View<Real, LW> rec = rk_step_record(m, slot, n);
  adj_rk_step_begin(m, slot, a, t, rec, rec.at(m.nq));
  c.sig = 0;  // rk_step's, with stage 0 not yet evaluated
  c.event = false;
  rk_stage_point(m, slot, t, rec[m.nq + m.nv], 0);
}

template <class Real, class LW>
SG_HD void staged_rk_adjoint_record(const ModelView<Real>& m, const Data<Real, LW>& slot, int n,
                                    int i, RkControl& c) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  staged_rk_evaluation_finish(m, slot);
  rk_stage_record(m, slot, i);
  rk_stage_signature(m, slot, i, &c.sig0, &c.sig, &c.event);
  if (i + 1 < t.stages) rk_stage_point(m, slot, t, staged_rk_step_size(m, slot, n), i + 1);
}

// Whether step n's adjoint applies the saltation (a located event, with event gradients).
template <class Real, class LW>
SG_HD SG_INLINE bool staged_rk_adjoint_located(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                               int n, const RkControl& c) {
  return rk_located_event(m, rk_tableau(m.rk_integrator), staged_rk_step_size(m, slot, n), c.event);
}

// The saltation's pieces (rk_event_rate): its begin, then one after each of its three evaluations.
template <class Real, class LW>
SG_HD void staged_rk_adjoint_event_begin(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                         RkControl& c) {
  c.event_niter = sg_double(slot.rk_count()[2]);  // the substep's statistic, not these repeats
  rk_event_begin(m, slot, c.event_sums);
  rk_stage_restore(m, slot, rk_tableau(m.rk_integrator).stages - 1);
}
template <class Real, class LW>
SG_HD void staged_rk_adjoint_event_end(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                       RkControl& c) {
  staged_rk_evaluation_finish(m, slot);
  rk_event_end_contacts(m, slot, c.event_sums);
  rk_stage_restore(m, slot, 0);
}
template <class Real, class LW>
SG_HD void staged_rk_adjoint_event_start(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                         RkControl& c) {
  staged_rk_evaluation_finish(m, slot);
  rk_event_start_contacts(m, slot, c.event_sums);
  rk_stage_restore(m, slot, rk_tableau(m.rk_integrator).stages - 1);
}
template <class Real, class LW>
SG_HD void staged_rk_adjoint_event_finish(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                          const Data<Real, LW>& a, RkControl& c) {
  const int s = rk_tableau(m.rk_integrator).stages;
  const RkScratch<Real, LW> w = rk_scratch(m, slot);
  staged_rk_evaluation_finish(m, slot);
  const double rate = rk_event_finish(m, slot, c.event_sums);
  slot.rk_count()[2] = Real(c.event_niter);
  if (rate != 0.0)
    adj_rk_event(m, slot, a, w.stage_q(slot, s - 1), w.stage_a(slot, 0), w.stage_a(slot, s - 1),
                 rate);
}

template <class Real, class LW>
SG_HD void staged_rk_adjoint_output(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                    const Data<Real, LW>& a, int n) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  adj_rk_step_output(m, slot, a, t, staged_rk_step_size(m, slot, n));
  rk_stage_restore(m, slot, rk_used_stage_before(t, t.stages));
}

template <class Real, class LW>
SG_HD void staged_rk_adjoint_stage_begin(const ModelView<Real>& m, const DataLayout& o,
                                         const Data<Real, LW>& slot, const Data<Real, LW>& a,
                                         View<Real, LW> adj_buffer, int i) {
  staged_rk_evaluation_finish(m, slot);
  adj_rk_stage_begin(m, o, a, adj_buffer, i);
  adj_fwd_dynamics_begin(m, slot, a, Real(0));
  if (m.nefc_max > 0) adj_constraint_forces_begin(m, slot, a, false);
}

template <class Real, class LW>
SG_HD void staged_rk_adjoint_stage_end(const ModelView<Real>& m, const Data<Real, LW>& slot,
                                       const Data<Real, LW>& a, int n, int i) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  adj_rk_stage_end(m, slot, a, t, staged_rk_step_size(m, slot, n), i);
  const int next = rk_used_stage_before(t, i);
  if (next >= 0)
    rk_stage_restore(m, slot, next);
  else
    adj_rk_step_end(m, a);
}

// Adjoint end: the adjoint of the state at the start of the control step, and the control's.
template <class Real, class LS, class LW>
SG_HD void staged_adjoint_end(const ModelView<Real>& m, const Data<Real, LW>& a, View<Real, LS> adj_qpos,
                              View<Real, LS> adj_qvel, View<Real, LS> adj_ctrl) {
  for (int i = 0; i < m.nq; ++i) adj_qpos[i] = a.qpos()[i];
  for (int i = 0; i < m.nv; ++i) adj_qvel[i] = a.qvel()[i];
  for (int i = 0; i < m.nu; ++i) adj_ctrl[i] = a.ctrl()[i];
}

}  // namespace stiffgrad::kern
