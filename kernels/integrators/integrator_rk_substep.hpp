// The Runge–Kutta substep (integrator_rk.hpp) as a controller that asks for one dynamics
// evaluation at a time: rk_substep_begin sets it up with the state of the first evaluation in d,
// and after each evaluation (rk_dynamics at d.qpos, d.qvel) rk_substep_advance consumes the result
// and puts the state of the next one in d, until its phase is kRkDone. rk_substep runs that loop
// in one thread; the staged CUDA pipeline (kernels/step/staged_step.hpp) runs each evaluation's
// stages as separate kernels between the two, the controller's state kept per environment in
// RkControl, for the environments still evaluating (every environment takes its own steps: the
// adaptive methods' trials are data dependent).
//
// The sequence of evaluations (header of integrator_rk.hpp for the method):
//   adaptive:  stage 0 at y0 (kRkInitial), the starting step's Euler probe (kRkProbe), then per
//              trial step the stages 1 .. s-1 (stage 0 is the last accepted step's last stage,
//              FSAL, or the rejected trial's own stage 0): at most 2 + max_steps (s - 1);
//   RK4:       the stages 0 .. 3 of its one step.
// A trial's end (after its last stage) decides acceptance, records an accepted step, and sets
// the next trial's size (the PID controller), or ends the substep.
#pragma once

#include "kernels/integrators/integrator_rk.hpp"

namespace stiffgrad::kern {

enum RkPhase : int {
  kRkInitial = 0,  // evaluating stage 0 at y0 for the starting step
  kRkProbe = 1,    // evaluating the starting step's Euler probe
  kRkStage = 2,    // evaluating stage `stage` of the current trial step
  kRkDone = 3,     // the substep is over
};

// The controller's state between evaluations (one per environment; on the device an array of
// nenv owned by the staged step). Everything the one-thread loop kept in locals.
struct RkControl {
  double done;      // time of the substep covered by accepted steps
  double h;         // the current trial step's size
  double inv_prev;  // 1 / error norm of the last accepted step (1 at the substep's start)
  double h0, d1;    // the starting step's probe size and ‖f(y0)‖ (kRkProbe)
  int phase;        // RkPhase
  int stage;        // the stage being evaluated (kRkStage)
  int trials;       // trial steps taken in this substep
  int rhs;          // dynamics evaluations of this substep
  int sig;          // constraint signature of the last stage evaluated
  int sig0;         // the current trial's stage 0 signature
  int sig_start;    // the signature when the current trial began (restored on rejection)
  bool stage0_ready, event, forced, last;
  // the staged adjoint's event gradients (kernels/step/staged_adjoint.hpp): the saltation's sums
  // between its evaluations, and the substep's Newton iteration count they must not change
  RkEventSums event_sums;
  double event_niter;
};

// Dynamics evaluations of one substep at most (header comment): the staged pipeline launches this
// many evaluations per substep, each skipping the environments already done.
template <class Real>
SG_HD SG_INLINE int rk_evaluations_bound(const ModelView<Real>& m) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  if (!t.adaptive) return t.stages;
  const int max_trials = m.rk_max_steps > 1 ? m.rk_max_steps : 1;
  return 2 + max_trials * (t.stages - 1);
}

// The start of a trial step from the state in d (the loop's top): its start saved, its size cut
// to the time left (the last allowed trial takes all of it), its first stage to evaluate in d.
template <class Real, class L>
SG_HD void rk_trial_begin(const ModelView<Real>& m, const Data<Real, L>& d, const RkTableau& t,
                          RkControl& c) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  for (int i = 0; i < m.nq; ++i) w.q0[i] = d.qpos()[i];
  for (int i = 0; i < m.nv; ++i) w.v0[i] = d.qvel()[i];
  const int max_trials = t.adaptive ? (m.rk_max_steps > 1 ? m.rk_max_steps : 1) : 1;
  const double left = sg_double(m.timestep) - c.done;
  c.forced = c.trials + 1 >= max_trials;
  c.last = c.forced || c.h >= left;
  if (c.last) c.h = left;
  c.sig_start = c.sig;
  c.sig0 = c.sig;
  c.event = false;
  c.stage = c.stage0_ready ? 1 : 0;
  c.phase = kRkStage;
  rk_stage_point(m, d, t, Real(c.h), c.stage);
}

// The end of a trial step whose result is in d.qpos, d.qvel: accepted (recorded; the substep ends
// on its last step) or rejected (back to its start), and the next trial begun. Returns the status
// bits raised (kEnvStepCap: the cap forced a step that failed the tolerance).
template <class Real, class L>
SG_HD int rk_trial_end(const ModelView<Real>& m, const Data<Real, L>& d, const RkTableau& t,
                       RkControl& c) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const int nq = m.nq, nv = m.nv;
  const double k = t.order, beta1 = 0.6 / k, beta2 = -0.2 / k;
  const double event_step = t.adaptive ? m.rk_event_step : 0.0;  // AdaptiveTolerances::event_step
  int status = 0;
  ++c.trials;
  const double err = t.adaptive ? rk_error_norm(m, d, t, c.h) : 0.0;
  // event location: a step across a constraint event longer than event_step is halved (bisection
  // toward the event; the error controller is left as it was)
  const bool split = event_step > 0.0 && c.event && c.h > event_step && !c.forced;
  if ((err <= 1.0 && !split) || c.forced) {
    if (err > 1.0) status |= kEnvStepCap;
    const int accepted = sg_int(d.rk_count()[0]);
    const View<Real, L> rec = rk_step_record(m, d, accepted);
    for (int i = 0; i < nq; ++i) rec[i] = w.q0[i];
    for (int i = 0; i < nv; ++i) rec[nq + i] = w.v0[i];
    rec[nq + nv] = Real(c.h);
    d.rk_count()[0] = Real(accepted + 1);
    // forward mode with event gradients: the saltation on the result's tangent
    // (integrator_rk_event.hpp); the values stay as they are
    bool tangent_changed = false;
    if constexpr (is_dual_number<Real>::value)
      tangent_changed = rk_event_saltation_tangent(m, d, t, Real(c.h), c.event);
    if (c.last) {
      c.phase = kRkDone;
      d.rk_count()[1] = Real(c.rhs);
      return status;
    }
    c.done += c.h;
    // FSAL: the last stage was evaluated at the result, the next step's start (unless the
    // saltation changed the result's tangent: then stage 0 is evaluated again, same values)
    for (int i = 0; i < nq; ++i) w.stage_q(d, 0)[i] = w.stage_q(d, t.stages - 1)[i];
    for (int i = 0; i < nv; ++i) {
      w.stage_v(d, 0)[i] = w.stage_v(d, t.stages - 1)[i];
      w.stage_a(d, 0)[i] = w.stage_a(d, t.stages - 1)[i];
    }
    c.stage0_ready = !tangent_changed;
    if (tangent_changed) --c.rhs;  // the repeated evaluation is not counted
  } else {
    // rejected: back to the start; its stage 0 is still the one recorded
    for (int i = 0; i < nq; ++i) d.qpos()[i] = w.q0[i];
    for (int i = 0; i < nv; ++i) d.qvel()[i] = w.v0[i];
    c.stage0_ready = true;
    c.sig = c.sig_start;
    if (split) {
      c.h *= 0.5;
      rk_trial_begin(m, d, t, c);
      return status;
    }
  }
  const double inv = err > 0.0 ? 1.0 / err : 1e300;
  double factor = err > 0.0 ? 0.9 * sg_pow(inv, beta1) * sg_pow(c.inv_prev, beta2) : 10.0;
  factor = factor < 0.2 ? 0.2 : (factor > 10.0 ? 10.0 : factor);
  if (err > 1.0 && factor > 1.0) factor = 1.0;
  if (err <= 1.0) c.inv_prev = inv;
  c.h *= factor;
  rk_trial_begin(m, d, t, c);
  return status;
}

// The substep's start (d holds its state and control): the accepted steps' record and counters
// cleared, the warm start kept for every evaluation (rk_dynamics), the first evaluation's state
// in d (the state itself).
template <class Real, class L>
SG_HD void rk_substep_begin(const ModelView<Real>& m, const Data<Real, L>& d, RkControl& c) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  const RkScratch<Real, L> w = rk_scratch(m, d);
  // The accepted steps are counted in the environment's own memory (rk_count[0]), not in a local:
  // CUDA 13's ptxas put a local counter of the one-thread rk_substep<float> in a warp-uniform
  // register (one UIADD3 per warp on a per-thread branch), so the lanes of a diverged warp shared
  // one count and wrote their records past the workspace (compute-sanitizer on an H200,
  // 2026-12-04). Memory addressed per environment cannot be made warp-uniform.
  d.rk_count()[0] = Real(0);
  d.rk_count()[2] = Real(0);
  if (has_warmstart(m))
    for (int i = 0; i < m.nv; ++i) d.rk_warm()[i] = d.qacc_warmstart()[i];
  c.done = 0.0;
  c.h = sg_double(m.timestep);
  c.inv_prev = 1.0;
  c.h0 = c.d1 = 0.0;
  c.trials = 0;
  c.rhs = 0;
  c.sig = c.sig0 = c.sig_start = 0;
  c.stage = 0;
  c.stage0_ready = c.event = c.forced = c.last = false;
  if (t.adaptive) {
    for (int i = 0; i < m.nq; ++i) w.q0[i] = d.qpos()[i];
    for (int i = 0; i < m.nv; ++i) w.v0[i] = d.qvel()[i];
    c.phase = kRkInitial;  // stage 0 at the state in d
  } else {
    rk_trial_begin(m, d, t, c);
  }
}

// After the evaluation the controller asked for (rk_dynamics at d.qpos, d.qvel): the result
// taken, the next evaluation's state put in d, or c.phase = kRkDone with the substep's result in
// d.qpos, d.qvel and its counts in rk_count. Returns the status bits the controller raised.
template <class Real, class L>
SG_HD int rk_substep_advance(const ModelView<Real>& m, const Data<Real, L>& d, RkControl& c) {
  const RkTableau t = rk_tableau(m.rk_integrator);
  const double H = sg_double(m.timestep);
  ++c.rhs;
  if (c.phase == kRkInitial) {
    rk_stage_record(m, d, 0);
    c.sig = rk_constraint_signature(m, d);  // stage 0's, before the probe overwrites d
    c.h0 = rk_initial_probe(m, d, H, &c.d1);
    c.phase = kRkProbe;
    return 0;
  }
  if (c.phase == kRkProbe) {
    c.h = rk_initial_step_size(m, d, t, H, c.h0, c.d1);
    c.stage0_ready = true;
    rk_trial_begin(m, d, t, c);
    return 0;
  }
  rk_stage_record(m, d, c.stage);
  rk_stage_signature(m, d, c.stage, &c.sig0, &c.sig, &c.event);
  if (++c.stage < t.stages) {
    rk_stage_point(m, d, t, Real(c.h), c.stage);
    return 0;
  }
  rk_combine(m, d, t.b, t.stages, Real(c.h));
  return rk_trial_end(m, d, t, c);
}

// One substep of length m.timestep with the integrator m.rk_integrator (RK4 or adaptive), in one
// thread. Records the accepted steps (rk_steps, rk_count[0]), the dynamics evaluations
// (rk_count[1]) and their Newton iterations (rk_count[2]); returns the status bits raised
// (kEnvStepCap: the cap forced a step that failed the tolerance).
template <class Real, class L>
SG_HD SG_OUTLINE int rk_substep(const ModelView<Real>& m, const Data<Real, L>& d) {
  RkControl c;
  rk_substep_begin(m, d, c);
  int status = 0;
  while (c.phase != kRkDone) {
    status |= rk_dynamics(m, d);
    status |= rk_substep_advance(m, d, c);
  }
  return status;
}

}  // namespace stiffgrad::kern
