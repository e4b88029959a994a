// Structural sparsity of constraint rows (efc_chain) and the row storage it selects.
//
// A row built from one body's Jacobian (a joint limit, a dof's friction loss, a contact of a
// body with the world or with one of its own ancestors) can be non-zero only on the dofs that
// move that body: the chain from a leaf dof to the root along dof_parentid. efc_chain records
// that leaf, so that
//   - the row is stored compactly: its value on the chain's p-th dof (leaf first, root last:
//     ModelView::dof_chain) sits in slot p of the row's nv slots, the rest unused (zero);
//   - products with J (J x, Jᵀ f) and the Hessian assembly visit the chain, not all nv dofs;
//   - H = M + Jᵀ C J keeps M's tree sparsity when every row that enters it is a chain row: two
//     dofs on one chain are an ancestor pair, which M's pattern already holds, so H factors
//     as LᵀDL without fill-in (O(nv·depth²)) instead of a dense Cholesky (O(nv³)).
// A row whose non-zeros span two branches (a contact between two limbs, a tendon across
// branches) is dense: slot c holds column c. The record is structural (which dofs CAN be
// non-zero), never read off the values: a value that is zero by coincidence may carry a
// non-zero tangent in the dual-number path.
//
// Encoding in the Real-typed efc_chain (so that a zero-filled buffer means "dense", the safe
// reading for rows written by hand): 0 dense, −1 empty (no dof moves the row), leaf + 1.
// Everything that reads or writes a row goes through for_each_row_entry / row_slot; host code
// that hands rows to users expands them (row_to_dense).
#pragma once

#include "kernels/base/data.hpp"

namespace stiffgrad::kern {

constexpr int kChainDense = -2;  // decoded: a general row, all nv columns
constexpr int kChainEmpty = -1;  // decoded: a structurally zero row

SG_HD SG_INLINE constexpr int encode_chain(int chain) { return chain == kChainDense ? 0 : (chain < 0 ? -1 : chain + 1); }

template <class Real>
SG_HD SG_INLINE int decode_chain(const Real& stored) {
  const int v = sg_int(stored);
  return v == 0 ? kChainDense : (v < 0 ? kChainEmpty : v - 1);
}

template <class Real, class L>
SG_HD SG_INLINE int row_chain(const Data<Real, L>& d, int i) {
  return decode_chain(d.efc_chain()[i]);
}

// Whether dof a lies on the chain from dof b to the root (a == b included).
template <class Real>
SG_HD SG_INLINE bool dof_on_chain(const ModelView<Real>& m, int a, int b) {
  while (b > a) b = m.dof_parentid[b];  // ancestors have smaller indices
  return b == a;
}

// Dof `leaf`'s chain as a list: leaf first, the root dof last (ModelView::dof_chain).
template <class Real>
struct DofChain {
  const int* dof;
  int n;
};
template <class Real>
SG_HD SG_INLINE DofChain<Real> dof_chain(const ModelView<Real>& m, int leaf) {
  return DofChain<Real>{m.dof_chain + m.dof_chainadr[leaf], m.dof_chainnum[leaf]};
}

// The chain holding the union of two chains (kChainEmpty for a static side): the deeper one
// when the other lies on it, else kChainDense.
template <class Real>
SG_HD SG_INLINE int chain_union(const ModelView<Real>& m, int c1, int c2) {
  if (c1 == kChainDense || c2 == kChainDense) return kChainDense;
  if (c1 < 0) return c2;
  if (c2 < 0) return c1;
  const int lo = c1 < c2 ? c1 : c2, hi = c1 < c2 ? c2 : c1;
  return dof_on_chain(m, lo, hi) ? hi : kChainDense;
}

// f(slot, col) for every entry the row can hold: slot p <-> the chain's p-th dof, or slot c <->
// column c for a dense row.
template <class Real, class F>
SG_HD SG_INLINE void for_each_row_entry(const ModelView<Real>& m, int chain, F&& f) {
  if (chain == kChainDense) {
    for (int c = 0; c < m.nv; ++c) f(c, c);
  } else if (chain >= 0) {
    const DofChain<Real> ch = dof_chain(m, chain);
    for (int p = 0; p < ch.n; ++p) f(p, ch.dof[p]);
  }
}

// The slot of dof `dof` in a row with chain `chain` (the dof must lie on the chain): the
// chain of an ancestor is the tail of its descendant's chain.
template <class Real>
SG_HD SG_INLINE int row_slot(const ModelView<Real>& m, int chain, int dof) {
  return chain == kChainDense ? dof : m.dof_chainnum[chain] - m.dof_chainnum[dof];
}

// The slot of dof `dof` in a row with chain `chain`, or −1 when the row cannot hold it (O(1):
// the dof lies on the chain exactly when the chain's entry at its would-be slot is the dof).
template <class Real>
SG_HD SG_INLINE int row_slot_if_held(const ModelView<Real>& m, int chain, int dof) {
  if (chain == kChainDense) return dof;
  if (chain < 0) return -1;
  const int slot = m.dof_chainnum[chain] - m.dof_chainnum[dof];
  return slot >= 0 && m.dof_chain[m.dof_chainadr[chain] + slot] == dof ? slot : -1;
}

// J_i · x (x may live elsewhere than J: LX).
template <class Real, class L, class LX>
SG_HD SG_INLINE Real row_dot(const ModelView<Real>& m, View<Real, L> J, int i, int chain,
                             View<Real, LX> x) {
  const int nv = m.nv;
  Real s(0);
  for_each_row_entry(m, chain, [&](int slot, int c) { s += J[i * nv + slot] * x[c]; });
  return s;
}

// y += f J_i.
template <class Real, class L>
SG_HD SG_INLINE void row_axpy(const ModelView<Real>& m, View<Real, L> J, int i, int chain, Real f, View<Real, L> y) {
  const int nv = m.nv;
  for_each_row_entry(m, chain, [&](int slot, int c) { y[c] += J[i * nv + slot] * f; });
}

// Row i of J as nv dense columns into out[0..nv) (for output to users and tests).
template <class Real, class L>
SG_HD SG_INLINE void row_to_dense(const ModelView<Real>& m, const Data<Real, L>& d, int i, Real* out) {
  for (int c = 0; c < m.nv; ++c) out[c] = Real(0);
  for_each_row_entry(m, row_chain(d, i),
                     [&](int slot, int c) { out[c] = d.efc_J()[i * m.nv + slot]; });
}

// y = M x for a matrix with M's tree sparsity (qM: entry (i, j), j an ancestor of i, in the
// lower triangle): O(nv·depth) instead of nv².
template <class Real, class L>
SG_HD SG_INLINE void tree_matvec(const ModelView<Real>& m, View<Real, L> A, View<Real, L> x, View<Real, L> y) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i) y[i] = A[i * nv + i] * x[i];
  for (int i = 0; i < nv; ++i) {
    const DofChain<Real> ch = dof_chain(m, i);
    for (int k = 1; k < ch.n; ++k) {
      const int j = ch.dof[k];
      const Real a = A[i * nv + j];
      y[i] += a * x[j];
      y[j] += a * x[i];
    }
  }
}

}  // namespace stiffgrad::kern
