// One branch's perturbation for Bundled Contact Gradients (issue 9; docs/references/
// bcg-diffmjx-shac.md "BCG"): Cartesian noise on the bodies that carry the triggering contacts,
// mapped to generalized coordinates.
//
// Our reading of the paper (it states σp = 1 cm, σv = 2 cm/s and a damped pseudoinverse with
// λ_J = 1e-4, not the exact construction): for the K bodies b_1..b_K, draw δx ~ N(0, σp² I) and
// δẋ ~ N(0, σv² I) in R^{3K} (the bodies' origins, world axes), stack their translational point
// Jacobians J (3K x nv, MuJoCo's mj_jac at xpos[b_k]) and set
//   δq = Jᵀ (J Jᵀ + λ I)⁻¹ δx,    δv = Jᵀ (J Jᵀ + λ I)⁻¹ δẋ,
// the minimum-norm (damped) generalized displacement that moves the bodies by δx; then
// qpos ← integrate_pos(qpos, δq, 1) (on the manifold for free and ball joints), qvel += δv.
// The random numbers come from the branch's own counter-based stream (kernels/base/random.hpp,
// keyed by (seed, env, step, branch)), so a replay draws them again bit for bit. The
// perturbation is a constant for the adjoint (the rule): it has no adj_ twin.
#pragma once

#include "kernels/constraint/constraint_rows.hpp"
#include "kernels/integrators/integrate.hpp"
#include "kernels/base/random.hpp"
#include "kernels/constraint/solver.hpp"

namespace stiffgrad::kern {

constexpr int kBundleMaxBodies = 8;  // bodies perturbed per branch, at most

// Reals of scratch bundle_perturbation needs: the 6 x nv point Jacobian, the 3K x nv stack, and
// the 3K x 3K matrix J Jᵀ + λ I with a right-hand side of 3K (K = kBundleMaxBodies; in the
// scratch, not in a local array: on a GPU thread those 4.6 KB would be stack).
template <class Real>
SG_HD SG_INLINE int bundle_perturbation_scratch_size(const ModelView<Real>& m) {
  constexpr int n = 3 * kBundleMaxBodies;
  return 6 * m.nv + n * m.nv + n * n + n;
}

// δq (nv) and δv (nv) for bodies[0..K) (K clamped to kBundleMaxBodies), needing fwd_position
// (xpos, cdof, subtree_com) in d. `scratch`: bundle_perturbation_scratch_size Reals.
template <class Real, class L>
SG_HD void bundle_perturbation(const ModelView<Real>& m, const Data<Real, L>& d, const int* bodies, int K,
                               Real sigma_p, Real sigma_v, Real lambda, const RandomStream& stream,
                               View<Real, L> scratch, View<Real, L> dq, View<Real, L> dv) {
  const int nv = m.nv;
  if (K > kBundleMaxBodies) K = kBundleMaxBodies;
  for (int i = 0; i < nv; ++i) { dq[i] = Real(0); dv[i] = Real(0); }
  if (K <= 0) return;
  const int n = 3 * K;
  constexpr int n_max = 3 * kBundleMaxBodies;
  const View<Real, L> jac = scratch, Js = scratch.at(6 * nv), A = scratch.at(6 * nv + n_max * nv),
                      y = scratch.at(6 * nv + n_max * nv + n_max * n_max);
  for (int k = 0; k < K; ++k) {
    for (int i = 0; i < 6 * nv; ++i) jac[i] = Real(0);
    const int b = bodies[k];
    Real point[3];
    for (int c = 0; c < 3; ++c) point[c] = d.xpos()[3 * b + c];
    add_point_jacobian(m, d, b, point, Real(1), jac);
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < nv; ++i) Js[(3 * k + r) * nv + i] = jac[r * nv + i];
  }
  // A = J Jᵀ + λ I (n x n, n <= 24, lower triangle), its Cholesky factor in place
  for (int r = 0; r < n; ++r)
    for (int c = 0; c <= r; ++c) {
      Real s(0);
      for (int i = 0; i < nv; ++i) s += Js[r * nv + i] * Js[c * nv + i];
      A[r * n + c] = s + (r == c ? lambda : Real(0));
    }
  dense_cholesky(n, A);
  // the Cartesian draws: positions from draws 0.., velocities after them
  double z[6 * kBundleMaxBodies];
  stream.normals(2 * n, z);
  for (int pass = 0; pass < 2; ++pass) {
    const Real sigma = pass == 0 ? sigma_p : sigma_v;
    for (int r = 0; r < n; ++r) y[r] = sigma * Real(z[pass * n + r]);
    dense_cholesky_solve(n, A, y);  // (J Jᵀ + λ I) y = δx
    const View<Real, L> out = pass == 0 ? dq : dv;
    for (int i = 0; i < nv; ++i) {
      Real s(0);
      for (int r = 0; r < n; ++r) s += Js[r * nv + i] * y[r];
      out[i] = s;
    }
  }
}

// Applies a perturbation: qpos ← integrate_pos(qpos, δq, 1), qvel += δv.
template <class Real, class L>
SG_HD void apply_bundle_perturbation(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, L> dq,
                                     View<Real, L> dv) {
  integrate_pos(m, d.qpos(), dq, Real(1));
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] += dv[i];
}

}  // namespace stiffgrad::kern
