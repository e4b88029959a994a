// One substep of the Impulse contact model (Schwarke et al., the model BCG trains with; issue 9
// part 1; docs/references/bcg-diffmjx-shac.md "Schwarke et al. simulator"): Moreau midpoint
// stepping with velocity-level impulses.
//   q_mid = q ⊕ (h/2) v                                       (half a position step)
//   at (q_mid, v): kinematics, M, τ = passive + actuator − bias; M̃ = M + h D (joint damping
//   implicit, as MuJoCo's Euler; M̃ = M without damping, as in the source), and with
//   m.implicit_actuator_damping (Integrator::ImplicitDampingEuler) D also holds the actuators'
//   velocity gains (kernels/step/step.hpp, add_implicit_actuator_damping): position servos with a
//   kv whose explicit step h kv / I exceeds 2 on a light joint are unstable to first order even
//   where the force clamp keeps the motion bounded, and this is what keeps their gradient finite
//   rows J at q_mid (kernels/impulse/impulse_rows.hpp), Y = M̃⁻¹ Jᵀ, Delassus G = J Y (1-D blocks padded)
//   free velocity c = J v + h J M̃⁻¹ τ
//   impulses out = σ P from `impulse_sweeps` projected Gauss–Seidel sweeps (kernels/impulse/impulse_solve.hpp)
//   qacc = M̃⁻¹ (τ + Jᵀ out / h);  v' = v + h qacc;  q' = q_mid ⊕ (h/2) v'
// The last line is the source's q' = q + h (v + v')/2 taken as two half steps on the manifold
// (identical for every joint but free/ball rotations, where the composition is the exact one).
// Purely velocity-level and inelastic: no position correction. The result is a deterministic
// function of (q, v, ctrl): there is no warm start. efc_force holds out / h (forces, so that
// the contact statistics read as for the soft model), qfrc_constraint Jᵀ out / h.
#pragma once

#include "kernels/base/team.hpp"
#include "kernels/impulse/impulse_rows.hpp"
#include "kernels/step/step.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD SG_INLINE ImpulseWorkspace<Real, L> impulse_workspace(const ModelView<Real>& m, const Data<Real, L>& d) {
  return ImpulseWorkspace<Real, L>::bind(d.imp_ws(), m.nq, m.nv, m.nbody, m.nefc_max,
                                         m.impulse_sweeps);
}

// Whether block b is 1-D (friction loss, limit): its rows 1 and 2 are empty and padded.
template <class Real, class L>
SG_HD SG_INLINE bool impulse_block_is_1d(const Data<Real, L>& d, int b) {
  return sg_int(d.efc_type()[3 * b]) != kCnstrContactElliptic;
}

// Whether row r is a 1-D block's row 0: the unit row ±e_k of a friction loss or a limit on dof k
// (kernels/impulse/impulse_rows.hpp), whose chain is k and whose one non-zero is slot 0 (k itself).
template <class Real, class L>
SG_HD SG_INLINE bool impulse_row_is_unit(const Data<Real, L>& d, int r) {
  return r % 3 == 0 && impulse_block_is_1d(d, r / 3);
}

// row_dot of such a row (chain k), bit for bit: row_dot's sum starts at +0, its first term is
// slot 0's, and each further term is (+0)·x_c = ±0, which leaves a sum that never is −0
// unchanged (for finite x). On the G1 half the live rows are the 29 friction-loss rows, and
// their chains are 7 to 16 dofs long.
template <class Real, class L, class LX>
SG_HD SG_INLINE Real unit_row_dot(const ModelView<Real>& m, View<Real, L> J, int r, int k,
                                  View<Real, LX> x) {
  return Real(0) + J[r * m.nv] * x[k];
}

// Y (row r = M̃⁻¹ J_rᵀ), G = J Y (stride n, padded) and c = J v0 + h J qacc_smooth for the n live
// rows into the working set s (kernels/impulse/impulse_workspace.hpp), by a team
// (kernels/base/team.hpp): row r is one item of each pass (its Y row; then its entries G_rs =
// G_sr, s <= r, its c_r and, for a padded row, its unit pad G_rr = 1), so every entry is computed
// by one lane with the code a single thread runs, and the result does not depend on the team.
// Needs d.qLD (M̃'s factor), d.qacc_smooth and the rows; v0: the substep's start velocity.
template <class Team, class Real, class L, class LS>
SG_HD void impulse_delassus(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d,
                            const ImpulseSolveSet<Real, LS>& w, View<Real, L> v0, int n) {
  const int nv = m.nv;
  team.for_each(n, [&](int r) {
    const View<Real, LS> y = w.Y.at(r * nv);
    for (int c = 0; c < nv; ++c) y[c] = Real(0);
    const int chain = row_chain(d, r);
    if (chain == kChainEmpty) return;
    for_each_row_entry(m, chain, [&](int slot, int col) { y[col] = d.efc_J()[r * nv + slot]; });
    if (chain == kChainDense)
      ltdl_solve(m, d.qLD(), y);
    else
      ltdl_solve_chain(m, d.qLD(), y, chain);  // the row's own pattern: chain = its deepest dof
  });
  team.sync();  // row r's entries read the Y rows s <= r, other lanes' items
  team.for_each(n, [&](int r) {
    const int chain = row_chain(d, r);
    const bool unit = impulse_row_is_unit(d, r);
    const auto dot = [&](auto x) {
      return unit ? unit_row_dot(m, d.efc_J(), r, chain, x) : row_dot(m, d.efc_J(), r, chain, x);
    };
    // item r writes G_rs and G_sr for s <= r: no other item writes them
    for (int s = 0; s <= r; ++s) {
      // an empty row (a 1-D block's rows 1, 2) has Y_s = 0: its entries are exact zeros
      const bool empty = chain == kChainEmpty || row_chain(d, s) == kChainEmpty;
      const Real g = empty ? Real(0) : dot(w.Y.at(s * nv));
      w.G[r * n + s] = g;
      w.G[s * n + r] = g;
    }
    if (r % 3 != 0 && impulse_block_is_1d(d, r / 3)) w.G[r * n + r] = Real(1);
    w.c[r] = dot(v0) + m.timestep * dot(d.qacc_smooth());
  });
  team.sync();
}

// The substep's stages (the staged CUDA pipeline runs them as separate kernels,
// kernels/step/staged_step.hpp; impulse_substep below runs them in a row).
// First: the start state saved and the half position step to q_mid.
template <class Real, class L>
SG_HD void impulse_substep_half_step(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int nq = m.nq, nv = m.nv;
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  for (int i = 0; i < nq; ++i) w.q0[i] = d.qpos()[i];
  for (int i = 0; i < nv; ++i) w.v0[i] = d.qvel()[i];
  integrate_pos(m, d.qpos(), d.qvel(), Real(0.5) * m.timestep);
  for (int i = 0; i < nq; ++i) w.qmid[i] = d.qpos()[i];
}

// Then, at (q_mid, v): kinematics, velocities and actuation (before the narrow phase), ...
template <class Real, class L>
SG_HD void impulse_substep_kinematics(const ModelView<Real>& m, const Data<Real, L>& d) {
  fwd_position(m, d);
  fwd_velocity(m, d);
  fwd_actuation(m, d);
}

// ... and τ, M̃'s factor and qacc_smooth = M̃⁻¹ τ.
template <class Real, class L>
SG_HD void impulse_substep_smooth(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int nv = m.nv;
  for (int i = 0; i < nv; ++i)
    d.qfrc_smooth()[i] = d.qfrc_passive()[i] + d.qfrc_actuator()[i] - d.qfrc_bias()[i];
  factor_mass(m, d, m.timestep);
  for (int i = 0; i < nv; ++i) d.qacc_smooth()[i] = d.qfrc_smooth()[i];
  ltdl_solve(m, d.qLD(), d.qacc_smooth());
}

// After the rows: the Delassus assembly and the impulses, by a team (kernels/base/team.hpp) whose
// width is m.team_width (the solve's sums follow it: SerialTeam{m.team_width} and a warp of that
// width give the same impulses bit for bit), on the working set s; the sweeps' record goes to
// the workspace's.
template <class Team, class Real, class L, class LS>
SG_HD void impulse_substep_solve_on(const Team& team, const ModelView<Real>& m,
                                    const Data<Real, L>& d, const ImpulseWorkspace<Real, L>& w,
                                    const ImpulseSolveSet<Real, LS>& s, int n) {
  impulse_delassus(team, m, d, s, w.v0, n);
  impulse_solve(team, n / 3, s.G, s.c, s.mu, s.sigma, /*soft=*/true, s.dim, m.impulse_sweeps,
                s.step, s.P, s.out, w.record);
  if (team.leader()) d.solver_niter()[0] = Real(m.impulse_sweeps);
}

// The solve stage in the workspace itself (the CPU backend; the GPU's fallback).
template <class Team, class Real, class L>
SG_HD void impulse_substep_solve(const Team& team, const ModelView<Real>& m, const Data<Real, L>& d) {
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  impulse_substep_solve_on(team, m, d, w, impulse_solve_set_in_place(w), sg_int(d.nefc()[0]));
}

// Whether the solve of n live rows fits a scratch of `capacity` Reals (none fits no scratch).
SG_HD SG_INLINE bool impulse_solve_fits(int n, int nv, int capacity) {
  return capacity > 0 && impulse_solve_set_size(n, nv) <= capacity;
}

// The solve stage in `scratch`, faster memory that holds its working set (impulse_solve_fits: on
// the GPU a warp's share of its block's shared memory, issue 38 item 2). The sweeps read all of
// G (n² Reals) per sweep with each lane on its own blocks, a stride of one environment per
// element in the environment-minor workspace; in the scratch they are contiguous. The blocks'
// friction, activation and width go in first; G, Y, c, the steps and the impulses come back out
// after (the finish reads Y and out, the adjoint's tape every one). The same operations on the
// same values in the same order: the result is the in-place solve's, bit for bit, whichever
// memory holds it.
template <class Team, class Real, class L, class LS>
SG_HD void impulse_substep_solve_scratch(const Team& team, const ModelView<Real>& m,
                                         const Data<Real, L>& d, View<Real, LS> scratch) {
  const int n = sg_int(d.nefc()[0]), nv = m.nv, nb = n / 3;
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  const ImpulseSolveSet<Real, LS> s = ImpulseSolveSet<Real, LS>::packed(scratch, n, nv);
  team.for_each(nb, [&](int b) {
    s.mu[b] = w.mu[b];
    s.sigma[b] = w.sigma[b];
    s.dim[b] = w.dim[b];
  });
  team.sync();
  impulse_substep_solve_on(team, m, d, w, s, n);
  const auto copy_out = [&](View<Real, LS> from, View<Real, L> to, int k) {
    team.for_each(k, [&](int i) { to[i] = from[i]; });
  };
  copy_out(s.G, w.G, n * n);
  copy_out(s.Y, w.Y, n * nv);
  copy_out(s.c, w.c, n);
  copy_out(s.step, w.step, nb);
  copy_out(s.P, w.P, n);
  copy_out(s.out, w.out, n);
  team.sync();
}

// In a scratch of `capacity` Reals where the working set fits, else in the workspace (the CUDA
// stage makes the same choice per environment in two launches, backends/cuda/staged_step_impl.cuh).
template <class Team, class Real, class L, class LS>
SG_HD void impulse_substep_solve_in(const Team& team, const ModelView<Real>& m,
                                    const Data<Real, L>& d, View<Real, LS> scratch, int capacity) {
  if (impulse_solve_fits(sg_int(d.nefc()[0]), m.nv, capacity))
    impulse_substep_solve_scratch(team, m, d, scratch);
  else
    impulse_substep_solve(team, m, d);
}

// After the solve: qacc, v' and q' (the step's last two lines).
template <class Real, class L>
SG_HD void impulse_substep_finish(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int nv = m.nv;
  const Real h = m.timestep;
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  const int n = sg_int(d.nefc()[0]);
  for (int i = 0; i < nv; ++i) {
    d.qfrc_constraint()[i] = Real(0);
    d.qacc()[i] = d.qacc_smooth()[i];
  }
  for (int r = 0; r < n; ++r) {
    const Real f = w.out[r] / h;
    d.efc_force()[r] = f;
    const int chain = row_chain(d, r);
    if (chain == kChainEmpty) continue;
    row_axpy(m, d.efc_J(), r, chain, f, d.qfrc_constraint());
    for (int c = 0; c < nv; ++c) d.qacc()[c] += w.Y[r * nv + c] * f;
  }
  for (int i = 0; i < nv; ++i) {
    d.qvel()[i] = w.v0[i] + h * d.qacc()[i];
    w.v1[i] = d.qvel()[i];
  }
  integrate_pos(m, d.qpos(), d.qvel(), Real(0.5) * h);
}

// Advances d.qpos, d.qvel by one substep; returns status bits (0: none). Needs m.nefc_max > 0
// (the Simulator sizes the rows; core/constraint_capacity.cpp). One thread: the solve sums in
// the order of m.team_width, as the warp-per-environment stage does (kernels/step/staged_step.hpp).
template <class Real, class L>
SG_HD SG_OUTLINE int impulse_substep(const ModelView<Real>& m, const Data<Real, L>& d) {
  const ImpulseWorkspace<Real, L> w = impulse_workspace(m, d);
  impulse_substep_half_step(m, d);
  impulse_substep_kinematics(m, d);
  impulse_substep_smooth(m, d);
  int status = fwd_collision(m, d);
  status |= impulse_rows(m, d, w.mu, w.sigma, w.dim);
  impulse_substep_solve(SerialTeam{m.team_width}, m, d);
  impulse_substep_finish(m, d);
  return status;
}

}  // namespace stiffgrad::kern
