// Tree-sparse L^T D L factorization of a joint-space matrix (RBDA sec. 6.5, Table 6.3):
// for a kinematic tree, H = L^T D L with L unit lower triangular and L_ki != 0 only when dof i
// is an ancestor of dof k (dof_parentid chain), so the factor has no fill-in and costs
// O(nv * depth^2). Two storages of the same pattern:
//   dense    nv x nv row-major, strictly lower part = L, diagonal = D (qM, qLD);
//   compact  row k's entries on dof k's chain (ModelView::dof_chain: k, parent(k), ..., root)
//            in order at dof_chainadr[k] + s, s = 0 the diagonal (the solver's Hessian):
//            the chain of the ancestor at position s is the tail of k's chain from s, so the
//            elimination's inner loops run over contiguous memory.
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/team.hpp"

namespace stiffgrad::kern {

// Index of entry (row k, the s-th dof `col` of k's chain) in either storage.
template <bool kCompact, class Real>
SG_HD SG_INLINE int ltdl_index(const ModelView<Real>& m, int k, int s, int col) {
  return kCompact ? m.dof_chainadr[k] + s : k * m.nv + col;
}

// In place: on entry H's lower triangle (its tree pattern) holds the matrix, on exit its factor.
// By a team: at each k (tip to base) the rows of k's ancestors ch[s], s >= 1, are items (row
// ch[s] -= a_s · row k's tail, a_s = H(k, ch[s]) / D_k: each on its own lane, reading row k,
// which no item writes), then row k is scaled to L's. Every entry receives the same updates in
// the same order as in the serial elimination, so every team gives the same bits.
template <bool kCompact, class Team, class Real, class L>
SG_HD void ltdl_factor_in(const Team& team, const ModelView<Real>& m, View<Real, L> H) {
  const int nv = m.nv;
  for (int k = nv - 1; k >= 0; --k) {
    const Real inv_dk = Real(1) / H[ltdl_index<kCompact>(m, k, 0, k)];
    const int* ch = m.dof_chain + m.dof_chainadr[k];
    const int n = m.dof_chainnum[k];
    team.for_each(n - 1, [&](int item) {
      const int s = item + 1, i = ch[s];
      const Real a = H[ltdl_index<kCompact>(m, k, s, i)] * inv_dk;
      // row i's chain is k's from s on: entry (i, ch[t]) is row i's (t - s)-th
      for (int t = s; t < n; ++t) H[ltdl_index<kCompact>(m, i, t - s, ch[t])] -= H[ltdl_index<kCompact>(m, k, t, ch[t])] * a;
    });
    team.sync();
    team.for_each(n - 1, [&](int item) {
      const int s = item + 1;
      H[ltdl_index<kCompact>(m, k, s, ch[s])] = H[ltdl_index<kCompact>(m, k, s, ch[s])] * inv_dk;
    });
    team.sync();
  }
}

// One thread.
template <bool kCompact, class Real, class L>
SG_HD SG_INLINE void ltdl_factor_in(const ModelView<Real>& m, View<Real, L> H) {
  ltdl_factor_in<kCompact>(SerialTeam{1}, m, H);
}

// The second half of a solve with the factor: x <- L^-1 D^-1 x (diagonal, then base to tip).
template <bool kCompact, class Real, class L, class LX>
SG_HD SG_INLINE void ltdl_solve_d_l(const ModelView<Real>& m, View<Real, L> LD, View<Real, LX> x) {
  const int nv = m.nv;
  for (int k = 0; k < nv; ++k) x[k] = x[k] / LD[ltdl_index<kCompact>(m, k, 0, k)];
  // L x = z, base to tip
  for (int k = 0; k < nv; ++k) {
    Real xk = x[k];
    const int* ch = m.dof_chain + m.dof_chainadr[k];
    for (int s = 1; s < m.dof_chainnum[k]; ++s) xk -= LD[ltdl_index<kCompact>(m, k, s, ch[s])] * x[ch[s]];
    x[k] = xk;
  }
}

// x <- H^-1 x using the factor from ltdl_factor_in (x may live elsewhere than the factor: LX).
template <bool kCompact, class Real, class L, class LX>
SG_HD void ltdl_solve_in(const ModelView<Real>& m, View<Real, L> LD, View<Real, LX> x) {
  const int nv = m.nv;
  // L^T z = x, tip to base
  for (int k = nv - 1; k >= 0; --k) {
    const Real xk = x[k];
    const int* ch = m.dof_chain + m.dof_chainadr[k];
    for (int s = 1; s < m.dof_chainnum[k]; ++s) x[ch[s]] -= LD[ltdl_index<kCompact>(m, k, s, ch[s])] * xk;
  }
  ltdl_solve_d_l<kCompact>(m, LD, x);
}

// ltdl_solve_in for an x that is zero off the chain of dof `leaf` (leaf, parent, ..., root; a
// constraint row's pattern, kernels/constraint/row_sparsity.hpp). The tip-to-base sweep moves values only
// from a dof to its ancestors, so off the chain it would subtract exact zeros: it visits the
// chain alone, in the same order, and the result is the full solve's.
template <bool kCompact, class Real, class L, class LX>
SG_HD void ltdl_solve_chain_in(const ModelView<Real>& m, View<Real, L> LD, View<Real, LX> x,
                               int leaf) {
  const int* chain = m.dof_chain + m.dof_chainadr[leaf];
  for (int p = 0; p < m.dof_chainnum[leaf]; ++p) {
    const int k = chain[p];
    const Real xk = x[k];
    const int* ch = m.dof_chain + m.dof_chainadr[k];
    for (int s = 1; s < m.dof_chainnum[k]; ++s) x[ch[s]] -= LD[ltdl_index<kCompact>(m, k, s, ch[s])] * xk;
  }
  ltdl_solve_d_l<kCompact>(m, LD, x);
}

// The dense storage (qM, qLD).
template <class Real, class L>
SG_HD SG_INLINE void ltdl_factor(const ModelView<Real>& m, View<Real, L> H) {
  ltdl_factor_in<false>(m, H);
}
template <class Real, class L, class LX>
SG_HD SG_INLINE void ltdl_solve(const ModelView<Real>& m, View<Real, L> LD, View<Real, LX> x) {
  ltdl_solve_in<false>(m, LD, x);
}
template <class Real, class L, class LX>
SG_HD SG_INLINE void ltdl_solve_chain(const ModelView<Real>& m, View<Real, L> LD, View<Real, LX> x,
                                      int leaf) {
  ltdl_solve_chain_in<false>(m, LD, x, leaf);
}

}  // namespace stiffgrad::kern
