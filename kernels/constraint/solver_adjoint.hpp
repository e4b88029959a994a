// Reverse mode of the constraint solve (kernels/constraint/solver.hpp) by implicit differentiation at the
// solution (docs/architecture.md "Constraints"; docs/references/mujoco-2.2.2-constraints.md §5). No solver
// iteration is stored or replayed.
//
// The solve returns a = argmin ½(a − a_s)ᵀM(a − a_s) + Σ_i s_i(J_i a − aref_i) and the row forces
// f = −∂s/∂jar at jar = J a − aref. Its optimality condition is
//
//   g(a; θ) = M a − qfrc_smooth − Jᵀ f(J a − aref; D, R) = 0      (M a_s = qfrc_smooth),
//
// whose Jacobian in a is H = ∂g/∂a = M + Jᵀ C J with C = −∂f/∂jar = ∇²s, block diagonal (one
// scalar per row, one dim x dim block per elliptic contact) — the Newton Hessian on the final
// active set and cone zones, newton_hessian_at_solution. For a loss with adjoints ā (of a) and
// f̄ (of f), with θ = (qfrc_smooth, J, aref, D, R):
//
//   1. f̄ first: df = (∂f/∂jar)(J da + dJ a − daref) + (∂f/∂D) dD, so the a-part of f̄ is
//      Jᵀ jar̄ with jar̄ = (∂f/∂jar)ᵀ f̄:   ā_tot = ā + Jᵀ jar̄.
//   2. λ = H⁻¹ ā_tot (H symmetric).
//   3. θ̄ = −(∂g/∂θ)ᵀ λ + the direct f̄ terms. With u = f̄ + J λ and y = (∂f/∂jar)ᵀ u:
//        qfrc_smooth̄ += λ                       (∂g/∂qfrc_smooth = −I)
//        J̄_i        += f_i λ + y_i a            (dg = −dJᵀ f − Jᵀ (∂f/∂jar) dJ a)
//        aref̄_i     −= y_i
//        D̄_i        += Σ_j (∂f_j/∂D_i) u_j
//        R̄          += 0                        (see below)
//   The M-dependence of g (dg = dM a) is the caller's: a reverse RNEA sweep at qacc = a with
//   weight −λ, as kernels/step/step_adjoint.hpp does for the smooth substep; λ is handed back in
//   a.qacc_smooth for that. a_s enters only the cost's constant, not g: it has no adjoint here.
//
// Per row (facts §5), at the zone the forward solve reports in efc_state:
//   quadratic (equality; limit, frictionless contact and pyramid edge with jar < 0; friction
//     loss with |jar| < R·floss; elliptic bottom zone, every row of the cone):
//     f = −D jar:  ∂f/∂jar = −D, ∂f/∂D = −jar.
//   satisfied (inequality with jar ≥ 0; elliptic top zone): f = 0, no derivative.
//   friction loss, linear zones: f = ±floss, constant at a fixed zone: no derivative (R only
//     places the zone boundary |jar| = R·floss, so R has no adjoint away from it; a.efc_R is
//     left as it is).
//   elliptic middle zone (U0 = mu jar0, U_k = μ_k jar_k, N = U0, T = ‖U_1..‖, w = N − mu T,
//     Dm = D0/(mu²(1 + mu²))): F0 = −Dm w mu, F_k = −F0 U_k μ_k / T; ∂F/∂jar = −∇²s, the cone
//     Hessian of cone_hessian (symmetric), and F is linear in Dm, hence in D0:
//     ∂F_j/∂D0 = F_j / D0 (computed without dividing by D0). D_k, k ≥ 1, are unused there.
//
// Zone boundaries (measure zero): the adjoint differentiates the branch the forward solve took
// (the state in efc_state, recomputed bitwise at the same a), i.e. it is the one-sided
// derivative from the side of that zone. E.g. an inequality row with jar exactly 0 is
// "satisfied" (scalar_row_value uses jar < 0 for the quadratic branch) and contributes nothing.
//
// Iteration cap: when `iterations` stops the solve before g = 0, the result is the implicit
// gradient evaluated at the returned point — H and the forces at that a — which is the exact
// derivative of the solution map only at convergence (it is not the derivative of the truncated
// iteration; its error is of the order of the remaining ‖g‖ relative to H).
#pragma once

#include "kernels/constraint/solver.hpp"

namespace stiffgrad::kern {

// ---- per-row derivatives, mirroring scalar_row_value / cone_value ----

// The adjoint of one scalar row's force f = scalar_row_value(type, jar, D, R, floss).force at
// the state the forward reported: given u = f̄, the adjoints (∂f/∂jar)u and (∂f/∂D)u
// (∂f/∂R = 0 at a fixed zone, see the header; floss is a model constant here).
template <class Real>
struct RowForceAdjoint {
  Real jar, D;
};

template <class Real>
SG_HD SG_INLINE RowForceAdjoint<Real> adj_scalar_row_value(int state, Real jar, Real D, Real u) {
  RowForceAdjoint<Real> r{Real(0), Real(0)};
  // scalar_row_value's quadratic branch (equality, friction loss inside |jar| < R floss, one-sided
  // rows with jar < 0): f = −D jar. Its linear friction-loss branches (f = ±floss) and the
  // satisfied branch (f = 0) are constant in jar and D.
  if (state == kStateQuadratic) {
    r.jar = -D * u;
    r.D = -jar * u;
  }
  return r;
}

// The adjoint of the forces of one elliptic contact (cone_value) at the zone the forward
// reported: given u[0..dim) = f̄, writes jar_bar = (∂f/∂jar)ᵀu and D_bar = (∂f/∂D)ᵀu.
template <class Real>
SG_HD SG_INLINE void adj_cone_value(int dim, int zone, const Real* jar, const Real* fr, const Real* D,
                                    const Real* u, Real* jar_bar, Real* D_bar) {
  for (int j = 0; j < dim; ++j) { jar_bar[j] = Real(0); D_bar[j] = Real(0); }
  if (zone == kStateQuadratic) {
    // bottom zone: f_j = −D_j jar_j per row
    for (int j = 0; j < dim; ++j) {
      jar_bar[j] = -D[j] * u[j];
      D_bar[j] = -jar[j] * u[j];
    }
  } else if (zone == kStateCone) {
    // middle zone: ∂f/∂jar = −∇²s (symmetric), so (∂f/∂jar)ᵀu = −Hc u
    Real Hc[36];
    cone_hessian(dim, jar, fr, D[0], Hc);
    for (int j = 0; j < dim; ++j) {
      Real s(0);
      for (int k = 0; k < dim; ++k) s += Hc[j * dim + k] * u[k];
      jar_bar[j] = -s;
    }
    // f = Dm·φ(jar) with Dm = D0·c, c = 1/(mu²(1 + mu²)): ∂f/∂D0 = c·φ, i.e. cone_value's
    // F0 = −Dm w mu, F_k = −F0 U_k μ_k / T with Dm replaced by c
    const ConeGeometry<Real> g = cone_geometry(dim, jar, fr, D[0]);
    const Real mu = fr[0];
    const Real c = Real(1) / (mu * mu * (Real(1) + mu * mu));
    const Real dF0 = -c * g.w * mu;
    Real s = dF0 * u[0];
    for (int k = 1; k < dim; ++k) s += -dF0 * g.U[k] * fr[k] / g.T * u[k];
    D_bar[0] = s;
  }
  // top zone: f = 0
}

// Over the rows: for u_i = f̄_i + (J w)_i (w = nullptr: u = f̄ alone), the row adjoints
// y = (∂f/∂jar)ᵀu and (∂f/∂D)ᵀu, handed row by row to emit(i, y_i, Dbar_i).
template <class Real, class L, class Emit>
SG_HD void adj_rows_force(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                          const NewtonWorkspace<Real, L>& ws, int nefc, View<Real, L> w, bool w_on,
                          Emit&& emit) {
  const auto u_of = [&](int i) {
    Real s = a.efc_force()[i];
    if (w_on) s += row_dot(m, d.efc_J(), i, row_chain(d, i), w);
    return s;
  };
  for (int i = 0; i < nefc;) {
    const int type = solver_int(d.efc_type()[i]);
    const int state = solver_int(d.efc_state()[i]);
    if (type == kCnstrContactElliptic) {
      Real fr[6], D[6], j6[6], u6[6], jb[6], Db[6];
      const int dim = cone_rows(d, i, nefc, fr, D);
      for (int k = 0; k < dim; ++k) { j6[k] = ws.jar[i + k]; u6[k] = u_of(i + k); }
      adj_cone_value(dim, state, j6, fr, D, u6, jb, Db);
      for (int k = 0; k < dim; ++k) emit(i + k, jb[k], Db[k]);
      i += dim;
    } else {
      const RowForceAdjoint<Real> r = adj_scalar_row_value(state, ws.jar[i], d.efc_D()[i], u_of(i));
      emit(i, r.jar, r.D);
      ++i;
    }
  }
}

// adj_rows_force outlined on the device, for the staged adjoint's solve stage: inlined twice
// into adj_constraint_solve_end, its cone arrays took that double kernel to 68 B of spills at 128
// registers (outlined: none). The one-thread adj_constraint_solve (the CPU backend) keeps it
// inline; the fused adjoint kernel did too (outlined, ptxas took 11% longer on it) until it went,
// 2026-12-08.
template <class Real, class L, class Emit>
SG_HD SG_OUTLINE void adj_rows_force_outlined(const ModelView<Real>& m, const Data<Real, L>& d,
                                              const Data<Real, L>& a,
                                              const NewtonWorkspace<Real, L>& ws, int nefc,
                                              View<Real, L> w, bool w_on, Emit&& emit) {
  adj_rows_force(m, d, a, ws, nefc, w, w_on, emit);
}

// Adjoint of constraint_solve (conventions of the other adj_ kernels: `a` is an adjoint Data
// with d's layout).
//   d: the primal after constraint_solve (qM, qfrc_smooth, the rows, d.qacc = the solver's a);
//      efc_force, efc_state, qfrc_constraint are recomputed at d.qacc (bitwise the same values)
//      and the solver workspace is overwritten (H, its factor, and scratch).
//   on entry: a.qacc = ā, a.efc_force = f̄ (0 where unused).
//   on exit (accumulated): a.qfrc_smooth += λ, a.efc_J, a.efc_aref, a.efc_D += their adjoints
//      (a.efc_R: nothing, see the header); a.qacc_smooth = λ = H⁻¹ ā_tot (written, not
//      accumulated) for the caller's reverse RNEA sweep at qacc = a with weight −λ (the M part).
// Only with m.nefc_max > 0 (the substep runs the solver only then; without it there is no
// workspace): otherwise it returns at once.
//
// Two halves, so that the staged adjoint runs them as two kernels, the first a warp per
// environment with the forward solve's team functions:
// adj_constraint_solve_begin leaves jar, the forces, the states and H at the solution, H factored,
// in d's solver workspace; and adj_constraint_solve_end reads them there. `team`: a warp on the
// device's staged adjoint (the staged forward solve's team), else one thread.
template <class Team, class Real, class L>
SG_HD SG_OUTLINE void adj_constraint_solve_begin(const Team& team, const ModelView<Real>& m,
                                                 const Data<Real, L>& d) {
  if (m.nefc_max <= 0) return;
  newton_hessian_at_solution(team, m, d);
}

template <class Real, class L>
SG_HD SG_INLINE void adj_constraint_solve_begin(const ModelView<Real>& m, const Data<Real, L>& d) {
  adj_constraint_solve_begin(SerialTeam{m.team_width}, m, d);
}

// kOutlineRows: adj_rows_force outlined on the device (the staged adjoint's solve stage).
template <bool kOutlineRows = false, class Real, class L>
SG_HD SG_OUTLINE void adj_constraint_solve_end(const ModelView<Real>& m, const Data<Real, L>& d,
                                               const Data<Real, L>& a) {
  if (m.nefc_max <= 0) return;
  const int nv = m.nv;
  const int nefc = solver_nefc(m, d);
  const NewtonWorkspace<Real, L> ws = newton_workspace(m, d);  // as _begin left it
  const auto rows_force = [&](View<Real, L> w, bool w_on, auto&& emit) {
    if constexpr (kOutlineRows)
      adj_rows_force_outlined(m, d, a, ws, nefc, w, w_on, emit);
    else
      adj_rows_force(m, d, a, ws, nefc, w, w_on, emit);
  };

  // 1. ā_tot = ā + Jᵀ (∂f/∂jar)ᵀ f̄, in ws.search
  const View<Real, L> lam = ws.search;
  for (int c = 0; c < nv; ++c) lam[c] = a.qacc()[c];
  rows_force(lam, false, [&](int i, Real y, Real) {
    if (y == Real(0)) return;
    row_axpy(m, d.efc_J(), i, row_chain(d, i), y, lam);
  });

  // 2. λ = H⁻¹ ā_tot
  newton_hessian_solve(m, ws, lam);
  for (int c = 0; c < nv; ++c) {
    a.qacc_smooth()[c] = lam[c];
    a.qfrc_smooth()[c] += lam[c];
  }

  // 3. with u = f̄ + Jλ, y = (∂f/∂jar)ᵀu: J̄_i += f_i λ + y_i a, aref̄_i −= y_i, D̄ += (∂f/∂D)ᵀu.
  //    Satisfied rows have f = 0 and y = 0 (their force is the constant 0 in the forward too).
  rows_force(lam, true, [&](int i, Real y, Real Db) {
    const Real f = solver_int(d.efc_state()[i]) == kStateSatisfied ? Real(0) : d.efc_force()[i];
    for_each_row_entry(m, row_chain(d, i), [&](int slot, int c) {
      a.efc_J()[i * nv + slot] += f * lam[c] + y * d.qacc()[c];
    });
    a.efc_aref()[i] -= y;
    a.efc_D()[i] += Db;
  });
}

template <class Real, class L>
SG_HD SG_INLINE void adj_constraint_solve(const ModelView<Real>& m, const Data<Real, L>& d,
                                          const Data<Real, L>& a) {
  adj_constraint_solve_begin(m, d);
  adj_constraint_solve_end(m, d, a);
}

}  // namespace stiffgrad::kern
