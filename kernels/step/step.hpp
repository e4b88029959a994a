// The smooth substep, composed of the pipeline stages (names follow MuJoCo):
//   fwd_position     kinematics, spatial inertias, cdof, mass matrix
//   fwd_velocity     body velocities, bias forces (RNEA with qacc = 0), passive forces
//   fwd_actuation    actuator forces
//   fwd_acceleration qfrc_smooth = passive + actuator - bias, qacc = (M + h_d D)^-1 qfrc_smooth
//   integrate        semi-implicit Euler: qvel += h qacc, qpos <- qpos (+) h qvel
//                    (the Runge–Kutta methods: kernels/integrators/integrator_rk.hpp, kernels/step/substep.hpp)
// With h_d = h this is MuJoCo's Euler integrator, implicit in joint damping:
// (M + h diag(damping)) dv = h qfrc_smooth; with m.implicit_actuator_damping the actuators'
// velocity gains join the implicit diagonal. With h_d = 0, qacc is MuJoCo's mjData.qacc.
// Every stage is a pure function of (Model, the Data fields it reads), so the adjoint issue can
// pair each with an adj_ twin and replay substeps bit for bit.
#pragma once

#include "kernels/dynamics/actuation.hpp"
#include "kernels/constraint/constraint.hpp"
#include "kernels/dynamics/crba.hpp"
#include "kernels/integrators/integrate.hpp"
#include "kernels/dynamics/kinematics.hpp"
#include "kernels/base/ldl.hpp"
#include "kernels/dynamics/passive.hpp"
#include "kernels/dynamics/rnea.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void fwd_position(const ModelView<Real>& m, const Data<Real, L>& d) {
  fwd_kinematics_base_to_tip(m, d);
  com_inertia_and_dofs(m, d);
  crb_mass_matrix(m, d);
}

template <class Real, class L>
SG_HD void fwd_velocity(const ModelView<Real>& m, const Data<Real, L>& d) {
  com_velocity_base_to_tip(m, d);
  rnea(m, d, /*use_qacc=*/false, d.qfrc_bias());
  tendon_kinematics(m, d);
  passive_forces(m, d);
}

template <class Real, class L>
SG_HD void fwd_actuation(const ModelView<Real>& m, const Data<Real, L>& d) {
  actuator_forces(m, d);
}

// Velocity gain of the actuators that the step treats implicitly: h K added to qLD, K = -b2
// momentᵀ moment over the affine actuators whose force and joint clamps are inactive (a clamped
// force does not depend on the velocity; actuator_clamp decides, as for the adjoint). A joint
// actuator adds gear² (-b2) to its dof's diagonal; a tendon actuator (gear coef_w on each wrap's
// dof) adds to every pair of its dofs, which must lie on one chain so that the entry is in M's
// tree pattern (Simulator refuses other tendons with this integrator). Zero unless
// m.implicit_actuator_damping.
template <class Real, class L>
SG_HD SG_INLINE void add_implicit_actuator_damping(const ModelView<Real>& m, const Data<Real, L>& d,
                                                   Real h) {
  if (!m.implicit_actuator_damping) return;
  const int nv = m.nv;
  for (int u = 0; u < m.nu; ++u) {
    if (m.actuator_biastype[u] != kBiasAffine) continue;
    if (actuator_clamps(m, d, u).force_blocked()) continue;
    const Real b2 = m.actuator_biasprm[3 * u + 2];
    if (!(b2 < Real(0))) continue;  // only damping (b2 < 0) is made implicit
    const Real g = m.actuator_gear[u];
    const int id = m.actuator_trnid[u];
    if (m.actuator_trntype[u] != kTrnTendon) {
      const int i = m.jnt_dofadr[id];
      d.qLD()[i * nv + i] += h * (-g * g * b2);
      continue;
    }
    for (int w = m.tendon_adr[id]; w < m.tendon_adr[id] + m.tendon_num[id]; ++w)
      for (int v = m.tendon_adr[id]; v < m.tendon_adr[id] + m.tendon_num[id]; ++v) {
        const int i = m.jnt_dofadr[m.wrap_jntid[w]], j = m.jnt_dofadr[m.wrap_jntid[v]];
        if (j > i) continue;  // the lower triangle: (i, j), j = i or an ancestor of i
        d.qLD()[i * nv + j] += h * (-g * g * b2) * m.wrap_coef[w] * m.wrap_coef[v];
      }
  }
}

// qLD <- the LTDL factor of M + h_damping (D + implicit actuator damping), on M's sparsity.
template <class Real, class L>
SG_HD SG_INLINE void factor_mass(const ModelView<Real>& m, const Data<Real, L>& d, Real h_damping) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) {
    const int* ch = m.dof_chain + m.dof_chainadr[i];  // i, its parent, ..., the root dof
    for (int k = 1; k < m.dof_chainnum[i]; ++k) d.qLD()[i * nv + ch[k]] = d.qM()[i * nv + ch[k]];
    d.qLD()[i * nv + i] = d.qM()[i * nv + i] + h_damping * m.dof_damping[i];
  }
  if (h_damping != Real(0)) add_implicit_actuator_damping(m, d, h_damping);
  ltdl_factor(m, d.qLD());
}

// Whether the Euler step solves (M + h D) a = qfrc_smooth + qfrc_constraint after the constraint
// solve (facts §7): only when some dof has damping (or actuator damping is made implicit);
// otherwise MuJoCo integrates the solver's qacc itself.
template <class Real>
SG_HD SG_INLINE bool euler_solves_damping(const ModelView<Real>& m) {
  return m.dof_damping_any != 0 || m.implicit_actuator_damping != 0;
}

// The part of fwd_acceleration before the constraint solve: qfrc_smooth = passive + actuator -
// bias, and with constraints the factor of M and qacc_smooth = M^-1 qfrc_smooth (the solver
// starts from it).
template <class Real, class L>
SG_HD void fwd_acceleration_smooth(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i)
    d.qfrc_smooth()[i] = d.qfrc_passive()[i] + d.qfrc_actuator()[i] - d.qfrc_bias()[i];
  if (m.nefc_max > 0) {
    factor_mass(m, d, Real(0));
    for (int i = 0; i < nv; ++i) d.qacc_smooth()[i] = d.qfrc_smooth()[i];
    ltdl_solve(m, d.qLD(), d.qacc_smooth());
  }
}

// The part of fwd_acceleration after the constraint solve (which left the solver's qacc in
// d.qacc): see fwd_acceleration.
template <class Real, class L>
SG_HD void fwd_acceleration_finish(const ModelView<Real>& m, const Data<Real, L>& d, Real h_damping) {
  const int nv = m.nv;
  if (m.nefc_max > 0) {
    for (int i = 0; i < nv; ++i) d.qacc_solver()[i] = d.qacc()[i];  // kept for the adjoint
    if (h_damping == Real(0) || !euler_solves_damping(m)) return;
    for (int i = 0; i < nv; ++i) d.qacc()[i] = d.qfrc_smooth()[i] + d.qfrc_constraint()[i];
  } else {
    for (int i = 0; i < nv; ++i) d.qacc()[i] = d.qfrc_smooth()[i];
  }
  factor_mass(m, d, h_damping);
  ltdl_solve(m, d.qLD(), d.qacc());
}

// qacc = (M + h_damping D)^-1 (qfrc_smooth [+ qfrc_constraint]); h_damping = 0 gives the plain
// forward dynamics (MuJoCo's mjData.qacc), h_damping = h the acceleration MuJoCo's Euler
// integrates: (M + h D) a = qfrc_smooth + qfrc_constraint (facts §7; joint damping implicit, the
// constraint force held), or with constraints and no damping the solver's qacc itself, as
// MuJoCo's Euler (facts §7). With constraints (m.nefc_max > 0) the constraint solve runs first
// (kernels/constraint/constraint.hpp); it returns the environment status bits it raised (0: none).
// The staged CUDA pipeline runs the same three parts in separate kernels
// (kernels/step/staged_step.hpp).
template <class Real, class L>
SG_HD int fwd_acceleration(const ModelView<Real>& m, const Data<Real, L>& d, Real h_damping) {
  fwd_acceleration_smooth(m, d);
  const int status = m.nefc_max > 0 ? fwd_constraint(m, d) : 0;  // d.qacc: the constrained dynamics
  fwd_acceleration_finish(m, d, h_damping);
  return status;
}

// Everything up to qacc (the dynamics at the current state); returns status bits (0: none).
template <class Real, class L>
SG_HD SG_OUTLINE int fwd_dynamics(const ModelView<Real>& m, const Data<Real, L>& d, Real h_damping) {
  fwd_position(m, d);
  fwd_velocity(m, d);
  fwd_actuation(m, d);
  return fwd_acceleration(m, d, h_damping);
}

template <class Real, class L>
SG_HD void integrate_euler(const ModelView<Real>& m, const Data<Real, L>& d) {
  const Real h = m.timestep;
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] += h * d.qacc()[i];
  integrate_pos(m, d.qpos(), d.qvel(), h);
}

// One Euler substep of length m.timestep; returns status bits (0: none). kernels/step/substep.hpp
// chooses between it and the Runge–Kutta methods.
template <class Real, class L>
SG_HD int euler_substep(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int status = fwd_dynamics(m, d, m.timestep);
  integrate_euler(m, d);
  return status;
}

}  // namespace stiffgrad::kern
