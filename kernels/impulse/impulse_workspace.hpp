// Per-environment scratch of the Impulse contact model's substep (kernels/impulse/impulse_step.hpp), in
// Reals, and its carving into fields. Kept apart from the step so that DataLayout can size it.
// With nb = nefc_max / 3 blocks of three rows (contacts; limits and friction loss padded) and
// n = nefc_max rows:
//   G        n x n   Delassus matrix J M̃⁻¹ Jᵀ (M̃ = M + h D), packed with the live row count
//   Y        n x nv  M̃⁻¹ J_rᵀ, one row per constraint row
//   c        n       free velocity J (v + h M̃⁻¹ τ)
//   mu       nb      friction (contacts), 0 (limits), −h f (friction loss: a box)
//   sigma    nb      soft activation σ(κ d) (contacts), 1 otherwise
//   dim      nb      block width: 3 (contacts) or 1 (limits, friction loss: rows 1, 2 empty)
//   step     nb      the Gauss–Seidel steps r_i (kernels/impulse/impulse_solve.hpp)
//   P, out   n, n    the Gauss–Seidel iterate; the impulses applied (σ P)
//   record   sweeps x n   P_i before each update (the reverse mode's replay)
//   q0, qmid nq, nq  the substep's start and midpoint positions
//   v0, v1   nv, nv  the start and end velocities
//   bodies   24 nbody  spatial scratch of the mass-matrix product's adjoint (kernels/dynamics/crba_adjoint.hpp)
// The adjoint buffer has the same layout: its copy holds the adjoints of G, Y, c, mu, sigma, P
// (then out's adjoint), in step which of the steps' two formulas each took, and the same scratch.
#pragma once

#include "kernels/base/view.hpp"

namespace stiffgrad::kern {

// Rows per block: a contact's three, or a 1-D block padded to three (core/constraint_capacity.cpp
// sizes the rows in whole blocks).
constexpr int kImpulseBlockRows = 3;

// The working set of the solve stage (impulse_substep_solve, kernels/impulse/impulse_step.hpp) for
// n live rows: what the Delassus assembly and the sweeps read and write, n x n + n x nv + 3 n + 4 n
// / 3 Reals. Either the workspace's own fields (impulse_solve_set_in_place: G packed with stride n
// in its first n² Reals, Y's first n rows), or a packed copy in faster memory (packed: a warp's
// share of a block's shared memory on the GPU), in the same order, so that a flat copy of each
// field moves it.
SG_HD SG_INLINE constexpr int impulse_solve_set_size(int n, int nv) {
  return n * n + n * nv + n + 4 * (n / 3) + 2 * n;
}

template <class Real, class L>
struct ImpulseSolveSet {
  View<Real, L> G, Y, c, mu, sigma, dim, step, P, out;

  static SG_HD SG_INLINE ImpulseSolveSet packed(View<Real, L> base, int n, int nv) {
    const int nb = n / 3;
    ImpulseSolveSet s;
    int o = 0;
    auto take = [&](int k) {
      const View<Real, L> v = base.at(o);
      o += k;
      return v;
    };
    s.G = take(n * n);
    s.Y = take(n * nv);
    s.c = take(n);
    s.mu = take(nb);
    s.sigma = take(nb);
    s.dim = take(nb);
    s.step = take(nb);
    s.P = take(n);
    s.out = take(n);
    return s;
  }
};

// The workspace starts with the solve stage's working set at the row capacity (the same carving
// as a packed copy's), then the sweeps' record and the substep's state and scratch.
SG_HD SG_INLINE constexpr int impulse_workspace_size(int nq, int nv, int nbody, int nefc_max,
                                                     int sweeps) {
  return impulse_solve_set_size(nefc_max, nv) + sweeps * nefc_max + 2 * nq + 2 * nv + 24 * nbody;
}

template <class Real, class L>
struct ImpulseWorkspace {
  View<Real, L> G, Y, c, mu, sigma, dim, step, P, out, record, q0, qmid, v0, v1, bodies;

  static SG_HD ImpulseWorkspace bind(View<Real, L> base, int nq, int nv, int nbody, int nefc_max,
                                     int sweeps) {
    const ImpulseSolveSet<Real, L> s = ImpulseSolveSet<Real, L>::packed(base, nefc_max, nv);
    ImpulseWorkspace w;
    w.G = s.G;
    w.Y = s.Y;
    w.c = s.c;
    w.mu = s.mu;
    w.sigma = s.sigma;
    w.dim = s.dim;
    w.step = s.step;
    w.P = s.P;
    w.out = s.out;
    int o = impulse_solve_set_size(nefc_max, nv);
    auto take = [&](int k) {
      const View<Real, L> v = base.at(o);
      o += k;
      return v;
    };
    w.record = take(sweeps * nefc_max);
    w.q0 = take(nq);
    w.qmid = take(nq);
    w.v0 = take(nv);
    w.v1 = take(nv);
    w.bodies = take(24 * nbody);
    return w;
  }
};

template <class Real, class L>
SG_HD SG_INLINE ImpulseSolveSet<Real, L> impulse_solve_set_in_place(
    const ImpulseWorkspace<Real, L>& w) {
  return ImpulseSolveSet<Real, L>{w.G, w.Y, w.c, w.mu, w.sigma, w.dim, w.step, w.P, w.out};
}

}  // namespace stiffgrad::kern
