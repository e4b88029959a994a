// Per-environment adjoint of one control step, shared by the CPU loop and the CUDA kernel:
// replay the S substeps from the checkpoint into a replay buffer, then run the adjoint
// substeps in reverse (docs/architecture.md, "Checkpointing").
#pragma once

#include "kernels/step/batch.hpp"
#include "kernels/impulse/impulse_step_adjoint.hpp"
#include "kernels/integrators/integrator_rk_adjoint.hpp"
#include "kernels/step/step_adjoint.hpp"

namespace stiffgrad::kern {

// One replayed state: qpos, qvel and, with constraints, the solve's warm start.
template <class Real>
SG_HD SG_INLINE int replay_state_size(const ModelView<Real>& m) {
  return m.nq + m.nv + (has_warmstart(m) ? m.nv : 0);
}

// Replay buffer: the state before each substep, S x replay_state_size Reals per environment.
template <class Real>
SG_HD SG_INLINE int replay_size(const ModelView<Real>& m, int substeps) {
  return substeps * replay_state_size(m);
}

// replay[s] <- the state in d, and back.
template <class Real, class LW>
SG_HD SG_INLINE void save_replay_state(const ModelView<Real>& m, const Data<Real, LW>& d, View<Real, LW> replay, int s) {
  const int base = s * replay_state_size(m);
  for (int i = 0; i < m.nq; ++i) replay[base + i] = d.qpos()[i];
  for (int i = 0; i < m.nv; ++i) replay[base + m.nq + i] = d.qvel()[i];
  if (has_warmstart(m))
    for (int i = 0; i < m.nv; ++i) replay[base + m.nq + m.nv + i] = d.qacc_warmstart()[i];
}
template <class Real, class LW>
SG_HD SG_INLINE void load_replay_state(const ModelView<Real>& m, View<Real, LW> replay, int s, const Data<Real, LW>& d) {
  const int base = s * replay_state_size(m);
  for (int i = 0; i < m.nq; ++i) d.qpos()[i] = replay[base + i];
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] = replay[base + m.nq + i];
  if (has_warmstart(m))
    for (int i = 0; i < m.nv; ++i) d.qacc_warmstart()[i] = replay[base + m.nq + m.nv + i];
}

// Inputs (batched, layout LS): the checkpoint state at the start of the control step (qpos,
// qvel and the solve's warm start `warm`, null for zero: kernels/step/batch.hpp) and its
// control; adj_qpos (nq, raw coordinates) / adj_qvel (nv) hold the adjoint of the state at
// the end of the control step and are overwritten with the adjoint of the state at its
// start; adj_ctrl (nu) receives the control adjoint (overwritten). Workspace (layout LW): two
// primal Data d and d_keep, the adjoint Data a over adj_buffer, the replay buffer. Returns
// true when the replay reproduced `next_qpos` / `next_qvel` (the following checkpoint) bit
// for bit.
//
// `m` is the model simulated (and replayed); `mg` the one whose derivative the adjoint takes:
// m itself, or with contacts from distance (mg.cfd) the second contact model, evaluated at
// the replayed states (straight-through, stiffgrad/contacts_from_distance.hpp); both share
// the layout o.
//
// Cost per control step of S substeps (Euler, no CFD): S - 1 replayed substeps, S adjoint
// substeps, of which S - 1 recompute their primal: the last substep is never replayed (its adjoint recomputes
// it, then finishes its Euler step for the bitwise check) and the last replayed one runs in
// d_keep and is consumed by its adjoint without recomputation.
template <class Real, class LS, class LW>
SG_HD bool adj_control_step_env(const ModelView<Real>& m, const ModelView<Real>& mg, const DataLayout& o,
                                View<Real, LS> qpos, View<Real, LS> qvel, View<Real, LS> ctrl,
                                View<Real, LS> warm, View<Real, LS> next_qpos, View<Real, LS> next_qvel,
                                View<Real, LS> adj_qpos, View<Real, LS> adj_qvel,
                                View<Real, LS> adj_ctrl, const Data<Real, LW>& d,
                                const Data<Real, LW>& d_keep, const Data<Real, LW>& a,
                                View<Real, LW> adj_buffer, View<Real, LW> replay, int substeps) {
  const bool impulse = m.contact_model == kContactImpulse && m.nefc_max > 0;
  if (m.rk_integrator != kIntEuler || mg.cfd || impulse) {
    // Runge–Kutta, CFD or the Impulse model: replay every substep (the last one too, for the
    // bitwise check), keeping the state before each; each substep's adjoint recomputes its
    // primal in mg (a Runge–Kutta substep with its own step record, an Impulse substep with its
    // sweeps' record)
    load_env(m, qpos, qvel, ctrl, d);
    load_warmstart(m, warm, d);
    for (int s = 0; s < substeps; ++s) {
      save_replay_state(m, d, replay, s);
      substep(m, d);
    }
    bool identical = true;
    for (int i = 0; i < m.nq; ++i) identical = identical && d.qpos()[i] == next_qpos[i];
    for (int i = 0; i < m.nv; ++i) identical = identical && d.qvel()[i] == next_qvel[i];
    for (int i = 0; i < m.nq; ++i) a.qpos()[i] = adj_qpos[i];
    for (int i = 0; i < m.nv; ++i) a.qvel()[i] = adj_qvel[i];
    for (int i = 0; i < m.nu; ++i) a.ctrl()[i] = Real(0);
    for (int s = substeps - 1; s >= 0; --s) {
      load_replay_state(m, replay, s, d);
      if (impulse) adj_impulse_substep(mg, o, d, a, adj_buffer);
      else if (mg.rk_integrator != kIntEuler) adj_rk_substep(mg, o, d, a, adj_buffer);
      else adj_substep(mg, o, d, a, adj_buffer);
    }
    for (int i = 0; i < m.nq; ++i) adj_qpos[i] = a.qpos()[i];
    for (int i = 0; i < m.nv; ++i) adj_qvel[i] = a.qvel()[i];
    for (int i = 0; i < m.nu; ++i) adj_ctrl[i] = a.ctrl()[i];
    return identical;
  }
  const int kept = substeps - 2;  // substep whose primal stays in d_keep (none if S = 1)
  // replay, keeping the state before every substep
  load_env(m, qpos, qvel, ctrl, d);
  load_warmstart(m, warm, d);
  for (int s = 0; s < substeps; ++s) {
    save_replay_state(m, d, replay, s);
    if (s == kept) {
      load_env(m, d.qpos(), d.qvel(), d.ctrl(), d_keep);
      load_replay_state(m, replay, s, d_keep);
      substep(m, d_keep);
      for (int i = 0; i < m.nq; ++i) d.qpos()[i] = d_keep.qpos()[i];
      for (int i = 0; i < m.nv; ++i) d.qvel()[i] = d_keep.qvel()[i];
      if (has_warmstart(m))
        for (int i = 0; i < m.nv; ++i) d.qacc_warmstart()[i] = d_keep.qacc_warmstart()[i];
    } else if (s + 1 < substeps) {
      substep(m, d);
    }
  }

  for (int i = 0; i < m.nq; ++i) a.qpos()[i] = adj_qpos[i];
  for (int i = 0; i < m.nv; ++i) a.qvel()[i] = adj_qvel[i];
  for (int i = 0; i < m.nu; ++i) a.ctrl()[i] = Real(0);
  bool identical = true;
  for (int s = substeps - 1; s >= 0; --s) {
    const Data<Real, LW>& p = s == kept ? d_keep : d;
    // the state before the substep (d_keep's was advanced by its substep)
    load_replay_state(m, replay, s, p);
    if (s == kept) {
      adj_substep(m, o, d_keep, a, adj_buffer, /*recompute=*/false);
      continue;
    }
    adj_substep(m, o, d, a, adj_buffer);
    if (s == substeps - 1) {
      // adj_substep left the last substep's qacc in d: finishing the Euler step reproduces
      // the end of the control step, which must equal the recorded checkpoint bit for bit
      integrate_euler(m, d);
      for (int i = 0; i < m.nq; ++i) identical = identical && d.qpos()[i] == next_qpos[i];
      for (int i = 0; i < m.nv; ++i) identical = identical && d.qvel()[i] == next_qvel[i];
    }
  }
  for (int i = 0; i < m.nq; ++i) adj_qpos[i] = a.qpos()[i];
  for (int i = 0; i < m.nv; ++i) adj_qvel[i] = a.qvel()[i];
  for (int i = 0; i < m.nu; ++i) adj_ctrl[i] = a.ctrl()[i];
  return identical;
}

// Adjoint in MuJoCo's tangent convention: the gradient with respect to delta in R^nv where
// the initial qpos is perturbed as mj_integratePos(qpos, delta, 1) does. Hinge/slide and free
// translations copy. For a quaternion q (ball, free rotation) MuJoCo 2.2.2's map is
//   Phi(delta) = q_hat * exp((0, delta / 2)),  q_hat = q / |q|
// (mju_quatIntegrate normalizes q before rotating it), so Phi(0) = q_hat even when |q| != 1 and
//   g_i = <grad L(q_hat), q_hat * (0, e_i / 2)>.
// adj_qpos holds grad L at the raw q, and every kernel reads a quaternion through normalize4
// (kinematics, passive forces, quat_integrate): L(c q) = L(q), hence grad L(q_hat) = |q| grad
// L(q) and g_i = |q| <adj_q, q_hat * (0, e_i / 2)> = <adj_q, q * (0, e_i / 2)> with the raw q:
// the tangent gradient does not depend on the quaternion's scale. A loss term that reads qpos_0
// itself must first be added by add_direct_qpos_adjoint.
template <class Real, class LS>
SG_HD void qpos_adjoint_to_tangent(const ModelView<Real>& m, View<Real, LS> qpos,
                                   View<Real, LS> adj_qpos, View<Real, LS> tangent) {
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j];
    int da = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) tangent[da + c] = adj_qpos[pa + c];
      pa += 3;
      da += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      Real q[4], g[4];
      load4(q, qpos, pa);
      load4(g, adj_qpos, pa);
      for (int i = 0; i < 3; ++i) {
        Real e[4] = {Real(0), Real(0), Real(0), Real(0)}, dq[4];
        e[1 + i] = Real(0.5);
        quat_mul(dq, q, e);
        tangent[da + i] = g[0] * dq[0] + g[1] * dq[1] + g[2] * dq[2] + g[3] * dq[3];
      }
    } else {
      tangent[da] = adj_qpos[pa];
    }
  }
}

// adj_qpos += adj_direct, a loss's gradient with respect to the raw initial qpos itself (not
// through the dynamics), in the form qpos_adjoint_to_tangent expects: each quaternion block is
// pulled back through normalize4, as if the loss read q_hat = Phi(0). Then
// |q| <(I - q_hat q_hat^T) g / |q|, q_hat * (0, e_i / 2)> = <g, q_hat * (0, e_i / 2)>, the
// derivative of L(Phi(delta)) for this term. Only for the tangent conversion.
template <class Real, class LS>
SG_HD void add_direct_qpos_adjoint(const ModelView<Real>& m, View<Real, LS> qpos,
                                   View<Real, LS> adj_direct, View<Real, LS> adj_qpos) {
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) adj_qpos[pa + c] += adj_direct[pa + c];
      pa += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      Real q[4], g[4], adj_q[4] = {};
      load4(q, qpos, pa);
      load4(g, adj_direct, pa);
      adj_normalize4(q, adj_q, g);
      for (int k = 0; k < 4; ++k) adj_qpos[pa + k] += adj_q[k];
    } else {
      adj_qpos[pa] += adj_direct[pa];
    }
  }
}

}  // namespace stiffgrad::kern
