// Motion imitation (DeepMimic-style, the BCG paper's G1 setting without its ADD discriminator):
// the observation and the tracking reward of one environment against a reference pose.
//
// The robot is a free root followed by `njoint` hinge joints: qpos = (root xyz, root quaternion
// w x y z, joint angles), qvel = (root linear velocity in the world frame, root angular
// velocity in the root frame — MuJoCo's free-joint convention, joint velocities). Key-body
// positions are world positions (tree_origin + xpos, kernels/dynamics/kinematics.hpp).
//
// The raw root quaternion is always divided by its norm here (not MuJoCo's normalize4, which
// leaves a quaternion within 1e-15 of unit untouched), so the functions are smooth in the raw
// coordinates. Reference arrays are constants (no adjoints).
//
// Observation (imitation_obs_dim = 3·njoint + 3·nkey + 17), in this order:
//   1  root height z
//   3  gravity direction (0, 0, -1) in the root frame, Rᵀ e_g
//   3  root linear velocity in the root frame, Rᵀ v
//   3  root angular velocity in the root frame (qvel[3:6])
//   nj joint angles;  nj joint velocities
//   nj reference joint angles − joint angles
//   1  reference root height − root height
//   6  relative root rotation Rᵀ R_ref, its first two columns (the 6D rotation of Zhou et al.)
//   3K reference − simulated key-body positions, in the heading frame (the root's yaw)
//
// Reward (DeepMimic, Peng et al. 2018, eq. 6–10; weights sum to 1, so r ∈ [0, 1]):
//   r = w_pose exp(−k_pose Σ_j (q_j − q̂_j)²) + w_vel exp(−k_vel Σ_j (q̇_j − q̂̇_j)²)
//     + w_key exp(−k_key (1/K) Σ_k |x_k − x̂_k|²) + w_root_pos exp(−k_root_pos |p − p̂|²)
//     + w_root_rot exp(−k_root_rot · 4 (1 − ⟨u, û⟩²))
// with u, û the unit root quaternions (4(1 − ⟨u, û⟩²) = 4 sin²(θ/2) ≈ θ², θ the angle between
// the root orientations, sign-invariant).
#pragma once

#include "kernels/dynamics/kinematics.hpp"
#include "kernels/base/math3.hpp"

namespace stiffgrad::kern {

// Most key bodies an ImitationSpec may name (local arrays in the kernels).
inline constexpr int kImitationMaxKeys = 16;

struct ImitationSpec {
  int njoint = 0;               // hinge coordinates after the free root
  int nkey = 0;                 // key bodies (<= kImitationMaxKeys)
  const int* key_body = nullptr;  // nkey body ids (memory the kernel can read: device memory on a GPU)
  double w_pose = 0.5, k_pose = 2.0;
  double w_vel = 0.1, k_vel = 0.1;
  double w_key = 0.2, k_key = 40.0;
  double w_root_pos = 0.1, k_root_pos = 10.0;
  double w_root_rot = 0.1, k_root_rot = 5.0;
};

SG_HD SG_INLINE int imitation_obs_dim(const ImitationSpec& s) { return 3 * s.njoint + 3 * s.nkey + 17; }

// u = q / |q| (always divided; a null quaternion gives the identity).
template <class Real, class Q>
SG_HD SG_INLINE void imitation_unit_quat(const Q& q, int at, Real u[4]) {
  const Real n = sg_sqrt(q[at] * q[at] + q[at + 1] * q[at + 1] + q[at + 2] * q[at + 2] + q[at + 3] * q[at + 3]);
  if (n < min_norm<Real>()) {
    u[0] = Real(1); u[1] = u[2] = u[3] = Real(0);
    return;
  }
  const Real inv = Real(1) / n;
  for (int k = 0; k < 4; ++k) u[k] = q[at + k] * inv;
}

// Heading of a root rotation R: the unit xy direction (c, s) of its x axis (c = 1, s = 0 when
// that axis is vertical).
template <class Real>
SG_HD SG_INLINE void imitation_heading(const Real R[9], Real& c, Real& s) {
  const Real n = sg_sqrt(R[0] * R[0] + R[3] * R[3]);
  if (n < min_norm<Real>()) { c = Real(1); s = Real(0); return; }
  c = R[0] / n;
  s = R[3] / n;
}

// World positions of the key bodies (3 nkey) from Data after fwd_kinematics_base_to_tip.
template <class Real, class L>
SG_HD SG_INLINE void imitation_key_positions(const Data<Real, L>& d, const ImitationSpec& s, Real* key) {
  for (int k = 0; k < s.nkey; ++k) {
    const int b = s.key_body[k];
    for (int i = 0; i < 3; ++i) key[3 * k + i] = d.tree_origin()[3 * b + i] + d.xpos()[3 * b + i];
  }
}

// Observation from the state, the key-body positions and the reference's (next-step) pose.
template <class Real, class QP, class QV>
SG_HD void imitation_observation(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key,
                                 const Real* ref_qpos, const Real* ref_key, Real* obs) {
  Real u[4], R[9], ur[4], Rr[9];
  imitation_unit_quat(qpos, 3, u);
  quat_to_mat(R, u);
  imitation_unit_quat(ref_qpos, 3, ur);
  quat_to_mat(Rr, ur);
  const int nj = s.njoint;
  int o = 0;
  obs[o++] = qpos[2];
  obs[o++] = -R[6]; obs[o++] = -R[7]; obs[o++] = -R[8];
  for (int i = 0; i < 3; ++i) obs[o++] = R[i] * qvel[0] + R[3 + i] * qvel[1] + R[6 + i] * qvel[2];
  for (int i = 0; i < 3; ++i) obs[o++] = qvel[3 + i];
  for (int j = 0; j < nj; ++j) obs[o++] = qpos[7 + j];
  for (int j = 0; j < nj; ++j) obs[o++] = qvel[6 + j];
  for (int j = 0; j < nj; ++j) obs[o++] = ref_qpos[7 + j] - qpos[7 + j];
  obs[o++] = ref_qpos[2] - qpos[2];
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i) obs[o++] = R[i] * Rr[c] + R[3 + i] * Rr[3 + c] + R[6 + i] * Rr[6 + c];
  Real hc, hs;
  imitation_heading(R, hc, hs);
  for (int k = 0; k < s.nkey; ++k) {
    const Real dx = ref_key[3 * k] - key[3 * k];
    const Real dy = ref_key[3 * k + 1] - key[3 * k + 1];
    const Real dz = ref_key[3 * k + 2] - key[3 * k + 2];
    obs[o++] = hc * dx + hs * dy;
    obs[o++] = -hs * dx + hc * dy;
    obs[o++] = dz;
  }
}

// The five tracking errors of the reward (before the exponentials): pose, joint velocity,
// key bodies (mean squared distance), root position, root orientation.
template <class Real, class QP, class QV>
SG_HD SG_INLINE void imitation_errors(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key,
                                      const Real* ref_qpos, const Real* ref_qvel, const Real* ref_key, Real e[5]) {
  for (int k = 0; k < 5; ++k) e[k] = Real(0);
  for (int j = 0; j < s.njoint; ++j) {
    const Real dq = qpos[7 + j] - ref_qpos[7 + j];
    const Real dv = qvel[6 + j] - ref_qvel[6 + j];
    e[0] += dq * dq;
    e[1] += dv * dv;
  }
  for (int k = 0; k < 3 * s.nkey; ++k) {
    const Real dx = key[k] - ref_key[k];
    e[2] += dx * dx;
  }
  if (s.nkey > 0) e[2] = e[2] / Real(s.nkey);
  for (int i = 0; i < 3; ++i) {
    const Real dp = qpos[i] - ref_qpos[i];
    e[3] += dp * dp;
  }
  Real u[4], ur[4];
  imitation_unit_quat(qpos, 3, u);
  imitation_unit_quat(ref_qpos, 3, ur);
  const Real c = u[0] * ur[0] + u[1] * ur[1] + u[2] * ur[2] + u[3] * ur[3];
  e[4] = Real(4) * (Real(1) - c * c);
}

template <class Real, class QP, class QV>
SG_HD Real imitation_reward(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key,
                            const Real* ref_qpos, const Real* ref_qvel, const Real* ref_key) {
  Real e[5];
  imitation_errors(s, qpos, qvel, key, ref_qpos, ref_qvel, ref_key, e);
  return Real(s.w_pose) * sg_exp(-Real(s.k_pose) * e[0]) + Real(s.w_vel) * sg_exp(-Real(s.k_vel) * e[1]) +
         Real(s.w_key) * sg_exp(-Real(s.k_key) * e[2]) + Real(s.w_root_pos) * sg_exp(-Real(s.k_root_pos) * e[3]) +
         Real(s.w_root_rot) * sg_exp(-Real(s.k_root_rot) * e[4]);
}

// Mean key-body distance |x_k − x̂_k| (m): the tracking error and the termination test (not
// differentiated).
template <class Real>
SG_HD SG_INLINE Real imitation_key_error(const ImitationSpec& s, const Real* key, const Real* ref_key) {
  if (s.nkey == 0) return Real(0);
  Real sum = Real(0);
  for (int k = 0; k < s.nkey; ++k) {
    Real d2 = Real(0);
    for (int i = 0; i < 3; ++i) {
      const Real dx = key[3 * k + i] - ref_key[3 * k + i];
      d2 += dx * dx;
    }
    sum += sg_sqrt(d2);
  }
  return sum / Real(s.nkey);
}

// ---- whole-state versions: forward kinematics of d.qpos into `d`, then the above ----

// Observation of the state in d (qpos, qvel); the key bodies by fwd_kinematics_base_to_tip.
template <class Real, class L>
SG_HD void imitation_observe(const ModelView<Real>& m, const Data<Real, L>& d, const ImitationSpec& s,
                             const Real* ref_qpos, const Real* ref_key, Real* obs) {
  fwd_kinematics_base_to_tip(m, d);
  Real key[3 * kImitationMaxKeys];
  imitation_key_positions(d, s, key);
  imitation_observation(s, d.qpos(), d.qvel(), key, ref_qpos, ref_key, obs);
}

// Reward of the state in d.
template <class Real, class L>
SG_HD Real imitation_reward_state(const ModelView<Real>& m, const Data<Real, L>& d, const ImitationSpec& s,
                                  const Real* ref_qpos, const Real* ref_qvel, const Real* ref_key) {
  fwd_kinematics_base_to_tip(m, d);
  Real key[3 * kImitationMaxKeys];
  imitation_key_positions(d, s, key);
  return imitation_reward(s, d.qpos(), d.qvel(), key, ref_qpos, ref_qvel, ref_key);
}

}  // namespace stiffgrad::kern
