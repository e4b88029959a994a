// Size of the Newton solver's per-environment scratch (kernels/solver.hpp), in Reals. Kept apart
// from the solver so that DataLayout can size it without including the solver itself.
#pragma once

#include "kernels/config.hpp"

namespace stiffgrad::kern {

// nv x nv Hessian and its Cholesky factor, a handful of nv-vectors (gradient, search direction,
// M a, ...) and a few nefc-vectors (J a, J search, ...).
SG_HD SG_INLINE constexpr int newton_workspace_size(int nv, int nefc) {
  return 2 * nv * nv + 10 * nv + 6 * nefc;
}

}  // namespace stiffgrad::kern
