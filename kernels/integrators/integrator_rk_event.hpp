// Saltation at located contact events: the event-aware gradients of the adaptive Runge–Kutta
// substeps (AdaptiveTolerances::event_gradients; kernels/integrators/integrator_rk.hpp locates the events).
//
// Why. With MuJoCo's soft contacts a contact's rows switch on when its distance g crosses the
// margin, and the force jumps there (the impedance is >= dmin > 0 at zero depth and the damping
// term acts on the approach velocity at once). The flow of ẏ = f(y), y = (q, v), is then
// differentiable but its derivative is not the product of the steps' derivatives: moving the
// input moves the event's time, and across the event the tangent picks up the jump of f. For an
// event on g(q) = 0 without a reset (Aizerman & Gantmacher; the "saltation matrix" of hybrid
// systems), the tangent just after the event is δy+ = S δy−,
//   S = I + (f+ − f−) ∇gᵀ / (∇gᵀ f−),
// f∓ the vector fields on either side. Here ∇g = (J_n, 0) (J_n the contact's normal Jacobian row:
// d(dist)/dt = J_n v) and f+ − f− = (0, Δacc) (the velocity is continuous), so
//   δq+ = δq−,   δv+ = δv− + Δacc (J_n δq−) / (J_n v).
// The reverse mode applies Sᵀ to the adjoint: λq− = λq+ + J_nᵀ (Δaccᵀ λv+) / (J_n v), λv− = λv+.
//
// Where. Event location leaves every switch inside an accepted step of at most event_step; that
// step's own derivative is the identity to O(h), so S is applied at its end: to the tangent of its
// result (forward mode, after the step) and to the adjoint of its result (reverse mode, before the
// step's adjoint), the exact transpose of each other. f− and f+ are the step's first and last
// stages (the last stage is evaluated at the result: FSAL), Δacc = acc_last − acc_first.
//
// Which contact. The active contacts (those with constraint rows) of the step's start and end
// states are matched by candidate pair and position (a contact point moves by |v| h, far below
// kEventMatchDistance, while two contacts of one pair are a geom's size apart); the unmatched
// ones switched. Several switching together are taken as one event on their mean distance. A
// change of row states alone (stick/slip, a contact's force reaching zero) moves the force
// continuously and needs no correction.
//
// Coordinates. J_n acts on velocities (the tangent space); the state's tangent and adjoint are in
// raw qpos coordinates. For a quaternion q = (w, u) moved by its local angular velocity
// (integrate_pos: q ⊗ exp(ω h / 2)), δθ = 2 Im(q̄ ⊗ δq) = 2 (w δu − δw u − u × δu), whose
// transpose maps a tangent adjoint t to λw = −2 u·t, λu = 2 (w t + u × t).
#pragma once

#include "kernels/constraint/constraint_rows.hpp"
#include "kernels/base/data.hpp"

namespace stiffgrad::kern {

// Positions of one contact at the two ends of a located step closer than this are the same contact (m).
constexpr double kEventMatchDistance = 1e-5;

// f(k) once for every contact k that has constraint rows (a contact's rows are consecutive).
template <class Real, class L, class F>
SG_HD void for_each_active_contact(const ModelView<Real>& m, const Data<Real, L>& d, F&& f) {
  if (m.nefc_max <= 0) return;
  const int nefc = sg_int(d.nefc()[0]);
  int last = -1;
  for (int i = 0; i < nefc; ++i) {
    if (sg_int(d.efc_type()[i]) < kCnstrContactFrictionless) continue;
    const int k = sg_int(d.efc_id()[i]);
    if (k != last) f(k);
    last = k;
  }
}

// ∇g += J_n of contact k (values only) into grad; returns J_n · qvel at the state in d. Uses
// d.solver_ws as the 6 x nv Jacobian scratch (free once the solve is done).
template <class Real, class L>
SG_HD double rk_event_add_normal_row(const ModelView<Real>& m, const Data<Real, L>& d, int k, View<Real, L> grad) {
  const View<Real, L> jac = d.solver_ws();
  contact_jacobian(m, d, k, jac);
  double rate = 0.0;
  for (int c = 0; c < m.nv; ++c) {
    const double jn = sg_double(contact_frame_row(m, d, k, jac, 0, c));
    grad[c] = Real(sg_double(grad[c]) + jn);
    rate += jn * sg_double(d.qvel()[c]);
  }
  return rate;
}

// The switching contacts of a located step whose start state is (q_start, v_start) and end state
// (q_end, v_end). `eval(q, v)` puts the state into d and runs the step's dynamics there (the
// forward's solve, bit for bit). Leaves ∇g in d.rk_event[0, nv) and d evaluated at the end state;
// returns ∇gᵀ f− = J_n v, or 0 when no contact switched (then S = I).
// In pieces around its three evaluations (the staged adjoint runs each evaluation's stages
// between them, kernels/step/staged_adjoint.hpp), with its running sums in RkEventSums:
//   rk_event_begin            ∇g cleared;                      then the dynamics at the end state
//   rk_event_end_contacts     the end state's active contacts;   then at the start state
//   rk_event_start_contacts   the start state's, matched or switched off; then at the end state
//   rk_event_finish           the end state's unmatched ones switched on; the rate
struct RkEventSums {
  double rate;   // Σ J_n v over the switching contacts
  int n_end;     // the end state's active contacts
  int switched;  // switching contacts
};

template <class Real, class L>
SG_HD SG_INLINE void rk_event_begin(const ModelView<Real>& m, const Data<Real, L>& d,
                                    RkEventSums& sums) {
  for (int c = 0; c < m.nv; ++c) d.rk_event()[c] = Real(0);
  sums.rate = 0.0;
  sums.n_end = 0;
  sums.switched = 0;
}

// d evaluated at the end state: its active contacts (pair, position) into d.rk_event[nv, ...).
template <class Real, class L>
SG_HD void rk_event_end_contacts(const ModelView<Real>& m, const Data<Real, L>& d,
                                 RkEventSums& sums) {
  const View<Real, L> ends = d.rk_event().at(m.nv);  // ends: pair, x, y, z per contact
  int n_end = 0;
  for_each_active_contact(m, d, [&](int k) {
    ends[4 * n_end] = d.contact_pair()[k];
    for (int i = 0; i < 3; ++i) ends[4 * n_end + 1 + i] = d.contact_pos()[3 * k + i];
    ++n_end;
  });
  sums.n_end = n_end;
}

// d evaluated at the start state: matched contacts are marked (pair -1), the others switched off.
template <class Real, class L>
SG_HD void rk_event_start_contacts(const ModelView<Real>& m, const Data<Real, L>& d,
                                   RkEventSums& sums) {
  const View<Real, L> grad = d.rk_event(), ends = d.rk_event().at(m.nv);
  const int n_end = sums.n_end;
  for_each_active_contact(m, d, [&](int k) {
    const int pair = sg_int(d.contact_pair()[k]);
    for (int e = 0; e < n_end; ++e) {
      if (sg_int(ends[4 * e]) != pair) continue;
      double d2 = 0.0;
      for (int i = 0; i < 3; ++i) {
        const double x = sg_double(ends[4 * e + 1 + i]) - sg_double(d.contact_pos()[3 * k + i]);
        d2 += x * x;
      }
      if (d2 <= kEventMatchDistance * kEventMatchDistance) {
        ends[4 * e] = Real(-1);
        return;
      }
    }
    sums.rate += rk_event_add_normal_row(m, d, k, grad);
    ++sums.switched;
  });
}

// d evaluated at the end state again: its unmatched contacts switched on (the same contacts in the
// same order as rk_event_end_contacts saw); returns the rate (0: none switched).
template <class Real, class L>
SG_HD double rk_event_finish(const ModelView<Real>& m, const Data<Real, L>& d, RkEventSums& sums) {
  const View<Real, L> grad = d.rk_event(), ends = d.rk_event().at(m.nv);
  int e = 0;
  for_each_active_contact(m, d, [&](int k) {
    if (sg_int(ends[4 * e]) >= 0) {
      sums.rate += rk_event_add_normal_row(m, d, k, grad);
      ++sums.switched;
    }
    ++e;
  });
  if (sums.switched == 0) return 0.0;
  for (int c = 0; c < m.nv; ++c) grad[c] = Real(sg_double(grad[c]) / sums.switched);
  const double rate = sums.rate / sums.switched;
  return sg_isfinite(rate) ? rate : 0.0;
}

template <class Real, class L, class Eval>
SG_HD double rk_event_normal(const ModelView<Real>& m, const Data<Real, L>& d,
                             View<Real, L> q_start, View<Real, L> v_start, View<Real, L> q_end,
                             View<Real, L> v_end, Eval&& eval) {
  RkEventSums sums;
  rk_event_begin(m, d, sums);
  eval(q_end, v_end);
  rk_event_end_contacts(m, d, sums);
  eval(q_start, v_start);
  rk_event_start_contacts(m, d, sums);
  eval(q_end, v_end);
  return rk_event_finish(m, d, sums);
}

// Forward mode: δv += Δacc (∇g · δθ) / rate on every direction of the tangent of the state in
// d.qpos, d.qvel (δθ from the raw δq, header), Δacc = acc_end − acc_start. Values unchanged.
template <class Real, class L>
SG_HD void rk_event_tangent(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, L> acc_start,
                            View<Real, L> acc_end, double rate) {
  if constexpr (is_dual_number<Real>::value) {
    using T = decltype(Real::v);  // the scalar of the value and each direction
    constexpr int N = sizeof(Real::d) / sizeof(Real::d[0]);
    const View<Real, L> grad = d.rk_event();
    for (int n = 0; n < N; ++n) {
      T along(0);  // ∇g · δθ
      for (int j = 0; j < m.njnt; ++j) {
        int pa = m.jnt_qposadr[j], da = m.jnt_dofadr[j];
        const int type = m.jnt_type[j];
        if (type == kJntFree) {
          for (int c = 0; c < 3; ++c) along += grad[da + c].v * d.qpos()[pa + c].d[n];
          pa += 3;
          da += 3;
        }
        if (type == kJntFree || type == kJntBall) {
          const T w = d.qpos()[pa].v,
                  u[3] = {d.qpos()[pa + 1].v, d.qpos()[pa + 2].v, d.qpos()[pa + 3].v};
          const T dw = d.qpos()[pa].d[n],
                  du[3] = {d.qpos()[pa + 1].d[n], d.qpos()[pa + 2].d[n], d.qpos()[pa + 3].d[n]};
          for (int c = 0; c < 3; ++c) {
            const int a = (c + 1) % 3, b = (c + 2) % 3;
            const T dtheta = T(2) * (w * du[c] - dw * u[c] - (u[a] * du[b] - u[b] * du[a]));
            along += grad[da + c].v * dtheta;
          }
        } else {
          along += grad[da].v * d.qpos()[pa].d[n];
        }
      }
      const T s = along / T(rate);
      for (int c = 0; c < m.nv; ++c) d.qvel()[c].d[n] += (acc_end[c].v - acc_start[c].v) * s;
    }
  }
}

// Reverse mode, the transpose: a.qpos += Eᵀ ∇g (Δaccᵀ a.qvel) / rate (raw coordinates at the end
// state's qpos in `q_end`); a.qvel unchanged.
template <class Real, class L>
SG_HD void adj_rk_event(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                        View<Real, L> q_end, View<Real, L> acc_start, View<Real, L> acc_end, double rate) {
  double along = 0.0;  // Δaccᵀ λv
  for (int c = 0; c < m.nv; ++c)
    along += sg_double(acc_end[c] - acc_start[c]) * sg_double(a.qvel()[c]);
  const Real s = Real(along / rate);
  const View<Real, L> grad = d.rk_event();
  for (int j = 0; j < m.njnt; ++j) {
    int pa = m.jnt_qposadr[j], da = m.jnt_dofadr[j];
    const int type = m.jnt_type[j];
    if (type == kJntFree) {
      for (int c = 0; c < 3; ++c) a.qpos()[pa + c] += grad[da + c] * s;
      pa += 3;
      da += 3;
    }
    if (type == kJntFree || type == kJntBall) {
      const Real w = q_end[pa], u[3] = {q_end[pa + 1], q_end[pa + 2], q_end[pa + 3]};
      const Real t[3] = {grad[da] * s, grad[da + 1] * s, grad[da + 2] * s};
      a.qpos()[pa] += Real(-2) * (u[0] * t[0] + u[1] * t[1] + u[2] * t[2]);
      for (int c = 0; c < 3; ++c) {
        const int p = (c + 1) % 3, r = (c + 2) % 3;
        a.qpos()[pa + 1 + c] += Real(2) * (w * t[c] + (u[p] * t[r] - u[r] * t[p]));
      }
    } else {
      a.qpos()[pa] += grad[da] * s;
    }
  }
}

}  // namespace stiffgrad::kern
