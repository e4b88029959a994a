// stiffgrad — host-path helpers beyond the public dynamics.hpp (used by the demo's check).
#pragma once

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// rollout_host (stiffgrad/dynamics.hpp) with the integrator chosen and, with `constraints`, the
// model's contacts, limits and friction loss (SimulatorOptions::constraints), so that a run with
// Integrator::ImplicitDampingEuler can be checked against the same single-state path.
void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps,
                  Integrator integrator, bool constraints = true);

}  // namespace stiffgrad
