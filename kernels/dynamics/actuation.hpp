// Actuator forces through joint transmissions (MuJoCo's mj_transmission + mj_fwdActuation
// for dyntype none, gaintype fixed, biastype none/affine):
//   length = gear q,  velocity = gear qdot,  u = clamp(ctrl, ctrlrange) when ctrllimited,
//   force = gain u + b0 + b1 length + b2 velocity, clamped to forcerange when forcelimited,
//   tau_dof += gear force, then each joint's total clamped to its actuatorfrcrange.
#pragma once

#include "kernels/base/data.hpp"

namespace stiffgrad::kern {

// The actuator clamp rule, stated once: every clamp of the actuation (the control to
// ctrlrange, the force to forcerange, each dof's total to its joint's actuatorfrcrange) is
// this function. A clamp is *active* when its input lies strictly outside the range: its
// output is then a constant bound, so the adjoint through it is zero and the force does not
// depend on the velocity (implicit actuator damping skips it). On a bound it is inactive: the
// derivative from inside the range. The forward kernel, its adjoint, the implicit damping in
// step.hpp and the tests all decide through here.
template <class Real>
SG_HD SG_INLINE Real actuator_clamp(Real x, int limited, const Real* range, bool* active) {
  *active = limited && (x < range[0] || range[1] < x);
  return limited ? sg_clamp(x, range[0], range[1]) : x;
}

// Actuator u's force from its control, length and velocity, with the control and force clamps.
template <class Real> struct ActuatorForce {
  Real force;          // clamped force
  bool ctrl_clamped;   // ctrl beyond ctrlrange: no adjoint to ctrl
  bool force_clamped;  // force beyond forcerange: no adjoint to anything upstream
};

template <class Real>
SG_HD SG_INLINE ActuatorForce<Real> actuator_force(const ModelView<Real>& m, int u, Real ctrl, Real len, Real vel) {
  ActuatorForce<Real> r;
  const Real c = actuator_clamp(ctrl, m.actuator_ctrllimited[u], m.actuator_ctrlrange + 2 * u, &r.ctrl_clamped);
  Real f = m.actuator_gainprm[3 * u] * c;
  if (m.actuator_biastype[u] == kBiasAffine) {
    const Real* bp = m.actuator_biasprm + 3 * u;
    f += bp[0] + bp[1] * len + bp[2] * vel;
  }
  r.force = actuator_clamp(f, m.actuator_forcelimited[u], m.actuator_forcerange + 2 * u, &r.force_clamped);
  return r;
}

// The total actuator force on dof i before its joint clamp, summed in the forward kernel's
// order (so bit-for-bit its value) from the clamped actuator forces in d.
template <class Real, class L>
SG_HD SG_INLINE Real dof_actuator_total(const ModelView<Real>& m, const Data<Real, L>& d, int i) {
  Real s = Real(0);
  for (int u = 0; u < m.nu; ++u)
    if (m.jnt_dofadr[m.actuator_trnid[u]] == i) s += m.actuator_gear[u] * d.actuator_force()[u];
  return s;
}

// Joint j's actuatorfrcrange clamp on one of its dofs' total.
template <class Real>
SG_HD SG_INLINE Real joint_actuator_clamp(const ModelView<Real>& m, int j, Real total, bool* active) {
  return actuator_clamp(total, m.jnt_actfrclimited[j], m.jnt_actfrcrange + 2 * j, active);
}

// Which of actuator u's clamps are active at the state in d, once actuator_forces has run.
struct ActuatorClamps {
  bool ctrl;   // ctrl beyond ctrlrange: no adjoint to ctrl
  bool force;  // force beyond forcerange: no adjoint to ctrl, length or velocity
  bool joint;  // its dof's total beyond the joint's actuatorfrcrange: the same
  SG_HD bool force_blocked() const { return force || joint; }
};

template <class Real, class L>
SG_HD SG_INLINE ActuatorClamps actuator_clamps(const ModelView<Real>& m, const Data<Real, L>& d, int u) {
  const ActuatorForce<Real> r =
      actuator_force(m, u, d.ctrl()[u], d.actuator_length()[u], d.actuator_velocity()[u]);
  ActuatorClamps c{r.ctrl_clamped, r.force_clamped, false};
  const int j = m.actuator_trnid[u];
  if (m.jnt_actfrclimited[j]) joint_actuator_clamp(m, j, dof_actuator_total(m, d, m.jnt_dofadr[j]), &c.joint);
  return c;
}

template <class Real, class L>
SG_HD void actuator_forces(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_actuator()[i] = Real(0);
  for (int u = 0; u < m.nu; ++u) {
    const int j = m.actuator_trnid[u];
    const Real gear = m.actuator_gear[u];
    const int da = m.jnt_dofadr[j];
    const Real len = gear * d.qpos()[m.jnt_qposadr[j]];
    const Real vel = gear * d.qvel()[da];
    d.actuator_length()[u] = len;
    d.actuator_velocity()[u] = vel;
    const Real f = actuator_force(m, u, d.ctrl()[u], len, vel).force;
    d.actuator_force()[u] = f;
    d.qfrc_actuator()[da] += gear * f;
  }
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_actfrclimited[j]) continue;
    const int type = m.jnt_type[j];
    const int n = type == kJntFree ? 6 : (type == kJntBall ? 3 : 1);
    for (int k = 0; k < n; ++k) {
      const int i = m.jnt_dofadr[j] + k;
      bool active;
      d.qfrc_actuator()[i] = joint_actuator_clamp(m, j, d.qfrc_actuator()[i], &active);
    }
  }
}

}  // namespace stiffgrad::kern
