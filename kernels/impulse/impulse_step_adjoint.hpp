// Adjoint of one Impulse-model substep (kernels/impulse/impulse_step.hpp), exact for the computation: the
// primal is recomputed with the Gauss–Seidel record, then every line is reversed. Discrete
// choices are held as the primal took them: which contacts and limits exist, the projection's
// branch in each update. Friction coefficients, friction-loss bounds and the 1-D blocks' pads
// are constants.
//
// The steps that apply M̃⁻¹ = (M + h D)⁻¹ each give a mass-matrix term: for x = M̃⁻¹ b with
// adjoint x̄, b̄ = M̃⁻¹ x̄ and the q-adjoint of −b̄ᵀ M(q) x. For the two dynamics solves
// (qacc and qacc_smooth) that term and the bias force's are one reverse RNEA at fixed
// acceleration (as adj_fwd_dynamics); for the Delassus columns Y_s = M̃⁻¹ J_sᵀ it is
// adj_mass_product (kernels/dynamics/crba_adjoint.hpp).
#pragma once

#include "kernels/dynamics/crba_adjoint.hpp"
#include "kernels/impulse/impulse_solve_adjoint.hpp"
#include "kernels/impulse/impulse_step.hpp"
#include "kernels/step/step_adjoint.hpp"

namespace stiffgrad::kern {

// Adjoint of impulse_rows: a.efc_J of the contact blocks -> contact frame and position, cdof,
// subtree_com, tree origins (the limit and friction-loss rows are constant).
template <class Real, class L>
SG_HD void adj_impulse_rows(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  const int nv = m.nv, nb = sg_int(d.nefc()[0]) / 3;
  const View<Real, L> jac = d.solver_ws(), jac_bar = d.solver_ws().at(6 * nv);
  for (int b = nb - 1; b >= 0; --b) {
    if (impulse_block_is_1d(d, b)) continue;
    const int first = 3 * b, k = sg_int(d.efc_id()[first]);
    const int chain = row_chain(d, first);
    adj_contact_jacobian(m, d, a, k, jac, jac_bar, [&](auto&& adj_frame_row) {
      for (int r = 0; r < 3; ++r)
        for_each_row_entry(m, chain, [&](int slot, int col) {
          adj_frame_row(r, col, a.efc_J()[(first + r) * nv + slot]);
        });
    });
  }
}

// clear_adjoint_scratch for this substep, sized by the live row count n where the capacity is
// large: every field before the Impulse workspace, but of efc_J only its n live rows (the
// adjoint reads no other); of the workspace's adjoint G's and Y's live n² and n·nv entries (G is
// packed with stride n), then c … out and q0 … bodies, but not `record` (the adjoint replays the
// primal's record, w.record; wb.record is never read). Their capacities (nefc_max² + nefc_max·nv
// + sweeps·nefc_max for G, Y, record; nefc_max·nv for efc_J) are what made clearing everything
// cost the G1 (n ≈ 130 rows of nefc_max = 570: 2.6 MB of G) 4% of a SHAC iteration's time, and
// the efc_J and record tails still 4% of the substep's instructions.
template <class Real, class L>
SG_HD void clear_impulse_adjoint_scratch(const ModelView<Real>& m, const DataLayout& o, View<Real, L> adj_buffer,
                                         const ImpulseWorkspace<Real, L>& wb, int n) {
  const int nv = m.nv, ne = m.nefc_max, nb = ne / 3;
  for (int i = o.tree_origin; i < o.efc_J + n * nv; ++i) adj_buffer[i] = Real(0);
  for (int i = o.efc_J + ne * nv; i < o.imp_ws; ++i) adj_buffer[i] = Real(0);
  for (int i = 0; i < n * n; ++i) wb.G[i] = Real(0);
  for (int i = 0; i < n * nv; ++i) wb.Y[i] = Real(0);
  for (int i = 0; i < ne + 4 * nb + 2 * ne; ++i) wb.c[i] = Real(0);  // c, mu, sigma, dim, step, P, out
  for (int i = 0; i < 2 * m.nq + 2 * nv + 24 * m.nbody; ++i) wb.q0[i] = Real(0);  // q0, qmid, v0, v1, bodies
  const int size = impulse_workspace_size(m.nq, nv, m.nbody, ne, m.impulse_sweeps);
  for (int i = o.imp_ws + size; i < o.rk_y0; ++i) adj_buffer[i] = Real(0);
}

// The adjoint of impulse_substep in stages, each reading the substep's primal from d (the
// staged adjoint, kernels/step/staged_adjoint.hpp, runs them as kernels of their own over its
// tape; adj_impulse_substep below runs them in a row after recomputing the primal):
//   adj_impulse_begin      the integration's adjoint, λ = M̃⁻¹ qacc_bar, out̄ and J̄ of qacc's line
//   adj_impulse_solve_out  the Gauss–Seidel solve's adjoint (adj_impulse_solve), the activations'
//   adj_impulse_delassus   G's and c's adjoints -> J̄, Ȳ, v̄, qacc_smooth̄; the columns' Λ_s and
//                          mass terms; μ = M̃⁻¹ qacc_smooth̄
//   adj_impulse_rows       the blocks' rows -> contact frames (above)
//   adj_fwd_collision      contacts -> geom poses -> bodies
//   adj_impulse_end        τ̄ -> passive and actuator forces, the two RNEAs, the kinematics, q_mid's
// Each recomputes the workspace views and the live row count n (cheap).

// First stage: a's scratch cleared; q' = q_mid ⊕ (h/2) v', v' = v + h qacc (a.qpos becomes q_mid's
// adjoint, a.qvel v's); d.qpos, d.qvel <- the state the dynamics saw (q_mid, v); then qacc =
// M̃⁻¹ (τ + Jᵀ out / h): λ = M̃⁻¹ qacc_bar (in a.qacc), τ̄ = λ, out̄ = J λ / h, J̄ += out λᵀ / h.
template <class Real, class L>
SG_HD void adj_impulse_begin(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& d,
                             const Data<Real, L>& a, View<Real, L> adj_buffer) {
  const int nq = m.nq, nv = m.nv;
  const Real h = m.timestep, half = Real(0.5) * m.timestep;
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d), wb = impulse_workspace(m, a);
  const int n = sg_int(d.nefc()[0]);
  clear_impulse_adjoint_scratch(m, o, adj_buffer, wb, n);

  adj_integrate_pos(m, w.qmid, w.v1, half, a.qpos(), a.qvel());
  for (int i = 0; i < nv; ++i) a.qacc()[i] = h * a.qvel()[i];
  for (int i = 0; i < nq; ++i) d.qpos()[i] = w.qmid[i];  // the state the dynamics saw
  for (int i = 0; i < nv; ++i) d.qvel()[i] = w.v0[i];

  adj_ltdl_solve(m, d.qLD(), a.qacc());
  for (int i = 0; i < nv; ++i) a.qfrc_smooth()[i] = a.qacc()[i];
  for (int r = 0; r < n; ++r) {
    const int chain = row_chain(d, r);
    wb.out[r] = row_dot(m, d.efc_J(), r, chain, a.qacc()) / h;
    const Real f = w.out[r] / h;
    for_each_row_entry(m, chain,
                       [&](int slot, int col) { a.efc_J()[r * nv + slot] += f * a.qacc()[col]; });
  }
}

// out = impulse_solve(G, c, mu, σ); σ_b = σ(−κ dist_k) of each contact block.
template <class Real, class L>
SG_HD void adj_impulse_solve_out(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d), wb = impulse_workspace(m, a);
  const int n = sg_int(d.nefc()[0]);
  adj_impulse_solve(SerialTeam{m.team_width}, n / 3, w.G, w.c, w.mu, w.sigma, /*soft=*/true, w.dim, m.impulse_sweeps, w.P, w.record, wb.out,
                    wb.G, wb.c, wb.mu, wb.sigma, wb.P, w.step, wb.step);  // wb.step: which steps are the source's
  for (int b = 0; b < n / 3; ++b) {
    if (impulse_block_is_1d(d, b)) continue;
    const int k = sg_int(d.efc_id()[3 * b]);
    a.contact_dist()[k] -=
        adj_impulse_activation(-d.contact_dist()[k], m.impulse_kappa, wb.sigma[b]);
  }
}

// G_rs = J_r · Y_s (the pads are constants), c_r = J_r · (v + h qacc_smooth):
//   J̄_r += Σ_s Ḡ_rs Y_s + c̄_r (v + h qacc_smooth),  Ȳ_s += Σ_r Ḡ_rs J_r,
//   v̄ += Jᵀ c̄,  qacc_smooth̄ = h Jᵀ c̄;
// Y_s = M̃⁻¹ J_sᵀ: Λ_s = M̃⁻¹ Ȳ_s, J̄_s += Λ_s, and the mass term of (Y_s, −Λ_s);
// qacc_smooth = M̃⁻¹ τ: μ = M̃⁻¹ qacc_smooth̄ (in a.qacc_smooth), τ̄ += μ.
template <class Real, class L>
SG_HD void adj_impulse_delassus(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  const int nv = m.nv;
  const Real h = m.timestep;
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d), wb = impulse_workspace(m, a);
  const int n = sg_int(d.nefc()[0]);
  for (int r = 0; r < n; ++r) {
    const int chain = row_chain(d, r);
    if (chain == kChainEmpty) continue;
    if (impulse_row_is_unit(d, r)) {
      // a constant row ±e_k (chain k): no J̄_r; Ȳ_s and the c̄ terms touch column k alone (the
      // full loop's other terms add (±0) products, which change no sum: unit_row_dot)
      const Real J = d.efc_J()[r * nv];
      for (int s = 0; s < n; ++s)
        if (row_chain(d, s) != kChainEmpty) wb.Y[s * nv + chain] += wb.G[r * n + s] * J;
      const Real cb = wb.c[r];
      a.qvel()[chain] += cb * J;
      a.qacc_smooth()[chain] += h * cb * J;
      continue;
    }
    for (int s = 0; s < n; ++s) {
      // an empty row s has Y_s = 0 and no use for Ȳ_s (its Λ_s is skipped below)
      if (row_chain(d, s) == kChainEmpty) continue;
      const Real g = wb.G[r * n + s];
      for_each_row_entry(m, chain, [&](int slot, int col) {
        a.efc_J()[r * nv + slot] += g * w.Y[s * nv + col];
        wb.Y[s * nv + col] += g * d.efc_J()[r * nv + slot];
      });
    }
    const Real cb = wb.c[r];
    for_each_row_entry(m, chain, [&](int slot, int col) {
      const Real J = d.efc_J()[r * nv + slot];
      a.efc_J()[r * nv + slot] += cb * (w.v0[col] + h * d.qacc_smooth()[col]);
      a.qvel()[col] += cb * J;
      a.qacc_smooth()[col] += h * cb * J;
    });
  }
  for (int s = 0; s < n; ++s) {
    const int chain = row_chain(d, s);
    if (chain == kChainEmpty) continue;
    const View<Real, L> lam = wb.Y.at(s * nv);
    adj_ltdl_solve(m, d.qLD(), lam);
    for_each_row_entry(m, chain, [&](int slot, int col) { a.efc_J()[s * nv + slot] += lam[col]; });
    for (int c = 0; c < nv; ++c) lam[c] = -lam[c];
    adj_mass_product(m, d, a, w.Y.at(s * nv), lam, wb.bodies);
  }
  adj_ltdl_solve(m, d.qLD(), a.qacc_smooth());
  for (int i = 0; i < nv; ++i) a.qfrc_smooth()[i] += a.qacc_smooth()[i];
}

// Last stage: τ = passive + actuator − bias; M̃ qacc = τ + Jᵀ out / h and M̃ qacc_smooth = τ at
// fixed accelerations: RNEA(q, v, x) = M x + bias, adjoints −λ and −μ (together the bias's −τ̄);
// the kinematics; q_mid = q ⊕ (h/2) v. d.qpos <- the state before the substep.
template <class Real, class L>
SG_HD void adj_impulse_end(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  const int nq = m.nq, nv = m.nv;
  const Real half = Real(0.5) * m.timestep;
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  for (int i = 0; i < nv; ++i) {
    a.qfrc_passive()[i] = a.qfrc_smooth()[i];
    a.qfrc_actuator()[i] = a.qfrc_smooth()[i];
  }
  adj_passive_forces(m, d, a);
  adj_actuator_forces(m, d, a);
  rnea(m, d, /*use_qacc=*/true, d.qacc(), d.qfrc_bias());
  for (int i = 0; i < nv; ++i) a.qfrc_bias()[i] = -a.qacc()[i];
  adj_rnea(m, d, a, d.qacc(), a.qfrc_bias());
  rnea(m, d, /*use_qacc=*/true, d.qacc_smooth(), d.qfrc_bias());
  for (int i = 0; i < nv; ++i) a.qfrc_bias()[i] = -a.qacc_smooth()[i];
  adj_rnea(m, d, a, d.qacc_smooth(), a.qfrc_bias());
  adj_kinematics_tail(m, d, a);
  adj_integrate_pos(m, w.q0, w.v0, half, a.qpos(), a.qvel());
  for (int i = 0; i < nq; ++i) d.qpos()[i] = w.q0[i];
}

// Adjoint of impulse_substep(), with the contract of adj_substep (kernels/step/step_adjoint.hpp): on
// entry d holds the state and control before the substep, a.qpos / a.qvel the adjoints of the
// state after it; on exit a.qpos / a.qvel hold the adjoints of the state before, a.ctrl has
// accumulated the control adjoint, and d.qpos / d.qvel hold the state before again.
template <class Real, class L>
SG_HD SG_OUTLINE void adj_impulse_substep(const ModelView<Real>& m, const DataLayout& o, const Data<Real, L>& d,
                               const Data<Real, L>& a, View<Real, L> adj_buffer) {
  impulse_substep(m, d);
  adj_impulse_begin(m, o, d, a, adj_buffer);
  adj_impulse_solve_out(m, d, a);
  adj_impulse_delassus(m, d, a);
  // rows and contacts -> geometry -> bodies
  adj_impulse_rows(m, d, a);
  adj_fwd_collision(m, d, a);
  adj_impulse_end(m, d, a);
}

}  // namespace stiffgrad::kern
