// stiffgrad — whether a model's position servos are stable under explicit integration, for the
// command line's hints (`stiffgrad demo`): stiff servos at a large timestep (the Unitree G1's
// kp at 4 ms) diverge under MuJoCo's Euler, which treats only joint damping implicitly.
#pragma once

#include <string>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// A decoupled estimate at qpos0, per actuated degree of freedom j: the actuators' bias
// stiffness k = -b1 g^2 and damping c = -b2 g^2 (force = gain ctrl + b0 + b1 length +
// b2 velocity, length = g q) act on an effective mass 1 / (M^-1)_jj. Semi-implicit Euler,
// v' = v + h (-k q - c v) (M^-1)_jj, q' = q + h v', has the characteristic polynomial
// z^2 - (2 - a - b) z + (1 - a), a = h c (M^-1)_jj, b = h^2 k (M^-1)_jj; Jury's conditions
// give stability iff 0 < a < 2, b > 0 and 2a + b < 4. `ratio` is (2a + b) / 4: >= 1 diverges.
// Couplings between degrees of freedom are ignored, so this is a hint, not a proof.
struct ServoStability {
  int actuated_dofs = 0;  // degrees of freedom with a servo (nonzero bias stiffness or damping)
  int unstable_dofs = 0;  // of those, the ones with ratio >= 1
  double worst_ratio = 0;
  std::string worst_joint;  // the joint with the largest ratio
};
ServoStability explicit_servo_stability(const Model& model, double timestep);

}  // namespace stiffgrad
