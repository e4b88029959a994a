// The contact impulses of the Impulse contact model (Schwarke et al., the model BCG trains with;
// issue 9 part 1; docs/references/bcg-diffmjx-shac.md "Schwarke et al. simulator"): projected
// (proximal) Gauss–Seidel on the velocity-level problem of K point contacts, each with a 3-D
// impulse P_i = (normal, tangent 1, tangent 2) in its contact frame.
//
// Given the Delassus matrix G = J M⁻¹ Jᵀ (3K x 3K, 3 x 3 blocks G_ij), the free contact velocity
// c (3K), friction coefficients mu (K) and the activations σ_i (soft mode, kernels below):
//   start       P_i = −(G_ii + ε I)⁻¹ c_i   (ε = 1e-6 tr G_ii, ours), or 0 for a nearly singular
//               G_ii (ours: impulse_start_is_solve)
//   steps       r_i = 1 / (1 + Σ_j det G_ij) if in (0, 1 / tr G_ii], else 1 / tr G_ii (the fallback
//               is ours); G is constant during the solve, so r_i is computed once, not per sweep
//   per sweep, for i = 0 .. K−1:
//     y   = P_i − r_i (Σ_j w_ij G_ij P_j + c_i),  w_ii = 1, w_ij = σ_j (soft) or 1
//     P_i = proj_μi(y): 0 when y_n ≤ 0, else the tangent clipped to ‖P_t‖ ≤ μ_i P_n
//   output      out_i = σ_i P_i (soft) or P_i.
// The soft activation σ_i = 1 / (1 + exp(−κ d_i)) of the penetration d_i (> 0 penetrating), its
// exponent clamped to [−100, 50]. A fixed number of sweeps (default 10): the result is a
// deterministic function of the inputs and its reverse mode is exact for that computation
// (impulse_solve_adjoint.hpp replays the sweeps backward from the recorded P_i before each update).
//
// Blocks may be 1-D (a joint limit or a dof's friction loss: kernels/impulse/impulse_rows.hpp): the
// block's rows 1 and 2 are empty, so G_ij's rows 1, 2 (i 1-D) and columns 1, 2 (j 1-D) are zero
// but for the unit pad on G_ii's diagonal, and P_i's components 1 and 2 stay zero. `dim` (K, may
// be null: all 3-D) gives each block's width; the residual and its adjoint skip those structural
// zeros, which leaves every result as it was (each skipped term adds an exact zero) at a fraction
// of the cost: the G1's 29 friction-loss blocks outnumber its contacts two to one.
#pragma once

#include "kernels/base/config.hpp"
#include "kernels/base/team.hpp"
#include "kernels/base/view.hpp"

namespace stiffgrad::kern {

template <class Real>
SG_HD SG_INLINE Real impulse_activation(Real depth, Real kappa) {
  Real e = -kappa * depth;
  e = e < Real(-100) ? Real(-100) : (e > Real(50) ? Real(50) : e);
  return Real(1) / (Real(1) + sg_exp(e));
}

// det and the cofactor matrix (= ∂det/∂A) of the 3 x 3 block at A[0], row stride s.
template <class Real, class L>
SG_HD SG_INLINE Real block_det3(View<Real, L> A, int s) {
  return A[0] * (A[s + 1] * A[2 * s + 2] - A[s + 2] * A[2 * s + 1]) -
         A[1] * (A[s] * A[2 * s + 2] - A[s + 2] * A[2 * s]) + A[2] * (A[s] * A[2 * s + 1] - A[s + 1] * A[2 * s]);
}
template <class Real, class L>
SG_HD SG_INLINE void block_cofactor3(View<Real, L> A, int s, Real C[9]) {
  const auto a = [&](int r, int c) { return A[r * s + c]; };
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      C[3 * r + c] = a(r1, c1) * a(r2, c2) - a(r1, c2) * a(r2, c1);
    }
}

// The width of block j: 1 (rows 1 and 2 empty) or 3.
template <class Real, class L>
SG_HD SG_INLINE int impulse_block_dim(View<Real, L> dim, int j) {
  return dim.p ? sg_int(dim[j]) : 3;
}

// tr G_ii.
template <class Real, class L>
SG_HD SG_INLINE Real impulse_block_trace(View<Real, L> G, int n, int i) {
  return G[3 * i * n + 3 * i] + G[(3 * i + 1) * n + 3 * i + 1] + G[(3 * i + 2) * n + 3 * i + 2];
}

// Whether the source's step r is used: it lies in (0, cap].
template <class Real>
SG_HD SG_INLINE bool impulse_step_is_source(Real r, Real cap) {
  return r > Real(0) && r < cap;
}

// The step r_i of contact i: the source's 1 / (1 + Σ_j det G_ij) where it lies in
// (0, 1 / tr G_ii], else 1 / tr G_ii (ours). The fallback is a safeguard: the source's step makes
// the sweeps diverge (a) when a block is ill-conditioned (det G_ii ≈ 0 while G_ii has a large
// eigenvalue: a contact on a limb with fewer than three dofs), because an update contracts only
// while r λ_max(G_ii) < 2, and (b) when off-diagonal determinants, which can be negative, make
// 1 + Σ_j det G_ij negative or tiny: on the G1 at κ = 50 with many contacts from distance, r
// reached −11.6 and the impulses 1.8e5 N s within one substep's ten sweeps.
// `dim` (may be null: all 3-D) skips the blocks G_ij (j ≠ i) with a 1-D side: two of their rows
// or columns are zero, so their determinant is ±0, and adding it leaves the sum (which starts at
// 1 and so is never −0) as it was.
template <class Real, class L>
SG_HD SG_INLINE Real impulse_step(int K, View<Real, L> G, View<Real, L> dim, int i) {
  const int n = 3 * K;
  const bool wide_i = impulse_block_dim(dim, i) == 3;
  Real s(1);
  for (int j = 0; j < K; ++j)
    if (j == i || (wide_i && impulse_block_dim(dim, j) == 3)) s += block_det3(G.at(3 * i * n + 3 * j), n);
  const Real r = Real(1) / s;
  const Real cap = Real(1) / impulse_block_trace(G, n, i);
  return impulse_step_is_source(r, cap) ? r : cap;
}

// out = proj_μ(y): the projection of the source (normal first). A negative mu marks a 1-D
// two-sided block (dof friction loss, kernels/impulse/impulse_rows.hpp): y_0 clipped to [mu, −mu], the
// other two components zero.
template <class Real>
SG_HD SG_INLINE void impulse_project(const Real y[3], Real mu, Real out[3]) {
  if (mu < Real(0)) {
    out[0] = y[0] < mu ? mu : (y[0] > -mu ? -mu : y[0]);
    out[1] = out[2] = Real(0);
    return;
  }
  if (!(y[0] > Real(0))) {
    out[0] = out[1] = out[2] = Real(0);
    return;
  }
  const Real t2 = y[1] * y[1] + y[2] * y[2];
  const Real lim = mu * y[0];
  out[0] = y[0];
  if (t2 <= lim * lim) {
    out[1] = y[1];
    out[2] = y[2];
  } else {
    const Real scale = lim / sg_sqrt(t2);
    out[1] = y[1] * scale;
    out[2] = y[2] * scale;
  }
}

// The weight w_ij of block (i, j) in contact i's residual.
template <class Real, class L>
SG_HD SG_INLINE Real impulse_weight(View<Real, L> sigma, bool soft, int i, int j) {
  return (soft && j != i) ? sigma[j] : Real(1);
}

// contact i's residual Σ_j w_ij G_ij P_j + c_i, summed by a team (kernels/base/team.hpp) in the
// order of its width: SerialTeam{1} (the CPU) sums j = 0, 1, … as a plain loop; a warp
// (WarpTeam) or SerialTeam{32} (a replay of it) sums the lanes' strided partials, then the warp's
// tree. A padded row a of a 1-D block holds only its pad G_ii,aa (w_ii = 1); a 1-D block j
// contributes its column 0 alone. The DI live rows are summed together in one pass over j (DI a
// template argument so that it unrolls): within a block, b = 0, 1, 2 (the first product is the
// block's start), and an unweighted term is added as g, which is what 1·g is.
template <int DI, class Team, class Real, class L>
SG_HD SG_INLINE void impulse_residual_rows(const Team& team, int K, View<Real, L> G, View<Real, L> sigma, bool soft,
                                           View<Real, L> dim, View<Real, L> P, int i, Real s[3]) {
  const int n = 3 * K;
  team.template sum<DI>(K, s, [&](int j, Real* t) {
    const bool wide = impulse_block_dim(dim, j) == 3, weighted = soft && j != i;
    const Real w = weighted ? sigma[j] : Real(1);
    const Real p0 = P[3 * j];
    for (int a = 0; a < DI; ++a) {
      const View<Real, L> row = G.at((3 * i + a) * n + 3 * j);
      Real g = row[0] * p0;
      if (wide) {
        g += row[1] * P[3 * j + 1];
        g += row[2] * P[3 * j + 2];
      }
      t[a] += weighted ? w * g : g;
    }
  });
}
template <class Team, class Real, class L>
SG_HD SG_INLINE void impulse_residual(const Team& team, int K, View<Real, L> G, View<Real, L> c, View<Real, L> sigma,
                                      bool soft, View<Real, L> dim, View<Real, L> P, int i, Real res[3]) {
  const int n = 3 * K, di = impulse_block_dim(dim, i);
  Real s[3] = {c[3 * i], c[3 * i + 1], c[3 * i + 2]};
  for (int a = di; a < 3; ++a) s[a] += G[(3 * i + a) * n + 3 * i + a] * P[3 * i + a];
  if (di == 3) impulse_residual_rows<3>(team, K, G, sigma, soft, dim, P, i, s);
  else impulse_residual_rows<1>(team, K, G, sigma, soft, dim, P, i, s);
  for (int a = 0; a < 3; ++a) res[a] = s[a];
}

// Relative regularization of the starting solve (ours): G_ii can be singular (a contact on a limb
// with fewer than three dofs). 1e-6 rather than smaller: the start's derivative grows as 1/ε
// along a weak direction, and with 1e-10 the dot-product test of the limited chain lost five
// digits to rounding.
constexpr double kImpulseStartReg = 1e-6;

// The regularized diagonal block A = G_ii + ε I, ε = kImpulseStartReg tr G_ii, into A[9].
template <class Real, class L>
SG_HD SG_INLINE void impulse_start_block(View<Real, L> G, int n, int i, Real A[9]) {
  const Real eps = Real(kImpulseStartReg) * impulse_block_trace(G, n, i);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) A[3 * a + b] = G[(3 * i + a) * n + 3 * i + b] + (a == b ? eps : Real(0));
}

// Whether block i starts at −(G_ii + ε I)⁻¹ c_i (the source's start): when it is not nearly
// singular, det G_ii >= 1e-3 (tr G_ii / 3)³; else it starts at zero (ours). A nearly singular
// block (a self contact between links with few relative dofs) turns c_i's component along its
// weak direction into an impulse the unprojected start does not bound and ten sweeps cannot
// undo: on the unactuated G1 at κ = 50 a contact 3 cm away started at 442 N s and the model
// gained energy until it diverged. Foot and body contacts on a floating base measure >= 0.04.
constexpr double kImpulseStartConditioning = 1e-3;
template <class Real, class L>
SG_HD SG_INLINE bool impulse_start_is_solve(View<Real, L> G, int n, int i) {
  const Real t = impulse_block_trace(G, n, i) / Real(3);
  return block_det3(G.at(3 * i * n + 3 * i), n) >= Real(kImpulseStartConditioning) * t * t * t;
}

// x = A⁻¹ b for a 3 x 3 matrix A (row-major), by cofactors (A SPD).
template <class Real>
SG_HD SG_INLINE void block_solve3(Real* A, const Real b[3], Real x[3]) {
  const View<Real, Contiguous> v{A, Contiguous{}};
  Real C[9];
  block_cofactor3(v, 3, C);
  const Real inv_det = Real(1) / block_det3(v, 3);
  // A⁻¹ = Cᵀ / det
  for (int r = 0; r < 3; ++r) x[r] = (C[r] * b[0] + C[3 + r] * b[1] + C[6 + r] * b[2]) * inv_det;
}

// The solve, by a team (kernels/base/team.hpp): the steps, the starts and the output item by
// item (each computed by one lane with a single thread's code), and in each update the residual's
// sum across the lanes (in the team's order); every lane then holds y and the projection, and
// the leader stores P_i. sigma (K) must hold the activations when `soft` (impulse_activation of
// each contact's penetration); dim (K, may be null) the blocks' widths. `step` (K): scratch, left
// holding the steps r_i. `record` (sweeps x 3K, may be null): P_i before each update; it may live
// elsewhere than the rest (LR: the workspace in global memory while the rest is a copy in a
// block's shared memory, kernels/impulse/impulse_step.hpp). Inlined into its one caller per
// kernel, so that nvcc knows which memory each view is in: outlined, the shared-memory copy was
// read through generic loads (PTX `ld` without a state space: 181 of them, 0 `ld.shared`);
// inlined, 294 `ld.shared` (float, sm_90).
template <class Team, class Real, class L, class LR>
SG_HD SG_INLINE void impulse_solve(const Team& team, int K, View<Real, L> G, View<Real, L> c,
                                   View<Real, L> mu, View<Real, L> sigma, bool soft,
                                   View<Real, L> dim, int sweeps, View<Real, L> step,
                                   View<Real, L> P, View<Real, L> out, View<Real, LR> record) {
  const int n = 3 * K;
  team.for_each(K, [&](int i) {
    step[i] = impulse_step(K, G, dim, i);
    const Real ci[3] = {-c[3 * i], -c[3 * i + 1], -c[3 * i + 2]};
    Real A[9], p[3] = {Real(0), Real(0), Real(0)};
    impulse_start_block(G, n, i, A);
    if (impulse_start_is_solve(G, n, i)) block_solve3(A, ci, p);
    for (int a = 0; a < 3; ++a) P[3 * i + a] = p[a];
  });
  team.sync();
  for (int s = 0; s < sweeps; ++s)
    for (int i = 0; i < K; ++i) {
      const Real r = step[i];
      Real res[3], y[3], p[3];
      impulse_residual(team, K, G, c, sigma, soft, dim, P, i, res);
      for (int a = 0; a < 3; ++a) y[a] = P[3 * i + a] - r * res[a];
      impulse_project(y, mu[i], p);
      if (team.leader()) {
        if (record.p)
          for (int a = 0; a < 3; ++a) record[s * n + 3 * i + a] = P[3 * i + a];
        for (int a = 0; a < 3; ++a) P[3 * i + a] = p[a];
      }
      team.sync();  // the next update reads P_i on every lane
    }
  team.for_each(K, [&](int i) {
    for (int a = 0; a < 3; ++a) out[3 * i + a] = soft ? sigma[i] * P[3 * i + a] : P[3 * i + a];
  });
  team.sync();
}

}  // namespace stiffgrad::kern
