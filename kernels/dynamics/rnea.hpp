// Recursive Newton-Euler (RBDA Table 5.1) with spatial quantities in world axes about each
// tree's centre of mass (kernels/dynamics/kinematics.hpp), as in MuJoCo's mj_rne:
//   base to tip:  v_b = v_parent + S qdot,  a_b = a_parent + S qddot + Sdot qdot,
//                 with a_world = -gravity (gravity as a fictitious base acceleration);
//   per body:     f_b = I_b a_b + v_b x* (I_b v_b);
//   tip to base:  f_parent += f_b;  tau_i = S_i . f_body(i).
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/spatial.hpp"

namespace stiffgrad::kern {

// Body velocities cvel and the dof derivatives cdof_dot = v x cdof, where v is the velocity
// of the body accumulated up to (excluding) the dof's joint; a free joint's translations do
// not rotate with the body, so their derivative is zero (as in MuJoCo's mj_comVel).
template <class Real, class L>
SG_HD void com_velocity_base_to_tip(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int k = 0; k < 6; ++k) d.cvel()[k] = Real(0);
  for (int b = 1; b < m.nbody; ++b) {
    Real v[6], s[6], sd[6];
    load6(v, d.cvel(), 6 * m.body_parentid[b]);
    for (int k = 0; k < m.body_jntnum[b]; ++k) {
      const int j = m.body_jntadr[b] + k;
      int da = m.jnt_dofadr[j];
      const int type = m.jnt_type[j];
      if (type == kJntFree) {
        const Real z[6] = {Real(0), Real(0), Real(0), Real(0), Real(0), Real(0)};
        for (int i = 0; i < 3; ++i) {
          store6(d.cdof_dot(), 6 * (da + i), z);
          load6(s, d.cdof(), 6 * (da + i));
          for (int c = 0; c < 6; ++c) v[c] += s[c] * d.qvel()[da + i];
        }
        da += 3;
      }
      if (type == kJntFree || type == kJntBall) {
        for (int i = 0; i < 3; ++i) {
          load6(s, d.cdof(), 6 * (da + i));
          cross_motion(sd, v, s);
          store6(d.cdof_dot(), 6 * (da + i), sd);
        }
        for (int i = 0; i < 3; ++i) {
          load6(s, d.cdof(), 6 * (da + i));
          for (int c = 0; c < 6; ++c) v[c] += s[c] * d.qvel()[da + i];
        }
      } else {
        load6(s, d.cdof(), 6 * da);
        cross_motion(sd, v, s);
        store6(d.cdof_dot(), 6 * da, sd);
        for (int c = 0; c < 6; ++c) v[c] += s[c] * d.qvel()[da];
      }
    }
    store6(d.cvel(), 6 * b, v);
  }
}

// Inverse dynamics tau = M(q) qacc + c(q, qvel) into `tau` (nv). With use_qacc false the
// accelerations are zero and tau is the bias force c (MuJoCo's qfrc_bias). Needs
// fwd_kinematics, com_inertia_and_dofs and com_velocity_base_to_tip first.
// rnea at the accelerations `qacc` (nv; d.qacc in the overload below).
template <class Real, class L>
SG_HD void rnea(const ModelView<Real>& m, const Data<Real, L>& d, bool use_qacc, View<Real, L> qacc,
                View<Real, L> tau) {
  d.cacc()[0] = d.cacc()[1] = d.cacc()[2] = Real(0);
  d.cacc()[3] = -m.gravity[0];
  d.cacc()[4] = -m.gravity[1];
  d.cacc()[5] = -m.gravity[2];
  for (int b = 1; b < m.nbody; ++b) {
    Real a[6], s[6];
    load6(a, d.cacc(), 6 * m.body_parentid[b]);
    const int da = m.body_dofadr[b];
    for (int i = da; i < da + m.body_dofnum[b]; ++i) {
      load6(s, d.cdof_dot(), 6 * i);
      for (int c = 0; c < 6; ++c) a[c] += s[c] * d.qvel()[i];
      if (use_qacc) {
        load6(s, d.cdof(), 6 * i);
        for (int c = 0; c < 6; ++c) a[c] += s[c] * qacc[i];
      }
    }
    store6(d.cacc(), 6 * b, a);
    Real I[10], v[6], Ia[6], Iv[6], vxIv[6];
    for (int k = 0; k < 10; ++k) I[k] = d.cinert()[10 * b + k];
    load6(v, d.cvel(), 6 * b);
    inertia_mul(Ia, I, a);
    inertia_mul(Iv, I, v);
    cross_force(vxIv, v, Iv);
    for (int c = 0; c < 6; ++c) Ia[c] += vxIv[c];
    store6(d.cfrc(), 6 * b, Ia);
  }
  for (int b = m.nbody - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    if (p > 0)
      for (int c = 0; c < 6; ++c) d.cfrc()[6 * p + c] += d.cfrc()[6 * b + c];
  }
  for (int i = 0; i < m.nv; ++i) {
    Real s[6], f[6];
    load6(s, d.cdof(), 6 * i);
    load6(f, d.cfrc(), 6 * m.dof_bodyid[i]);
    tau[i] = dot6(s, f);
  }
}

template <class Real, class L>
SG_HD void rnea(const ModelView<Real>& m, const Data<Real, L>& d, bool use_qacc, View<Real, L> tau) {
  rnea(m, d, use_qacc, d.qacc(), tau);
}

}  // namespace stiffgrad::kern
