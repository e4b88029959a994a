// Passive joint and tendon forces (MuJoCo's mj_passive, smooth part):
//   hinge/slide  tau = -k (q - q_spring);  ball  tau = -k * rotvec(q_spring^-1 q);
//   free         translation as slide, rotation as ball;
//   every dof    tau -= b * qvel  (joint damping; the Euler step also treats it implicitly);
//   fixed tendon f = -k_t (L - L_spring) - b_t Ldot, applied through tau_j += coef_j f;
//   gravity compensation (MuJoCo >= 3's body gravcomp): f_b = -gravcomp_b m_b g at the body's
//   centre of mass, tau += J_com(b)ᵀ f_b (mj_applyFT), after the rest.
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/math3.hpp"
#include "kernels/dynamics/point_jacobian.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD void tendon_kinematics(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int t = 0; t < m.ntendon; ++t) {
    Real len = Real(0), vel = Real(0);
    for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w) {
      const int j = m.wrap_jntid[w];
      len += m.wrap_coef[w] * d.qpos()[m.jnt_qposadr[j]];
      vel += m.wrap_coef[w] * d.qvel()[m.jnt_dofadr[j]];
    }
    d.ten_length()[t] = len;
    d.ten_velocity()[t] = vel;
  }
}

// Gravity compensation: qfrc_passive += J_com(b)ᵀ (-gravcomp_b m_b g) for every body with gravcomp.
template <class Real, class L>
SG_HD void gravcomp_forces(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int b = 1; b < m.nbody; ++b) {
    const Real c = m.body_gravcomp[b];
    if (c == Real(0)) continue;
    const Real f[3] = {-c * m.body_mass[b] * m.gravity[0], -c * m.body_mass[b] * m.gravity[1],
                       -c * m.body_mass[b] * m.gravity[2]};
    Real com[3];
    for (int k = 0; k < 3; ++k) com[k] = d.xipos()[3 * b + k];
    for_each_point_jacobian_column(m, d, b, com, [&](int i, const Real* lin, const Real*) {
      d.qfrc_passive()[i] += lin[0] * f[0] + lin[1] * f[1] + lin[2] * f[2];
    });
  }
}

template <class Real, class L>
SG_HD void passive_forces(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int i = 0; i < m.nv; ++i) d.qfrc_passive()[i] = -m.dof_damping[i] * d.qvel()[i];
  for (int j = 0; j < m.njnt; ++j) {
    const Real k = m.jnt_stiffness[j];
    if (k == Real(0)) continue;
    int pa = m.jnt_qposadr[j];
    int da = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c)
        d.qfrc_passive()[da + c] -= k * (d.qpos()[pa + c] - m.qpos_spring[pa + c]);
      pa += 3;
      da += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      Real q[4], dif[3];
      load4(q, d.qpos(), pa);
      normalize4(q);
      quat_sub(dif, q, m.qpos_spring + pa);
      for (int c = 0; c < 3; ++c) d.qfrc_passive()[da + c] -= k * dif[c];
    } else {
      d.qfrc_passive()[da] -= k * (d.qpos()[pa] - m.qpos_spring[pa]);
    }
  }
  for (int t = 0; t < m.ntendon; ++t) {
    const Real f = -m.tendon_stiffness[t] * (d.ten_length()[t] - m.tendon_lengthspring[t]) -
                   m.tendon_damping[t] * d.ten_velocity()[t];
    if (f == Real(0)) continue;
    for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w)
      d.qfrc_passive()[m.jnt_dofadr[m.wrap_jntid[w]]] += m.wrap_coef[w] * f;
  }
  if (m.gravcomp_any) gravcomp_forces(m, d);
}

}  // namespace stiffgrad::kern
