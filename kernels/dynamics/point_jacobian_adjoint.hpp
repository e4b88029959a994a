// Adjoint of kernels/dynamics/point_jacobian.hpp.
#pragma once

#include "kernels/base/math3_adjoint.hpp"
#include "kernels/dynamics/point_jacobian.hpp"

namespace stiffgrad::kern {

// Adjoint of for_each_point_jacobian_column: g(i, lin_bar, ang_bar) gives column i's adjoints
// (3 each, filled by g); they go to cdof, subtree_com[root] and point_bar (added to).
template <class Real, class L, class G>
SG_HD SG_INLINE void adj_point_jacobian_columns(const ModelView<Real>& m, const Data<Real, L>& d,
                                                const Data<Real, L>& a, int b, const Real point[3],
                                                Real point_bar[3], G&& g) {
  const int root = m.body_rootid[b];
  Real off[3], off_bar[3] = {Real(0), Real(0), Real(0)};
  for (int k = 0; k < 3; ++k) off[k] = point[k] - d.subtree_com()[3 * root + k];
  for (int i = last_dof_of_body(m, b); i >= 0; i = m.dof_parentid[i]) {
    Real s[6], lin_bar[3], ang_bar[3];
    load6(s, d.cdof(), 6 * i);
    g(i, lin_bar, ang_bar);
    // lin = s_lin + s_ang x off, ang = s_ang
    Real s_bar[6] = {ang_bar[0], ang_bar[1], ang_bar[2], lin_bar[0], lin_bar[1], lin_bar[2]};
    adj_cross3(s, off, s_bar, off_bar, lin_bar);
    accumulate(a.cdof(), 6 * i, s_bar, 6);
  }
  for (int k = 0; k < 3; ++k) {
    point_bar[k] += off_bar[k];
    a.subtree_com()[3 * root + k] -= off_bar[k];
  }
}

}  // namespace stiffgrad::kern
