// Tree-sparse L^T D L factorization of a joint-space matrix (RBDA sec. 6.5, Table 6.3):
// for a kinematic tree, H = L^T D L with L unit lower triangular and L_ki != 0 only when dof i
// is an ancestor of dof k (dof_parentid chain), so the factor has no fill-in and costs
// O(nv * depth^2). Storage: dense nv x nv row-major, strictly lower part = L, diagonal = D.
#pragma once

#include "kernels/data.hpp"

namespace stiffgrad::kern {

// In place: on entry H's lower triangle holds the matrix, on exit its factor.
template <class Real, class L>
SG_HD void ltdl_factor(const ModelView<Real>& m, View<Real, L> H) {
  const int nv = m.nv;
  for (int k = nv - 1; k >= 0; --k) {
    const Real inv_dk = Real(1) / H[k * nv + k];
    for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) {
      const Real a = H[k * nv + i] * inv_dk;
      for (int j = i; j >= 0; j = m.dof_parentid[j]) H[i * nv + j] -= H[k * nv + j] * a;
      H[k * nv + i] = a;
    }
  }
}

// x <- H^-1 x using the factor from ltdl_factor.
template <class Real, class L>
SG_HD void ltdl_solve(const ModelView<Real>& m, View<Real, L> LD, View<Real, L> x) {
  const int nv = m.nv;
  // L^T z = x, tip to base
  for (int k = nv - 1; k >= 0; --k) {
    const Real xk = x[k];
    for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) x[i] -= LD[k * nv + i] * xk;
  }
  for (int k = 0; k < nv; ++k) x[k] = x[k] / LD[k * nv + k];
  // L x = z, base to tip
  for (int k = 0; k < nv; ++k) {
    Real xk = x[k];
    for (int i = m.dof_parentid[k]; i >= 0; i = m.dof_parentid[i]) xk -= LD[k * nv + i] * x[i];
    x[k] = xk;
  }
}

}  // namespace stiffgrad::kern
