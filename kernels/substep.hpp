// One substep of length m.timestep with the model view's integrator: MuJoCo's Euler family
// (kernels/step.hpp) or an explicit Runge–Kutta method (kernels/integrator_rk.hpp).
#pragma once

#include "kernels/integrator_rk.hpp"
#include "kernels/step.hpp"

namespace stiffgrad::kern {

// Advances d.qpos, d.qvel by one substep at the control d.ctrl; returns status bits (0: none).
template <class Real, class L>
SG_HD int substep(const ModelView<Real>& m, const Data<Real, L>& d) {
  return m.rk_integrator == kIntEuler ? euler_substep(m, d) : rk_substep(m, d);
}

}  // namespace stiffgrad::kern
