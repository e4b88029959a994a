// Explicit Runge–Kutta substeps: MuJoCo 2.2.2's RK4 (mj_RungeKutta) and the embedded adaptive
// pairs Tsit5, Dopri5 and Bosh3 (DiffMJX, docs/references/bcg-diffmjx-shac.md).
//
// The ODE is that of MuJoCo's RK4: the state is (q, v), q on its manifold, and
//   q̇ = v  (integrate_pos: quaternions move in the tangent space),  v̇ = qacc(q, v, u),
// qacc the constrained forward dynamics (fwd_dynamics with h_damping = 0: joint damping is an
// explicit force here, as in MuJoCo's RK4), u held over the substep. A step of size h from
// (q0, v0) with stages i = 0..s-1 (MuJoCo's formulation, mj_RungeKutta):
//   P_i = Σ_{j<i} a_ij V_j,  A_i = Σ_{j<i} a_ij acc_j,
//   q_i = integrate_pos(q0, P_i, h),  v_i = v0 + h A_i,  V_i = v_i,  acc_i = qacc(q_i, v_i, u),
// and the result is the same map with b in place of the row a_i:
//   q1 = integrate_pos(q0, Σ b_j V_j, h),  v1 = v0 + h Σ b_j acc_j.
// For the FSAL pairs (Tsit5, Dopri5, Bosh3) the last row of a equals b, so the last stage is
// evaluated at the result itself, bit for bit, and is the first stage of the next step.
//
// Adaptive substep (every environment on its own, inside each model timestep H, ending on it
// exactly): the first trial step is Hairer's starting step (rk_initial_probe, from the state);
// the error estimate is h Σ e_j (V_j, acc_j) with e = b − b̂, measured in the RMS norm of its
// 2·nv components, each divided by
// atol + rtol·max(|y0|, |y1|) (y: the dof's own coordinate for hinge, slide and free
// translation, 1 for rotational dofs, the velocity for the velocity part). A step is accepted
// when the norm is ≤ 1. The next trial is h·clip(0.9·ε⁻ᵝ¹·ε_prev⁻ᵝ², 0.2, 10) (diffrax's PID
// controller with pcoeff 0.2, icoeff 0.4, dcoeff 0: β1 = 0.6/k, β2 = −0.2/k, k the method's
// order; ε_prev the norm of the last accepted step, 1 at the start of a timestep; a rejected
// step never grows), cut to the time left. The controller starts afresh at every timestep, so
// a substep is a function of (q, v, u) alone: a replay from a checkpoint repeats it bit for
// bit. At most rk_max_steps trial steps per timestep: the last allowed trial takes all the time
// left and is accepted; if it fails the tolerance the environment gets kEnvStepCap.
//
// The substep's controller is integrator_rk_substep.hpp (rk_substep), built of this file's pieces.
//
// Reverse mode (integrator_rk_adjoint.hpp) is discretize-then-optimize through the accepted
// steps: their start states and sizes are recorded (rk_steps, at most rk_max_steps per
// timestep), the sizes are constants, rejected trials are not differentiated.
#pragma once

#include "kernels/integrators/integrate.hpp"
#include "kernels/integrators/integrator_rk_event.hpp"
#include "kernels/base/status.hpp"
#include "kernels/step/step.hpp"

namespace stiffgrad::kern {

// Butcher tableau of an explicit method, with the embedded error weights when adaptive.
struct RkTableau {
  int stages;                            // s
  int order;                             // order of the propagated solution (k of the controller)
  bool adaptive;                         // e holds b − b̂
  double a[kRkMaxStages][kRkMaxStages];  // a[i][j], j < i
  double b[kRkMaxStages];
  double e[kRkMaxStages];                // error weights: estimate h Σ e_j k_j
};

// Coefficients: RK4 as MuJoCo's RK4_A/RK4_B; Tsit5 from Tsitouras (2011), Table 1, with its
// error weights as in OrdinaryDiffEq; Dopri5 from Dormand & Prince (1980); Bosh3 from
// Bogacki & Shampine (1989). Rows of a sum to c; b and b̂ sum to 1 (tested).
SG_HD inline RkTableau rk_tableau(int integrator) {
  RkTableau t{};
  if (integrator == kIntRK4) {
    t.stages = 4; t.order = 4; t.adaptive = false;
    t.a[1][0] = 0.5; t.a[2][1] = 0.5; t.a[3][2] = 1.0;
    t.b[0] = 1.0 / 6.0; t.b[1] = 1.0 / 3.0; t.b[2] = 1.0 / 3.0; t.b[3] = 1.0 / 6.0;
  } else if (integrator == kIntTsit5) {
    t.stages = 7; t.order = 5; t.adaptive = true;
    t.a[1][0] = 0.161;
    t.a[2][0] = -0.008480655492356989; t.a[2][1] = 0.335480655492357;
    t.a[3][0] = 2.897153057105493; t.a[3][1] = -6.359448489975075; t.a[3][2] = 4.3622954328695815;
    t.a[4][0] = 5.325864828439257; t.a[4][1] = -11.748883564062828; t.a[4][2] = 7.4955393428898365;
    t.a[4][3] = -0.09249506636175525;
    t.a[5][0] = 5.86145544294642; t.a[5][1] = -12.92096931784711; t.a[5][2] = 8.159367898576159;
    t.a[5][3] = -0.071584973281401; t.a[5][4] = -0.028269050394068383;
    t.a[6][0] = 0.09646076681806523; t.a[6][1] = 0.01; t.a[6][2] = 0.4798896504144996;
    t.a[6][3] = 1.379008574103742; t.a[6][4] = -3.290069515436081; t.a[6][5] = 2.324710524099774;
    for (int j = 0; j < 6; ++j) t.b[j] = t.a[6][j];
    t.e[0] = -0.00178001105222577714; t.e[1] = -0.0008164344596567469; t.e[2] = 0.007880878010261995;
    t.e[3] = -0.1447110071732629; t.e[4] = 0.5823571654525552; t.e[5] = -0.45808210592918697;
    t.e[6] = 0.015151515151515152;
  } else if (integrator == kIntDopri5) {
    t.stages = 7; t.order = 5; t.adaptive = true;
    t.a[1][0] = 1.0 / 5.0;
    t.a[2][0] = 3.0 / 40.0; t.a[2][1] = 9.0 / 40.0;
    t.a[3][0] = 44.0 / 45.0; t.a[3][1] = -56.0 / 15.0; t.a[3][2] = 32.0 / 9.0;
    t.a[4][0] = 19372.0 / 6561.0; t.a[4][1] = -25360.0 / 2187.0; t.a[4][2] = 64448.0 / 6561.0;
    t.a[4][3] = -212.0 / 729.0;
    t.a[5][0] = 9017.0 / 3168.0; t.a[5][1] = -355.0 / 33.0; t.a[5][2] = 46732.0 / 5247.0;
    t.a[5][3] = 49.0 / 176.0; t.a[5][4] = -5103.0 / 18656.0;
    t.a[6][0] = 35.0 / 384.0; t.a[6][2] = 500.0 / 1113.0; t.a[6][3] = 125.0 / 192.0;
    t.a[6][4] = -2187.0 / 6784.0; t.a[6][5] = 11.0 / 84.0;
    for (int j = 0; j < 6; ++j) t.b[j] = t.a[6][j];
    t.e[0] = 71.0 / 57600.0; t.e[2] = -71.0 / 16695.0; t.e[3] = 71.0 / 1920.0;
    t.e[4] = -17253.0 / 339200.0; t.e[5] = 22.0 / 525.0; t.e[6] = -1.0 / 40.0;
  } else if (integrator == kIntBosh3) {
    t.stages = 4; t.order = 3; t.adaptive = true;
    t.a[1][0] = 0.5;
    t.a[2][1] = 0.75;
    t.a[3][0] = 2.0 / 9.0; t.a[3][1] = 1.0 / 3.0; t.a[3][2] = 4.0 / 9.0;
    for (int j = 0; j < 3; ++j) t.b[j] = t.a[3][j];
    t.e[0] = -5.0 / 72.0; t.e[1] = 1.0 / 12.0; t.e[2] = 1.0 / 9.0; t.e[3] = -1.0 / 8.0;
  }
  return t;
}

// Stage i's contribution is needed by the step's result or a later stage.
SG_HD SG_INLINE bool rk_stage_used(const RkTableau& t, int i) {
  bool used = t.b[i] != 0.0;
  for (int k = i + 1; k < t.stages; ++k) used = used || t.a[k][i] != 0.0;
  return used;
}

// Views of the integrator's scratch in one environment's Data (DataLayout rk_*).
template <class Real, class L>
struct RkScratch {
  View<Real, L> q0, v0;  // nq, nv  the step's start state
  View<Real, L> tmp;     // nv  P (the velocity integrate_pos is given)
  int nq, nv;
  SG_HD View<Real, L> stage_q(const Data<Real, L>& d, int i) const {
    return d.rk_stage_q().at(i * nq);
  }
  SG_HD View<Real, L> stage_v(const Data<Real, L>& d, int i) const {
    return d.rk_stage_k().at(2 * i * nv);
  }
  SG_HD View<Real, L> stage_a(const Data<Real, L>& d, int i) const {
    return d.rk_stage_k().at((2 * i + 1) * nv);
  }
};

template <class Real, class L>
SG_HD SG_INLINE RkScratch<Real, L> rk_scratch(const ModelView<Real>& m, const Data<Real, L>& d) {
  return RkScratch<Real, L>{d.rk_y0(), d.rk_y0().at(m.nq), d.rk_tmp(), m.nq, m.nv};
}

// d.qpos, d.qvel <- (integrate_pos(q0, Σ_j c_j V_j, h), v0 + h Σ_j c_j acc_j) over j < n, in
// MuJoCo's order of operations (its zero coefficients add exact zeros, skipped here). `c` is a
// row of a, or b.
template <class Real, class L>
SG_HD void rk_combine(const ModelView<Real>& m, const Data<Real, L>& d, const double* c, int n, Real h) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  for (int k = 0; k < m.nv; ++k) {
    Real p(0), acc(0);
    for (int j = 0; j < n; ++j) {
      if (c[j] == 0.0) continue;
      p += w.stage_v(d, j)[k] * Real(c[j]);
      acc += w.stage_a(d, j)[k] * Real(c[j]);
    }
    w.tmp[k] = p;
    d.qvel()[k] = w.v0[k] + acc * h;
  }
  for (int k = 0; k < m.nq; ++k) d.qpos()[k] = w.q0[k];
  integrate_pos(m, d.qpos(), w.tmp, h);
}

// The dynamics at the state in d for one evaluation of a substep: every constraint solve of the
// substep starts from the warm start the substep began with (rk_warm), not from the previous
// stage's solution, so that the adjoint's recomputation of any single stage reproduces the
// forward solve bit for bit (integrator_rk_adjoint.hpp) without replaying the chain of solves
// before it. Counts the solve's Newton iterations in rk_count[2]. rk_dynamics_begin and
// rk_dynamics_end are its parts around fwd_dynamics, for the staged step
// (kernels/step/staged_step.hpp), which runs fwd_dynamics' stages between them in separate kernels.
template <class Real, class L>
SG_HD SG_INLINE void rk_dynamics_begin(const ModelView<Real>& m, const Data<Real, L>& d) {
  if (has_warmstart(m))
    for (int k = 0; k < m.nv; ++k) d.qacc_warmstart()[k] = d.rk_warm()[k];
}
template <class Real, class L>
SG_HD SG_INLINE void rk_dynamics_end(const ModelView<Real>& /*m*/, const Data<Real, L>& d) {
  d.rk_count()[2] += d.solver_niter()[0];
}
template <class Real, class L>
SG_HD SG_OUTLINE int rk_dynamics(const ModelView<Real>& m, const Data<Real, L>& d) {
  rk_dynamics_begin(m, d);
  const int status = fwd_dynamics(m, d, Real(0));
  rk_dynamics_end(m, d);
  return status;
}

// After stage i's dynamics at the state in d.qpos, d.qvel: V_i, acc_i and q_i recorded.
template <class Real, class L>
SG_HD SG_INLINE void rk_stage_record(const ModelView<Real>& m, const Data<Real, L>& d, int i) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  for (int k = 0; k < m.nq; ++k) w.stage_q(d, i)[k] = d.qpos()[k];
  for (int k = 0; k < m.nv; ++k) {
    w.stage_v(d, i)[k] = d.qvel()[k];
    w.stage_a(d, i)[k] = d.qacc()[k];
  }
}

// Stage i at the state in d.qpos, d.qvel: the dynamics there; V_i, acc_i and q_i recorded.
template <class Real, class L>
SG_HD int rk_eval_stage(const ModelView<Real>& m, const Data<Real, L>& d, int i) {
  const int status = rk_dynamics(m, d);
  rk_stage_record(m, d, i);
  return status;
}

// A signature of the constraint rows of the last dynamics evaluation in d: their number and each
// row's solver state. Event location compares it between the stages of a step: a row switching
// on or off is where the force can jump (MuJoCo's clamped impedance), a row changing state (a
// contact separating, a friction row between stick and slip) where its derivative jumps; either
// breaks the smoothness the method's order and its error estimate rely on.
// 0 when event location is off (nothing reads it then: the row scan is skipped).
template <class Real, class L>
SG_HD SG_INLINE int rk_constraint_signature(const ModelView<Real>& m, const Data<Real, L>& d) {
  if (m.nefc_max <= 0 || !(m.rk_event_step > 0.0)) return 0;
  const int nefc = sg_int(d.nefc()[0]);
  unsigned sig = static_cast<unsigned>(nefc);
  for (int i = 0; i < nefc; ++i)
    sig = sig * 31u + static_cast<unsigned>(sg_int(d.efc_state()[i]) + 1);
  return static_cast<int>(sig & 0x7fffffffu);
}

// Where stage i of a step of size h from (q0, v0) in the scratch is evaluated: the start itself
// (i = 0) or (q_i, v_i) by rk_combine with row a_i.
template <class Real, class L>
SG_HD SG_INLINE void rk_stage_point(const ModelView<Real>& m, const Data<Real, L>& d,
                                    const RkTableau& t, Real h, int i) {
  if (i == 0) {
    const RkScratch<Real, L> w = rk_scratch(m, d);
    for (int k = 0; k < m.nq; ++k) d.qpos()[k] = w.q0[k];
    for (int k = 0; k < m.nv; ++k) d.qvel()[k] = w.v0[k];
  } else {
    rk_combine(m, d, t.a[i], i, h);
  }
}

// After stage i's dynamics: its constraint signature into *sig, and against the step's stage 0
// (*sig0, set at i = 0) into *event.
template <class Real, class L>
SG_HD SG_INLINE void rk_stage_signature(const ModelView<Real>& m, const Data<Real, L>& d, int i,
                                        int* sig0, int* sig, bool* event) {
  const int r = rk_constraint_signature(m, d);
  if (i == 0)
    *sig0 = r;
  else if (r != *sig0)
    *event = true;
  *sig = r;
}

// One step of size h from (q0, v0) in the scratch; stage 0 is taken as already evaluated when
// `stage0_ready`. Leaves the result in d.qpos, d.qvel; returns the status bits raised and adds
// the dynamics evaluations to *rhs. *sig: on entry the constraint signature at stage 0 (when
// ready), on return the last stage's (the next step's stage 0 under FSAL); *event: whether any
// stage saw another signature than stage 0 (event location, AdaptiveTolerances::event_step).
// The substep's controller (integrator_rk_substep.hpp) takes the same stages one evaluation at
// a time.
template <class Real, class L>
SG_HD int rk_step(const ModelView<Real>& m, const Data<Real, L>& d, const RkTableau& t, Real h,
                  bool stage0_ready, int* rhs, int* sig, bool* event) {
  int status = 0, sig0 = *sig;
  *event = false;
  for (int i = stage0_ready ? 1 : 0; i < t.stages; ++i) {
    rk_stage_point(m, d, t, h, i);
    status |= rk_eval_stage(m, d, i);
    ++*rhs;
    rk_stage_signature(m, d, i, &sig0, sig, event);
  }
  rk_combine(m, d, t.b, t.stages, h);
  return status;
}

// f(j, c, k) for every dof k, the c-th of joint j (the error norms' components come per dof).
template <class Real, class F>
SG_HD SG_INLINE void rk_for_each_dof(const ModelView<Real>& m, F&& f) {
  for (int j = 0; j < m.njnt; ++j) {
    const int type = m.jnt_type[j];
    const int ndof = type == kJntFree ? 6 : (type == kJntBall ? 3 : 1);
    for (int c = 0; c < ndof; ++c) f(j, c, m.jnt_dofadr[j] + c);
  }
}

// The size of a position coordinate that the error of dof k is relative to (header comment).
template <class Real, class L>
SG_HD SG_INLINE double rk_position_magnitude(const ModelView<Real>& m, View<Real, L> qpos, int jnt, int dof_in_jnt) {
  const int type = m.jnt_type[jnt];
  if (type == kJntBall || (type == kJntFree && dof_in_jnt >= 3)) return 1.0;
  return sg_double(sg_abs(qpos[m.jnt_qposadr[jnt] + dof_in_jnt]));
}

// RMS of the scaled error estimate of the step just taken (values only: the step size is
// not differentiated). d.qpos, d.qvel hold the result, the scratch the start.
template <class Real, class L>
SG_HD double rk_error_norm(const ModelView<Real>& m, const Data<Real, L>& d, const RkTableau& t, double h) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const double rtol = sg_double(m.rk_rtol), atol = sg_double(m.rk_atol);
  double sum = 0.0;
  rk_for_each_dof(m, [&](int j, int c, int k) {
    double eq = 0.0, ev = 0.0;
    for (int s = 0; s < t.stages; ++s) {
      if (t.e[s] == 0.0) continue;
      eq += t.e[s] * sg_double(w.stage_v(d, s)[k]);
      ev += t.e[s] * sg_double(w.stage_a(d, s)[k]);
    }
    eq *= h;
    ev *= h;
    const double q0 = rk_position_magnitude(m, w.q0, j, c),
                 q1 = rk_position_magnitude(m, d.qpos(), j, c);
    const double v0 = sg_double(sg_abs(w.v0[k])), v1 = sg_double(sg_abs(d.qvel()[k]));
    const double sq = atol + rtol * (q0 > q1 ? q0 : q1), sv = atol + rtol * (v0 > v1 ? v0 : v1);
    sum += (eq / sq) * (eq / sq) + (ev / sv) * (ev / sv);
  });
  const int n = 2 * m.nv;
  return n > 0 ? sg_sqrt(sum / n) : 0.0;
}

// The first trial step of a timestep for the adaptive methods: Hairer, Nørsett and Wanner's
// starting step (Solving ODEs I, sec. II.4; what diffrax picks when no dt0 is given), from
// f(y0) and one explicit Euler probe, in the scaled RMS norm of rk_error_norm:
//   d0 = ‖y0‖, d1 = ‖f(y0)‖, h0 = 0.01 d0/d1 (1e-6 when either is below 1e-5),
//   d2 = ‖f(y0 + h0 f(y0)) − f(y0)‖ / h0,  h1 = (0.01 / max(d1, d2))^(1/(p+1)),
//   h = min(100 h0, h1, H).
// A function of the state alone (so replay stays bitwise), and the PID controller then starts
// near the step the contacts allow instead of trying the full timestep (measured: most of the
// evaluations of a full-timestep start went to rejected trials in stiff contact). Stage 0 at y0
// is evaluated first (kept: the first trial reuses it), then rk_initial_probe, the dynamics at
// the probe, and rk_initial_step_size (integrator_rk_substep.hpp runs them in that order).
//
// rk_initial_probe: with stage 0 recorded, d1 into *d1 and the probe y0 + h0 f(y0) into d.qpos,
// d.qvel; returns h0.
template <class Real, class L>
SG_HD double rk_initial_probe(const ModelView<Real>& m, const Data<Real, L>& d, double H,
                              double* d1_out) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const int nq = m.nq, nv = m.nv;
  const double rtol = sg_double(m.rk_rtol), atol = sg_double(m.rk_atol);
  double d0 = 0, d1 = 0;
  rk_for_each_dof(m, [&](int j, int c, int k) {
    const double yq = rk_position_magnitude(m, w.q0, j, c), yv = sg_double(sg_abs(w.v0[k]));
    const double sq = atol + rtol * yq, sv = atol + rtol * yv;
    const double fq = sg_double(w.stage_v(d, 0)[k]), fv = sg_double(w.stage_a(d, 0)[k]);
    d0 += (yq / sq) * (yq / sq) + (yv / sv) * (yv / sv);
    d1 += (fq / sq) * (fq / sq) + (fv / sv) * (fv / sv);
  });
  const int n = 2 * nv > 0 ? 2 * nv : 1;
  d0 = sg_sqrt(d0 / n);
  d1 = sg_sqrt(d1 / n);
  double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
  if (h0 > H) h0 = H;
  // the Euler probe y0 + h0 f(y0)
  for (int i = 0; i < nq; ++i) d.qpos()[i] = w.q0[i];
  for (int i = 0; i < nv; ++i) {
    w.tmp[i] = w.stage_v(d, 0)[i];
    d.qvel()[i] = w.v0[i] + w.stage_a(d, 0)[i] * Real(h0);
  }
  integrate_pos(m, d.qpos(), w.tmp, Real(h0));
  *d1_out = d1;
  return h0;
}

// rk_initial_step_size: with the dynamics at the probe in d, the first trial step; leaves d at y0.
template <class Real, class L>
SG_HD double rk_initial_step_size(const ModelView<Real>& m, const Data<Real, L>& d,
                                  const RkTableau& t, double H, double h0, double d1) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const int nq = m.nq, nv = m.nv;
  const double rtol = sg_double(m.rk_rtol), atol = sg_double(m.rk_atol);
  const int n = 2 * nv > 0 ? 2 * nv : 1;
  double d2 = 0;
  rk_for_each_dof(m, [&](int j, int c, int k) {
    const double sq = atol + rtol * rk_position_magnitude(m, w.q0, j, c);
    const double sv = atol + rtol * sg_double(sg_abs(w.v0[k]));
    const double eq = sg_double(d.qvel()[k] - w.stage_v(d, 0)[k]) / sq;
    const double ev = sg_double(d.qacc()[k] - w.stage_a(d, 0)[k]) / sv;
    d2 += eq * eq + ev * ev;
  });
  d2 = sg_sqrt(d2 / n) / h0;
  const double dmax = d1 > d2 ? d1 : d2;
  const double h1 = dmax <= 1e-15 ? (h0 * 1e-3 > 1e-6 ? h0 * 1e-3 : 1e-6) : sg_pow(0.01 / dmax, 1.0 / (t.order + 1));
  for (int i = 0; i < nq; ++i) d.qpos()[i] = w.q0[i];
  for (int i = 0; i < nv; ++i) d.qvel()[i] = w.v0[i];
  double h = 100 * h0 < h1 ? 100 * h0 : h1;
  return h < H ? h : H;
}

// Whether the step just taken (size h, `event`: its stages saw a constraint event) is a located
// event that the event gradients correct (AdaptiveTolerances::event_gradients): a step across
// an event no longer than event_step. The forward mode and the adjoint decide it alike.
template <class Real>
SG_HD SG_INLINE bool rk_located_event(const ModelView<Real>& m, const RkTableau& t, Real h, bool event) {
  return m.rk_event_gradients && t.adaptive && event && m.rk_event_step > 0.0 && sg_double(h) <= m.rk_event_step;
}

// The switching contacts of the located event step whose stages are in the scratch (stage 0 at
// its start, stage s−1 at its end): rk_event_normal with the substep's dynamics.
template <class Real, class L>
SG_HD double rk_event_rate(const ModelView<Real>& m, const Data<Real, L>& d, const RkTableau& t) {
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const int last = t.stages - 1;
  const Real newton_iterations = d.rk_count()[2];  // the substep's statistic, not these repeats
  const double rate = rk_event_normal(m, d, w.stage_q(d, 0), w.stage_v(d, 0), w.stage_q(d, last),
                                      w.stage_v(d, last), [&](View<Real, L> q, View<Real, L> v) {
                                        for (int k = 0; k < m.nq; ++k) d.qpos()[k] = q[k];
                                        for (int k = 0; k < m.nv; ++k) d.qvel()[k] = v[k];
                                        rk_dynamics(m, d);
                                      });
  d.rk_count()[2] = newton_iterations;
  return rate;
}

// Forward mode: the saltation on the tangent of the result of a located event step (d.qpos,
// d.qvel hold the result; stage s−1 was evaluated there). Returns whether it applied.
template <class Real, class L>
SG_HD bool rk_event_saltation_tangent(const ModelView<Real>& m, const Data<Real, L>& d, const RkTableau& t, Real h,
                                      bool event) {
  if (!rk_located_event(m, t, h, event)) return false;
  const RkScratch<Real, L> w = rk_scratch(m, d);
  const double rate = rk_event_rate(m, d, t);  // leaves d at the result, as before
  if (rate == 0.0) return false;
  rk_event_tangent(m, d, w.stage_a(d, 0), w.stage_a(d, t.stages - 1), rate);
  return true;
}

// Accepted step n of the last substep: its start state and size (the adjoint's record).
template <class Real, class L>
SG_HD SG_INLINE View<Real, L> rk_step_record(const ModelView<Real>& m, const Data<Real, L>& d, int n) {
  return d.rk_steps().at(n * (m.nq + m.nv + 1));  // qpos (nq), qvel (nv), h
}

}  // namespace stiffgrad::kern
