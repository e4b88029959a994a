// Adjoint of the Runge–Kutta substeps (kernels/integrators/integrator_rk.hpp): discretize-then-optimize
// through the accepted steps.
//
// Why this choice: the gradient is that of the computation the forward pass performed (the
// accepted steps of its adaptive run, with their sizes), which is what a loss on the simulated
// trajectory depends on; its dot-product test against the dual-number forward mode holds to
// rounding. The step sizes are treated as constants: the controller picks them from error
// norms, a piecewise-smooth function whose derivative is not part of the dynamics (DiffMJX
// does the same; so does diffrax's RecursiveCheckpointAdjoint through its accepted steps).
// Rejected trials leave no trace in the result and are not differentiated.
//
// One step of size h (header of integrator_rk.hpp for the notation), given q̄1, v̄1:
//   output:  q̄0 = (∂q1/∂q0)ᵀ q̄1,  P̄ = (∂q1/∂P)ᵀ q̄1,  V̄_j += b_j P̄,  ā_j += h b_j v̄1,  v̄0 = v̄1;
//   stages i = s-1 .. 0 (every later use of stage i is then summed):
//     f adjoint at (q_i, v_i): (q̄_i, v̄_i) = (∂acc_i/∂(q_i, v_i))ᵀ ā_i, plus v̄_i += V̄_i, ū += ...;
//     i = 0:  q̄0 += q̄_i, v̄0 += v̄_i;
//     i > 0:  v̄0 += v̄_i, ā_j += h a_ij v̄_i, q̄0 += (∂q_i/∂q0)ᵀ q̄_i, V̄_j += a_ij (∂q_i/∂P_i)ᵀ q̄_i.
// The stages' primal is recomputed from the step's recorded start (rk_step), then each stage's
// dynamics once more before its adjoint (fwd_dynamics, as adj_substep recomputes its own).
#pragma once

#include "kernels/integrators/integrate_adjoint.hpp"
#include "kernels/integrators/integrator_rk_substep.hpp"
#include "kernels/step/step_adjoint.hpp"

namespace stiffgrad::kern {

// The adjoint of one accepted step of size h from (q0, v0), in pieces (adj_rk_step runs them in
// one thread; the staged adjoint, kernels/step/staged_adjoint.hpp, runs each as a stage with the
// dynamics' own stages between them):
//   adj_rk_step_begin       the step's start into d's scratch, a's stage sums zeroed
//   the stages' primal      rk_step from the start (rk_stage_point, rk_dynamics, rk_stage_record)
//   adj_rk_step_output      the output map's adjoint
//   per used stage i = s-1 .. 0:
//     rk_stage_restore       stage i's state into d, then rk_dynamics there (its primal)
//     adj_rk_stage_begin     the dynamics adjoint's inputs (V̄_i, ā_i), then adj_fwd_dynamics
//     adj_rk_stage_end       stage i's adjoint carried to the start and to the earlier stages
//   adj_rk_step_end         the adjoint of the step's start into a.qpos, a.qvel
// Uses a's Runge–Kutta fields for its sums (q̄0 in wa.q0, v̄0 in wa.v0, P̄ in wa.tmp).
template <class Real, class L>
SG_HD void adj_rk_step_begin(const ModelView<Real>& m, const Data<Real, L>& d,
                             const Data<Real, L>& a, const RkTableau& t, View<Real, L> q0,
                             View<Real, L> v0) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const RkScratch<Real, L> wa = rk_scratch(m, a);
  for (int i = 0; i < m.nq; ++i) w.q0[i] = q0[i];
  for (int i = 0; i < m.nv; ++i) w.v0[i] = v0[i];
  for (int j = 0; j < t.stages; ++j)
    for (int k = 0; k < m.nv; ++k) {
      wa.stage_v(a, j)[k] = Real(0);
      wa.stage_a(a, j)[k] = Real(0);
    }
}

// The output map q1 = integrate_pos(q0, Σ b_j V_j, h), v1 = v0 + h Σ b_j acc_j: on entry a.qpos,
// a.qvel hold the adjoints of the step's result.
template <class Real, class L>
SG_HD void adj_rk_step_output(const ModelView<Real>& m, const Data<Real, L>& d,
                              const Data<Real, L>& a, const RkTableau& t, Real h) {
  const int nq = m.nq, nv = m.nv, s = t.stages;
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const RkScratch<Real, L> wa = rk_scratch(m, a);
  rk_combine(m, d, t.b, s, h);  // w.tmp = Σ b_j V_j
  for (int k = 0; k < nq; ++k) wa.q0[k] = a.qpos()[k];
  for (int k = 0; k < nv; ++k) wa.tmp[k] = Real(0);
  adj_integrate_pos(m, w.q0, w.tmp, h, wa.q0, wa.tmp);
  for (int k = 0; k < nv; ++k) {
    wa.v0[k] = a.qvel()[k];
    for (int j = 0; j < s; ++j) {
      if (t.b[j] == 0.0) continue;
      wa.stage_v(a, j)[k] += Real(t.b[j]) * wa.tmp[k];
      wa.stage_a(a, j)[k] += Real(t.b[j]) * h * a.qvel()[k];
    }
  }
}

// Stage i's state (recorded by the stages' primal) into d.qpos, d.qvel.
template <class Real, class L>
SG_HD SG_INLINE void rk_stage_restore(const ModelView<Real>& m, const Data<Real, L>& d, int i) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  for (int k = 0; k < m.nq; ++k) d.qpos()[k] = w.stage_q(d, i)[k];
  for (int k = 0; k < m.nv; ++k) d.qvel()[k] = w.stage_v(d, i)[k];
}

// The inputs of stage i's dynamics adjoint: a's scratch cleared, a.qpos = 0, a.qvel = V̄_i
// (V_i = v_i), a.qacc = ā_i.
template <class Real, class L>
SG_HD void adj_rk_stage_begin(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& a,
                              View<Real, L> adj_buffer, int i) {
  const RkScratch<Real, L> wa = rk_scratch(m, a);
  clear_adjoint_scratch(o, adj_buffer);
  for (int k = 0; k < m.nq; ++k) a.qpos()[k] = Real(0);
  for (int k = 0; k < m.nv; ++k) {
    a.qvel()[k] = wa.stage_v(a, i)[k];
    a.qacc()[k] = wa.stage_a(a, i)[k];
  }
}

// After stage i's dynamics adjoint ((q̄_i, v̄_i) in a.qpos, a.qvel): v̄0 += v̄_i, and q̄0 += q̄_i
// (i = 0) or, through v_i = v0 + h Σ_{j<i} a_ij acc_j and q_i = integrate_pos(q0, P_i, h),
// into ā_j, q̄0 and V̄_j.
template <class Real, class L>
SG_HD void adj_rk_stage_end(const ModelView<Real>& m, const Data<Real, L>& d,
                            const Data<Real, L>& a, const RkTableau& t, Real h, int i) {
  const int nq = m.nq, nv = m.nv;
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const RkScratch<Real, L> wa = rk_scratch(m, a);
  for (int k = 0; k < nv; ++k) wa.v0[k] += a.qvel()[k];
  if (i == 0) {
    for (int k = 0; k < nq; ++k) wa.q0[k] += a.qpos()[k];
    return;
  }
  // v_i = v0 + h Σ_{j<i} a_ij acc_j
  for (int j = 0; j < i; ++j) {
    if (t.a[i][j] == 0.0) continue;
    for (int k = 0; k < nv; ++k) wa.stage_a(a, j)[k] += Real(t.a[i][j]) * h * a.qvel()[k];
  }
  // q_i = integrate_pos(q0, P_i, h), P_i = Σ_{j<i} a_ij V_j (w.tmp, recomputed)
  rk_combine(m, d, t.a[i], i, h);
  for (int k = 0; k < nv; ++k) wa.tmp[k] = Real(0);
  adj_integrate_pos(m, w.q0, w.tmp, h, a.qpos(), wa.tmp);
  for (int k = 0; k < nq; ++k) wa.q0[k] += a.qpos()[k];
  for (int j = 0; j < i; ++j) {
    if (t.a[i][j] == 0.0) continue;
    for (int k = 0; k < nv; ++k) wa.stage_v(a, j)[k] += Real(t.a[i][j]) * wa.tmp[k];
  }
}

template <class Real, class L>
SG_HD SG_INLINE void adj_rk_step_end(const ModelView<Real>& m, const Data<Real, L>& a) {
  const RkScratch<Real, L> wa = rk_scratch(m, a);
  for (int k = 0; k < m.nq; ++k) a.qpos()[k] = wa.q0[k];
  for (int k = 0; k < m.nv; ++k) a.qvel()[k] = wa.v0[k];
}

// Adjoint of one step of size h from the start state (q0, v0) = views into d's record. On entry
// a.qpos, a.qvel hold the adjoints of the step's result; on exit those of its start; a.ctrl
// accumulates.
template <class Real, class L>
SG_HD void adj_rk_step(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& d,
                       const Data<Real, L>& a, View<Real, L> adj_buffer, const RkTableau& t,
                       View<Real, L> q0, View<Real, L> v0, Real h) {
  const int s = t.stages;
  const RkScratch<Real, L> w = rk_scratch(m, d);
  adj_rk_step_begin(m, d, a, t, q0, v0);
  // the stages' primal
  int rhs = 0, sig = 0;
  bool event = false;
  rk_step(m, d, t, h, false, &rhs, &sig, &event);
  // event gradients: Sᵀ on the adjoint of the result of a located event step
  // (integrator_rk_event.hpp)
  if (rk_located_event(m, t, h, event)) {
    const double rate = rk_event_rate(m, d, t);
    if (rate != 0.0)
      adj_rk_event(m, d, a, w.stage_q(d, s - 1), w.stage_a(d, 0), w.stage_a(d, s - 1), rate);
  }
  adj_rk_step_output(m, d, a, t, h);
  for (int i = s - 1; i >= 0; --i) {
    if (!rk_stage_used(t, i)) continue;
    // the dynamics at stage i, then their adjoint: (q̄_i, v̄_i) in a.qpos, a.qvel
    rk_stage_restore(m, d, i);
    rk_dynamics(m, d);  // the forward's solve, from the substep's warm start
    adj_rk_stage_begin(m, o, a, adj_buffer, i);
    adj_fwd_dynamics(m, d, a, Real(0));
    adj_rk_stage_end(m, d, a, t, h, i);
  }
  adj_rk_step_end(m, a);
}

// Adjoint of rk_substep(). On entry d.qpos, d.qvel, d.ctrl hold the state and control before
// the substep; a.qpos (nq, raw coordinates), a.qvel (nv) the adjoints of the state after it. On
// exit a.qpos, a.qvel hold the adjoints of the state before it and a.ctrl has accumulated the
// control adjoint. The substep is run again from d's state (recording its accepted steps: a
// deterministic replay of the forward pass), then its steps are reversed. d's qpos and qvel
// end up at the substep's result.
template <class Real, class L>
SG_HD SG_OUTLINE void adj_rk_substep(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& d, const Data<Real, L>& a,
                          View<Real, L> adj_buffer) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  rk_substep(m, d);
  const int nsteps = sg_int(d.rk_count()[0]);
  for (int n = nsteps - 1; n >= 0; --n) {
    const View<Real, L> rec = rk_step_record(m, d, n);
    adj_rk_step(m, o, d, a, adj_buffer, t, rec, rec.at(m.nq), rec[m.nq + m.nv]);
  }
}

}  // namespace stiffgrad::kern
