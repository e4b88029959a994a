// Constraint rows (MuJoCo 2.2.2's mj_makeConstraint, mj_diagApprox, mj_makeImpedance and
// mj_referenceConstraint; docs/references/mujoco-2.2.2-constraints.md §3-4): Jacobian, position,
// margin, impedance, regularizer R, D = 1/R and the reference acceleration of every row, in
// MuJoCo's order: friction loss (dofs, tendons), limits (joints, tendons), contacts.
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/math3.hpp"
#include "kernels/collision/collision_driver.hpp"
#include "kernels/constraint/row_sparsity.hpp"
#include "kernels/dynamics/point_jacobian.hpp"

namespace stiffgrad::kern {

constexpr double kMinVal = 1e-15;  // mjMINVAL
constexpr double kMinImp = 1e-4;   // mjMINIMP
constexpr double kMaxImp = 0.9999; // mjMAXIMP

// solimp with MuJoCo's clamps: dmin, dmax, mid in [mjMINIMP, mjMAXIMP], width >= 0, power >= 1.
template <class Real>
struct Solimp {
  Real dmin, dmax, width, mid, power;
};
template <class Real>
SG_HD SG_INLINE Solimp<Real> clamp_solimp(const Real* s) {
  Solimp<Real> o;
  o.dmin = sg_clamp(s[0], Real(kMinImp), Real(kMaxImp));
  o.dmax = sg_clamp(s[1], Real(kMinImp), Real(kMaxImp));
  o.width = s[2] < Real(0) ? Real(0) : s[2];
  o.mid = sg_clamp(s[3], Real(kMinImp), Real(kMaxImp));
  o.power = s[4] < Real(1) ? Real(1) : s[4];
  return o;
}

// Impedance d(r) and its derivative dd/dr, r = pos - margin (facts §4).
template <class Real>
SG_HD SG_INLINE void impedance(const Solimp<Real>& s, Real r, Real* imp, Real* dimp) {
  *dimp = Real(0);
  if (s.dmin == s.dmax || s.width <= Real(kMinVal)) {
    *imp = Real(0.5) * (s.dmin + s.dmax);
    return;
  }
  const Real x = sg_abs(r) / s.width;
  if (x >= Real(1)) { *imp = s.dmax; return; }
  if (x <= Real(0)) { *imp = s.dmin; return; }
  Real y, dy;
  if (s.power == Real(1)) {
    y = x;
    dy = Real(1);
  } else if (s.power == Real(2)) {
    // the default power, without pow(): the same spline (to rounding: x*x is correctly rounded)
    if (x <= s.mid) {
      y = x * x / s.mid;
      dy = Real(2) * x / s.mid;
    } else {
      const Real u = Real(1) - x, w = Real(1) - s.mid;
      y = Real(1) - u * u / w;
      dy = Real(2) * u / w;
    }
  } else if (x <= s.mid) {
    const Real a = Real(1) / sg_pow(s.mid, s.power - Real(1));
    y = a * sg_pow(x, s.power);
    dy = s.power * a * sg_pow(x, s.power - Real(1));
  } else {
    const Real a = Real(1) / sg_pow(Real(1) - s.mid, s.power - Real(1));
    y = Real(1) - a * sg_pow(Real(1) - x, s.power);
    dy = s.power * a * sg_pow(Real(1) - x, s.power - Real(1));
  }
  *imp = s.dmin + y * (s.dmax - s.dmin);
  // d|r|/dr = sign(r); dx/d|r| = 1/width
  *dimp = (r < Real(0) ? Real(-1) : Real(1)) * dy * (s.dmax - s.dmin) / s.width;
}

// Stiffness K and damping B of the reference acceleration (facts §4): both from dmax, with
// refsafe clamping the time constant to >= 2h in the standard form.
template <class Real>
SG_HD SG_INLINE void reference_gains(const ModelView<Real>& m, const Real* solref, Real dmax, Real* K, Real* B) {
  Real ref0 = solref[0], ref1 = solref[1];
  if ((ref0 > Real(0)) != (ref1 > Real(0)) && !(ref0 <= Real(0) && ref1 <= Real(0))) {
    ref0 = Real(0.02);  // mixed signs: MuJoCo warns and uses the default
    ref1 = Real(1);
  }
  if (ref0 > Real(0)) {
    const Real tc = m.refsafe && ref0 < Real(2) * m.timestep ? Real(2) * m.timestep : ref0;
    *K = Real(1) / (dmax * dmax * tc * tc * ref1 * ref1);
    *B = Real(2) / (dmax * tc);
  } else {
    *K = -ref0 / (dmax * dmax);
    *B = -ref1 / dmax;
  }
}

// jac (6 x nv, rows: 3 translational then 3 rotational, row-major) += sign * the Jacobian of the
// point `point` (relative to body b's tree origin) rigidly attached to body b.
template <class Real, class L>
SG_HD void add_point_jacobian(const ModelView<Real>& m, const Data<Real, L>& d, int b, const Real point[3],
                              Real sign, View<Real, L> jac) {
  const int nv = m.nv;
  for_each_point_jacobian_column(m, d, b, point, [&](int i, const Real* lin, const Real* ang) {
    for (int k = 0; k < 3; ++k) {
      jac[k * nv + i] += sign * lin[k];
      jac[(3 + k) * nv + i] += sign * ang[k];
    }
  });
}

// One row's parameters before the contact-specific R overwrite.
template <class Real>
struct RowParams {
  Real pos, margin, frictionloss, diag_approx;
  const Real* solref;
  const Real* solimp;
};

// Appends row data (J already in efc_J row `i`): impedance, KBIP, diagApprox, the first-pass R
// and D (facts §4), efc_vel and aref (aref's K term is dropped when zero_K).
template <class Real, class L>
SG_HD void finish_row(const ModelView<Real>& m, const Data<Real, L>& d, int i, int type, int id,
                      const RowParams<Real>& p, Real imp, Real dimp, bool zero_K) {
  const Solimp<Real> si = clamp_solimp(p.solimp);
  Real K, B;
  reference_gains(m, p.solref, si.dmax, &K, &B);
  if (zero_K) K = Real(0);
  d.efc_type()[i] = Real(type);
  d.efc_id()[i] = Real(id);
  d.efc_pos()[i] = p.pos;
  d.efc_margin()[i] = p.margin;
  d.efc_frictionloss()[i] = p.frictionloss;
  d.efc_mu()[i] = Real(0);
  d.efc_dim()[i] = Real(0);
  d.efc_KBIP()[4 * i] = K;
  d.efc_KBIP()[4 * i + 1] = B;
  d.efc_KBIP()[4 * i + 2] = imp;
  d.efc_KBIP()[4 * i + 3] = dimp;
  d.efc_diag_approx()[i] = p.diag_approx;
  Real R = (Real(1) - imp) / imp * p.diag_approx;
  if (R < Real(kMinVal)) R = Real(kMinVal);
  d.efc_R()[i] = R;
  d.efc_D()[i] = Real(1) / R;
  const Real vel = row_dot(m, d.efc_J(), i, row_chain(d, i), d.qvel());
  d.efc_vel()[i] = vel;
  d.efc_aref()[i] = -B * vel - K * imp * (p.pos - p.margin);
}

// finish_row with the impedance of the row's own r = pos - margin (limits, friction loss).
template <class Real, class L>
SG_HD SG_INLINE void finish_row_own_impedance(const ModelView<Real>& m, const Data<Real, L>& d, int i, int type,
                                              int id, const RowParams<Real>& p, bool zero_K) {
  Real imp, dimp;
  impedance(clamp_solimp(p.solimp), p.pos - p.margin, &imp, &dimp);
  finish_row(m, d, i, type, id, p, imp, dimp, zero_K);
}

// Whether a contact's first row has R = mjMINVAL, the floor every row's R is held to: its
// diagApprox W (the bodies' translational invweight0, times 1 + mu² for a pyramid edge) is so
// small that (1 − imp)/imp W falls below it. W is 0 when both bodies' centres of mass cannot
// translate at qpos0: a geom on a hinge's axis, its body's centre on the axis (the UR10e's
// shoulder capsule on its floor). The R overwrites then start from the floor, as MuJoCo's do;
// from (1 − imp)/imp W they gave R = 0 and D = ∞, and a non-finite force.
template <class Real>
SG_HD SG_INLINE bool contact_R_is_floor(Real imp, Real W) {
  return (Real(1) - imp) / imp * W < Real(kMinVal);
}

// Sets R (and D, diagApprox) of row i: the contact overwrite of facts §4.
template <class Real, class L>
SG_HD SG_INLINE void set_row_R(const Data<Real, L>& d, int i, Real R) {
  const Real imp = d.efc_KBIP()[4 * i + 2];
  d.efc_R()[i] = R;
  d.efc_D()[i] = Real(1) / R;
  d.efc_diag_approx()[i] = R * imp / (Real(1) - imp);
}

// Clears efc_J row i and records its structural chain (row_sparsity.hpp); the builder then
// writes the row's entries in the slots row_slot / for_each_row_entry give.
template <class Real, class L>
SG_HD SG_INLINE void begin_row(const ModelView<Real>& m, const Data<Real, L>& d, int i, int chain) {
  // only the chain's slots: every reader of a row visits those alone (for_each_row_entry)
  const int slots = chain == kChainDense ? m.nv : (chain >= 0 ? m.dof_chainnum[chain] : 0);
  for (int c = 0; c < slots; ++c) d.efc_J()[i * m.nv + c] = Real(0);
  d.efc_chain()[i] = Real(encode_chain(chain));
}

// A unit row on dof `dof` (friction loss) or its negative (upper limit) into efc_J row i.
template <class Real, class L>
SG_HD SG_INLINE void unit_row(const ModelView<Real>& m, const Data<Real, L>& d, int i, int dof, Real value) {
  begin_row(m, d, i, dof);
  d.efc_J()[i * m.nv + row_slot(m, dof, dof)] = value;
}

// Fixed tendon t's Jacobian times `scale` into efc_J row i (length = sum coef qpos[joint]).
template <class Real, class L>
SG_HD SG_INLINE void tendon_row(const ModelView<Real>& m, const Data<Real, L>& d, int i, int t, Real scale) {
  int chain = kChainEmpty;
  for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w)
    chain = chain_union(m, chain, m.jnt_dofadr[m.wrap_jntid[w]]);
  begin_row(m, d, i, chain);
  for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w)
    d.efc_J()[i * m.nv + row_slot(m, chain, m.jnt_dofadr[m.wrap_jntid[w]])] +=
        scale * m.wrap_coef[w];
}

// Fixed tendon t's length sum coef qpos[joint] at the joint positions q (qpos-indexed).
template <class Real, class Q>
SG_HD SG_INLINE Real fixed_tendon_length(const ModelView<Real>& m, const Q& q, int t) {
  Real len = Real(0);
  for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w)
    len += m.wrap_coef[w] * q[m.jnt_qposadr[m.wrap_jntid[w]]];
  return len;
}

template <class Real, class L>
SG_HD SG_INLINE Real tendon_length(const ModelView<Real>& m, const Data<Real, L>& d, int t) {
  return fixed_tendon_length(m, d.qpos(), t);
}

// ---------------------------------------------------------------- equality constraints
// MuJoCo 2.2.2's mj_instantiateEquality (connect, joint, tendon; weld is refused by the loader)
// with its mj_diagApprox and mj_makeImpedance entries: a constraint's rows share one impedance,
// from the norm of its residual (margin 0), and every row is an equality row (always in the
// quadratic state of the solver).

// sign × the translational rows of body b's point Jacobian at `point` (relative to b's tree
// origin) added into efc_J rows first .. first + 2, whose chain `chain` holds b's dofs
// (add_point_jacobian's columns, written into row slots).
template <class Real, class L>
SG_HD void add_point_jacobian_rows(const ModelView<Real>& m, const Data<Real, L>& d, int b,
                                   const Real point[3], Real sign, int first, int chain) {
  const int nv = m.nv;
  for_each_point_jacobian_column(m, d, b, point, [&](int i, const Real* lin, const Real*) {
    const int slot = row_slot(m, chain, i);
    for (int k = 0; k < 3; ++k) d.efc_J()[(first + k) * nv + slot] += sign * lin[k];
  });
}

// Connect constraint e's anchor points, each relative to its own body's tree origin (p1 on
// body1 from eq_data[0..2], p2 on body2 from eq_data[3..5]), and the residual cpos = p1 − p2 in
// the world.
template <class Real, class L>
SG_HD SG_INLINE void connect_points(const ModelView<Real>& m, const Data<Real, L>& d, int e,
                                    Real p1[3], Real p2[3], Real cpos[3]) {
  const int b1 = m.eq_obj1id[e], b2 = m.eq_obj2id[e];
  const Real* data = m.eq_data + kEqData * e;
  Real r1[9], r2[9];
  load9(r1, d.xmat(), 9 * b1);
  load9(r2, d.xmat(), 9 * b2);
  mat_vec3(p1, r1, data);
  mat_vec3(p2, r2, data + 3);
  for (int k = 0; k < 3; ++k) {
    p1[k] += d.xpos()[3 * b1 + k];
    p2[k] += d.xpos()[3 * b2 + k];
    cpos[k] = (p1[k] - p2[k]) + (d.tree_origin()[3 * b1 + k] - d.tree_origin()[3 * b2 + k]);
  }
}

// Fixed tendon t's length at qpos0 (MuJoCo's tendon_length0).
template <class Real>
SG_HD SG_INLINE Real tendon_length0(const ModelView<Real>& m, int t) {
  return fixed_tendon_length(m, m.qpos0, t);
}

// A joint or tendon coupling's scalar positions: x1 − ref1 of object 1, and dif = x2 − ref2 of
// object 2 (0 when there is none).
template <class Real, class L>
SG_HD SG_INLINE void coupling_positions(const ModelView<Real>& m, const Data<Real, L>& d, int e,
                                        Real* x1, Real* ref1, Real* dif) {
  const int o1 = m.eq_obj1id[e], o2 = m.eq_obj2id[e];
  if (m.eq_type[e] == kEqJoint) {
    *x1 = d.qpos()[m.jnt_qposadr[o1]];
    *ref1 = m.qpos0[m.jnt_qposadr[o1]];
    *dif = o2 >= 0 ? d.qpos()[m.jnt_qposadr[o2]] - m.qpos0[m.jnt_qposadr[o2]] : Real(0);
  } else {
    *x1 = tendon_length(m, d, o1);
    *ref1 = tendon_length0(m, o1);
    *dif = o2 >= 0 ? tendon_length(m, d, o2) - tendon_length0(m, o2) : Real(0);
  }
}

// The coupling's residual x1 − ref1 − c0 − (c1 dif + c2 dif² + c3 dif³ + c4 dif⁴) and its
// derivative in dif, in MuJoCo's operation order; without object 2 the residual is x1 − ref1 − c0.
template <class Real>
SG_HD SG_INLINE Real coupling_residual(const Real* c, Real x1, Real ref1, bool two, Real dif,
                                       Real* deriv) {
  if (!two) {
    *deriv = Real(0);
    return x1 - ref1 - c[0];
  }
  *deriv =
      c[1] + Real(2) * c[2] * dif + Real(3) * c[3] * dif * dif + Real(4) * c[4] * dif * dif * dif;
  return x1 - ref1 - c[0] -
         (c[1] * dif + c[2] * dif * dif + c[3] * dif * dif * dif + c[4] * dif * dif * dif * dif);
}

// The chain of a joint or tendon coupling's row (the union of its dofs' chains).
template <class Real>
SG_HD SG_INLINE int coupling_chain(const ModelView<Real>& m, int e) {
  int chain = kChainEmpty;
  for (int side = 0; side < 2; ++side) {
    const int o = side == 0 ? m.eq_obj1id[e] : m.eq_obj2id[e];
    if (o < 0) continue;
    if (m.eq_type[e] == kEqJoint) {
      chain = chain_union(m, chain, m.jnt_dofadr[o]);
    } else {
      for (int w = m.tendon_adr[o]; w < m.tendon_adr[o] + m.tendon_num[o]; ++w)
        chain = chain_union(m, chain, m.jnt_dofadr[m.wrap_jntid[w]]);
    }
  }
  return chain;
}

// Object `o` (a joint or a fixed tendon) of a coupling's Jacobian, times `scale`, into efc_J row
// i with chain `chain`.
template <class Real, class L>
SG_HD SG_INLINE void add_coupling_jacobian(const ModelView<Real>& m, const Data<Real, L>& d, int e,
                                           int o, int i, int chain, Real scale) {
  if (m.eq_type[e] == kEqJoint) {
    d.efc_J()[i * m.nv + row_slot(m, chain, m.jnt_dofadr[o])] += scale;
    return;
  }
  for (int w = m.tendon_adr[o]; w < m.tendon_adr[o] + m.tendon_num[o]; ++w)
    d.efc_J()[i * m.nv + row_slot(m, chain, m.jnt_dofadr[m.wrap_jntid[w]])] +=
        scale * m.wrap_coef[w];
}

// Rows of the active equality constraints, from row `nefc` on; returns the new row count, or −1
// past the capacity.
template <class Real, class L>
SG_HD int equality_rows(const ModelView<Real>& m, const Data<Real, L>& d, int nefc) {
  const Real zero = Real(0);
  for (int e = 0; e < m.neq; ++e) {
    if (!m.eq_active[e]) continue;
    const Real* solref = m.eq_solref + 2 * e;
    const Real* solimp = m.eq_solimp + 5 * e;
    const int o1 = m.eq_obj1id[e], o2 = m.eq_obj2id[e];
    if (m.eq_type[e] == kEqConnect) {
      if (nefc + 3 > m.nefc_max) return -1;
      Real p1[3], p2[3], cpos[3];
      connect_points(m, d, e, p1, p2, cpos);
      // J = J(body1 at p1) − J(body2 at p2), translational (mj_jacDifPair)
      const int chain = chain_union(m, last_dof_of_body(m, o1), last_dof_of_body(m, o2));
      for (int k = 0; k < 3; ++k) begin_row(m, d, nefc + k, chain);
      add_point_jacobian_rows(m, d, o1, p1, Real(1), nefc, chain);
      add_point_jacobian_rows(m, d, o2, p2, Real(-1), nefc, chain);
      Real imp, dimp;
      impedance(clamp_solimp(solimp),
                sg_sqrt(cpos[0] * cpos[0] + cpos[1] * cpos[1] + cpos[2] * cpos[2]), &imp, &dimp);
      const Real W = m.body_invweight0[2 * o1] + m.body_invweight0[2 * o2];
      for (int k = 0; k < 3; ++k) {
        const RowParams<Real> p{cpos[k], zero, zero, W, solref, solimp};
        finish_row(m, d, nefc + k, kCnstrEquality, e, p, imp, dimp, false);
      }
      nefc += 3;
    } else {  // joint or tendon coupling
      if (nefc >= m.nefc_max) return -1;
      Real x1, ref1, dif, deriv;
      coupling_positions(m, d, e, &x1, &ref1, &dif);
      const Real pos = coupling_residual(m.eq_data + kEqData * e, x1, ref1, o2 >= 0, dif, &deriv);
      const int chain = coupling_chain(m, e);
      begin_row(m, d, nefc, chain);
      add_coupling_jacobian(m, d, e, o1, nefc, chain, Real(1));
      if (o2 >= 0) add_coupling_jacobian(m, d, e, o2, nefc, chain, -deriv);
      const bool joint = m.eq_type[e] == kEqJoint;
      Real W = joint ? m.dof_invweight0[m.jnt_dofadr[o1]] : m.tendon_invweight0[o1];
      if (o2 >= 0) W += joint ? m.dof_invweight0[m.jnt_dofadr[o2]] : m.tendon_invweight0[o2];
      const RowParams<Real> p{pos, zero, zero, W, solref, solimp};
      finish_row_own_impedance(m, d, nefc, kCnstrEquality, e, p, false);
      ++nefc;
    }
  }
  return nefc;
}

// Equality, friction-loss and limit rows (facts §3), from row `nefc` on; returns the new row
// count, or -1 past the capacity.
template <class Real, class L>
SG_HD int joint_and_tendon_rows(const ModelView<Real>& m, const Data<Real, L>& d, int nefc) {
  const Real zero = Real(0);
  // MuJoCo's order: equality rows first
  if (m.equality_enabled && m.neq > 0) {
    nefc = equality_rows(m, d, nefc);
    if (nefc < 0) return -1;
  }
  if (m.frictionloss_enabled) {
    for (int i = 0; i < m.nv; ++i) {
      if (!(m.dof_frictionloss[i] > zero)) continue;
      if (nefc >= m.nefc_max) return -1;
      unit_row(m, d, nefc, i, Real(1));
      const RowParams<Real> p{zero, zero, m.dof_frictionloss[i], m.dof_invweight0[i], m.dof_solref + 2 * i,
                              m.dof_solimp + 5 * i};
      finish_row_own_impedance(m, d, nefc++, kCnstrFrictionDof, i, p, true);
    }
    for (int t = 0; t < m.ntendon; ++t) {
      if (!(m.tendon_frictionloss[t] > zero)) continue;
      if (nefc >= m.nefc_max) return -1;
      tendon_row(m, d, nefc, t, Real(1));
      const RowParams<Real> p{zero, zero, m.tendon_frictionloss[t], m.tendon_invweight0[t],
                              m.tendon_solref_fri + 2 * t, m.tendon_solimp_fri + 5 * t};
      finish_row_own_impedance(m, d, nefc++, kCnstrFrictionTendon, t, p, true);
    }
  }
  if (m.limit_enabled) {
    for (int j = 0; j < m.njnt; ++j) {
      if (!m.jnt_limited[j]) continue;
      const int type = m.jnt_type[j];
      const int da = m.jnt_dofadr[j], qa = m.jnt_qposadr[j];
      const Real margin = m.jnt_margin[j];
      const Real* range = m.jnt_range + 2 * j;
      if (type == kJntHinge || type == kJntSlide) {
        for (int side = 0; side < 2; ++side) {
          const Real dist = side == 0 ? d.qpos()[qa] - range[0] : range[1] - d.qpos()[qa];
          if (!(dist < margin)) continue;
          if (nefc >= m.nefc_max) return -1;
          unit_row(m, d, nefc, da, side == 0 ? Real(1) : Real(-1));
          const RowParams<Real> p{dist, margin, zero, m.dof_invweight0[da], m.jnt_solref + 2 * j,
                                  m.jnt_solimp + 5 * j};
          finish_row_own_impedance(m, d, nefc++, kCnstrLimitJoint, j, p, false);
        }
      } else if (type == kJntBall) {
        Real q[4], v[3];
        load4(q, d.qpos(), qa);
        quat_to_vel(v, q, Real(1));
        const Real angle = sg_sqrt(dot3(v, v));
        const Real dist = (range[0] > range[1] ? range[0] : range[1]) - angle;
        if (!(dist < margin)) continue;
        if (nefc >= m.nefc_max) return -1;
        begin_row(m, d, nefc, da + 2);  // the ball's three dofs form a chain
        const Real inv = angle > Real(kMinVal) ? Real(1) / angle : Real(0);
        for (int k = 0; k < 3; ++k)
          d.efc_J()[nefc * m.nv + row_slot(m, da + 2, da + k)] = -v[k] * inv;
        const RowParams<Real> p{dist, margin, zero, m.dof_invweight0[da], m.jnt_solref + 2 * j,
                                m.jnt_solimp + 5 * j};
        finish_row_own_impedance(m, d, nefc++, kCnstrLimitJoint, j, p, false);
      }
    }
    for (int t = 0; t < m.ntendon; ++t) {
      if (!m.tendon_limited[t]) continue;
      const Real len = tendon_length(m, d, t);
      const Real margin = m.tendon_margin[t];
      for (int side = 0; side < 2; ++side) {
        const Real dist = side == 0 ? len - m.tendon_range[2 * t] : m.tendon_range[2 * t + 1] - len;
        if (!(dist < margin)) continue;
        if (nefc >= m.nefc_max) return -1;
        tendon_row(m, d, nefc, t, side == 0 ? Real(1) : Real(-1));
        const RowParams<Real> p{dist, margin, zero, m.tendon_invweight0[t], m.tendon_solref_lim + 2 * t,
                                m.tendon_solimp_lim + 5 * t};
        finish_row_own_impedance(m, d, nefc++, kCnstrLimitTendon, t, p, false);
      }
    }
  }
  return nefc;
}

// The relative Jacobian J_2 − J_1 (6 x nv: translational rows, then rotational) of contact k's
// point into jac; returns the chain of its non-zeros (the union of the two bodies' chains).
template <class Real, class L>
SG_HD int contact_jacobian(const ModelView<Real>& m, const Data<Real, L>& d, int k, View<Real, L> jac) {
  const int c = sg_int(d.contact_pair()[k]);
  for (int i = 0; i < 6 * m.nv; ++i) jac[i] = Real(0);
  const int ref = contact_reference_body(m, c);
  const int b1 = m.geom_bodyid[m.cpair_geom1[c]], b2 = m.geom_bodyid[m.cpair_geom2[c]];
  for (int side = 0; side < 2; ++side) {
    const int b = side == 0 ? b1 : b2;
    Real point[3];  // the contact point relative to body b's tree origin
    for (int i = 0; i < 3; ++i)
      point[i] =
          d.contact_pos()[3 * k + i] + (d.tree_origin()[3 * ref + i] - d.tree_origin()[3 * b + i]);
    add_point_jacobian(m, d, b, point, side == 0 ? Real(-1) : Real(1), jac);
  }
  return chain_union(m, last_dof_of_body(m, b1), last_dof_of_body(m, b2));
}

// Contact-frame row r of contact k at column col, from its relative Jacobian jac: r < 3 the
// translational n, t1, t2; r >= 3 torsion, roll1, roll2.
template <class Real, class L>
SG_HD SG_INLINE Real contact_frame_row(const ModelView<Real>& m, const Data<Real, L>& d, int k, View<Real, L> jac,
                                       int r, int col) {
  const int blk = r < 3 ? 0 : 3, f = r < 3 ? r : r - 3;
  Real v = Real(0);
  for (int a = 0; a < 3; ++a)
    v += d.contact_frame()[9 * k + 3 * f + a] * jac[(blk + a) * m.nv + col];
  return v;
}

// Rows of contact k (facts §3-4), from row `nefc` on; returns the new row count (unchanged for
// a contact outside includemargin), or -1 past the capacity. `jac` is 6 x nv scratch. Outlined
// (SG_OUTLINE): inlined, the staged rows kernel took 168 registers in double (sm_90), or spilled
// 40 B under the 128-register bound.
template <class Real, class L>
SG_HD SG_OUTLINE int contact_rows(const ModelView<Real>& m, const Data<Real, L>& d, int k, int nefc, View<Real, L> jac) {
  const int nv = m.nv;
  const int c = sg_int(d.contact_pair()[k]);
  const Real dist = d.contact_dist()[k];
  const Real includemargin = m.cpair_margin[c] - m.cpair_gap[c];
  if (!(dist < includemargin)) return nefc;  // MuJoCo's exclude = 1: kept, no rows
  const int dim = m.cpair_condim[c];
  const bool elliptic = m.cone == 1 && dim > 1;
  const int nrows = dim == 1 ? 1 : (elliptic ? dim : 2 * (dim - 1));
  if (nefc + nrows > m.nefc_max) return -1;

  // relative Jacobian J_2 - J_1 at the contact point, translational and rotational (6 x nv);
  // the rows are non-zero only where jac is: the union of the two bodies' chains
  const int chain = contact_jacobian(m, d, k, jac);
  const int b1 = m.geom_bodyid[m.cpair_geom1[c]], b2 = m.geom_bodyid[m.cpair_geom2[c]];
  // contact-frame rows J_c[r], r < dim: n, t1, t2 (translational), then torsion, roll1, roll2
  auto frame_row = [&](int r, int col) { return contact_frame_row(m, d, k, jac, r, col); };
  const Real* fr = m.cpair_friction + 5 * c;
  const Real W = m.body_invweight0[2 * b1] + m.body_invweight0[2 * b2];
  const Real Wrot = m.body_invweight0[2 * b1 + 1] + m.body_invweight0[2 * b2 + 1];
  Real imp, dimp;
  impedance(clamp_solimp(m.cpair_solimp + 5 * c), dist - includemargin, &imp, &dimp);
  const Real zero = Real(0);
  const int first = nefc;
  if (dim == 1) {
    begin_row(m, d, nefc, chain);
    for_each_row_entry(m, chain,
                       [&](int slot, int col) { d.efc_J()[nefc * nv + slot] = frame_row(0, col); });
    const RowParams<Real> p{dist, includemargin, zero, W, m.cpair_solref + 2 * c, m.cpair_solimp + 5 * c};
    finish_row(m, d, nefc, kCnstrContactFrictionless, k, p, imp, dimp, false);
    set_row_R(d, nefc, contact_R_is_floor(imp, W) ? Real(kMinVal) : (Real(1) - imp) / imp * W);
    return nefc + 1;
  }
  if (elliptic) {
    for (int r = 0; r < dim; ++r) {
      begin_row(m, d, nefc + r, chain);
      for_each_row_entry(m, chain, [&](int slot, int col) {
        d.efc_J()[(nefc + r) * nv + slot] = frame_row(r, col);
      });
      const RowParams<Real> p{r == 0 ? dist : zero, r == 0 ? includemargin : zero, zero, r < 3 ? W : Wrot,
                              m.cpair_solref + 2 * c, m.cpair_solimp + 5 * c};
      finish_row(m, d, nefc + r, kCnstrContactElliptic, k, p, imp, dimp, r > 0);
    }
    // R overwrite: R1 = R0 / impratio, R_{j+1} = R1 mu_1^2 / mu_{j+1}^2 (facts §4)
    const Real R0 = d.efc_R()[first];
    const Real R1 = R0 / m.impratio;
    for (int r = 1; r < dim; ++r) set_row_R(d, first + r, r == 1 ? R1 : R1 * fr[0] * fr[0] / (fr[r - 1] * fr[r - 1]));
    const Real mu_reg = fr[0] * sg_sqrt(R1 / R0);
    for (int r = 0; r < dim; ++r) {
      d.efc_mu()[first + r] = r == 0 ? mu_reg : fr[r - 1];
      d.efc_dim()[first + r] = Real(dim);
    }
    return nefc + dim;
  }
  // pyramidal: edge pairs (J_n + mu_k J_k, J_n - mu_k J_k), k = 1..dim-1. The frame rows J_r
  // (r < dim) are computed once, parked in the edge rows (2(dim - 1) >= dim of them), then each
  // slot's edges are formed from them (the same values as forming every edge from frame_row).
  const Real mu_reg2 = fr[0] * fr[0] / m.impratio;
  // the first edge's R before the overwrite is at least mjMINVAL, as every row's (facts §4)
  const Real R_edge =
      contact_R_is_floor(imp, W * (Real(1) + fr[0] * fr[0]))
          ? Real(2) * mu_reg2 * Real(kMinVal)
          : Real(2) * mu_reg2 * (Real(1) - imp) / imp * W * (Real(1) + fr[0] * fr[0]);
  for (int r = 0; r < dim; ++r)
    for_each_row_entry(m, chain, [&](int slot, int col) {
      d.efc_J()[(nefc + r) * nv + slot] = frame_row(r, col);
    });
  for_each_row_entry(m, chain, [&](int slot, int) {
    Real J_frame[6];
    for (int r = 0; r < dim; ++r) J_frame[r] = d.efc_J()[(nefc + r) * nv + slot];
    for (int kk = 1; kk < dim; ++kk)
      for (int sgn = 0; sgn < 2; ++sgn) {
        const Real s = sgn == 0 ? fr[kk - 1] : -fr[kk - 1];
        d.efc_J()[(nefc + 2 * (kk - 1) + sgn) * nv + slot] = J_frame[0] + s * J_frame[kk];
      }
  });
  for (int kk = 1; kk < dim; ++kk) {
    for (int sgn = 0; sgn < 2; ++sgn) {
      d.efc_chain()[nefc] = Real(encode_chain(chain));  // begin_row without clearing: J is written
      const Real w = kk < 3 ? W + fr[kk - 1] * fr[kk - 1] * W : W + fr[kk - 1] * fr[kk - 1] * Wrot;
      const RowParams<Real> p{dist, includemargin, zero, w, m.cpair_solref + 2 * c, m.cpair_solimp + 5 * c};
      finish_row(m, d, nefc, kCnstrContactPyramidal, k, p, imp, dimp, false);
      set_row_R(d, nefc, R_edge);
      ++nefc;
    }
  }
  return nefc;
}

// All rows of the current substep into d.efc_* (count in d.nefc). Needs fwd_position,
// fwd_velocity and fwd_collision. Returns kEnvOk, or kEnvConstraintOverflow when the rows did
// not fit (the rows that fit are kept, the rest dropped).
template <class Real, class L>
SG_HD int fwd_constraint_rows(const ModelView<Real>& m, const Data<Real, L>& d) {
  int nefc = joint_and_tendon_rows(m, d, 0);
  int status = 0;
  if (nefc < 0) {
    status = kEnvConstraintOverflow;
    nefc = m.nefc_max;
  }
  // the solver's workspace is free until the solve: 6 x nv scratch for contact Jacobians
  const View<Real, L> jac = d.solver_ws();
  const int ncon = sg_int(d.ncon()[0]);
  for (int k = 0; k < ncon && status == 0; ++k) {
    const int next = contact_rows(m, d, k, nefc, jac);
    if (next < 0) status = kEnvConstraintOverflow;
    else nefc = next;
  }
  d.nefc()[0] = Real(nefc);
  return status;
}

}  // namespace stiffgrad::kern
