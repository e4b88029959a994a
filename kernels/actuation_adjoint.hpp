// Adjoint of kernels/actuation.hpp: qfrc_actuator adjoint -> ctrl, qpos, qvel adjoints.
// A clamp passes the adjoint where it is inactive and blocks it (zero) where it is active,
// exactly as the primal's branch (sg_clamp) is taken.
#pragma once

#include "kernels/actuation.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void adj_actuator_forces(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  // joint force clamps: recompute each dof's unclamped total (into the adjoint scratch
  // qfrc_smooth, which nothing downstream reads) and block the clamped ones
  for (int i = 0; i < m.nv; ++i) a.qfrc_smooth[i] = a.qfrc_actuator[i];
  bool any_jnt_clamp = false;
  for (int j = 0; j < m.njnt; ++j) any_jnt_clamp = any_jnt_clamp || m.jnt_actfrclimited[j];
  if (any_jnt_clamp) {
    for (int i = 0; i < m.nv; ++i) d.qfrc_smooth[i] = Real(0);
    for (int u = 0; u < m.nu; ++u)
      d.qfrc_smooth[m.jnt_dofadr[m.actuator_trnid[u]]] += m.actuator_gear[u] * d.actuator_force[u];
    for (int j = 0; j < m.njnt; ++j) {
      if (!m.jnt_actfrclimited[j]) continue;
      const int type = m.jnt_type[j];
      const int n = type == kJntFree ? 6 : (type == kJntBall ? 3 : 1);
      for (int k = 0; k < n; ++k) {
        const int i = m.jnt_dofadr[j] + k;
        const Real x = d.qfrc_smooth[i];
        if (x < m.jnt_actfrcrange[2 * j] || m.jnt_actfrcrange[2 * j + 1] < x) a.qfrc_smooth[i] = Real(0);
      }
    }
  }
  for (int u = 0; u < m.nu; ++u) {
    const int j = m.actuator_trnid[u];
    const Real gear = m.actuator_gear[u];
    const int da = m.jnt_dofadr[j];
    Real adj_f = gear * a.qfrc_smooth[da];
    // recompute the unclamped force to find the active branch
    Real c = d.ctrl[u];
    bool ctrl_clamped = false;
    if (m.actuator_ctrllimited[u]) {
      ctrl_clamped = c < m.actuator_ctrlrange[2 * u] || m.actuator_ctrlrange[2 * u + 1] < c;
      c = sg_clamp(c, m.actuator_ctrlrange[2 * u], m.actuator_ctrlrange[2 * u + 1]);
    }
    Real f = m.actuator_gainprm[3 * u] * c;
    const bool affine = m.actuator_biastype[u] == kBiasAffine;
    const Real* bp = m.actuator_biasprm + 3 * u;
    if (affine) f += bp[0] + bp[1] * d.actuator_length[u] + bp[2] * d.actuator_velocity[u];
    if (m.actuator_forcelimited[u] &&
        (f < m.actuator_forcerange[2 * u] || m.actuator_forcerange[2 * u + 1] < f))
      adj_f = Real(0);
    if (!ctrl_clamped) a.ctrl[u] += m.actuator_gainprm[3 * u] * adj_f;
    if (affine) {
      a.qpos[m.jnt_qposadr[j]] += gear * bp[1] * adj_f;
      a.qvel[da] += gear * bp[2] * adj_f;
    }
  }
}

}  // namespace stiffgrad::kern
