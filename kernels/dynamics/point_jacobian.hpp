// Point Jacobians (MuJoCo's mj_jac) from the tree-relative kinematics: the dofs that move a
// body, and a point's Jacobian column by column. Used by the constraint rows (contacts, connect
// constraints) and the passive forces (gravity compensation).
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/math3.hpp"

namespace stiffgrad::kern {

// Last dof that moves body b (walking up to the first ancestor with dofs), or -1 (static).
template <class Real>
SG_HD SG_INLINE int last_dof_of_body(const ModelView<Real>& m, int b) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  return b > 0 ? m.body_dofadr[b] + m.body_dofnum[b] - 1 : -1;
}

// The Jacobian of the point `point` (relative to body b's tree origin) rigidly attached to body
// b (MuJoCo's mj_jac), column by column: f(i, lin, ang) for every dof i that moves b, with
// lin = cdof_lin + cdof_ang x (point - p) and ang = cdof_ang, p = subtree_com[root].
template <class Real, class L, class F>
SG_HD SG_INLINE void for_each_point_jacobian_column(const ModelView<Real>& m,
                                                    const Data<Real, L>& d, int b,
                                                    const Real point[3], F&& f) {
  const int root = m.body_rootid[b];
  Real off[3];
  for (int k = 0; k < 3; ++k) off[k] = point[k] - d.subtree_com()[3 * root + k];
  for (int i = last_dof_of_body(m, b); i >= 0; i = m.dof_parentid[i]) {
    Real s[6], t[3];
    load6(s, d.cdof(), 6 * i);
    cross3(t, s, off);
    const Real lin[3] = {s[3] + t[0], s[4] + t[1], s[5] + t[2]};
    f(i, lin, static_cast<const Real*>(s));
  }
}

}  // namespace stiffgrad::kern
