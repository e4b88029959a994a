// Adjoint of kernels/dynamics/actuation.hpp: qfrc_actuator adjoint -> ctrl, qpos, qvel adjoints.
// Which clamps block the adjoint is decided by the clamp rule itself (actuator_clamp): a clamp
// passes the adjoint where it is inactive and blocks it (zero) where it is active.
#pragma once

#include "kernels/dynamics/actuation.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void adj_actuator_forces(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  for (int u = 0; u < m.nu; ++u) {
    const Real gear = m.actuator_gear[u];
    const ActuatorClamps c = actuator_clamps(m, d, u);
    if (c.force_blocked()) continue;
    // tau_dof += moment f over the actuator's dofs; a dof whose joint clamp is active passes
    // nothing (a joint actuator's one dof is covered by c.joint)
    const bool tendon = m.actuator_trntype[u] == kTrnTendon;
    const int id = m.actuator_trnid[u];
    Real adj_f(0);
    if (tendon) {
      for (int w = m.tendon_adr[id]; w < m.tendon_adr[id] + m.tendon_num[id]; ++w) {
        const int j = m.wrap_jntid[w];
        if (dof_joint_clamped(m, d, j)) continue;
        adj_f += gear * m.wrap_coef[w] * a.qfrc_actuator()[m.jnt_dofadr[j]];
      }
    } else {
      adj_f = gear * a.qfrc_actuator()[m.jnt_dofadr[id]];
    }
    if (!c.ctrl) a.ctrl()[u] += m.actuator_gainprm[3 * u] * adj_f;
    if (m.actuator_biastype[u] != kBiasAffine) continue;
    // length = gear x, velocity = gear v; x, v of the joint, or sum coef_w of the tendon's joints
    const Real* bp = m.actuator_biasprm + 3 * u;
    const Real len_bar = gear * bp[1] * adj_f, vel_bar = gear * bp[2] * adj_f;
    if (tendon) {
      for (int w = m.tendon_adr[id]; w < m.tendon_adr[id] + m.tendon_num[id]; ++w) {
        const int j = m.wrap_jntid[w];
        a.qpos()[m.jnt_qposadr[j]] += m.wrap_coef[w] * len_bar;
        a.qvel()[m.jnt_dofadr[j]] += m.wrap_coef[w] * vel_bar;
      }
    } else {
      a.qpos()[m.jnt_qposadr[id]] += len_bar;
      a.qvel()[m.jnt_dofadr[id]] += vel_bar;
    }
  }
}

}  // namespace stiffgrad::kern
