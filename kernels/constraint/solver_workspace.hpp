// Size of the Newton solver's per-environment scratch (kernels/constraint/solver.hpp), in Reals. Kept apart
// from the solver so that DataLayout can size it without including the solver itself.
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

// nv x nv Hessian and its factor, four nv-vectors (M a, gradient, search direction, M search),
// four nefc-vectors (J a − aref, J search, the row states H was assembled at, the row groups)
// and the factor's kind: NewtonWorkspace in kernels/constraint/solver.hpp.
// Outside the solve the same Reals are borrowed as contact-Jacobian scratch: 6 nv by
// fwd_constraint_rows, 12 nv by adj_fwd_constraint_rows (more than the solver's own need
// when nv < 4).
SG_HD SG_INLINE constexpr int newton_workspace_size(int nv, int nefc) {
  const int solver = 2 * nv * nv + 4 * nv + 4 * nefc + 1;
  return solver > 12 * nv ? solver : 12 * nv;
}

}  // namespace stiffgrad::kern
