// Reverse mode of impulse_solve (kernels/impulse/impulse_solve.hpp) through its unrolled sweeps: exact
// for the computation (the projection's branch at each update is held, as the forward took it).
// The sweeps are walked backward from the final P, restoring each P_i from the record before
// undoing its update, so every update's adjoint sees the P vector its primal saw.
#pragma once

#include "kernels/impulse/impulse_solve.hpp"

namespace stiffgrad::kern {

// Adjoint of impulse_project at y: out_bar -> y_bar (overwritten), mu_bar (accumulated).
template <class Real>
SG_HD SG_INLINE void adj_impulse_project(const Real y[3], Real mu, const Real out_bar[3], Real y_bar[3], Real* mu_bar) {
  y_bar[0] = y_bar[1] = y_bar[2] = Real(0);
  if (mu < Real(0)) {  // the box [mu, −mu] on y_0
    if (y[0] < mu) *mu_bar += out_bar[0];
    else if (y[0] > -mu) *mu_bar -= out_bar[0];
    else y_bar[0] = out_bar[0];
    return;
  }
  if (!(y[0] > Real(0))) return;
  const Real t2 = y[1] * y[1] + y[2] * y[2];
  const Real lim = mu * y[0];
  if (t2 <= lim * lim) {
    for (int a = 0; a < 3; ++a) y_bar[a] = out_bar[a];
    return;
  }
  // out_t = lim ŷ_t, ŷ_t = y_t / t
  const Real t = sg_sqrt(t2);
  const Real u1 = y[1] / t, u2 = y[2] / t;
  const Real ou = out_bar[1] * u1 + out_bar[2] * u2;
  y_bar[0] = out_bar[0] + mu * ou;
  *mu_bar += y[0] * ou;
  y_bar[1] = lim * (out_bar[1] - u1 * ou) / t;
  y_bar[2] = lim * (out_bar[2] - u2 * ou) / t;
}

// The adjoint of block (i, j)'s term w G_ij P_j in contact i's residual, for its live DI x DJ
// corner (G_ij at G[gi], row stride n; P_j at P[pj]): accumulates G_bar and P_bar and returns
// res_barᵀ G_ij P_j (σ_j's adjoint, summed only when `weighted`). The widths are template
// arguments so that the loops unroll; every sum runs in the order of the plain double loop over
// (a, b) (and w res_bar[a] is the product that (w res_bar[a]) P_j,b evaluates first), so the
// result is bit for bit that loop's.
template <int DI, int DJ, class Real, class L>
SG_HD SG_INLINE Real adj_impulse_block(View<Real, L> G, int gi, int n, const Real res_bar[3], Real w, View<Real, L> P,
                                       int pj, bool weighted, View<Real, L> G_bar, View<Real, L> P_bar) {
  Real gp(0);
  for (int a = 0; a < DI; ++a) {
    const Real wr = w * res_bar[a];
    for (int b = 0; b < DJ; ++b) {
      const int g = gi + a * n + b;
      const Real Gg = G[g], p = P[pj + b];
      if (weighted) gp += res_bar[a] * Gg * p;
      G_bar[g] += wr * p;
      P_bar[pj + b] += w * Gg * res_bar[a];
    }
  }
  return gp;
}

// Given the forward's inputs, its final P and record, and out_bar (3K), accumulates
// G_bar (3K x 3K), c_bar (3K), mu_bar (K), sigma_bar (K). P is used as scratch (left at the
// start value); P_bar (3K), step and source (K each) are workspace. The structural zeros of
// 1-D blocks (`dim`, as in impulse_residual) are skipped: their terms are exact zeros, so every
// live adjoint is bit for bit the one of the loop that visits them, in the same order. `team`
// recomputes each update's residual in the forward's summation order (SerialTeam{W} with the
// forward team's width W: m.team_width), so that y, hence the projection's branch, is the
// forward's bit for bit.
template <class Real, class L>
SG_HD SG_OUTLINE void adj_impulse_solve(const SerialTeam& team, int K, View<Real, L> G, View<Real, L> c,
                                        View<Real, L> mu, View<Real, L> sigma, bool soft, View<Real, L> dim, int sweeps,
                                        View<Real, L> P, View<Real, L> record, View<Real, L> out_bar,
                                        View<Real, L> G_bar, View<Real, L> c_bar, View<Real, L> mu_bar,
                                        View<Real, L> sigma_bar, View<Real, L> P_bar, View<Real, L> step,
                                        View<Real, L> source) {
  const int n = 3 * K;
  // out_i = σ_i P_i (soft) or P_i. The steps r_i (and which of the two formulas each took) are
  // those of every sweep: G is constant. impulse_step returns the cap 1 / tr G_ii itself unless
  // the source's step lies strictly below it, so the step tells which formula it is.
  for (int i = 0; i < K; ++i) {
    step[i] = impulse_step(K, G, dim, i);
    source[i] = step[i] != Real(1) / impulse_block_trace(G, n, i) ? Real(1) : Real(0);
    for (int a = 0; a < 3; ++a) {
      const Real ob = out_bar[3 * i + a];
      P_bar[3 * i + a] = soft ? sigma[i] * ob : ob;
      if (soft) sigma_bar[i] += ob * P[3 * i + a];
    }
  }
  for (int s = sweeps - 1; s >= 0; --s)
    for (int i = K - 1; i >= 0; --i) {
      for (int a = 0; a < 3; ++a) P[3 * i + a] = record[s * n + 3 * i + a];  // the P this update saw
      const Real r = step[i];
      const int di = impulse_block_dim(dim, i);
      Real res[3], y[3];
      impulse_residual(team, K, G, c, sigma, soft, dim, P, i, res);
      for (int a = 0; a < 3; ++a) y[a] = P[3 * i + a] - r * res[a];
      const Real pb[3] = {P_bar[3 * i], P_bar[3 * i + 1], P_bar[3 * i + 2]};
      Real yb[3];
      adj_impulse_project(y, mu[i], pb, yb, &mu_bar[i]);
      // y = P_i − r res: P_i's adjoint restarts from ȳ (its new value was consumed)
      Real res_bar[3];
      Real r_bar(0);
      for (int a = 0; a < 3; ++a) {
        P_bar[3 * i + a] = yb[a];
        res_bar[a] = -r * yb[a];
        r_bar -= yb[a] * res[a];
      }
      // res = Σ_j w_ij G_ij P_j + c_i; a padded row of a 1-D block holds its pad alone
      for (int a = 0; a < 3; ++a) c_bar[3 * i + a] += res_bar[a];
      for (int a = di; a < 3; ++a) {
        const int gi = (3 * i + a) * n + 3 * i + a;
        G_bar[gi] += res_bar[a] * P[3 * i + a];
        P_bar[3 * i + a] += G[gi] * res_bar[a];
      }
      for (int j = 0; j < K; ++j) {
        const Real w = impulse_weight(sigma, soft, i, j);
        const int dj = impulse_block_dim(dim, j), gi = 3 * i * n + 3 * j;
        const bool weighted = soft && j != i;
        Real gp;
        if (di == 3) gp = dj == 3 ? adj_impulse_block<3, 3>(G, gi, n, res_bar, w, P, 3 * j, weighted, G_bar, P_bar)
                                  : adj_impulse_block<3, 1>(G, gi, n, res_bar, w, P, 3 * j, weighted, G_bar, P_bar);
        else gp = dj == 3 ? adj_impulse_block<1, 3>(G, gi, n, res_bar, w, P, 3 * j, weighted, G_bar, P_bar)
                          : adj_impulse_block<1, 1>(G, gi, n, res_bar, w, P, 3 * j, weighted, G_bar, P_bar);
        if (weighted) sigma_bar[j] += gp;
      }
      // r = 1 / (1 + Σ_j det G_ij): ∂r/∂G_ij = −r² cof(G_ij); or the cap r = 1 / tr G_ii. A block
      // G_ij (j ≠ i) with a 1-D side has two zero rows or columns: all its cofactors are zero.
      if (source[i] != Real(0)) {
        const Real det_bar = -r * r * r_bar;
        for (int j = 0; j < K; ++j) {
          if (j != i && (di < 3 || impulse_block_dim(dim, j) < 3)) continue;
          Real C[9];
          block_cofactor3(G.at(3 * i * n + 3 * j), n, C);
          for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) G_bar[(3 * i + a) * n + 3 * j + b] += det_bar * C[3 * a + b];
        }
      } else {
        for (int a = 0; a < 3; ++a) G_bar[(3 * i + a) * n + 3 * i + a] -= r * r * r_bar;
      }
    }
  // start: P_i = −A⁻¹ c_i, A = G_ii + ε tr(G_ii) I (P holds it again), or 0: with z = A⁻ᵀ P̄_i,
  // c̄_i −= z, Ā = −z P_iᵀ -> Ḡ_ii += Ā + ε tr(Ā) I
  for (int i = 0; i < K; ++i) {
    if (!impulse_start_is_solve(G, n, i)) continue;  // started at zero: a constant
    Real A[9], At[9];
    impulse_start_block(G, n, i, A);
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) At[3 * a + b] = A[3 * b + a];
    const Real pb[3] = {P_bar[3 * i], P_bar[3 * i + 1], P_bar[3 * i + 2]};
    Real z[3];
    block_solve3(At, pb, z);
    Real tr_bar(0);
    for (int a = 0; a < 3; ++a) {
      c_bar[3 * i + a] -= z[a];
      for (int b = 0; b < 3; ++b) G_bar[(3 * i + a) * n + 3 * i + b] -= z[a] * P[3 * i + b];
      tr_bar -= z[a] * P[3 * i + a];
    }
    for (int a = 0; a < 3; ++a) G_bar[(3 * i + a) * n + 3 * i + a] += Real(kImpulseStartReg) * tr_bar;
  }
}

// σ = impulse_activation(d, κ): d_bar += σ(1 − σ) κ σ_bar inside the exponent's clamp, else 0.
template <class Real>
SG_HD SG_INLINE Real adj_impulse_activation(Real depth, Real kappa, Real sigma_bar) {
  const Real e = -kappa * depth;
  if (e < Real(-100) || e > Real(50)) return Real(0);
  const Real s = impulse_activation(depth, kappa);
  return s * (Real(1) - s) * kappa * sigma_bar;
}

}  // namespace stiffgrad::kern
