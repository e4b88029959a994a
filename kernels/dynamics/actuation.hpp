// Actuator forces through joint and fixed-tendon transmissions (MuJoCo's mj_transmission +
// mj_fwdActuation for dyntype none, gaintype fixed, biastype none/affine):
//   joint:  length = gear q,  velocity = gear qdot,  moment gear on the joint's dof;
//   tendon: length = gear L,  velocity = gear Ldot,  moment gear coef_w on each wrap's dof
//           (L = sum coef_w q_w, a fixed tendon);
//   u = clamp(ctrl, ctrlrange) when ctrllimited,
//   force = gain u + b0 + b1 length + b2 velocity, clamped to forcerange when forcelimited,
//   tau_dof += moment force, then each joint's total clamped to its actuatorfrcrange.
#pragma once

#include "kernels/base/data.hpp"

namespace stiffgrad::kern {

enum : int { kTrnJoint = 0, kTrnTendon = 3 };  // MuJoCo's mjtTrn

// Calls f(dof, moment) for each dof actuator u moves, in a fixed order (the forward sum's):
// a joint's one dof with moment gear, or a fixed tendon's wraps with moment gear coef_w.
template <class Real, class F>
SG_HD SG_INLINE void for_each_actuator_moment(const ModelView<Real>& m, int u, F&& f) {
  const Real gear = m.actuator_gear[u];
  const int id = m.actuator_trnid[u];
  if (m.actuator_trntype[u] == kTrnTendon) {
    for (int w = m.tendon_adr[id]; w < m.tendon_adr[id] + m.tendon_num[id]; ++w)
      f(m.jnt_dofadr[m.wrap_jntid[w]], gear * m.wrap_coef[w]);
  } else {
    f(m.jnt_dofadr[id], gear);
  }
}

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
    for_each_actuator_moment(m, u, [&](int dof, Real moment) {
      if (dof == i) s += moment * d.actuator_force()[u];
    });
  return s;
}

// Whether joint j's actuatorfrcrange clamp (a hinge or slide: one dof) is active at the state in d.
template <class Real, class L>
SG_HD SG_INLINE bool dof_joint_clamped(const ModelView<Real>& m, const Data<Real, L>& d, int j) {
  bool active = false;
  if (m.jnt_actfrclimited[j])
    joint_actuator_clamp(m, j, dof_actuator_total(m, d, m.jnt_dofadr[j]), &active);
  return active;
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
  // a tendon's actuator: its joints' clamps are applied per dof (actuator_moment_passes)
  if (m.actuator_trntype[u] == kTrnJoint) c.joint = dof_joint_clamped(m, d, m.actuator_trnid[u]);
  return c;
}

// Actuator u's transmission length and velocity (before the gear: q and qdot of its joint, or its
// tendon's L and Ldot, which tendon_kinematics left in d).
template <class Real, class L>
SG_HD SG_INLINE void transmission_state(const ModelView<Real>& m, const Data<Real, L>& d, int u,
                                        Real* x, Real* v) {
  const int id = m.actuator_trnid[u];
  if (m.actuator_trntype[u] == kTrnTendon) {
    *x = d.ten_length()[id];
    *v = d.ten_velocity()[id];
  } else {
    *x = d.qpos()[m.jnt_qposadr[id]];
    *v = d.qvel()[m.jnt_dofadr[id]];
  }
}

template <class Real, class L>
SG_HD void actuator_forces(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_actuator()[i] = Real(0);
  for (int u = 0; u < m.nu; ++u) {
    const Real gear = m.actuator_gear[u];
    Real x, v;
    transmission_state(m, d, u, &x, &v);
    const Real len = gear * x;
    const Real vel = gear * v;
    d.actuator_length()[u] = len;
    d.actuator_velocity()[u] = vel;
    const Real f = actuator_force(m, u, d.ctrl()[u], len, vel).force;
    d.actuator_force()[u] = f;
    for_each_actuator_moment(m, u,
                             [&](int dof, Real moment) { d.qfrc_actuator()[dof] += moment * f; });
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
