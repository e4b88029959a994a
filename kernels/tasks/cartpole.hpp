// cartpole-swingup (dm_control suite, cartpole.py): observation and the smooth reward, with
// adjoints. State: qpos = (cart x, pole angle θ; θ = 0 upright), qvel = (ẋ, θ̇); u = the control
// in [-1, 1].
#pragma once

#include <cmath>

#include "kernels/base/config.hpp"

namespace stiffgrad::kern::tasks {

constexpr int kCartpoleObs = 5;  // x, cos θ, sin θ, ẋ, θ̇

// qpos, qvel, adj_qpos, adj_qvel: anything indexable (a pointer, or a kern::View of an
// environment-minor batch, kernels/base/view.hpp).
template <class Real, class QP, class QV>
SG_HD void cartpole_observe(const QP& qpos, const QV& qvel, Real* obs) {
  using std::cos; using std::sin;
  obs[0] = qpos[0];
  obs[1] = cos(qpos[1]);
  obs[2] = sin(qpos[1]);
  obs[3] = qvel[0];
  obs[4] = qvel[1];
}

template <class Real, class QP, class QV, class AQ, class AV>
SG_HD void adj_cartpole_observe(const QP& qpos, const QV& qvel, const Real* adj_obs, AQ adj_qpos, AV adj_qvel) {
  (void)qvel;
  using std::cos; using std::sin;
  adj_qpos[0] += adj_obs[0];
  adj_qpos[1] += -sin(qpos[1]) * adj_obs[1] + cos(qpos[1]) * adj_obs[2];
  adj_qvel[0] += adj_obs[3];
  adj_qvel[1] += adj_obs[4];
}

// dm_control's rewards.tolerance(x, bounds=(0, 0), margin, sigmoid='gaussian',
// value_at_margin=0.1): exp(-½ (x s / margin)²) with s = sqrt(-2 ln 0.1), and its derivative.
template <class Real>
SG_HD Real tolerance_gaussian(Real x, Real margin, Real* d_dx) {
  using std::exp;
  const Real s2 = Real(4.605170185988091);  // s² = -2 ln 0.1 = 2 ln 10
  const Real z = x / margin;
  const Real value = exp(Real(-0.5) * s2 * z * z);
  if (d_dx) *d_dx = -s2 * z / margin * value;
  return value;
}

// r = upright · centered · small_control · small_velocity (cartpole.py, _get_reward with
// sparse=False): upright = (cos θ + 1)/2, centered = (1 + tol(x, 2))/2, small_control =
// (4 + tol_quadratic(u, 1))/5 with tol_quadratic = 1 - u² on |u| < 1 (0 outside),
// small_velocity = (1 + tol(θ̇, 5))/2.
template <class Real>
SG_HD Real cartpole_reward(const Real* qpos, const Real* qvel, Real u) {
  using std::cos;
  const Real upright = (cos(qpos[1]) + Real(1)) / Real(2);
  const Real centered = (Real(1) + tolerance_gaussian(qpos[0], Real(2), static_cast<Real*>(nullptr))) / Real(2);
  const Real quad = (u < Real(1) && u > Real(-1)) ? Real(1) - u * u : Real(0);
  const Real small_control = (Real(4) + quad) / Real(5);
  const Real small_velocity = (Real(1) + tolerance_gaussian(qvel[1], Real(5), static_cast<Real*>(nullptr))) / Real(2);
  return upright * centered * small_control * small_velocity;
}

template <class Real>
SG_HD void adj_cartpole_reward(const Real* qpos, const Real* qvel, Real u, Real adj_r, Real* adj_qpos,
                               Real* adj_qvel, Real* adj_u) {
  using std::cos; using std::sin;
  Real d_center, d_vel;
  const Real upright = (cos(qpos[1]) + Real(1)) / Real(2);
  const Real centered = (Real(1) + tolerance_gaussian(qpos[0], Real(2), &d_center)) / Real(2);
  const bool inside = u < Real(1) && u > Real(-1);
  const Real quad = inside ? Real(1) - u * u : Real(0);
  const Real small_control = (Real(4) + quad) / Real(5);
  const Real small_velocity = (Real(1) + tolerance_gaussian(qvel[1], Real(5), &d_vel)) / Real(2);
  adj_qpos[1] += adj_r * (-sin(qpos[1]) / Real(2)) * centered * small_control * small_velocity;
  adj_qpos[0] += adj_r * upright * (d_center / Real(2)) * small_control * small_velocity;
  adj_qvel[1] += adj_r * upright * centered * small_control * (d_vel / Real(2));
  if (inside) *adj_u += adj_r * upright * centered * (Real(-2) * u / Real(5)) * small_velocity;
}

}  // namespace stiffgrad::kern::tasks
