// Adjoint of kernels/integrators/integrate.hpp.
#pragma once

#include "kernels/integrators/integrate.hpp"
#include "kernels/base/math3_adjoint.hpp"

namespace stiffgrad::kern {

// qpos_out = integrate_pos(qpos_in, qvel, h). On entry adj_qpos holds the adjoint of qpos_out,
// on exit that of qpos_in; adj_qvel accumulates. `qpos_in` is the primal input.
template <class Real, class L>
SG_HD void adj_integrate_pos(const ModelView<Real>& m, View<Real, L> qpos_in, View<Real, L> qvel, Real h,
                             View<Real, L> adj_qpos, View<Real, L> adj_qvel) {
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j];
    int da = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) adj_qvel[da + c] += h * adj_qpos[pa + c];
      pa += 3;
      da += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      Real q[4], w[3], adj_out[4], adj_q[4] = {}, adj_w[3] = {};
      load4(q, qpos_in, pa);
      load3(w, qvel, da);
      load4(adj_out, adj_qpos, pa);
      adj_quat_integrate(q, w, h, adj_q, adj_w, adj_out);
      store4(adj_qpos, pa, adj_q);
      for (int c = 0; c < 3; ++c) adj_qvel[da + c] += adj_w[c];
    } else {
      adj_qvel[da] += h * adj_qpos[pa];
    }
  }
}

}  // namespace stiffgrad::kern
