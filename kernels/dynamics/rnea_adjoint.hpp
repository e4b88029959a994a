// Adjoints of kernels/dynamics/rnea.hpp: the vector-Jacobian products of inverse dynamics
// tau = RNEA(q, qdot, qddot) (Carpentier & Mansard 2018 compute the same products by a
// dedicated sweep; here they come from reversing our own RNEA stage by stage).
#pragma once

#include "kernels/dynamics/kinematics_adjoint.hpp"
#include "kernels/dynamics/rnea.hpp"

namespace stiffgrad::kern {

// Adjoint of com_velocity_base_to_tip: cvel and cdof_dot adjoints -> cdof and qvel adjoints.
// Bodies tip to base; inside a body the joints are undone in reverse, recomputing the
// velocity accumulated before each joint from the parent's.
template <class Real, class L>
SG_HD void adj_com_velocity_base_to_tip(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  for (int b = m.nbody - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    Real adj_v[6];
    load6(adj_v, a.cvel(), 6 * b);
    const int j0 = m.body_jntadr[b], nj = m.body_jntnum[b];
    for (int k = nj - 1; k >= 0; --k) {
      const int j = j0 + k;
      // velocity before joint j
      Real v[6], s[6];
      load6(v, d.cvel(), 6 * p);
      for (int i = m.body_dofadr[b]; i < m.jnt_dofadr[j]; ++i) {
        load6(s, d.cdof(), 6 * i);
        for (int c = 0; c < 6; ++c) v[c] += s[c] * d.qvel()[i];
      }
      int da = m.jnt_dofadr[j];
      const int type = m.jnt_type[j];
      // the velocity after the free joint's translations, used by its rotations
      Real v_rot[6];
      for (int c = 0; c < 6; ++c) v_rot[c] = v[c];
      if (type == kJntFree)
        for (int i = 0; i < 3; ++i) {
          load6(s, d.cdof(), 6 * (da + i));
          for (int c = 0; c < 6; ++c) v_rot[c] += s[c] * d.qvel()[da + i];
        }
      const int rot0 = type == kJntFree ? da + 3 : da;
      const int nrot = (type == kJntFree || type == kJntBall) ? 3 : 1;
      // v_after = v_rot + sum S qdot over the rotational (or single) dofs
      Real adj_vrot[6];
      for (int c = 0; c < 6; ++c) adj_vrot[c] = adj_v[c];
      for (int i = rot0; i < rot0 + nrot; ++i) {
        load6(s, d.cdof(), 6 * i);
        Real adj_s[6];
        for (int c = 0; c < 6; ++c) adj_s[c] = adj_v[c] * d.qvel()[i];
        a.qvel()[i] += dot6(adj_v, s);
        // cdof_dot_i = v_rot x S_i
        Real adj_sd[6], adj_vr[6] = {};
        load6(adj_sd, a.cdof_dot(), 6 * i);
        adj_cross_motion(v_rot, s, adj_vr, adj_s, adj_sd);
        for (int c = 0; c < 6; ++c) adj_vrot[c] += adj_vr[c];
        accumulate(a.cdof(), 6 * i, adj_s, 6);
      }
      // free translations: v_rot = v + sum S qdot, cdof_dot = 0 (constant)
      for (int c = 0; c < 6; ++c) adj_v[c] = adj_vrot[c];
      if (type == kJntFree)
        for (int i = da; i < da + 3; ++i) {
          load6(s, d.cdof(), 6 * i);
          a.qvel()[i] += dot6(adj_v, s);
          Real adj_s[6];
          for (int c = 0; c < 6; ++c) adj_s[c] = adj_v[c] * d.qvel()[i];
          accumulate(a.cdof(), 6 * i, adj_s, 6);
        }
    }
    accumulate(a.cvel(), 6 * p, adj_v, 6);
  }
}

// Adjoint of rnea(m, d, use_qacc = true, tau): tau adjoint -> cdof, cdof_dot, cinert, cvel,
// qvel adjoints (qacc is held fixed: callers differentiate through the implicit equation
// M qacc + c = f at fixed qacc). `d` must hold cacc and cfrc from that rnea call.
template <class Real, class L>
SG_HD SG_OUTLINE void adj_rnea(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                               View<Real, L> qacc, View<Real, L> adj_tau) {
  // adjoints of the accumulated body forces
  for (int k = 0; k < 6 * m.nbody; ++k) a.cfrc()[k] = Real(0);
  for (int i = 0; i < m.nv; ++i) {
    Real s[6], f[6];
    load6(s, d.cdof(), 6 * i);
    load6(f, d.cfrc(), 6 * m.dof_bodyid[i]);
    const Real g = adj_tau[i];
    for (int c = 0; c < 6; ++c) {
      a.cdof()[6 * i + c] += g * f[c];
      a.cfrc()[6 * m.dof_bodyid[i] + c] += g * s[c];
    }
  }
  // accumulation tip to base  =>  adjoints flow base to tip
  for (int b = 1; b < m.nbody; ++b) {
    const int p = m.body_parentid[b];
    if (p > 0)
      for (int c = 0; c < 6; ++c) a.cfrc()[6 * b + c] += a.cfrc()[6 * p + c];
  }
  // per body f = I acc + v x* (I v), then acc = acc_parent + sum (Sdot qdot + S qddot)
  for (int k = 0; k < 6 * m.nbody; ++k) a.cacc()[k] = Real(0);
  for (int b = m.nbody - 1; b > 0; --b) {
    Real I[10], acc[6], v[6], Iv[6], adj_f[6];
    for (int k = 0; k < 10; ++k) I[k] = d.cinert()[10 * b + k];
    load6(acc, d.cacc(), 6 * b);
    load6(v, d.cvel(), 6 * b);
    load6(adj_f, a.cfrc(), 6 * b);
    inertia_mul(Iv, I, v);
    Real adj_I[10] = {}, adj_acc[6] = {}, adj_v[6] = {}, adj_Iv[6] = {};
    adj_inertia_mul(I, acc, adj_I, adj_acc, adj_f);
    adj_cross_force(v, Iv, adj_v, adj_Iv, adj_f);
    adj_inertia_mul(I, v, adj_I, adj_v, adj_Iv);
    for (int k = 0; k < 10; ++k) a.cinert()[10 * b + k] += adj_I[k];
    accumulate(a.cvel(), 6 * b, adj_v, 6);
    for (int c = 0; c < 6; ++c) adj_acc[c] += a.cacc()[6 * b + c];
    const int da = m.body_dofadr[b];
    for (int i = da; i < da + m.body_dofnum[b]; ++i) {
      Real sd[6];
      load6(sd, d.cdof_dot(), 6 * i);
      a.qvel()[i] += dot6(adj_acc, sd);
      for (int c = 0; c < 6; ++c) {
        a.cdof_dot()[6 * i + c] += adj_acc[c] * d.qvel()[i];
        a.cdof()[6 * i + c] += adj_acc[c] * qacc[i];
      }
    }
    const int p = m.body_parentid[b];
    accumulate(a.cacc(), 6 * p, adj_acc, 6);
  }
}

// adj_rnea at d.qacc.
template <class Real, class L>
SG_HD void adj_rnea(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                    View<Real, L> adj_tau) {
  adj_rnea(m, d, a, d.qacc(), adj_tau);
}

}  // namespace stiffgrad::kern
