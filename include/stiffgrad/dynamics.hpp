// stiffgrad — single-state smooth dynamics on the host, in double (the `stiffgrad dynamics`
// command and the parity tests). Runs exactly the kernels the simulator runs.
#pragma once

#include <vector>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

struct SmoothDynamics {
  std::vector<double> M;              // nv x nv, row-major (armature included)
  std::vector<double> qfrc_bias;      // nv  Coriolis, centrifugal and gravity
  std::vector<double> qfrc_passive;   // nv  joint/tendon stiffness and damping
  std::vector<double> qfrc_actuator;  // nv
  std::vector<double> qacc;           // nv  M^-1 (passive + actuator - bias)
};

// qpos (nq), qvel (nv), ctrl (nu).
SmoothDynamics smooth_dynamics(const Model& model, const double* qpos, const double* qvel,
                               const double* ctrl);

// `steps` Euler steps (each of model.opt.timestep, damping implicit) from (qpos, qvel) with
// ctrl held, on the host in double; qpos and qvel are updated in place.
void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps);

}  // namespace stiffgrad
