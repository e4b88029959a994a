// Adjoints of kernels/tasks/imitation.hpp (accumulating with +=). The primal quantities are
// recomputed from the same inputs; reference arrays are constants.
#pragma once

#include "kernels/dynamics/kinematics_adjoint.hpp"
#include "kernels/base/math3_adjoint.hpp"
#include "kernels/tasks/imitation.hpp"

namespace stiffgrad::kern {

// u = q / |q|: adj_q += (adj_u − u ⟨u, adj_u⟩) / |q| (nothing below min_norm, where u is constant).
template <class Real, class Q, class AQ>
SG_HD SG_INLINE void adj_imitation_unit_quat(const Q& q, int at, AQ& adj_q, const Real adj_u[4]) {
  const Real n = sg_sqrt(q[at] * q[at] + q[at + 1] * q[at + 1] + q[at + 2] * q[at + 2] + q[at + 3] * q[at + 3]);
  if (n < min_norm<Real>()) return;
  const Real inv = Real(1) / n;
  Real u[4], dot = Real(0);
  for (int k = 0; k < 4; ++k) { u[k] = q[at + k] * inv; dot += u[k] * adj_u[k]; }
  for (int k = 0; k < 4; ++k) adj_q[at + k] += (adj_u[k] - u[k] * dot) * inv;
}

template <class Real>
SG_HD SG_INLINE void adj_imitation_heading(const Real R[9], Real adj_R[9], Real adj_c, Real adj_s) {
  const Real n = sg_sqrt(R[0] * R[0] + R[3] * R[3]);
  if (n < min_norm<Real>()) return;
  const Real c = R[0] / n, s = R[3] / n;
  const Real dot = c * adj_c + s * adj_s;
  adj_R[0] += (adj_c - c * dot) / n;
  adj_R[3] += (adj_s - s * dot) / n;
}

template <class Real, class L>
SG_HD SG_INLINE void adj_imitation_key_positions(const Data<Real, L>& a, const ImitationSpec& s, const Real* adj_key) {
  for (int k = 0; k < s.nkey; ++k) {
    const int b = s.key_body[k];
    for (int i = 0; i < 3; ++i) {
      a.tree_origin()[3 * b + i] += adj_key[3 * k + i];
      a.xpos()[3 * b + i] += adj_key[3 * k + i];
    }
  }
}

template <class Real, class QP, class QV, class AQP, class AQV>
SG_HD void adj_imitation_observation(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key,
                                     const Real* ref_qpos, const Real* ref_key, AQP& adj_qpos, AQV& adj_qvel,
                                     Real* adj_key, const Real* adj_obs) {
  Real u[4], R[9], ur[4], Rr[9];
  imitation_unit_quat(qpos, 3, u);
  quat_to_mat(R, u);
  imitation_unit_quat(ref_qpos, 3, ur);
  quat_to_mat(Rr, ur);
  Real hc, hs;
  imitation_heading(R, hc, hs);
  Real adj_R[9] = {}, adj_hc = Real(0), adj_hs = Real(0);
  const int nj = s.njoint;
  int o = 0;
  adj_qpos[2] += adj_obs[o++];
  adj_R[6] -= adj_obs[o++]; adj_R[7] -= adj_obs[o++]; adj_R[8] -= adj_obs[o++];
  for (int i = 0; i < 3; ++i) {
    const Real g = adj_obs[o++];
    for (int j = 0; j < 3; ++j) {
      adj_R[3 * j + i] += g * qvel[j];
      adj_qvel[j] += g * R[3 * j + i];
    }
  }
  for (int i = 0; i < 3; ++i) adj_qvel[3 + i] += adj_obs[o++];
  for (int j = 0; j < nj; ++j) adj_qpos[7 + j] += adj_obs[o++];
  for (int j = 0; j < nj; ++j) adj_qvel[6 + j] += adj_obs[o++];
  for (int j = 0; j < nj; ++j) adj_qpos[7 + j] -= adj_obs[o++];
  adj_qpos[2] -= adj_obs[o++];
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i) {
      const Real g = adj_obs[o++];
      for (int j = 0; j < 3; ++j) adj_R[3 * j + i] += g * Rr[3 * j + c];
    }
  for (int k = 0; k < s.nkey; ++k) {
    const Real dx = ref_key[3 * k] - key[3 * k];
    const Real dy = ref_key[3 * k + 1] - key[3 * k + 1];
    const Real g0 = adj_obs[o], g1 = adj_obs[o + 1], g2 = adj_obs[o + 2];
    o += 3;
    adj_hc += g0 * dx + g1 * dy;
    adj_hs += g0 * dy - g1 * dx;
    adj_key[3 * k] -= hc * g0 - hs * g1;
    adj_key[3 * k + 1] -= hs * g0 + hc * g1;
    adj_key[3 * k + 2] -= g2;
  }
  adj_imitation_heading(R, adj_R, adj_hc, adj_hs);
  Real adj_u[4] = {};
  adj_quat_to_mat(u, adj_u, adj_R);
  adj_imitation_unit_quat(qpos, 3, adj_qpos, adj_u);
}

template <class Real, class QP, class QV, class AQP, class AQV>
SG_HD void adj_imitation_reward(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key,
                                const Real* ref_qpos, const Real* ref_qvel, const Real* ref_key, AQP& adj_qpos,
                                AQV& adj_qvel, Real* adj_key, Real adj_r) {
  Real e[5];
  imitation_errors(s, qpos, qvel, key, ref_qpos, ref_qvel, ref_key, e);
  const double w[5] = {s.w_pose, s.w_vel, s.w_key, s.w_root_pos, s.w_root_rot};
  const double kk[5] = {s.k_pose, s.k_vel, s.k_key, s.k_root_pos, s.k_root_rot};
  Real adj_e[5];
  for (int i = 0; i < 5; ++i) adj_e[i] = -adj_r * Real(w[i]) * Real(kk[i]) * sg_exp(-Real(kk[i]) * e[i]);
  for (int j = 0; j < s.njoint; ++j) {
    adj_qpos[7 + j] += Real(2) * adj_e[0] * (qpos[7 + j] - ref_qpos[7 + j]);
    adj_qvel[6 + j] += Real(2) * adj_e[1] * (qvel[6 + j] - ref_qvel[6 + j]);
  }
  if (s.nkey > 0) {
    const Real g = Real(2) * adj_e[2] / Real(s.nkey);
    for (int k = 0; k < 3 * s.nkey; ++k) adj_key[k] += g * (key[k] - ref_key[k]);
  }
  for (int i = 0; i < 3; ++i) adj_qpos[i] += Real(2) * adj_e[3] * (qpos[i] - ref_qpos[i]);
  Real u[4], ur[4];
  imitation_unit_quat(qpos, 3, u);
  imitation_unit_quat(ref_qpos, 3, ur);
  const Real c = u[0] * ur[0] + u[1] * ur[1] + u[2] * ur[2] + u[3] * ur[3];
  const Real adj_c = Real(-8) * c * adj_e[4];
  Real adj_u[4];
  for (int k = 0; k < 4; ++k) adj_u[k] = adj_c * ur[k];
  adj_imitation_unit_quat(qpos, 3, adj_qpos, adj_u);
}

// Zeroes the frame adjoints adj_fwd_kinematics_base_to_tip reads (tree_origin, xpos, xquat,
// xmat, xipos, ximat, xanchor, xaxis); qpos and qvel adjoints are left to accumulate.
template <class Real, class L>
SG_HD SG_INLINE void imitation_clear_kinematics_adjoint(const ModelView<Real>& m, const Data<Real, L>& a) {
  for (int i = 0; i < 3 * m.nbody; ++i) {
    a.tree_origin()[i] = Real(0);
    a.xpos()[i] = Real(0);
    a.xipos()[i] = Real(0);
  }
  for (int i = 0; i < 4 * m.nbody; ++i) a.xquat()[i] = Real(0);
  for (int i = 0; i < 9 * m.nbody; ++i) {
    a.xmat()[i] = Real(0);
    a.ximat()[i] = Real(0);
  }
  for (int i = 0; i < 3 * m.njnt; ++i) {
    a.xanchor()[i] = Real(0);
    a.xaxis()[i] = Real(0);
  }
}

// Adjoint of imitation_observe: a.qpos += (∂obs/∂qpos)ᵀ adj_obs, a.qvel += (∂obs/∂qvel)ᵀ adj_obs.
// Recomputes the kinematics of d.qpos into d; a's frame fields are scratch (cleared here).
template <class Real, class L>
SG_HD void adj_imitation_observe(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                 const ImitationSpec& s, const Real* ref_qpos, const Real* ref_key,
                                 const Real* adj_obs) {
  fwd_kinematics_base_to_tip(m, d);
  Real key[3 * kImitationMaxKeys], adj_key[3 * kImitationMaxKeys] = {};
  imitation_key_positions(d, s, key);
  imitation_clear_kinematics_adjoint(m, a);
  View<Real, L> aq = a.qpos(), av = a.qvel();
  adj_imitation_observation(s, d.qpos(), d.qvel(), key, ref_qpos, ref_key, aq, av, adj_key,
                            adj_obs);
  adj_imitation_key_positions(a, s, adj_key);
  adj_fwd_kinematics_base_to_tip(m, d, a);
}

// Adjoint of imitation_reward_state, with the same conventions.
template <class Real, class L>
SG_HD void adj_imitation_reward_state(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                      const ImitationSpec& s, const Real* ref_qpos, const Real* ref_qvel,
                                      const Real* ref_key, Real adj_r) {
  fwd_kinematics_base_to_tip(m, d);
  Real key[3 * kImitationMaxKeys], adj_key[3 * kImitationMaxKeys] = {};
  imitation_key_positions(d, s, key);
  imitation_clear_kinematics_adjoint(m, a);
  View<Real, L> aq = a.qpos(), av = a.qvel();
  adj_imitation_reward(s, d.qpos(), d.qvel(), key, ref_qpos, ref_qvel, ref_key, aq, av, adj_key,
                       adj_r);
  adj_imitation_key_positions(a, s, adj_key);
  adj_fwd_kinematics_base_to_tip(m, d, a);
}

}  // namespace stiffgrad::kern
