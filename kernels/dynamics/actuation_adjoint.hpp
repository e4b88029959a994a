// Adjoint of kernels/dynamics/actuation.hpp: qfrc_actuator adjoint -> ctrl, qpos, qvel adjoints.
// Which clamps block the adjoint is decided by the clamp rule itself (actuator_clamp): a clamp
// passes the adjoint where it is inactive and blocks it (zero) where it is active.
#pragma once

#include "kernels/dynamics/actuation.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void adj_actuator_forces(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  for (int u = 0; u < m.nu; ++u) {
    const int j = m.actuator_trnid[u];
    const Real gear = m.actuator_gear[u];
    const int da = m.jnt_dofadr[j];
    const ActuatorClamps c = actuator_clamps(m, d, u);
    if (c.force_blocked()) continue;
    const Real adj_f = gear * a.qfrc_actuator()[da];
    if (!c.ctrl) a.ctrl()[u] += m.actuator_gainprm[3 * u] * adj_f;
    if (m.actuator_biastype[u] == kBiasAffine) {
      const Real* bp = m.actuator_biasprm + 3 * u;
      a.qpos()[m.jnt_qposadr[j]] += gear * bp[1] * adj_f;
      a.qvel()[da] += gear * bp[2] * adj_f;
    }
  }
}

}  // namespace stiffgrad::kern
