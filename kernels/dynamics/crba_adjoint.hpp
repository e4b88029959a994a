// Adjoint of the mass matrix as an operator: the derivative of the scalar wᵀ M(q) x with x, w
// held fixed, for steps that apply M⁻¹ to more than the dynamics' own right-hand side (the
// Impulse model's Delassus matrix, kernels/impulse/impulse_step_adjoint.hpp).
//
// M = Σ_b J_bᵀ I_b J_b + armature (kernels/dynamics/crba.hpp), so with the body velocities
// V_b(x) = Σ_{dofs i moving b} cdof_i x_i (base to tip, as com_velocity_base_to_tip):
//   wᵀ M x = Σ_b V_b(w)ᵀ I_b V_b(x) + const,
//   ∂/∂I_b    = the inertia adjoint of I_b V_b(x) against V_b(w)                 (I_b symmetric)
//   ∂/∂cdof_i = x_i F_b(w) + w_i F_b(x),  F_b(x) = Σ_{b' in subtree(b)} I_b' V_b'(x), b = body of dof i.
#pragma once

#include "kernels/dynamics/kinematics_adjoint.hpp"
#include "kernels/base/spatial_adjoint.hpp"

namespace stiffgrad::kern {

// Accumulates ∂(wᵀ M x)/∂cinert into a.cinert and ∂/∂cdof into a.cdof. `scratch`: 24 nbody.
template <class Real, class L>
SG_HD void adj_mass_product(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                            View<Real, L> x, View<Real, L> w, View<Real, L> scratch) {
  const int nb = m.nbody;
  const View<Real, L> Vx = scratch, Vw = scratch.at(6 * nb), Fx = scratch.at(12 * nb), Fw = scratch.at(18 * nb);
  for (int c = 0; c < 6; ++c) Vx[c] = Vw[c] = Fx[c] = Fw[c] = Real(0);
  for (int b = 1; b < nb; ++b) {
    Real vx[6], vw[6], s[6];
    load6(vx, Vx, 6 * m.body_parentid[b]);
    load6(vw, Vw, 6 * m.body_parentid[b]);
    for (int i = m.body_dofadr[b]; i < m.body_dofadr[b] + m.body_dofnum[b]; ++i) {
      load6(s, d.cdof(), 6 * i);
      for (int c = 0; c < 6; ++c) {
        vx[c] += s[c] * x[i];
        vw[c] += s[c] * w[i];
      }
    }
    store6(Vx, 6 * b, vx);
    store6(Vw, 6 * b, vw);
    Real I[10], fx[6], fw[6], adj_I[10] = {}, adj_v[6] = {};
    for (int k = 0; k < 10; ++k) I[k] = d.cinert()[10 * b + k];
    inertia_mul(fx, I, vx);
    inertia_mul(fw, I, vw);
    store6(Fx, 6 * b, fx);
    store6(Fw, 6 * b, fw);
    adj_inertia_mul(I, vx, adj_I, adj_v, vw);
    for (int k = 0; k < 10; ++k) a.cinert()[10 * b + k] += adj_I[k];
  }
  for (int b = nb - 1; b > 0; --b) {
    const int p = m.body_parentid[b];
    if (p > 0)
      for (int c = 0; c < 6; ++c) {
        Fx[6 * p + c] += Fx[6 * b + c];
        Fw[6 * p + c] += Fw[6 * b + c];
      }
  }
  for (int i = 0; i < m.nv; ++i) {
    const int b = m.dof_bodyid[i];
    for (int c = 0; c < 6; ++c) a.cdof()[6 * i + c] += x[i] * Fw[6 * b + c] + w[i] * Fx[6 * b + c];
  }
}

}  // namespace stiffgrad::kern
