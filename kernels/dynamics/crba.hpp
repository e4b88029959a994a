// Joint-space mass matrix by the composite-rigid-body algorithm (RBDA sec. 6.2, Table 6.2),
// with spatial quantities in world axes about each tree's centre of mass: M_ij = cdof_i . (Ic_body(i) cdof_j) for j = i and its ancestor
// dofs; rotor armature on the diagonal. Stored dense, row-major, lower triangle filled
// (upper triangle mirrored so that M can be read whole).
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/spatial.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void crb_mass_matrix(const ModelView<Real>& m, const Data<Real, L>& d) {
  // composite inertias, tip to base
  for (int i = 0; i < 10 * m.nbody; ++i) d.crb()[i] = d.cinert()[i];
  for (int b = m.nbody - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    if (p > 0)
      for (int k = 0; k < 10; ++k) d.crb()[10 * p + k] += d.crb()[10 * b + k];
  }
  const int nv = m.nv;
  // Only M's tree pattern is written (entry (i, j) with j an ancestor of i, and its mirror):
  // every kernel reads qM on that pattern alone (dof chains), so the rest is never cleared here
  // (it keeps the buffer's initial zeros, or whatever it held: nothing reads it).
  for (int i = 0; i < nv; ++i) {
    Real I[10], s[6], f[6];
    const int b = m.dof_bodyid[i];
    for (int k = 0; k < 10; ++k) I[k] = d.crb()[10 * b + k];
    load6(s, d.cdof(), 6 * i);
    inertia_mul(f, I, s);
    d.qM()[i * nv + i] = dot6(s, f) + m.dof_armature[i];
    for (int j = m.dof_parentid[i]; j >= 0; j = m.dof_parentid[j]) {
      Real sj[6];
      load6(sj, d.cdof(), 6 * j);
      const Real v = dot6(sj, f);
      d.qM()[i * nv + j] = v;
      d.qM()[j * nv + i] = v;
    }
  }
}

}  // namespace stiffgrad::kern
