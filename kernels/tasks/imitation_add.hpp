// The features of the ADD reward (Adversarial Differential Discriminator, Zhang et al. 2025, as
// the BCG paper uses it for the G1): the discriminator sees the difference Δ = f(ref) − f(sim)
// of the reference's and the simulated state's features, and is trained to tell Δ = 0 (real)
// from the simulator's Δ (fake). This file computes f and Δ; the discriminator is the trainer's
// (learn/add_reward.hpp). Adjoints: kernels/tasks/imitation_add_adjoint.hpp.
//
// Features of a state (imitation_add_dim = 15 + 2·njoint + 3·nkey), in this order, after
// MimicKit's ADD observation with hinge angles in place of per-joint 6D rotations (every G1 joint
// is a hinge):
//   3   root position (world)
//   6   root rotation, the first two columns of R (the 6D rotation of Zhou et al. 2019)
//   nj  joint angles
//   3K  key-body positions relative to the root, in the heading frame (the root's yaw)
//   3   root linear velocity in the heading frame
//   3   root angular velocity in the heading frame
//   nj  joint velocities
// The conventions (raw quaternion divided by its norm, free-joint velocities) are those of
// kernels/tasks/imitation.hpp.
#pragma once

#include "kernels/tasks/imitation.hpp"

namespace stiffgrad::kern {

SG_HD SG_INLINE int imitation_add_dim(const ImitationSpec& s) { return 15 + 2 * s.njoint + 3 * s.nkey; }
// Largest imitation_add_dim the adjoint's local arrays hold (64 joints, kImitationMaxKeys keys).
inline constexpr int kImitationAddMaxDim = 15 + 2 * 64 + 3 * kImitationMaxKeys;

// x expressed in the heading frame (c, s) = (cos, sin) of the yaw: Hᵀ x.
template <class Real>
SG_HD SG_INLINE void imitation_to_heading(Real c, Real s, const Real x[3], Real* out) {
  out[0] = c * x[0] + s * x[1];
  out[1] = -s * x[0] + c * x[1];
  out[2] = x[2];
}

// f (imitation_add_dim) of a state with key-body world positions `key` (3 nkey).
template <class Real, class QP, class QV>
SG_HD void imitation_add_features(const ImitationSpec& s, const QP& qpos, const QV& qvel, const Real* key, Real* f) {
  Real u[4], R[9];
  imitation_unit_quat(qpos, 3, u);
  quat_to_mat(R, u);
  Real hc, hs;
  imitation_heading(R, hc, hs);
  const int nj = s.njoint;
  int o = 0;
  for (int i = 0; i < 3; ++i) f[o++] = qpos[i];
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i) f[o++] = R[3 * i + c];
  for (int j = 0; j < nj; ++j) f[o++] = qpos[7 + j];
  for (int k = 0; k < s.nkey; ++k) {
    const Real rel[3] = {key[3 * k] - qpos[0], key[3 * k + 1] - qpos[1], key[3 * k + 2] - qpos[2]};
    imitation_to_heading(hc, hs, rel, f + o);
    o += 3;
  }
  const Real v[3] = {qvel[0], qvel[1], qvel[2]};
  imitation_to_heading(hc, hs, v, f + o);
  o += 3;
  Real w[3];  // world angular velocity R ω (qvel[3:6] is in the root frame)
  for (int i = 0; i < 3; ++i) w[i] = R[3 * i] * qvel[3] + R[3 * i + 1] * qvel[4] + R[3 * i + 2] * qvel[5];
  imitation_to_heading(hc, hs, w, f + o);
  o += 3;
  for (int j = 0; j < nj; ++j) f[o++] = qvel[6 + j];
}

// Features of the state in d (its kinematics computed into d).
template <class Real, class L>
SG_HD void imitation_add_features_state(const ModelView<Real>& m, const Data<Real, L>& d, const ImitationSpec& s,
                                        Real* f) {
  fwd_kinematics_base_to_tip(m, d);
  Real key[3 * kImitationMaxKeys];
  imitation_key_positions(d, s, key);
  imitation_add_features(s, d.qpos(), d.qvel(), key, f);
}

// Δ = ref_features − f(state in d); ref_features (imitation_add_dim) is a constant.
template <class Real, class L>
SG_HD void imitation_add_delta_state(const ModelView<Real>& m, const Data<Real, L>& d, const ImitationSpec& s,
                                     const Real* ref_features, Real* delta) {
  imitation_add_features_state(m, d, s, delta);
  const int n = imitation_add_dim(s);
  for (int i = 0; i < n; ++i) delta[i] = ref_features[i] - delta[i];
}

}  // namespace stiffgrad::kern
