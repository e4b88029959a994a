// Status bits of an environment, reported to the user (Simulator::status) and never silently
// cleared (only reset() clears them).
#pragma once

namespace stiffgrad::kern {

enum : int {
  kEnvOk = 0,
  kEnvNonFinite = 1,          // the state turned non-finite: frozen at its last finite state
  kEnvConstraintOverflow = 2,  // contacts or constraint rows exceeded the capacity sized at
                               // creation; the excess was dropped (never written out of bounds)
  kEnvStepCap = 4              // an adaptive Runge–Kutta substep reached its trial-step cap and
                               // took the time left in one step that failed the tolerance
};

}  // namespace stiffgrad::kern
