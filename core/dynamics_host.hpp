// stiffgrad — host-path helpers beyond the public dynamics.hpp (used by the demo's check).
#pragma once

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// rollout_host (stiffgrad/dynamics.hpp) with the integrator chosen and, with `constraints`, the
// model's contacts, limits and friction loss (SimulatorOptions::constraints), so that a run with
// Integrator::ImplicitDampingEuler can be checked against the same single-state path.
void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps,
                  Integrator integrator, bool constraints = true);

// As rollout_host, with a control per step: `ctrl` holds `steps` rows of nu values, row s applied
// in step s. One Data carries the constraint solve's warm start (MuJoCo's qacc_warmstart) from
// step to step, as a Simulator does after set_state: calling rollout_host once per step would
// restart every solve cold and differ from the batched run by the solver's tolerance, which
// the dynamics then amplify.
void rollout_host_controls(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps,
                           Integrator integrator, bool constraints = true);

}  // namespace stiffgrad
