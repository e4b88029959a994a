// stiffgrad — Bundled Contact Gradients (BCG; docs/references/bcg-diffmjx-shac.md "BCG"): a
// recorded Rollout that, where contact is stiff, steps B perturbed copies of an environment for
// H control steps and continues from their average, so that its gradient is the average of the
// branches' gradients.
//
// Per environment and control step t of a Rollout with bundles:
//  - trigger: the largest normal force of one contact in the previous control step (Simulator::
//    contact_stats row 1) exceeds `tau` (or, with trigger_on_impulse, the step's normal impulse,
//    row 2), and the environment is finite and not already in a bundle (at a recording's first
//    step: the statistics of the simulator's last step before Rollout::begin, zero for a new
//    simulator);
//  - branches: B copies of the state x_t, branch b perturbed by Cartesian noise on the bodies
//    that carry the contacts touching at x_t (kernels/bundle/bundle_perturbation.hpp: positions
//    N(0, σp²), velocities N(0, σv²) of the bodies' origins, mapped to generalized coordinates by
//    Jᵀ(JJᵀ + λ I)⁻¹), drawn from Philox keyed by (seed, env, t, b): a replay draws them again;
//  - for H control steps every branch gets the environment's control of that step (for a policy:
//    computed from the averaged state, which is what the environment's state reads as);
//  - after each of them the environment's state is the branches' average (quaternions
//    sign-aligned to branch 0, averaged, normalized; kernels/bundle/bundle_mean.hpp), and the
//    nominal rollout resumes from it after H steps (or at the Rollout's horizon);
//  - the adjoint: the perturbations are constants, the average sends 1/B of its adjoint to
//    every branch, and a bundled step's control adjoint is the sum over its branches.
//
// A pool of `pool` bundles (default: one per environment) is sized at creation. When more
// environments trigger in one step than there are free bundles, the largest trigger values get
// them and the rest step nominally (counted in Rollout::bundles_skipped()). The CUDA backend
// keeps one slot per environment (a smaller pool is refused there) and steps each branch as one
// launch of the nominal control step over the bundled environments
// (backends/cuda/bundle_step_impl.cuh).
//
// Memory per environment (Real = the simulator's precision): the pool's branch states
//   pool / nenv × (horizon + 1) × B × (nq + nv [+ nv with the soft model's warm start]) Reals,
// their perturbations pool / nenv × horizon × B × nv, and running branch adjoints
// pool / nenv × B × (nq + nv) (Rollout::bytes_per_env counts them).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace stiffgrad {

struct BundleOptions {
  bool enabled = false;
  int branches = 10;             // B >= 1
  int steps = 2;                 // H >= 1 control steps per bundle
  double tau = 400;              // trigger threshold: N (force) or N s (impulse); +inf: never
  bool trigger_on_impulse = false;
  double sigma_p = 0.01;         // m, Cartesian position noise of the contact-carrying bodies
  double sigma_v = 0.02;         // m/s, their velocity noise
  double lambda = 1e-4;          // damping λ_J of the pseudoinverse Jᵀ(JJᵀ + λ I)⁻¹
  std::uint64_t seed = 1;        // Philox key
  int pool = 0;                  // bundles at once, >= 1 (0: nenv)
};

// Throws std::invalid_argument for values outside the ranges above (also non-finite σ, λ <= 0).
void validate(const BundleOptions& options);

// "B,H,TAU" or "B,H,TAU,SIGMA_P,SIGMA_V" (the CLI's --bundle), enabled; throws
// std::invalid_argument naming what is wrong.
BundleOptions parse_bundle_options(const std::string& text);

}  // namespace stiffgrad
