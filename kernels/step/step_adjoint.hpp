// Adjoint of one smooth substep (kernels/step/step.hpp).
//
// Forward dynamics is differentiated through inverse dynamics (docs/architecture.md): the substep solves
//   (M(q) + h D) qacc = f(q, v, u),  f = passive + actuator - bias,
// i.e. RNEA(q, v, qacc) + h D qacc - passive(q, v) - actuator(q, v, u) = 0. For an incoming
// adjoint qacc_bar: lambda = (M + h D)^-1 qacc_bar (the forward factor is reused), then
//   q_bar, v_bar -= (dRNEA/dq, dRNEA/dv)^T lambda   at fixed qacc   (reverse RNEA sweep),
//   q_bar, v_bar, u_bar += (d passive, d actuator)^T lambda.
// No dM/dq tensor is formed.
#pragma once

#include "kernels/dynamics/actuation_adjoint.hpp"
#include "kernels/constraint/constraint_rows_adjoint.hpp"
#include "kernels/constraint/solver_adjoint.hpp"
#include "kernels/integrators/integrate_adjoint.hpp"
#include "kernels/base/ldl_adjoint.hpp"
#include "kernels/dynamics/passive_adjoint.hpp"
#include "kernels/dynamics/rnea_adjoint.hpp"
#include "kernels/step/substep.hpp"

namespace stiffgrad::kern {

// Zero every adjoint field except the state and control adjoints, which carry across
// substeps.
// The Runge–Kutta fields at the end of the buffer are kept: the integrator's adjoint holds
// its running sums there (integrator_rk_adjoint.hpp).
template <class Real, class L>
SG_HD void clear_adjoint_scratch(const DataLayout& o, View<Real, L> adj_buffer) {
  for (int i = o.tree_origin; i < o.rk_y0; ++i)  // every field after qpos, qvel, ctrl
    adj_buffer[i] = Real(0);
}

// The constraint part of the substep's adjoint (docs/architecture.md "Constraints"). The Euler solve is
// (M + h D) a_hat = qfrc_smooth + J^T f(J a_c - aref), where a_c is the constraint solve's
// minimiser; lambda_1 = (M + h D)^-1 a_hat_bar is in a.qacc. Then:
//   f_bar = J lambda_1, J_bar += f lambda_1^T                       (qfrc_constraint = J^T f)
//   adj_constraint_solve: lambda_2 = H^-1 (J^T (df/djar)^T f_bar), and the row adjoints
//   (J, aref, D, R), qfrc_smooth_bar = lambda_2  (kernels/constraint/solver_adjoint.hpp)
//   the optimality condition's M(q) a_c + c(q, v) - passive - actuator: reverse RNEA at a_c
//   with -lambda_2, and +lambda_2 into the passive and actuator adjoints
//   rows -> contact geometry, cdof, subtree_com, qpos, qvel; contacts -> geom poses -> bodies.
// On return a.qacc holds lambda_1 again (the caller's RNEA at a_hat uses it).
// Without the Euler solve (`euler_solve` false: no damping, or h_damping = 0 as in the
// Runge–Kutta stages) the step integrates a_c itself: a.qacc is then a_c's adjoint, handed to
// the solve's adjoint directly, f has no adjoint of its own, and lambda_1 = 0 on return.
//
// In four parts, run in this order (adj_constraint_forces below; the staged adjoint,
// kernels/step/staged_adjoint.hpp, runs them as stages of their own):
//   adj_constraint_forces_begin   f_bar and J_bar; d.qacc <- a_c (a_hat kept in d.qacc_smooth)
//   adj_constraint_solve          lambda_2 and the rows' adjoints
//   adj_constraint_forces_rows    the optimality condition's RNEA adjoint, the rows' adjoint
//   adj_fwd_collision             contacts -> geom poses -> bodies
// and adj_constraint_forces_end, which the dynamics adjoint's tail begins with.
template <class Real, class L>
SG_HD void adj_constraint_forces_begin(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                       bool euler_solve) {
  const int nv = m.nv;
  const int nefc = sg_int(d.nefc()[0]);
  if (euler_solve) {
    for (int i = 0; i < nefc; ++i) {
      // J's structural zeros are constants and not stored (row_sparsity.hpp)
      const int chain = row_chain(d, i);
      a.efc_force()[i] += row_dot(m, d.efc_J(), i, chain, a.qacc());
      for_each_row_entry(m, chain, [&](int slot, int c) {
        a.efc_J()[i * nv + slot] += d.efc_force()[i] * a.qacc()[c];
      });
    }
    // the solve's own qacc enters a_hat only through f: its adjoint is zero; keep lambda_1
    for (int c = 0; c < nv; ++c) {
      a.qacc_solver()[c] = a.qacc()[c];
      a.qacc()[c] = Real(0);
    }
  } else {
    for (int c = 0; c < nv; ++c)
      a.qacc_solver()[c] = Real(0);  // lambda_1 = 0; a.qacc: a_c's adjoint
  }
  for (int c = 0; c < nv; ++c) d.qacc_smooth()[c] = d.qacc()[c];  // a_hat, restored by _end
  for (int c = 0; c < nv; ++c) d.qacc()[c] = d.qacc_solver()[c];  // the solver's a_c
}

// After adj_constraint_solve (lambda_2 in a.qacc_smooth, qfrc_smooth_bar in a.qfrc_smooth).
template <class Real, class L>
SG_HD void adj_constraint_forces_rows(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  for (int c = 0; c < m.nv; ++c) {
    a.qfrc_passive()[c] += a.qfrc_smooth()[c];
    a.qfrc_actuator()[c] += a.qfrc_smooth()[c];
    a.qfrc_bias()[c] = -a.qacc_smooth()[c];
  }
  rnea(m, d, /*use_qacc=*/true, d.qacc_solver(), d.qfrc_bias());
  adj_rnea(m, d, a, d.qacc_solver(), a.qfrc_bias());
  adj_fwd_constraint_rows(m, d, a);
}

// d.qacc <- a_hat, a.qacc <- lambda_1 (what adj_constraint_forces_begin moved aside).
template <class Real, class L>
SG_HD void adj_constraint_forces_end(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  for (int c = 0; c < m.nv; ++c) {
    d.qacc()[c] = d.qacc_smooth()[c];
    a.qacc()[c] = a.qacc_solver()[c];
  }
}

template <class Real, class L>
SG_HD void adj_constraint_forces(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                 bool euler_solve) {
  adj_constraint_forces_begin(m, d, a, euler_solve);
  adj_constraint_solve(m, d, a);  // lambda_2 -> a.qacc_smooth, += a.qfrc_smooth and rows
  adj_constraint_forces_rows(m, d, a);
  adj_fwd_collision(m, d, a);
  adj_constraint_forces_end(m, d, a);
}

// Adjoint of fwd_dynamics(m, d, h_damping): a.qacc holds the adjoint of d.qacc, every other
// scratch field of a is zero (clear_adjoint_scratch); adds the adjoints of d.qpos, d.qvel and
// d.ctrl into a.qpos, a.qvel, a.ctrl. d holds the primal (fwd_dynamics at the same state).
// The adjoints of the body velocities (cvel, cdof_dot), the com inertias and dofs, and the body
// kinematics, tip to base: the tail every dynamics adjoint ends with (adj_fwd_dynamics, the
// Impulse substep's), kept as one device function (SG_OUTLINE).
template <class Real, class L>
SG_HD SG_OUTLINE void adj_kinematics_tail(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  adj_com_velocity_base_to_tip(m, d, a);
  adj_com_inertia_and_dofs(m, d, a);
  adj_fwd_kinematics_base_to_tip(m, d, a);
}

// Whether fwd_dynamics(m, d, h_damping) ran the Euler solve after the constraint solve.
template <class Real>
SG_HD SG_INLINE bool adj_dynamics_euler_solve(const ModelView<Real>& m, Real h_damping) {
  return h_damping != Real(0) && euler_solves_damping(m);
}

// adj_fwd_dynamics up to the constraint solve's adjoint: lambda = (M + h D)^-1 qacc_bar in
// a.qacc; with constraints and without the Euler solve (no damping, or h_damping = 0) qacc is
// the solver's own: qacc_bar goes to the solve's adjoint (adj_constraint_forces) and lambda = 0.
template <class Real, class L>
SG_HD void adj_fwd_dynamics_begin(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                  Real h_damping) {
  const bool euler_solve = adj_dynamics_euler_solve(m, h_damping);
  const bool direct = m.nefc_max > 0 && !euler_solve;
  if (!direct) adj_ltdl_solve(m, d.qLD(), a.qacc());

  // f = passive + actuator - bias: the passive and actuator parts
  for (int i = 0; i < m.nv; ++i) {
    a.qfrc_passive()[i] = direct ? Real(0) : a.qacc()[i];
    a.qfrc_actuator()[i] = direct ? Real(0) : a.qacc()[i];
  }
}

// adj_fwd_dynamics after the constraints' adjoint: the passive and actuator forces, inverse
// dynamics at fixed qacc with adjoint -lambda (RNEA recomputed with qacc: cacc, cfrc), the
// kinematics.
template <class Real, class L>
SG_HD void adj_fwd_dynamics_end(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  adj_passive_forces(m, d, a);
  adj_actuator_forces(m, d, a);
  rnea(m, d, /*use_qacc=*/true, d.qfrc_bias());
  for (int i = 0; i < m.nv; ++i) a.qfrc_bias()[i] = -a.qacc()[i];
  adj_rnea(m, d, a, a.qfrc_bias());
  adj_kinematics_tail(m, d, a);
}

template <class Real, class L>
SG_HD SG_OUTLINE void adj_fwd_dynamics(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                       Real h_damping) {
  adj_fwd_dynamics_begin(m, d, a, h_damping);
  if (m.nefc_max > 0) adj_constraint_forces(m, d, a, adj_dynamics_euler_solve(m, h_damping));
  adj_fwd_dynamics_end(m, d, a);
}

// The start of adj_substep with d holding the substep's primal: through the integration to
// a.qacc, then adj_fwd_dynamics_begin. The staged adjoint's first stage.
template <class Real, class L>
SG_HD void adj_substep_begin(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& d,
                             const Data<Real, L>& a, View<Real, L> adj_buffer) {
  const Real h = m.timestep;
  clear_adjoint_scratch(o, adj_buffer);
  // integrate: qvel' = qvel + h qacc, qpos' = qpos (+) h qvel'
  // qvel' in d.qfrc_bias, free until RNEA is recomputed below (qfrc_smooth is still read by
  // the constraint solve's adjoint)
  for (int i = 0; i < m.nv; ++i) d.qfrc_bias()[i] = d.qvel()[i] + h * d.qacc()[i];
  adj_integrate_pos(m, d.qpos(), d.qfrc_bias(), h, a.qpos(), a.qvel());
  for (int i = 0; i < m.nv; ++i) a.qacc()[i] = h * a.qvel()[i];
  adj_fwd_dynamics_begin(m, d, a, h);
}

// Adjoint of euler_substep(). On entry: d.qpos, d.qvel, d.ctrl hold the state and control BEFORE
// the substep (everything else in d is recomputed here); a.qpos (nq, raw coordinates) and
// a.qvel (nv) hold the adjoints of the state AFTER it. On exit a.qpos / a.qvel hold the
// adjoints of the state before, and a.ctrl has accumulated the control adjoint. d ends up
// holding the primal intermediates of the substep: qpos, qvel, ctrl and qacc unchanged (so
// integrate_euler(m, d) then reproduces the substep's result), scratch fields overwritten.
//
// With recompute = false, d must already hold the primal of this substep (fwd_dynamics run
// on the state before it, e.g. by a replayed substep() whose qpos/qvel were then restored).
template <class Real, class L>
SG_HD SG_OUTLINE void adj_substep(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& d,
                       const Data<Real, L>& a, View<Real, L> adj_buffer, bool recompute = true) {
  // the primal up to qacc (qfrc_bias then holds RNEA(q, v, qacc), see below)
  if (recompute) fwd_dynamics(m, d, m.timestep);
  adj_substep_begin(m, o, d, a, adj_buffer);
  if (m.nefc_max > 0) adj_constraint_forces(m, d, a, adj_dynamics_euler_solve(m, m.timestep));
  adj_fwd_dynamics_end(m, d, a);
}

}  // namespace stiffgrad::kern
