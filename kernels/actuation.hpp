// Actuator forces through joint transmissions (MuJoCo's mj_transmission + mj_fwdActuation
// for dyntype none, gaintype fixed, biastype none/affine):
//   length = gear q,  velocity = gear qdot,  u = clamp(ctrl, ctrlrange) when ctrllimited,
//   force = gain u + b0 + b1 length + b2 velocity, clamped to forcerange when forcelimited,
//   tau_dof += gear force, then each joint's total clamped to its actuatorfrcrange.
#pragma once

#include "kernels/data.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void actuator_forces(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_actuator[i] = Real(0);
  for (int u = 0; u < m.nu; ++u) {
    const int j = m.actuator_trnid[u];
    const Real gear = m.actuator_gear[u];
    const int da = m.jnt_dofadr[j];
    const Real len = gear * d.qpos[m.jnt_qposadr[j]];
    const Real vel = gear * d.qvel[da];
    d.actuator_length[u] = len;
    d.actuator_velocity[u] = vel;
    Real c = d.ctrl[u];
    if (m.actuator_ctrllimited[u])
      c = sg_clamp(c, m.actuator_ctrlrange[2 * u], m.actuator_ctrlrange[2 * u + 1]);
    Real f = m.actuator_gainprm[3 * u] * c;
    if (m.actuator_biastype[u] == kBiasAffine) {
      const Real* bp = m.actuator_biasprm + 3 * u;
      f += bp[0] + bp[1] * len + bp[2] * vel;
    }
    if (m.actuator_forcelimited[u])
      f = sg_clamp(f, m.actuator_forcerange[2 * u], m.actuator_forcerange[2 * u + 1]);
    d.actuator_force[u] = f;
    d.qfrc_actuator[da] += gear * f;
  }
  for (int j = 0; j < m.njnt; ++j) {
    if (!m.jnt_actfrclimited[j]) continue;
    const int type = m.jnt_type[j];
    const int n = type == kJntFree ? 6 : (type == kJntBall ? 3 : 1);
    for (int k = 0; k < n; ++k) {
      const int i = m.jnt_dofadr[j] + k;
      d.qfrc_actuator[i] = sg_clamp(d.qfrc_actuator[i], m.jnt_actfrcrange[2 * j], m.jnt_actfrcrange[2 * j + 1]);
    }
  }
}

}  // namespace stiffgrad::kern
