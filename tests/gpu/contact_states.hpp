// Start states in persistent contact for the constrained GPU tests: a model's own simulation
// on the CPU in double with constraints on (humanoid.xml from qpos0 falls and lies on its floor;
// the G1 settles at its `home` keyframe under its servos), then copied to every environment
// with small noise. Contact onsets and lift-offs amplify rounding differences by orders of
// magnitude (a chaotic event, not a backend defect), so the constrained agreement tests start
// in contact and run short horizons.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stiffgrad/simulator.hpp"

namespace sggpu {

struct Settled {
  std::vector<double> qpos, qvel, ctrl;  // nq, nv, nu
};

// `key`: a keyframe to start from (empty: qpos0, zero control); `steps` control steps of 4
// substeps with the keyframe's control held.
inline Settled settle(const std::shared_ptr<const stiffgrad::Model>& model, const std::string& key, int steps,
                      stiffgrad::Integrator integrator) {
  stiffgrad::SimulatorOptions opt;
  opt.substeps = 4;
  opt.integrator = integrator;
  opt.constraints = true;
  stiffgrad::Simulator sim(model, opt);
  Settled s{std::vector<double>(model->nq), std::vector<double>(model->nv), std::vector<double>(model->nu, 0.0)};
  if (!key.empty()) {
    sim.reset_keyframe(key);
    sim.get_ctrl(s.ctrl.data());
  }
  for (int t = 0; t < steps; ++t) sim.step();
  sim.get_state(s.qpos.data(), s.qvel.data());
  return s;
}

// nenv copies: velocities + N(0, sigma_v^2), controls + N(0, sigma_u^2) per control step
// (steps x nenv x nu), environment-major states.
struct Batch {
  std::vector<double> qpos, qvel, ctrl;
};
inline Batch contact_batch(const Settled& s, int nenv, int steps, double sigma_v, double sigma_u, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  Batch b;
  for (int e = 0; e < nenv; ++e) {
    b.qpos.insert(b.qpos.end(), s.qpos.begin(), s.qpos.end());
    for (double v : s.qvel) b.qvel.push_back(v + sigma_v * n01(rng));
  }
  for (int t = 0; t < steps; ++t)
    for (int e = 0; e < nenv; ++e)
      for (double u : s.ctrl) b.ctrl.push_back(u + sigma_u * n01(rng));
  return b;
}

// max |a - b| over max(1, max |b|): a difference relative to the reference's scale.
inline double rel(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

}  // namespace sggpu
