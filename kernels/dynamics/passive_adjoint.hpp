// Adjoints of kernels/dynamics/passive.hpp: qfrc_passive adjoint -> qpos, qvel adjoints.
#pragma once

#include "kernels/dynamics/kinematics_adjoint.hpp"
#include "kernels/dynamics/passive.hpp"
#include "kernels/dynamics/point_jacobian_adjoint.hpp"

namespace stiffgrad::kern {

// Adjoint of gravcomp_forces: qfrc_passive adjoint -> cdof, xipos and subtree_com adjoints
// (f is a constant of the model).
template <class Real, class L>
SG_HD void adj_gravcomp_forces(const ModelView<Real>& m, const Data<Real, L>& d,
                               const Data<Real, L>& a) {
  for (int b = m.nbody - 1; b >= 1; --b) {
    const Real c = m.body_gravcomp[b];
    if (c == Real(0)) continue;
    const Real f[3] = {-c * m.body_mass[b] * m.gravity[0], -c * m.body_mass[b] * m.gravity[1],
                       -c * m.body_mass[b] * m.gravity[2]};
    Real com[3], com_bar[3] = {Real(0), Real(0), Real(0)};
    for (int k = 0; k < 3; ++k) com[k] = d.xipos()[3 * b + k];
    // tau_i += lin_i . f
    adj_point_jacobian_columns(m, d, a, b, com, com_bar, [&](int i, Real* lin_bar, Real* ang_bar) {
      for (int k = 0; k < 3; ++k) {
        lin_bar[k] = a.qfrc_passive()[i] * f[k];
        ang_bar[k] = Real(0);
      }
    });
    for (int k = 0; k < 3; ++k) a.xipos()[3 * b + k] += com_bar[k];
  }
}

template <class Real, class L>
SG_HD void adj_passive_forces(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  if (m.gravcomp_any) adj_gravcomp_forces(m, d, a);
  for (int i = 0; i < m.nv; ++i) a.qvel()[i] -= m.dof_damping[i] * a.qfrc_passive()[i];
  for (int j = 0; j < m.njnt; ++j) {
    const Real k = m.jnt_stiffness[j];
    if (k == Real(0)) continue;
    int pa = m.jnt_qposadr[j];
    int da = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) a.qpos()[pa + c] -= k * a.qfrc_passive()[da + c];
      pa += 3;
      da += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      Real q_in[4], q[4], adj_dif[3], adj_q[4] = {}, adj_q_in[4] = {};
      load4(q_in, d.qpos(), pa);
      copy4(q, q_in);
      normalize4(q);
      for (int c = 0; c < 3; ++c) adj_dif[c] = -k * a.qfrc_passive()[da + c];
      adj_quat_sub(q, m.qpos_spring + pa, adj_q, adj_dif);
      adj_normalize4(q_in, adj_q_in, adj_q);
      accumulate(a.qpos(), pa, adj_q_in, 4);
    } else {
      a.qpos()[pa] -= k * a.qfrc_passive()[da];
    }
  }
  for (int t = 0; t < m.ntendon; ++t) {
    Real adj_f = Real(0);
    for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w)
      adj_f += m.wrap_coef[w] * a.qfrc_passive()[m.jnt_dofadr[m.wrap_jntid[w]]];
    const Real adj_len = -m.tendon_stiffness[t] * adj_f, adj_vel = -m.tendon_damping[t] * adj_f;
    for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w) {
      const int j = m.wrap_jntid[w];
      a.qpos()[m.jnt_qposadr[j]] += m.wrap_coef[w] * adj_len;
      a.qvel()[m.jnt_dofadr[j]] += m.wrap_coef[w] * adj_vel;
    }
  }
}

}  // namespace stiffgrad::kern
