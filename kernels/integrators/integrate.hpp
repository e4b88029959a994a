// Position integration on the configuration manifold (MuJoCo's mj_integratePos):
// hinge/slide q += h v; free translation p += h v (world frame); ball and free rotations
// q <- q * exp(h w / 2) with w in the body frame (quat_integrate).
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/math3.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void integrate_pos(const ModelView<Real>& m, View<Real, L> qpos, View<Real, L> qvel, Real h) {
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j];
    int da = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) qpos[pa + c] += h * qvel[da + c];
      pa += 3;
      da += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      Real q[4], w[3];
      load4(q, qpos, pa);
      load3(w, qvel, da);
      quat_integrate(q, w, h);
      store4(qpos, pa, q);
    } else {
      qpos[pa] += h * qvel[da];
    }
  }
}

}  // namespace stiffgrad::kern
