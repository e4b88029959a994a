// Adjoint of kernels/base/ldl.hpp.
#pragma once

#include "kernels/base/ldl.hpp"

namespace stiffgrad::kern {

// x = H^-1 b with H symmetric (the mass matrix plus implicit damping): b_bar = H^-1 x_bar, one
// more solve with the forward pass's factor. H's own adjoint is never formed: callers
// differentiate the equation H(q) x = b(q, ...) through inverse dynamics (step_adjoint.hpp).
// In place: on entry `adj` holds x_bar, on exit b_bar.
template <class Real, class L>
SG_HD SG_INLINE void adj_ltdl_solve(const ModelView<Real>& m, View<Real, L> LD, View<Real, L> adj) {
  ltdl_solve(m, LD, adj);
}

}  // namespace stiffgrad::kern
