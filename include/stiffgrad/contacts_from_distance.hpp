// stiffgrad — contacts from distance (CFD, DiffMJX): informative gradients before bodies touch.
//
// Forward values always come from the physical contact model. With CFD on, the adjoint of
// every substep differentiates a second contact model evaluated at the same (replayed) state:
// straight-through on the step, as DiffMJX does,
//   y = step_phys(x) + step_cfd(x) − stop_gradient(step_cfd(x)),  so  ∂y/∂x := ∂step_cfd/∂x.
// The second model is the physical one with, for every candidate geom pair,
//   margin  = max(margin, width)                 contacts exist up to distance `width`;
//   solimp  = (d0, dwidth, width, mid, power)    MuJoCo's impedance spline of r = dist − margin:
//             x = |r| / width, so d = d0 at dist = width (r = 0) rising along the spline
//             (midpoint mid, power `power`) to dwidth at touch (dist = 0, |r| = width) and
//             staying dwidth in penetration;
//   solref  unchanged (the pair's own time constant and damping ratio).
// (A port of DiffMJX reads the same five numbers with the spline's width 2·width and solref
// (0.02, 1); we keep the pair's solref so that the two models agree in stiffness at touch, and
// reach dwidth exactly at touch.) MuJoCo clamps d0, dwidth and mid to [1e-4, 0.9999].
#pragma once

#include "stiffgrad/model.hpp"

namespace stiffgrad {

struct ContactsFromDistance {
  bool enabled = false;
  double d0 = 0.0;       // impedance at distance `width`
  double dwidth = 0.01;  // impedance at touch
  double width = 0.05;   // distance (m) from which contacts exist
  double mid = 1.0;      // solimp spline midpoint
  double power = 2.0;    // solimp spline power (>= 1)
};

// The second contact model above (a copy of `model`). Throws std::invalid_argument for
// parameters outside width > 0, d0 and dwidth in [0, 1), mid in [0, 1], power >= 1.
Model contacts_from_distance_model(const Model& model, const ContactsFromDistance& cfd);

// "D0,DWIDTH,WIDTH,MID,POWER" (the CLI's --cfd) into an enabled ContactsFromDistance; throws
// std::invalid_argument naming the problem.
ContactsFromDistance parse_contacts_from_distance(const std::string& text);

}  // namespace stiffgrad
