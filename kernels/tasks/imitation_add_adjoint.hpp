// Adjoints of kernels/tasks/imitation_add.hpp (accumulating with +=), the primal recomputed from
// the same inputs.
#pragma once

#include "kernels/tasks/imitation_add.hpp"
#include "kernels/tasks/imitation_adjoint.hpp"

namespace stiffgrad::kern {

// out = Hᵀ x: adj_x += H adj_out, adj_c, adj_s += the heading's share.
template <class Real>
SG_HD SG_INLINE void adj_imitation_to_heading(Real c, Real s, const Real x[3], const Real* adj_out, Real adj_x[3],
                                              Real& adj_c, Real& adj_s) {
  const Real g0 = adj_out[0], g1 = adj_out[1];
  adj_x[0] += c * g0 - s * g1;
  adj_x[1] += s * g0 + c * g1;
  adj_x[2] += adj_out[2];
  adj_c += g0 * x[0] + g1 * x[1];
  adj_s += g0 * x[1] - g1 * x[0];
}

template <class Real, class QP, class QV, class AQP, class AQV>
SG_HD void adj_imitation_add_features(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key,
                                      AQP& adj_qpos, AQV& adj_qvel, Real* adj_key, const Real* adj_f) {
  Real u[4], R[9];
  imitation_unit_quat(qpos, 3, u);
  quat_to_mat(R, u);
  Real hc, hs;
  imitation_heading(R, hc, hs);
  Real adj_R[9] = {}, adj_hc = Real(0), adj_hs = Real(0);
  const int nj = s.njoint;
  int o = 0;
  for (int i = 0; i < 3; ++i) adj_qpos[i] += adj_f[o++];
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i) adj_R[3 * i + c] += adj_f[o++];
  for (int j = 0; j < nj; ++j) adj_qpos[7 + j] += adj_f[o++];
  for (int k = 0; k < s.nkey; ++k) {
    const Real rel[3] = {key[3 * k] - qpos[0], key[3 * k + 1] - qpos[1], key[3 * k + 2] - qpos[2]};
    Real adj_rel[3] = {Real(0), Real(0), Real(0)};
    adj_imitation_to_heading(hc, hs, rel, adj_f + o, adj_rel, adj_hc, adj_hs);
    o += 3;
    for (int i = 0; i < 3; ++i) {
      adj_key[3 * k + i] += adj_rel[i];
      adj_qpos[i] -= adj_rel[i];
    }
  }
  {
    const Real v[3] = {qvel[0], qvel[1], qvel[2]};
    Real adj_v[3] = {Real(0), Real(0), Real(0)};
    adj_imitation_to_heading(hc, hs, v, adj_f + o, adj_v, adj_hc, adj_hs);
    o += 3;
    for (int i = 0; i < 3; ++i) adj_qvel[i] += adj_v[i];
  }
  {
    Real w[3];
    for (int i = 0; i < 3; ++i) w[i] = R[3 * i] * qvel[3] + R[3 * i + 1] * qvel[4] + R[3 * i + 2] * qvel[5];
    Real adj_w[3] = {Real(0), Real(0), Real(0)};
    adj_imitation_to_heading(hc, hs, w, adj_f + o, adj_w, adj_hc, adj_hs);
    o += 3;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        adj_R[3 * i + j] += adj_w[i] * qvel[3 + j];
        adj_qvel[3 + j] += adj_w[i] * R[3 * i + j];
      }
  }
  for (int j = 0; j < nj; ++j) adj_qvel[6 + j] += adj_f[o++];
  adj_imitation_heading(R, adj_R, adj_hc, adj_hs);
  Real adj_u[4] = {};
  adj_quat_to_mat(u, adj_u, adj_R);
  adj_imitation_unit_quat(qpos, 3, adj_qpos, adj_u);
}

// Adjoint of imitation_add_delta_state: a.qpos += (∂Δ/∂qpos)ᵀ adj_delta, a.qvel likewise
// (Δ = ref − f, so f's adjoint is −adj_delta). Recomputes the kinematics of d.qpos into d; a's
// frame fields are scratch (cleared here).
template <class Real, class L>
SG_HD void adj_imitation_add_delta_state(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                         const ImitationSpec& s, const Real* adj_delta) {
  fwd_kinematics_base_to_tip(m, d);
  Real key[3 * kImitationMaxKeys], adj_key[3 * kImitationMaxKeys] = {};
  imitation_key_positions(d, s, key);
  imitation_clear_kinematics_adjoint(m, a);
  Real adj_f[kImitationAddMaxDim];
  const int n = imitation_add_dim(s);
  for (int i = 0; i < n; ++i) adj_f[i] = -adj_delta[i];
  View<Real, L> aq = a.qpos(), av = a.qvel();
  adj_imitation_add_features(s, d.qpos(), d.qvel(), key, aq, av, adj_key, adj_f);
  adj_imitation_key_positions(a, s, adj_key);
  adj_fwd_kinematics_base_to_tip(m, d, a);
}

}  // namespace stiffgrad::kern
