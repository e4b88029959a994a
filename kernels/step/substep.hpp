// One substep of length m.timestep with the model view's integrator and contact model: MuJoCo's
// Euler family (kernels/step/step.hpp) or an explicit Runge–Kutta method (kernels/integrators/integrator_rk.hpp)
// with MuJoCo's soft constraints, or the Impulse model's Moreau midpoint step
// (kernels/impulse/impulse_step.hpp).
#pragma once

#include "kernels/impulse/impulse_step.hpp"
#include "kernels/integrators/integrator_rk_substep.hpp"
#include "kernels/step/step.hpp"

namespace stiffgrad::kern {

// Advances d.qpos, d.qvel by one substep at the control d.ctrl; returns status bits (0: none).
template <class Real, class L>
SG_HD SG_OUTLINE int substep(const ModelView<Real>& m, const Data<Real, L>& d) {
  if (m.contact_model == kContactImpulse && m.nefc_max > 0) return impulse_substep(m, d);
  return m.rk_integrator == kIntEuler ? euler_substep(m, d) : rk_substep(m, d);
}

}  // namespace stiffgrad::kern
