// stiffgrad — the Impulse contact model (ContactModel::Impulse; Schwarke et al.'s
// velocity-level impulse model with Moreau midpoint stepping, the contact model BCG trains with).
//
// Each substep solves for contact impulses by `sweeps` projected Gauss–Seidel sweeps, each
// contact's normal impulse projected to >= 0 and its friction impulse onto the Coulomb cone,
// with the soft activation σ(κ·d) of the penetration d = −dist: a contact acts, weighted by
// σ(−κ·dist), before the bodies touch, and fully once they overlap. Joint limits (hinge,
// slide) and dof friction loss are impulses in the same sweeps. Not supported (refused when a
// Simulator is created): limited ball joints, limited tendons and tendon friction loss.
//
// The activation reaches beyond touch: σ(−κ·dist) < 1e-6 only for dist > ln(1e6)/κ (0.046 m at
// κ = 300). So that contacts exist, and act softly, from there, the model simulated is a copy
// whose every candidate geom pair's margin is at least that distance (impulse_contact_model).
#pragma once

#include "stiffgrad/model.hpp"

namespace stiffgrad {

struct ImpulseContact {
  double kappa = 300;  // κ (1/m): sharpness of the activation σ(κ·d); > 0
  int sweeps = 10;     // projected Gauss–Seidel sweeps per substep; 1 to 1000
};

// The Model the Impulse contact model steps: a copy of `model` in which every candidate geom
// pair's margin is max(margin, ln(1e6)/κ), the distance beyond which the activation σ(−κ·dist)
// falls below 1e-6. Throws std::invalid_argument for κ not finite and > 0, or sweeps outside
// 1..1000.
Model impulse_contact_model(const Model& model, const ImpulseContact& impulse);

// The distance ln(1e6)/κ up to which impulse_contact_model detects contacts.
double impulse_capture_distance(double kappa);

}  // namespace stiffgrad
