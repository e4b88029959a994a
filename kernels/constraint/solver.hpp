// MuJoCo 2.2.2's constraint solve (docs/references/mujoco-2.2.2-constraints.md §5): the primal
// Newton method on the convex problem
//
//   minimize over a:  ½(a − a_s)ᵀ M (a − a_s) + Σ_i s_i(J_i a − aref_i),   a_s = qacc_smooth,
//
// started as MuJoCo starts it (facts §5 (1)): with the warmstart flag on, at the previous solve's
// qacc (Data::qacc_warmstart) unless the cost at a_s is lower; with it off, cold at a_s. The warm
// start is part of the state a step depends on: the backends carry it from step to step and a
// Rollout checkpoints it, so a replay reproduces the forward pass bit for bit. The optimum does
// not depend on the start (the problem is strictly convex): starts differ in the iterations they
// need and, where the solve stops at its tolerance or `iterations`, by that much in the result.
//
// One iteration: H = M + Jᵀ diag(D on quadratic rows) J + elliptic cone Hessians, factored,
// search = −H⁻¹ g, then an exact 1-D line search on the piecewise-smooth convex cost along the
// search direction. MuJoCo updates a dense Cholesky factor with rank-1 changes when rows change
// state; we refactor every iteration, which is cheap because of the rows' structure
// (kernels/constraint/row_sparsity.hpp): when every row entering H lies on one root-to-leaf dof
// chain (contacts with the world or within one limb, limits, dof friction loss), H has M's tree
// sparsity and factors as LᵀDL without fill-in in O(nv·depth²) (ltdl_factor); otherwise a
// dense Cholesky. Products with J and M visit the structural non-zeros only. Both give the
// same Newton direction up to rounding.
//
// The solve runs on a team (kernels/base/team.hpp; issue 38: a warp per environment on the GPU):
// rows (J a, J p, the row costs and forces) and dofs (Jᵀ f, the gradient) are its items, each
// computed by one lane with a single thread's code; the sums over rows (the cost and the line
// search's φ', φ'') and over dofs (the Gauss term, pᵀr, pᵀMp, ‖p‖², ‖g‖²) follow the team's
// width, m.team_width (1 on the CPU: the plain loops, unchanged; 32 on CUDA, where every kernel
// sums as the warp does). H is assembled and updated by rows of H, each entry summing its terms
// in the order of a single thread; the tree factor's row updates run across the lanes
// (ltdl_factor_in); a dense factor, the solves with the factor and M x run on the leader.
// What is inlined is measured (sm_90, docs/gpu.md "Static resource figures"): everything inlined
// took 255 registers and spilled 252 B in double. H's assembly, update and factor, an elliptic
// cone's value and the row evaluation outside the line search are SG_OUTLINE; the line search
// (with its one row evaluation) and the update are inlined into the solve. The warp kernel fits
// 128 registers, without spilling in float and with 28 B of spill stores in double.
// On a team of several lanes Jᵀ f is gathered per dof over the rows in ascending order and H is
// built by its rows; one thread (team.size() == 1) scatters row by row and group by group, which
// visits only each row's chain: the same terms in the same order either way, so the same bits.
//
// Building blocks kept apart for the implicit adjoint (docs/architecture.md "Constraints"):
//   constraint_rows_eval    row costs, forces f = −∂s/∂jar and states at jar (facts §5)
//   newton_hessian_assemble H at the current states (quadratic rows + cone Hessians)
//   newton_hessian_at_solution  jar, rows and H at the final qacc, H factored in the workspace
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/ldl.hpp"
#include "kernels/base/team.hpp"
#include "kernels/constraint/row_sparsity.hpp"

namespace stiffgrad::kern {

// Integer stored as a Real (counts, condim): the value part only, so a dual number works too.
template <class Real>
SG_HD SG_INLINE int solver_int(const Real& x) {
  return sg_int(x);
}

// The solver's scratch, carved from Data::solver_ws (size: newton_workspace_size).
template <class Real, class L>
struct NewtonWorkspace {
  View<Real, L> H;        // nv x nv  Hessian at the current a: lower triangle, or compact (factor)
  View<Real, L> chol;     // nv x nv  its factor, in the same storage
  View<Real, L> Ma;       // nv  M a
  View<Real, L> grad;     // nv  g = M a − qfrc_smooth − Jᵀ f
  View<Real, L> search;   // nv  Newton direction −H⁻¹ g
  View<Real, L> Msearch;  // nv  M search
  View<Real, L> jar;      // nefc_max  J a − aref
  View<Real, L> Jsearch;  // nefc_max  J search
  View<Real, L> factor;   // 1  how chol holds H's factor: kFactorTree (LᵀDL) or kFactorDense (LLᵀ)
  View<Real, L> H_state;  // nefc_max  efc_state when H was last brought up to date
  View<Real, L> group;    // nefc_max  rows of the group starting at this row (an elliptic contact's
                          //           dim, else 1); 0 on an elliptic contact's later rows

  static SG_HD NewtonWorkspace bind(View<Real, L> ws, int nv, int nefc_max) {
    NewtonWorkspace w;
    int o = 0;
    auto take = [&](int n) { View<Real, L> v = ws.at(o); o += n; return v; };
    w.H = take(nv * nv); w.chol = take(nv * nv);
    w.Ma = take(nv); w.grad = take(nv); w.search = take(nv); w.Msearch = take(nv);
    w.jar = take(nefc_max); w.Jsearch = take(nefc_max);
    w.factor = take(1);
    w.H_state = take(nefc_max);
    w.group = take(nefc_max);
    return w;
  }
};

template <class Real, class L>
SG_HD SG_INLINE NewtonWorkspace<Real, L> newton_workspace(const ModelView<Real>& m, const Data<Real, L>& d) {
  return NewtonWorkspace<Real, L>::bind(d.solver_ws(), m.nv, m.nefc_max);
}

// Rows this solve uses: nefc clamped to the capacity (never read past the buffers).
template <class Real, class L>
SG_HD SG_INLINE int solver_nefc(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int n = solver_int(d.nefc()[0]);
  return n < 0 ? 0 : (n > m.nefc_max ? m.nefc_max : n);
}

// ---- per-row costs (facts §5) ----

// One scalar row (every type but elliptic) at jar: cost s, force −s', curvature s'', state.
template <class Real>
struct RowValue {
  Real cost, force, curv;
  int state;
};

template <class Real>
SG_HD SG_INLINE RowValue<Real> scalar_row_value(int type, Real jar, Real D, Real R, Real floss) {
  RowValue<Real> r{Real(0), Real(0), Real(0), kStateSatisfied};
  const auto quadratic = [&] {
    r.cost = Real(0.5) * D * jar * jar; r.force = -D * jar; r.curv = D; r.state = kStateQuadratic;
  };
  if (type == kCnstrEquality) {
    quadratic();
  } else if (type == kCnstrFrictionDof || type == kCnstrFrictionTendon) {
    // Huber: quadratic inside |jar| < R f, linear with slope ±f outside (continuous at R f)
    const Real rf = R * floss;
    if (jar <= -rf) {
      r.cost = -floss * jar - Real(0.5) * rf * floss; r.force = floss; r.state = kStateLinearNeg;
    } else if (jar >= rf) {
      r.cost = floss * jar - Real(0.5) * rf * floss; r.force = -floss; r.state = kStateLinearPos;
    } else {
      quadratic();
    }
  } else if (jar < Real(0)) {
    // limits, frictionless contacts, pyramid edges: one-sided quadratic
    quadratic();
  }
  return r;
}

// One elliptic contact of dim rows at jar[0..dim) (facts §5), with mu = mu_reg (efc_mu of the
// first row) and fr[k] = friction[k−1] for k ≥ 1 (efc_mu of row k). In U-space, U0 = mu·jar0,
// Uk = fr_k·jar_k, N = U0, T = ‖U_1..‖:
//   top    N ≥ mu T:        s = 0
//   bottom mu N + T ≤ 0:    s = Σ ½ D_j jar_j²
//   middle otherwise:       s = ½ Dm w², w = N − mu T, Dm = D0 / (mu²(1 + mu²)).
// Writes force[j] = −∂s/∂jar_j; with a direction v, also φ' = ∂s/∂jar·v and φ'' = vᵀ∇²s v.
template <class Real>
struct ConeValue {
  Real cost, dphi, d2phi;
  int state;
};

template <class Real>
struct ConeGeometry {
  Real U[6], N, T, w, Dm;
  int zone;  // kStateSatisfied (top), kStateQuadratic (bottom), kStateCone (middle)
};

template <class Real>
SG_HD SG_INLINE ConeGeometry<Real> cone_geometry(int dim, const Real* jar, const Real* fr, Real D0) {
  ConeGeometry<Real> c;
  const Real mu = fr[0];
  c.U[0] = mu * jar[0];
  Real T2(0);
  for (int k = 1; k < dim; ++k) { c.U[k] = fr[k] * jar[k]; T2 += c.U[k] * c.U[k]; }
  c.N = c.U[0];
  c.T = T2 > Real(0) ? sg_sqrt(T2) : Real(0);  // no infinite derivative of sqrt at 0 (duals)
  c.w = c.N - mu * c.T;
  c.Dm = D0 / (mu * mu * (Real(1) + mu * mu));
  if (c.N >= mu * c.T) c.zone = kStateSatisfied;
  else if (mu * c.N + c.T <= Real(0)) c.zone = kStateQuadratic;
  else c.zone = kStateCone;
  // middle zone ⇒ T > 0 (N < mu T and mu N > −T cannot both hold at T = 0); guard rounding
  if (c.zone == kStateCone && c.T < min_norm<Real>()) c.T = min_norm<Real>();
  return c;
}

template <class Real>
SG_HD SG_OUTLINE ConeValue<Real> cone_value(int dim, const Real* jar, const Real* fr, const Real* D,
                                           Real* force, const Real* v) {
  const ConeGeometry<Real> c = cone_geometry(dim, jar, fr, D[0]);
  const Real mu = fr[0];
  ConeValue<Real> r{Real(0), Real(0), Real(0), c.zone};
  for (int j = 0; j < dim; ++j) force[j] = Real(0);
  if (c.zone == kStateQuadratic) {
    for (int j = 0; j < dim; ++j) {
      r.cost += Real(0.5) * D[j] * jar[j] * jar[j];
      force[j] = -D[j] * jar[j];
      if (v) { r.dphi += D[j] * jar[j] * v[j]; r.d2phi += D[j] * v[j] * v[j]; }
    }
  } else if (c.zone == kStateCone) {
    r.cost = Real(0.5) * c.Dm * c.w * c.w;
    force[0] = -c.Dm * c.w * mu;
    for (int k = 1; k < dim; ++k) force[k] = -force[0] * c.U[k] * fr[k] / c.T;
    if (v) {
      // along jar + t v: w' = V0 − mu T', w'' = −mu T'', with T' = U·V/T, T'' = (‖V‖² − T'²)/T
      Real UV(0), VV(0);
      for (int k = 1; k < dim; ++k) {
        const Real Vk = fr[k] * v[k];
        UV += c.U[k] * Vk; VV += Vk * Vk;
      }
      const Real Td = UV / c.T;
      const Real wd = mu * v[0] - mu * Td;
      const Real wdd = -mu * (VV - Td * Td) / c.T;
      r.dphi = c.Dm * c.w * wd;
      r.d2phi = c.Dm * (wd * wd + c.w * wdd);
    }
  }
  return r;
}

// Hessian ∂²s/∂jar² of a middle-zone cone (dim x dim, row-major), from s = ½Dm w²:
// in U-space ∇²s = Dm(∇w∇wᵀ + w∇²w) with ∇w = (1, −mu U_k/T) and ∇²w = −mu(I − ÛÛᵀ)/T on the
// tangential block, i.e. H_U00 = 1, H_U0k = −mu U_k/T, H_Ukl = (mu² − mu N/T)δ_kl + mu N U_kU_l/T³;
// then jar-space = diag(mu, fr_k) H_U diag(mu, fr_k). PSD in the middle zone since w < 0 there.
template <class Real>
SG_HD SG_INLINE void cone_hessian(int dim, const Real* jar, const Real* fr, Real D0, Real* Hc) {
  const ConeGeometry<Real> c = cone_geometry(dim, jar, fr, D0);
  const Real mu = fr[0];
  const Real T = c.T, NT = c.N / T, NT3 = c.N / (T * T * T);
  for (int j = 0; j < dim; ++j)
    for (int k = 0; k < dim; ++k) {
      Real h;
      if (j == 0 && k == 0) h = Real(1);
      else if (j == 0) h = -mu * c.U[k] / T;
      else if (k == 0) h = -mu * c.U[j] / T;
      else h = mu * NT3 * c.U[j] * c.U[k] + (j == k ? mu * mu - mu * NT : Real(0));
      Hc[j * dim + k] = c.Dm * fr[j] * fr[k] * h;
    }
}

// The rows of the elliptic contact starting at row i (its dim, clamped to the rows present).
template <class Real, class L>
SG_HD SG_INLINE int cone_dim(const Data<Real, L>& d, int i, int nefc) {
  int dim = solver_int(d.efc_dim()[i]);
  if (dim > 6) dim = 6;
  if (dim > nefc - i) dim = nefc - i;
  if (dim < 1) dim = 1;
  return dim;
}

// Copies the rows of the elliptic contact starting at row i (clamped to the rows present).
template <class Real, class L>
SG_HD SG_INLINE int cone_rows(const Data<Real, L>& d, int i, int nefc, Real* fr, Real* D) {
  const int dim = cone_dim(d, i, nefc);
  for (int k = 0; k < dim; ++k) {
    fr[k] = d.efc_mu()[i + k];
    D[k] = d.efc_D()[i + k];
  }
  return dim;
}

// The rows of the group starting at row i (an elliptic contact's cone_dim, else 1).
template <class Real, class L>
SG_HD SG_INLINE int row_group_rows(const Data<Real, L>& d, int i, int nefc) {
  return solver_int(d.efc_type()[i]) == kCnstrContactElliptic ? cone_dim(d, i, nefc) : 1;
}

// The row groups (NewtonWorkspace::group) of rows 0 .. nefc−1: a walk from row 0, one group
// (row_group_rows) at a time, so that a team can start each group on its own lane.
template <class Team, class Real, class L>
SG_HD void solver_row_groups(const Team& team, const Data<Real, L>& d, View<Real, L> group, int nefc) {
  if (team.leader())
    for (int i = 0; i < nefc;) {
      const int n = row_group_rows(d, i, nefc);
      group[i] = Real(n);
      for (int k = 1; k < n; ++k) group[i + k] = Real(0);
      i += n;
    }
  team.sync();
}

// Sum over rows of the costs at jar + t·v (v unused when `v_on` is false), by a team over the
// row groups (solver_row_groups). When `write`, stores efc_force and efc_state (the solver
// outputs, facts §5); with v_on, returns φ'(t), φ''(t) of the row part of the line-search
// function. On every lane.
template <class Real>
struct RowsTotal {
  Real cost, dphi, d2phi;
  bool hessian_changed;  // with `write`: a row changed state, or a cone is in its middle zone
};

// One row group's part of constraint_rows_eval (the group starting at row i, its first row of
// type `type`): its cost, φ', φ'' and, with `write`, whether its Hessian changed, returned by
// value so that the team's sum keeps its accumulators in registers.
template <class Real>
struct GroupValue {
  Real cost, dphi, d2phi;
  bool changed;
};

template <class Real, class L>
SG_HD SG_INLINE GroupValue<Real> row_group_eval(const Data<Real, L>& d, int i, int type, int nefc, View<Real, L> jar,
                                                View<Real, L> v, bool v_on, Real t, bool write) {
  GroupValue<Real> g{Real(0), Real(0), Real(0), false};
  if (type == kCnstrContactElliptic) {
    Real fr[6], D[6], j6[6], v6[6], f6[6];
    const int dim = cone_rows(d, i, nefc, fr, D);
    for (int k = 0; k < dim; ++k) {
      v6[k] = v_on ? v[i + k] : Real(0);
      j6[k] = v_on ? jar[i + k] + t * v6[k] : jar[i + k];
    }
    const ConeValue<Real> c = cone_value(dim, j6, fr, D, f6, v_on ? v6 : nullptr);
    g.cost = c.cost; g.dphi = c.dphi; g.d2phi = c.d2phi;
    if (write) {
      // a middle-zone cone's Hessian moves with jar; any zone change changes H
      g.changed = c.state == kStateCone || solver_int(d.efc_state()[i]) != c.state;
      for (int k = 0; k < dim; ++k) {
        d.efc_force()[i + k] = f6[k];
        d.efc_state()[i + k] = Real(c.state);
      }
    }
  } else {
    const Real vi = v_on ? v[i] : Real(0);
    const Real ji = v_on ? jar[i] + t * vi : jar[i];
    const RowValue<Real> r =
        scalar_row_value(type, ji, d.efc_D()[i], d.efc_R()[i], d.efc_frictionloss()[i]);
    g.cost = r.cost;
    // the sum subtracts r.force·vi (a − b = a + (−b) exactly) and adds r.curv·vi·vi
    if (v_on) { g.dphi = -(r.force * vi); g.d2phi = r.curv * vi * vi; }
    if (write) {
      g.changed = solver_int(d.efc_state()[i]) != r.state;
      d.efc_force()[i] = r.force;
      d.efc_state()[i] = Real(r.state);
    }
  }
  return g;
}

// constraint_rows_eval_in is inlined at the line search's one evaluation site;
// constraint_rows_eval, outlined on the device, serves the other callers.
template <class Team, class Real, class L>
SG_HD SG_INLINE RowsTotal<Real> constraint_rows_eval_in(const Team& team, const Data<Real, L>& d,
                                                        int nefc, View<Real, L> group,
                                                        View<Real, L> jar, View<Real, L> v,
                                                        bool v_on, Real t, bool write) {
  // cost, φ', φ'', and (with `write`) a count of the groups whose Hessian changed, over the
  // groups in the team's order; a group's terms are added on the lane of its first row
  Real tot[4] = {Real(0), Real(0), Real(0), Real(0)};
  team.template sum<4>(nefc, tot, [&](int i, Real* acc) {
    const int type = solver_int(d.efc_type()[i]);
    if (type == kCnstrContactElliptic && solver_int(group[i]) == 0) return;  // a cone's later row
    const GroupValue<Real> g = row_group_eval(d, i, type, nefc, jar, v, v_on, t, write);
    acc[0] += g.cost;
    acc[1] += g.dphi;
    acc[2] += g.d2phi;
    if (g.changed) acc[3] += Real(1);
  });
  if (write) team.sync();
  return RowsTotal<Real>{tot[0], tot[1], tot[2], tot[3] > Real(0)};
}
template <class Team, class Real, class L>
SG_HD SG_OUTLINE RowsTotal<Real> constraint_rows_eval(const Team& team, const Data<Real, L>& d,
                                                      int nefc, View<Real, L> group,
                                                      View<Real, L> jar, View<Real, L> v, bool v_on,
                                                      Real t, bool write) {
  return constraint_rows_eval_in(team, d, nefc, group, jar, v, v_on, t, write);
}

// ---- dense linear algebra on nv x nv row-major blocks ----

// In place: the lower triangle of A (SPD) becomes L with A = L Lᵀ. H ⪰ M ≻ 0, so pivots are
// positive; a pivot lost to rounding is floored at mjMINVAL rather than producing NaN.
template <class Real, class L>
SG_HD void dense_cholesky(int n, View<Real, L> A) {
  for (int j = 0; j < n; ++j) {
    Real piv = A[j * n + j];
    for (int k = 0; k < j; ++k) piv -= A[j * n + k] * A[j * n + k];
    if (piv < min_norm<Real>()) piv = min_norm<Real>();
    const Real ljj = sg_sqrt(piv);
    A[j * n + j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      Real s = A[i * n + j];
      for (int k = 0; k < j; ++k) s -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = s / ljj;
    }
  }
}

// x <- (L Lᵀ)⁻¹ x with the factor of dense_cholesky.
template <class Real, class L>
SG_HD void dense_cholesky_solve(int n, View<Real, L> Lf, View<Real, L> x) {
  for (int i = 0; i < n; ++i) {
    Real s = x[i];
    for (int k = 0; k < i; ++k) s -= Lf[i * n + k] * x[k];
    x[i] = s / Lf[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    Real s = x[i];
    for (int k = i + 1; k < n; ++k) s -= Lf[k * n + i] * x[k];
    x[i] = s / Lf[i * n + i];
  }
}

// ---- Newton pieces ----

// (Jᵀ f)_c: column c of the rows off their satisfied state, in ascending row order (the order
// and the terms of the row-by-row scatter y += f_i J_i that one thread runs; a satisfied row's
// force is the constant 0, and any other row counts even at f = 0, whose tangent (dual numbers)
// need not vanish).
template <class Real, class L>
SG_HD SG_INLINE Real constraint_force_on_dof(const ModelView<Real>& m, const Data<Real, L>& d, int nefc, int c) {
  Real s(0);
  for (int i = 0; i < nefc; ++i) {
    if (solver_int(d.efc_state()[i]) == kStateSatisfied) continue;
    const int slot = row_slot_if_held(m, row_chain(d, i), c);
    if (slot >= 0) s += d.efc_J()[i * m.nv + slot] * d.efc_force()[i];
  }
  return s;
}

// At a = d.qacc: jar = J a − aref, efc_force/efc_state, Ma = M a,
// qfrc_constraint = Jᵀ f, g = M a − qfrc_smooth − Jᵀ f. Returns the total cost
// ½(M a − qfrc_smooth)·(a − a_s) + Σ s_i (MuJoCo's Gauss term; its gradient is M a − qfrc_smooth).
// When `hessian_changed` is given, it is set when H at the new states differs from H at the
// states efc_state held before (some row changed zone, or a cone is in its middle zone, whose
// Hessian depends on jar): otherwise the Hessian and its factor may be reused bit for bit.
// newton_evaluate is the part after jar and Ma, which newton_update computes from a. The row
// groups (solver_row_groups) must be in the workspace. Outlined on the device: inlined into the
// solve's loop it left more values held across the loop's calls, which spilled (the double warp
// solve kernel, sm_90: 28 B of spill stores inlined, 16 B outlined, 8 B with the solve's scale
// and tolerance read at their uses).
template <class Team, class Real, class L>
SG_HD SG_OUTLINE Real newton_evaluate(const Team& team, const ModelView<Real>& m,
                                      const Data<Real, L>& d, const NewtonWorkspace<Real, L>& w,
                                      int nefc, bool* hessian_changed) {
  const RowsTotal<Real> rows = constraint_rows_eval(team, d, nefc, w.group, w.jar, w.jar, false, Real(0), true);
  if (hessian_changed) *hessian_changed = rows.hessian_changed;
  if (team.size() == 1) {
    // one thread: the scatter row by row (O(nefc·depth), where the gather is O(nefc·nv)); the
    // same terms in the same order for every dof, so the same bits
    for (int c = 0; c < m.nv; ++c) d.qfrc_constraint()[c] = Real(0);
    for (int i = 0; i < nefc; ++i)
      if (solver_int(d.efc_state()[i]) != kStateSatisfied)
        row_axpy(m, d.efc_J(), i, row_chain(d, i), d.efc_force()[i], d.qfrc_constraint());
  }
  team.for_each(m.nv, [&](int c) {
    if (team.size() > 1) d.qfrc_constraint()[c] = constraint_force_on_dof(m, d, nefc, c);
    w.grad[c] = (w.Ma[c] - d.qfrc_smooth()[c]) - d.qfrc_constraint()[c];
  });
  Real gauss[1] = {Real(0)};
  team.template sum<1>(m.nv, gauss, [&](int c, Real* acc) {
    acc[0] += (w.Ma[c] - d.qfrc_smooth()[c]) * (d.qacc()[c] - d.qacc_smooth()[c]);
  });
  team.sync();
  return Real(0.5) * gauss[0] + rows.cost;
}

// jar = J x − aref on rows 0 .. nefc−1, by the team.
template <class Team, class Real, class L>
SG_HD SG_INLINE void constraint_rows_residual(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d,
                                              int nefc, View<Real, L> x, View<Real, L> jar) {
  team.for_each(nefc, [&](int i) {
    jar[i] = row_dot(m, d.efc_J(), i, row_chain(d, i), x) - d.efc_aref()[i];
  });
}

// y = M x (tree_matvec) on the leader; the team waits for it.
template <class Team, class Real, class L>
SG_HD SG_INLINE void team_tree_matvec(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d,
                                      View<Real, L> x, View<Real, L> y) {
  if (team.leader()) tree_matvec(m, d.qM(), x, y);
  team.sync();
}

// newton_update_in is inlined into constraint_solve's loop; newton_update, outlined on the
// device, serves the other callers (the adjoint's Hessian at the solution, the tangent's
// correction).
template <class Team, class Real, class L>
SG_HD SG_INLINE Real newton_update_in(const Team& team, const ModelView<Real>& m,
                                      const Data<Real, L>& d, const NewtonWorkspace<Real, L>& w,
                                      int nefc, bool* hessian_changed = nullptr) {
  constraint_rows_residual(team, m, d, nefc, d.qacc(), w.jar);
  team_tree_matvec(team, m, d, d.qacc(), w.Ma);  // its sync also publishes jar
  return newton_evaluate(team, m, d, w, nefc, hessian_changed);
}
template <class Team, class Real, class L>
SG_HD SG_OUTLINE Real newton_update(const Team& team, const ModelView<Real>& m,
                                    const Data<Real, L>& d, const NewtonWorkspace<Real, L>& w,
                                    int nefc, bool* hessian_changed = nullptr) {
  return newton_update_in(team, m, d, w, nefc, hessian_changed);
}

enum : int { kFactorDense = 0, kFactorTree = 1 };

// Row r of H += Di J_iᵀ J_i (its lower-triangle entries (r, c), c <= r) in the storage `tree`
// selects (see newton_hessian_assemble): what a row-by-row outer product adds to H's row r, term
// for term. r is slot p of row i (a chain row: r = ch[p]; a dense row: p = r). A chain row's
// entries in slots p <= q (dofs r = ch[p] below c = ch[q] on the chain) meet at H(r, c), which is
// row r's (q − p)-th compact entry: the loop runs over contiguous slots.
template <class Real, class L>
SG_HD SG_INLINE void hessian_row_add(const ModelView<Real>& m, const Data<Real, L>& d, const NewtonWorkspace<Real, L>& w,
                                     bool tree, int r, int p, int i, int chain, Real Di) {
  const int nv = m.nv, o = i * nv;
  const auto J = d.efc_J();
  if (chain == kChainDense) {
    const Real jr = J[o + r];
    if (jr == Real(0)) return;
    for (int c = 0; c <= r; ++c) w.H[r * nv + c] += Di * jr * J[o + c];
  } else if (chain >= 0) {
    const DofChain<Real> ch = dof_chain(m, chain);
    const Real djp = Di * J[o + p];
    if (tree) {
      const int base = m.dof_chainadr[r] - p;
      for (int q = p; q < ch.n; ++q) w.H[base + q] += djp * J[o + q];
    } else {
      for (int q = p; q < ch.n; ++q) w.H[r * nv + ch.dof[q]] += djp * J[o + q];
    }
  }
}

// Row r of H += J_cᵀ Hc J_c for the middle-zone elliptic contact of rows i .. i+dim−1 (chain
// `chain`, its cone Hessian Hc): H(r, c) += Σ_j J_j(r) y_j(c) with y(c) = Hc J(c), for the
// columns c <= r the contact's rows can hold (a column whose y vanishes adds nothing).
template <class Real, class L>
SG_HD SG_INLINE void hessian_row_add_cone(const ModelView<Real>& m, const Data<Real, L>& d,
                                          const NewtonWorkspace<Real, L>& w, bool tree, int r, int p, int i, int dim,
                                          int chain, const Real* Hc) {
  const int nv = m.nv;
  const auto J = d.efc_J();
  const bool dense_row = chain == kChainDense;
  // dense: columns q = 0 .. r at (r, q); chain: r in slot p, columns in slots q >= p (ancestors)
  const DofChain<Real> ch = dense_row ? DofChain<Real>{nullptr, nv} : dof_chain(m, chain);
  const int q0 = dense_row ? 0 : p, q1 = dense_row ? r + 1 : ch.n;
  for (int q = q0; q < q1; ++q) {
    Real y[6];
    bool any = false;
    for (int j = 0; j < dim; ++j) {
      Real sum(0);
      for (int k = 0; k < dim; ++k) sum += Hc[j * dim + k] * J[(i + k) * nv + q];
      y[j] = sum;
      any = any || !(sum == Real(0));
    }
    if (!any) continue;
    Real sum(0);
    for (int j = 0; j < dim; ++j) sum += J[(i + j) * nv + p] * y[j];
    w.H[dense_row ? r * nv + q : (tree ? m.dof_chainadr[r] - p + q : r * nv + ch.dof[q])] += sum;
  }
}

// Whether H at the current states keeps M's tree pattern: every row that enters it (quadratic
// rows, middle-zone cones) is a chain row (row_sparsity.hpp).
template <class Real, class L>
SG_HD SG_INLINE bool hessian_is_tree(const Data<Real, L>& d, int nefc) {
  for (int i = 0; i < nefc; ++i) {
    const int state = solver_int(d.efc_state()[i]);
    if ((state == kStateQuadratic || state == kStateCone) && row_chain(d, i) == kChainDense) return false;
  }
  return true;
}

// What the group of n rows starting at row i adds to the rows of H that `rows` visits at the
// current states: D_i J_iᵀ J_i for a quadratic row (every row of an elliptic contact in its
// bottom zone), J_cᵀ Hc J_c for an elliptic contact in its middle zone. rows(chain, f) calls
// f(r, p) for each row r of H to update that the group reaches, p its slot in the group's rows:
// the group's chain (one thread) or the lane's own row where the group reaches it (a team). The
// group is decoded and a cone's Hessian computed once per call.
template <class Real, class L, class Rows>
SG_HD SG_INLINE void hessian_group_add(const ModelView<Real>& m, const Data<Real, L>& d,
                                       const NewtonWorkspace<Real, L>& w, bool tree, int i, int n, Rows&& rows) {
  const int state = solver_int(d.efc_state()[i]);
  const int chain = row_chain(d, i);  // contact_rows gives every row of a contact one chain
  if (solver_int(d.efc_type()[i]) == kCnstrContactElliptic) {
    if (state == kStateQuadratic) {
      rows(chain, [&](int r, int p) {
        for (int k = 0; k < n; ++k)
          hessian_row_add(m, d, w, tree, r, p, i + k, chain, d.efc_D()[i + k]);
      });
    } else if (state == kStateCone && chain != kChainEmpty) {
      Real Hc[36];
      bool have_hc = false;
      rows(chain, [&](int r, int p) {
        if (!have_hc) {
          Real fr[6]{}, D[6]{}, j6[6]{};  // as cone_rows copies them (n >= 1)
          for (int k = 0; k < n; ++k) {
            fr[k] = d.efc_mu()[i + k];
            D[k] = d.efc_D()[i + k];
            j6[k] = w.jar[i + k];
          }
          cone_hessian(n, j6, fr, D[0], Hc);
          have_hc = true;
        }
        hessian_row_add_cone(m, d, w, tree, r, p, i, n, chain, Hc);
      });
    }
  } else if (state == kStateQuadratic) {
    rows(chain,
         [&](int r, int p) { hessian_row_add(m, d, w, tree, r, p, i, chain, d.efc_D()[i]); });
  }
}

// rows(chain, f) for one thread: every row of H a row of that chain reaches, with its slot.
template <class Real>
struct HessianChainRows {
  const ModelView<Real>& m;
  template <class F>
  SG_HD SG_INLINE void operator()(int chain, F&& f) const {
    if (chain == kChainDense) {
      for (int r = 0; r < m.nv; ++r) f(r, r);
    } else if (chain >= 0) {
      const DofChain<Real> ch = dof_chain(m, chain);
      for (int p = 0; p < ch.n; ++p) f(ch.dof[p], p);
    }
  }
};

// rows(chain, f) for a lane: its own row r of H, where a row of that chain reaches it.
template <class Real>
struct HessianOneRow {
  const ModelView<Real>& m;
  int r;
  template <class F>
  SG_HD SG_INLINE void operator()(int chain, F&& f) const {
    const int p = row_slot_if_held(m, chain, r);
    if (p >= 0) f(r, p);
  }
};

// H = M + Σ_{quadratic rows} D_i J_iᵀ J_i + Σ_{middle-zone cones} J_cᵀ Hc J_c at the states in
// efc_state and jar in the workspace (both from newton_update), lower triangle, in the storage
// w.factor records: kFactorTree, H has M's tree pattern and is stored compactly (ldl.hpp: row
// r's entries on r's chain at dof_chainadr[r] + s), or kFactorDense, nv x nv row-major.
// By a team over H's rows: row r's lane walks the row groups in order and adds what each adds
// to row r (hessian_group_add), so every entry sums the same terms in the same order whatever
// the team; one thread (team.size() == 1) walks the groups once, visiting only their rows of H.
template <class Team, class Real, class L>
SG_HD SG_OUTLINE void newton_hessian_assemble(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d,
                                   const NewtonWorkspace<Real, L>& w, int nefc) {
  const int nv = m.nv;
  const bool tree = hessian_is_tree(d, nefc);
  if (team.leader()) w.factor[0] = Real(tree ? kFactorTree : kFactorDense);
  const auto init_row = [&](int r) {
    const DofChain<Real> chr = dof_chain(m, r);
    if (tree) {
      for (int s = 0; s < chr.n; ++s) w.H[m.dof_chainadr[r] + s] = d.qM()[r * nv + chr.dof[s]];
    } else {
      // M's entries on its tree pattern only (crb_mass_matrix writes no others)
      for (int c = 0; c <= r; ++c) w.H[r * nv + c] = Real(0);
      for (int s = 0; s < chr.n; ++s) w.H[r * nv + chr.dof[s]] = d.qM()[r * nv + chr.dof[s]];
    }
  };
  if (team.size() == 1) {
    // one thread: group by group, each group's rows of H only (O(nefc·depth²), where a walk over
    // every group for every row of H is O(nefc·nv)); every entry gets the same terms in the same
    // order, so the same bits
    for (int r = 0; r < nv; ++r) init_row(r);
    for (int i = 0; i < nefc;) {
      const int n = row_group_rows(d, i, nefc);
      hessian_group_add(m, d, w, tree, i, n, HessianChainRows<Real>{m});
      i += n;
    }
  } else {
    team.for_each(nv, [&](int r) {
      init_row(r);
      for (int i = 0; i < nefc;) {
        const int n = row_group_rows(d, i, nefc);
        hessian_group_add(m, d, w, tree, i, n, HessianOneRow<Real>{m, r});
        i += n;
      }
    });
  }
  team.for_each(nefc, [&](int i) { w.H_state[i] = d.efc_state()[i]; });
  team.sync();
}

// Brings H (assembled at the states in w.H_state) up to the current efc_state by adding the
// rows that became quadratic and subtracting those that left, as MuJoCo updates its factor
// only for changed rows; returns false, leaving H as it was, where that cannot be done (the
// storage would change, or an elliptic contact is or was in its middle zone, whose Hessian
// depends on jar): then assemble afresh. Subtracting what was added leaves rounding-sized
// residue in H, which only perturbs the Newton direction (the line search and the convergence
// test use the exact gradient; the adjoint assembles H afresh at the solution). By a team over
// H's rows, as newton_hessian_assemble; every lane returns the same answer.
template <class Team, class Real, class L>
SG_HD SG_OUTLINE bool newton_hessian_update(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d,
                                 const NewtonWorkspace<Real, L>& w, int nefc) {
  const bool tree = solver_int(w.factor[0]) == kFactorTree;
  if (hessian_is_tree(d, nefc) != tree) return false;
  for (int i = 0; i < nefc; ++i)
    if (solver_int(d.efc_type()[i]) == kCnstrContactElliptic &&
        (solver_int(w.H_state[i]) == kStateCone || solver_int(d.efc_state()[i]) == kStateCone))
      return false;
  const auto changed_rows = [&](int i, auto&& rows) {
    const bool was = solver_int(w.H_state[i]) == kStateQuadratic,
               is = solver_int(d.efc_state()[i]) == kStateQuadratic;
    if (was == is) return;
    const int chain = row_chain(d, i);
    const Real Di = is ? d.efc_D()[i] : -d.efc_D()[i];
    rows(chain, [&](int r, int p) { hessian_row_add(m, d, w, tree, r, p, i, chain, Di); });
  };
  if (team.size() == 1) {
    // one thread: each changed row's rows of H only (as in newton_hessian_assemble)
    for (int i = 0; i < nefc; ++i) changed_rows(i, HessianChainRows<Real>{m});
  } else {
    team.for_each(m.nv, [&](int r) {
      for (int i = 0; i < nefc; ++i) changed_rows(i, HessianOneRow<Real>{m, r});
    });
  }
  team.sync();  // every lane has read H_state
  team.for_each(nefc, [&](int i) { w.H_state[i] = d.efc_state()[i]; });
  team.sync();
  return true;
}

// chol = the factor of H: LᵀDL in the compact tree storage (kFactorTree) or a dense Cholesky of
// the lower triangle (kFactorDense), as newton_hessian_assemble stored H.
// By a team: the tree factor's row updates on the lanes (ltdl_factor_in), the dense Cholesky on
// the leader.
template <class Team, class Real, class L>
SG_HD SG_OUTLINE void newton_hessian_factor(const Team& team, const ModelView<Real>& m, const NewtonWorkspace<Real, L>& w) {
  const int nv = m.nv;
  if (solver_int(w.factor[0]) == kFactorTree) {
    const int nnz = nv > 0 ? m.dof_chainadr[nv - 1] + m.dof_chainnum[nv - 1] : 0;
    team.for_each(nnz, [&](int k) { w.chol[k] = w.H[k]; });
    team.sync();
    ltdl_factor_in<true>(team, m, w.chol);
  } else {
    if (team.leader()) {
      for (int r = 0; r < nv; ++r)
        for (int c = 0; c <= r; ++c) w.chol[r * nv + c] = w.H[r * nv + c];
      dense_cholesky(nv, w.chol);
    }
    team.sync();
  }
}

// x <- H⁻¹ x with the factor of newton_hessian_factor.
template <class Real, class L>
SG_HD SG_INLINE void newton_hessian_solve(const ModelView<Real>& m, const NewtonWorkspace<Real, L>& w,
                                          View<Real, L> x) {
  if (solver_int(w.factor[0]) == kFactorTree) ltdl_solve_in<true>(m, w.chol, x);
  else dense_cholesky_solve(m.nv, w.chol, x);
}

// The line-search function φ(t) = cost(a + t·search) − cost(a) and its first two derivatives.
template <class Real>
struct LinePoint {
  Real t, cost, d1, d2;
};

template <class Real>
SG_HD SG_INLINE LinePoint<Real> line_point_of(const RowsTotal<Real>& rows, Real pr, Real pMp, Real cost0_rows,
                                              Real t) {
  // Gauss part along the line: t·pᵀ(M a − qfrc_smooth) + ½t² pᵀMp
  LinePoint<Real> p;
  p.t = t;
  p.cost = t * pr + Real(0.5) * t * t * pMp + rows.cost - cost0_rows;
  p.d1 = pr + t * pMp + rows.dphi;
  p.d2 = pMp + rows.d2phi;
  return p;
}

// Exact line search on the convex, piecewise-smooth φ (facts §5: MuJoCo's is Newton with
// bracketing, ≤ 50 evaluations). Safeguarded Newton on φ': a Newton step from the latest point;
// once a point with φ' > 0 is seen, the minimiser is bracketed in (lo, hi) and a step leaving the
// bracket is replaced by bisection. On a piecewise quadratic, a Newton step that stays within one
// piece lands exactly on the minimiser. Stops when |φ'| < gtol (MuJoCo's
// tolerance·0.01·‖search‖·meaninertia·max(1, nv)) or the bracket can no longer shrink; returns
// the evaluated point with the smallest |φ'|, or 0 when the direction does not descend.
template <class Team, class Real, class L>
SG_HD SG_INLINE Real newton_line_search(const Team& team, const ModelView<Real>& m,
                                        const Data<Real, L>& d, const NewtonWorkspace<Real, L>& w,
                                        int nefc, Real gtol) {
  team.for_each(nefc,
                [&](int i) { w.Jsearch[i] = row_dot(m, d.efc_J(), i, row_chain(d, i), w.search); });
  team_tree_matvec(team, m, d, w.search, w.Msearch);  // its sync also publishes Jsearch
  Real p[2] = {Real(0), Real(0)};  // pᵀ(M a − qfrc_smooth), pᵀMp
  team.template sum<2>(m.nv, p, [&](int c, Real* acc) {
    acc[0] += w.search[c] * (w.Ma[c] - d.qfrc_smooth()[c]);
    acc[1] += w.search[c] * w.Msearch[c];
  });
  const Real pr = p[0], pMp = p[1];
  // One evaluation site, t = 0 first, so that the row evaluation is inlined here once: with the
  // line search and the update inlined into the solve as well, the warp kernel's spill stores in
  // double fell from 244 to 28 B (sm_90; docs/gpu.md)
  Real rows0(0), lo(0), hi(0), next(0);
  LinePoint<Real> cur{}, best{};
  bool bracketed = false;
  for (int e = -1; e < 50; ++e) {
    const RowsTotal<Real> rows =
        constraint_rows_eval_in(team, d, nefc, w.group, w.jar, w.Jsearch, true, next, false);
    if (e < 0) {
      rows0 = rows.cost;
      cur = best = line_point_of(rows, pr, pMp, rows0, Real(0));
      if (!(cur.d1 < Real(0)) || !(cur.d2 > Real(0))) return Real(0);
    } else {
      const LinePoint<Real> at = line_point_of(rows, pr, pMp, rows0, next);
      if (sg_abs(at.d1) < sg_abs(best.d1)) best = at;
      if (sg_abs(at.d1) < gtol) break;
      if (at.d1 < Real(0)) {
        lo = at.t;
      } else {
        hi = at.t;
        bracketed = true;
      }
      cur = at;
    }
    next = cur.t - cur.d1 / cur.d2;
    if (bracketed && !(next > lo && next < hi)) {
      next = Real(0.5) * (lo + hi);
      if (!(next > lo && next < hi)) break;  // bracket at the resolution of Real
    }
    if (!(next > Real(0)) || next == cur.t) break;
  }
  // Never return a step that raises the cost. Near the optimum the cost change (~|g|^2/H) falls
  // below the rounding of the cost itself (~|cost| eps), so the comparison alone would stop the
  // solve early (measured: a scaled gradient of 1.6e-8 left on an elliptic pile); φ is convex
  // with φ'(0) < 0, so any point with φ' <= 0 lies before the minimiser and lowers the cost.
  // A point that meets the line tolerance (|φ'| < gtol) is the line's minimiser to rounding and
  // is taken even when its slope rounds positive and its cost change rounds to >= 0 (measured:
  // warm-started solves on a pile whose exact Newton step, φ'(1) = 3e-23 against φ'(0) = -1e-14,
  // was refused, ending the solve at its start with a scaled gradient up to 6.8e-8).
  return (best.cost < Real(0) || !(best.d1 >= gtol)) ? best.t : Real(0);
}

// Forward mode only (dual numbers): the solve stops when the VALUE has converged, and the
// tangent of the iterates lags behind it (measured: 7.6e-5 relative after 2 Newton steps on a
// chain with friction loss). The derivative of the optimum is the implicit one, a' = -H^-1
// dg/dtheta theta', which one Newton correction of the tangent alone gives:
//   a' <- a' - H^-1 g'(a)   (g' = H a' + dg/dtheta theta').
// The right-hand side carries g' only (its value part zeroed): differentiating H^-1 g(a) as a
// whole would add H^-1 H' H^-1 g(a), which vanishes at the optimum but not where `iterations`
// stops the solve early; without it the tangent is the implicit derivative at the returned
// point, the same one the reverse mode (solver_adjoint.hpp) computes.
// The value parts are left bitwise unchanged, so the dual run still replays the primal.
template <class Team, class Real, class L>
SG_HD void exact_solution_tangent(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d,
                                  const NewtonWorkspace<Real, L>& w, int nefc) {
  const int nv = m.nv;
  newton_update(team, m, d, w, nefc);  // gradient (tangent g') and the final row states
  newton_hessian_assemble(team, m, d, w, nefc);
  newton_hessian_factor(team, m, w);
  if (team.leader()) {
    for (int c = 0; c < nv; ++c) {
      w.search[c] = w.grad[c];
      w.search[c].v = 0;  // g' alone (see above)
    }
    newton_hessian_solve(m, w, w.search);
    constexpr int N = sizeof(w.search[0].d) / sizeof(w.search[0].d[0]);
    for (int c = 0; c < nv; ++c)
      for (int k = 0; k < N; ++k) d.qacc()[c].d[k] -= w.search[c].d[k];
  }
  team.sync();
  newton_update(team, m, d, w, nefc);  // efc_force and qfrc_constraint tangents at the corrected a'
}

// The solve (facts §5, §6) by a team (see the header): qacc, efc_force, efc_state,
// qfrc_constraint = Jᵀ efc_force and solver_niter, from qM, qacc_smooth, qfrc_smooth and the rows
// (efc_type, J, D, R, aref, frictionloss, mu, dim). Stops when the line search returns 0, when
// the scaled improvement or the scaled ‖g‖ (scale 1/(meaninertia·max(1, nv))) falls below
// opt_tolerance, or after opt_iterations Newton steps. Every lane takes the same branches: the
// scalars they decide on are the team's sums, equal on every lane.
template <class Team, class Real, class L>
SG_HD void constraint_solve(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d) {
  const int nv = m.nv;
  const int nefc = solver_nefc(m, d);
  const auto set_qacc = [&](View<Real, L> from) {
    team.for_each(nv, [&](int c) { d.qacc()[c] = from[c]; });
    team.sync();
  };
  set_qacc(d.qacc_smooth());
  if (nefc == 0) {
    team.for_each(nv, [&](int c) {
      d.qfrc_constraint()[c] = Real(0);
      d.qacc_warmstart()[c] = d.qacc()[c];
    });
    if (team.leader()) d.solver_niter()[0] = Real(0);
    team.sync();
    return;
  }
  const NewtonWorkspace<Real, L> w = newton_workspace(m, d);
  solver_row_groups(team, d, w.group, nefc);
  // the scale and the tolerance are read at their uses (a function of m alone: on the device a
  // recomputation, not a value held across the loop's calls)
  const auto scale = [&] {
    const Real size_scale = m.stat_meaninertia * Real(m.nv > 1 ? m.nv : 1);
    return Real(1) / (size_scale > Real(0) ? size_scale : Real(1));
  };
  const auto tol = [&] { return Real(m.opt_tolerance); };
  Real cost;
  if (m.opt_warmstart) {
    // the cost at a_s is its rows' part alone (the Gauss term vanishes there); the warm start
    // is kept unless a_s is strictly better, and dropped when its cost is not a number
    constraint_rows_residual(team, m, d, nefc, d.qacc_smooth(), w.jar);
    team.sync();
    const Real cost_smooth = constraint_rows_eval(team, d, nefc, w.group, w.jar, w.jar, false, Real(0), false).cost;
    team.sync();  // every lane has read jar before newton_update rewrites it
    set_qacc(d.qacc_warmstart());
    cost = newton_update_in(team, m, d, w, nefc);
    if (!(cost <= cost_smooth)) {
      set_qacc(d.qacc_smooth());
      cost = newton_update_in(team, m, d, w, nefc);
    }
  } else {
    cost = newton_update_in(team, m, d, w, nefc);
  }
  // H depends on the row states only (and on jar for middle-zone cones): it is updated for the
  // rows that changed zone (newton_hessian_update) and factored again only when some did
  bool hessian_changed = true;
  int iter = 0;
  for (; iter < m.opt_iterations;) {
    if (hessian_changed) {
      if (iter == 0 || !newton_hessian_update(team, m, d, w, nefc)) newton_hessian_assemble(team, m, d, w, nefc);
      newton_hessian_factor(team, m, w);
    }
    if (team.leader()) {
      for (int c = 0; c < nv; ++c) w.search[c] = -w.grad[c];
      newton_hessian_solve(m, w, w.search);
    }
    team.sync();
    Real snorm2[1] = {Real(0)};
    team.template sum<1>(nv, snorm2, [&](int c, Real* acc) { acc[0] += w.search[c] * w.search[c]; });
    const Real gtol = tol() * Real(0.01) * sg_sqrt(snorm2[0]) / scale();
    const Real alpha = newton_line_search(team, m, d, w, nefc, gtol);
    if (alpha == Real(0)) break;
    team.for_each(nv, [&](int c) { d.qacc()[c] += alpha * w.search[c]; });
    team.sync();
    const Real old_cost = cost;
    // jar and Ma recomputed from a, not carried along the step as MuJoCo does: carrying them
    // accumulates rounding that the solution keeps (measured: finite differences of the solve
    // three times noisier on an elliptic heap)
    {
      bool changed = true;
      cost = newton_update_in(team, m, d, w, nefc, &changed);
      hessian_changed = changed;
    }
    ++iter;
    Real g2[1] = {Real(0)};
    team.template sum<1>(nv, g2, [&](int c, Real* acc) { acc[0] += w.grad[c] * w.grad[c]; });
    const Real improvement = scale() * (old_cost - cost);
    const Real gradient = scale() * sg_sqrt(g2[0]);
    if (improvement < tol() || gradient < tol()) break;
  }
  if (team.leader()) d.solver_niter()[0] = Real(iter);
  if constexpr (is_dual_number<Real>::value) exact_solution_tangent(team, m, d, w, nefc);
  team.for_each(nv, [&](int c) { d.qacc_warmstart()[c] = d.qacc()[c]; });
  team.sync();
}

// The solve in one thread, summing in the order of m.team_width (the fused step, the replays).
template <class Real, class L>
SG_HD SG_INLINE void constraint_solve(const ModelView<Real>& m, const Data<Real, L>& d) {
  constraint_solve(SerialTeam{m.team_width}, m, d);
}

// For the implicit adjoint: at a = d.qacc (normally constraint_solve's result) recomputes jar,
// efc_force/efc_state and the gradient, assembles H (the Jacobian of the optimality condition
// g(a) = 0 on the final active set and cone zones) into the workspace's H and factors it into
// its chol, so that H λ = ā is one newton_hessian_solve(m, w, λ).
// `team`: as constraint_solve's (a warp on the device's staged adjoint, the same sums as a
// SerialTeam of m.team_width).
template <class Team, class Real, class L>
SG_HD NewtonWorkspace<Real, L> newton_hessian_at_solution(const Team& team,
                                                          const ModelView<Real>& m,
                                                          const Data<Real, L>& d) {
  const NewtonWorkspace<Real, L> w = newton_workspace(m, d);
  const int nefc = solver_nefc(m, d);
  solver_row_groups(team, d, w.group, nefc);
  newton_update(team, m, d, w, nefc);
  newton_hessian_assemble(team, m, d, w, nefc);
  newton_hessian_factor(team, m, w);
  return w;
}

// In one thread, summing in the order of m.team_width.
template <class Real, class L>
SG_HD SG_INLINE NewtonWorkspace<Real, L> newton_hessian_at_solution(const ModelView<Real>& m,
                                                                    const Data<Real, L>& d) {
  return newton_hessian_at_solution(SerialTeam{m.team_width}, m, d);
}

}  // namespace stiffgrad::kern
