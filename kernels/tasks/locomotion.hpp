// Locomotion on a floor (ant-run): observation and reward of a floating-base robot, with
// adjoints. Gymnasium's Ant-v4 terms: the observation is qpos without the root's x, y (so the
// policy is translation invariant) and qvel; the reward is the root's forward velocity ẋ
// (free-joint qvel[0], world frame) plus a healthy bonus minus a control cost
// c Σ u². The root height's healthy range ends the episode (terminated).
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern::tasks {

struct LocomotionParams {
  double healthy_reward = 1.0;
  double ctrl_cost = 0.5;
  double forward_weight = 1.0;
};

// qpos, qvel, adj_qpos, adj_qvel: anything indexable (a pointer, or a kern::View of an
// environment-minor batch, kernels/base/view.hpp).
template <class Real, class QP, class QV>
SG_HD void locomotion_observe(int nq, int nv, const QP& qpos, const QV& qvel, Real* obs) {
  for (int i = 2; i < nq; ++i) obs[i - 2] = qpos[i];
  for (int i = 0; i < nv; ++i) obs[nq - 2 + i] = qvel[i];
}

template <class Real, class AQ, class AV>
SG_HD void adj_locomotion_observe(int nq, int nv, const Real* adj_obs, AQ adj_qpos, AV adj_qvel) {
  for (int i = 2; i < nq; ++i) adj_qpos[i] += adj_obs[i - 2];
  for (int i = 0; i < nv; ++i) adj_qvel[i] += adj_obs[nq - 2 + i];
}

template <class Real>
SG_HD Real locomotion_reward(const LocomotionParams& p, int nu, const Real* qvel, const Real* ctrl) {
  Real cost = Real(0);
  for (int i = 0; i < nu; ++i) cost += ctrl[i] * ctrl[i];
  return Real(p.forward_weight) * qvel[0] + Real(p.healthy_reward) - Real(p.ctrl_cost) * cost;
}

template <class Real>
SG_HD void adj_locomotion_reward(const LocomotionParams& p, int nu, const Real* ctrl, Real adj_r, Real* adj_qvel,
                                 Real* adj_ctrl) {
  adj_qvel[0] += Real(p.forward_weight) * adj_r;
  for (int i = 0; i < nu; ++i) adj_ctrl[i] += Real(-2) * Real(p.ctrl_cost) * ctrl[i] * adj_r;
}

}  // namespace stiffgrad::kern::tasks
