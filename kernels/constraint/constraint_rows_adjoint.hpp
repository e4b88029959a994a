// Adjoints of kernels/constraint/constraint_rows.hpp and kernels/collision/collision_driver.hpp: row adjoints
// (efc_J, efc_aref, efc_R, efc_D) -> contact geometry (dist, pos, frame), cdof, subtree_com,
// tree_origin, qvel and qpos; then contact geometry -> geom poses -> body frames.
//
// Constants of a row (solref -> K, B; solimp; diagApprox from invweight0; friction) are model
// constants. The contact-specific R overwrites (facts §4) all have the form R = c (1 - imp)/imp
// with c constant, so dR/dimp = -R / (imp (1 - imp)) for every contact row as for limit rows;
// the 1e-15 floor on R is treated as inactive (it only binds for degenerate invweights).
#pragma once

#include "kernels/base/math3_adjoint.hpp"
#include "kernels/collision/collision_adjoint.hpp"
#include "kernels/constraint/constraint_rows.hpp"
#include "kernels/dynamics/kinematics_adjoint.hpp"
#include "kernels/dynamics/point_jacobian_adjoint.hpp"

namespace stiffgrad::kern {

// Adjoint of geom_poses: geom_xpos, geom_xmat adjoints -> body xpos, xmat adjoints.
template <class Real, class L>
SG_HD void adj_geom_poses(const ModelView<Real>& m, const Data<Real, L>& /*d*/, const Data<Real, L>& a) {
  for (int g = m.ngeom - 1; g >= 0; --g) {
    const int b = m.geom_bodyid[g];
    const Real* gpos = m.geom_pos + 3 * g;
    Real rot[9];
    quat_to_mat(rot, m.geom_quat + 4 * g);
    for (int r = 0; r < 3; ++r) {
      const Real gp = a.geom_xpos()[3 * g + r];
      a.xpos()[3 * b + r] += gp;
      for (int k = 0; k < 3; ++k) {
        // geom_xpos[r] = xpos[r] + sum_k xmat[r][k] gpos[k];  geom_xmat[r][c] = sum_k xmat[r][k] rot[k][c]
        Real acc = gp * gpos[k];
        for (int c = 0; c < 3; ++c) acc += a.geom_xmat()[9 * g + 3 * r + c] * rot[3 * k + c];
        a.xmat()[9 * b + 3 * r + k] += acc;
      }
    }
  }
}

// Adjoint of add_point_jacobian: jac_bar (6 x nv) -> cdof, subtree_com[root] and point adjoints.
template <class Real, class L>
SG_HD void adj_add_point_jacobian(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a, int b,
                                  const Real point[3], Real sign, View<Real, L> jac_bar, Real point_bar[3]) {
  const int nv = m.nv;
  adj_point_jacobian_columns(m, d, a, b, point, point_bar,
                             [&](int i, Real* lin_bar, Real* ang_bar) {
                               for (int k = 0; k < 3; ++k) {
                                 lin_bar[k] = sign * jac_bar[k * nv + i];
                                 ang_bar[k] = sign * jac_bar[(3 + k) * nv + i];
                               }
                             });
}

// Adjoint of finish_row for row i (J already holds the row): efc_D, efc_R, efc_aref adjoints
// -> J (through efc_vel = J qvel), qvel, and the returned adjoints of imp and pos. R_floor: R is
// the constant mjMINVAL floor (or a fixed multiple of it), which no impedance moves.
template <class Real, class L>
SG_HD void adj_finish_row(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                          int i, Real* imp_bar, Real* pos_bar, bool R_floor = false) {
  const int nv = m.nv;
  const Real K = d.efc_KBIP()[4 * i], B = d.efc_KBIP()[4 * i + 1], imp = d.efc_KBIP()[4 * i + 2];
  const Real R = d.efc_R()[i], D = d.efc_D()[i];
  // D = 1 / R
  const Real R_bar = a.efc_R()[i] - a.efc_D()[i] * D * D;
  // R = c (1 - imp) / imp
  if (!R_floor) *imp_bar += -R_bar * R / (imp * (Real(1) - imp));
  // aref = -B vel - K imp (pos - margin)
  const Real g = a.efc_aref()[i];
  *imp_bar += -K * (d.efc_pos()[i] - d.efc_margin()[i]) * g;
  *pos_bar += -K * imp * g;
  const Real vel_bar = -B * g;
  // vel = J qvel (over J's structural non-zeros, row_sparsity.hpp)
  for_each_row_entry(m, row_chain(d, i), [&](int slot, int c) {
    a.efc_J()[i * nv + slot] += vel_bar * d.qvel()[c];
    a.qvel()[c] += vel_bar * d.efc_J()[i * nv + slot];
  });
}

// imp = impedance(r): the adjoint of r.
template <class Real>
SG_HD SG_INLINE Real adj_impedance(Real dimp, Real imp_bar) {
  return dimp * imp_bar;
}

// Adjoint of add_point_jacobian_rows: efc_J rows first .. first + 2 adjoints -> cdof,
// subtree_com[root] and point (added to point_bar).
template <class Real, class L>
SG_HD void adj_add_point_jacobian_rows(const ModelView<Real>& m, const Data<Real, L>& d,
                                       const Data<Real, L>& a, int b, const Real point[3],
                                       Real sign, int first, int chain, Real point_bar[3]) {
  const int nv = m.nv;
  adj_point_jacobian_columns(m, d, a, b, point, point_bar,
                             [&](int i, Real* lin_bar, Real* ang_bar) {
                               const int slot = row_slot(m, chain, i);
                               for (int k = 0; k < 3; ++k) {
                                 lin_bar[k] = sign * a.efc_J()[(first + k) * nv + slot];
                                 ang_bar[k] = Real(0);
                               }
                             });
}

// Adjoint of connect constraint e's rows first .. first + 2 (equality_rows): row adjoints ->
// qvel, cdof, subtree_com, xpos, xmat and tree_origin of its two bodies.
template <class Real, class L>
SG_HD void adj_connect_rows(const ModelView<Real>& m, const Data<Real, L>& d,
                            const Data<Real, L>& a, int e, int first) {
  const int b[2] = {m.eq_obj1id[e], m.eq_obj2id[e]};
  Real p[2][3], cpos[3];
  connect_points(m, d, e, p[0], p[1], cpos);
  Real imp_bar(0), pos_bar[3] = {Real(0), Real(0), Real(0)};
  for (int k = 0; k < 3; ++k) adj_finish_row(m, d, a, first + k, &imp_bar, &pos_bar[k]);
  // the shared impedance of r = |cpos| (no direction at r = 0: there dimp is 0 anyway)
  const Real r = sg_sqrt(cpos[0] * cpos[0] + cpos[1] * cpos[1] + cpos[2] * cpos[2]);
  const Real r_bar = adj_impedance(d.efc_KBIP()[4 * first + 3], imp_bar);
  Real cpos_bar[3];
  for (int k = 0; k < 3; ++k)
    cpos_bar[k] = pos_bar[k] + (r > Real(0) ? r_bar * cpos[k] / r : Real(0));
  // J = J(b1 at p1) - J(b2 at p2); cpos = (p1 - p2) + (origin[b1] - origin[b2])
  const int chain = row_chain(d, first);
  const Real* data = m.eq_data + kEqData * e;
  for (int side = 0; side < 2; ++side) {
    const Real sign = side == 0 ? Real(1) : Real(-1);
    Real p_bar[3] = {sign * cpos_bar[0], sign * cpos_bar[1], sign * cpos_bar[2]};
    adj_add_point_jacobian_rows(m, d, a, b[side], p[side], sign, first, chain, p_bar);
    // p = xpos[b] + xmat[b] anchor
    const Real* anchor = data + 3 * side;
    for (int k = 0; k < 3; ++k) {
      a.xpos()[3 * b[side] + k] += p_bar[k];
      a.tree_origin()[3 * b[side] + k] += sign * cpos_bar[k];
      for (int c = 0; c < 3; ++c) a.xmat()[9 * b[side] + 3 * k + c] += p_bar[k] * anchor[c];
    }
  }
}

// Adjoint of joint or tendon coupling e's row i (equality_rows): row adjoints -> qvel and qpos.
template <class Real, class L>
SG_HD void adj_coupling_row(const ModelView<Real>& m, const Data<Real, L>& d,
                            const Data<Real, L>& a, int e, int i) {
  Real imp_bar(0), pos_bar(0);
  adj_finish_row(m, d, a, i, &imp_bar, &pos_bar);
  pos_bar += adj_impedance(d.efc_KBIP()[4 * i + 3], imp_bar);
  const int o1 = m.eq_obj1id[e], o2 = m.eq_obj2id[e];
  const Real* c = m.eq_data + kEqData * e;
  Real x1, ref1, dif, deriv;
  coupling_positions(m, d, e, &x1, &ref1, &dif);
  coupling_residual(c, x1, ref1, o2 >= 0, dif, &deriv);
  // pos = x1 - ref1 - c0 - poly(dif): x1_bar = pos_bar, dif_bar = -deriv pos_bar; and J's object-2
  // entries are -deriv(dif) J_2, deriv' = 2 c2 + 6 c3 dif + 12 c4 dif²
  const Real x1_bar = pos_bar;
  Real dif_bar = o2 >= 0 ? -deriv * pos_bar : Real(0);
  const bool joint = m.eq_type[e] == kEqJoint;
  if (o2 >= 0) {
    const Real deriv2 = Real(2) * c[2] + Real(6) * c[3] * dif + Real(12) * c[4] * dif * dif;
    const int chain = row_chain(d, i);
    const Real* J_bar = &a.efc_J()[i * m.nv];
    Real g(0);  // <J_bar, J_2>
    if (joint) {
      g = J_bar[row_slot(m, chain, m.jnt_dofadr[o2])];
    } else {
      for (int w = m.tendon_adr[o2]; w < m.tendon_adr[o2] + m.tendon_num[o2]; ++w)
        g += J_bar[row_slot(m, chain, m.jnt_dofadr[m.wrap_jntid[w]])] * m.wrap_coef[w];
    }
    dif_bar += -deriv2 * g;
  }
  // x = qpos[joint], or a fixed tendon's sum coef qpos[joint]
  for (int side = 0; side < 2; ++side) {
    const int o = side == 0 ? o1 : o2;
    const Real bar = side == 0 ? x1_bar : dif_bar;
    if (o < 0) continue;
    if (joint) {
      a.qpos()[m.jnt_qposadr[o]] += bar;
    } else {
      for (int w = m.tendon_adr[o]; w < m.tendon_adr[o] + m.tendon_num[o]; ++w)
        a.qpos()[m.jnt_qposadr[m.wrap_jntid[w]]] += m.wrap_coef[w] * bar;
    }
  }
}

// Adjoint of joint_and_tendon_rows for rows [0, nrows): qpos and qvel adjoints (and, for
// connect constraints, the kinematics' adjoints of their bodies).
template <class Real, class L>
SG_HD void adj_joint_and_tendon_rows(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a,
                                     int nrows) {
  const int nv = m.nv;
  for (int i = nrows - 1; i >= 0; --i) {
    const int type = sg_int(d.efc_type()[i]);
    const int id = sg_int(d.efc_id()[i]);
    if (type == kCnstrEquality) {
      // a connect's three rows together (this is its last), a coupling's one
      if (m.eq_type[id] == kEqConnect) {
        adj_connect_rows(m, d, a, id, i - 2);
        i -= 2;
      } else {
        adj_coupling_row(m, d, a, id, i);
      }
      continue;
    }
    Real imp_bar(0), pos_bar(0);
    adj_finish_row(m, d, a, i, &imp_bar, &pos_bar);
    if (type == kCnstrFrictionDof || type == kCnstrFrictionTendon) continue;  // r = 0, J constant
    pos_bar += adj_impedance(d.efc_KBIP()[4 * i + 3], imp_bar);
    if (type == kCnstrLimitTendon) {
      // dist = len - lo (lower side) or hi - len (upper side), len = sum coef qpos[joint]; the
      // row's pos is bitwise one of the two, which tells the side
      const Real side =
          d.efc_pos()[i] == tendon_length(m, d, id) - m.tendon_range[2 * id] ? Real(1) : Real(-1);
      for (int w = m.tendon_adr[id]; w < m.tendon_adr[id] + m.tendon_num[id]; ++w)
        a.qpos()[m.jnt_qposadr[m.wrap_jntid[w]]] += side * m.wrap_coef[w] * pos_bar;
      continue;
    }
    const int qa = m.jnt_qposadr[id], da = m.jnt_dofadr[id];
    if (m.jnt_type[id] != kJntBall) {
      a.qpos()[qa] += d.efc_J()[i * nv + row_slot(m, row_chain(d, i), da)] *
                      pos_bar;  // +1 lower, -1 upper side
      continue;
    }
    // ball: dist = max(range) - |v|, J = -v/|v| on the 3 dofs, v = quat_to_vel(q)
    Real q[4], v[3], v_bar[3];
    load4(q, d.qpos(), qa);
    quat_to_vel(v, q, Real(1));
    const Real angle = sg_sqrt(dot3(v, v));
    if (!(angle > Real(kMinVal))) continue;
    Real u[3] = {v[0] / angle, v[1] / angle, v[2] / angle}, u_bar[3];
    for (int k = 0; k < 3; ++k)
      u_bar[k] = -a.efc_J()[i * nv + row_slot(m, row_chain(d, i), da + k)];
    // u = v / |v|:  v_bar = (u_bar - u (u . u_bar)) / |v|;  |v|: v_bar += u angle_bar, angle_bar = -pos_bar
    const Real uu = dot3(u, u_bar);
    for (int k = 0; k < 3; ++k) v_bar[k] = (u_bar[k] - u[k] * uu) / angle - u[k] * pos_bar;
    Real q_bar[4] = {Real(0), Real(0), Real(0), Real(0)};
    adj_quat_to_vel(q, q_bar, v_bar);
    accumulate(a.qpos(), qa, q_bar, 4);
  }
}

// Adjoint of contact_jacobian and contact_frame_row for contact k: recomputes jac (6 x nv), then
// `rows(adj_frame_row)` hands each frame-row entry's adjoint g to adj_frame_row(r, col, g), which
// accumulates the frame and jac adjoints; jac_bar -> cdof, subtree_com, and the point's adjoint
// -> contact_pos and tree origins. jac and jac_bar are 6 x nv scratch.
template <class Real, class L, class F>
SG_HD void adj_contact_jacobian(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a, int k,
                                View<Real, L> jac, View<Real, L> jac_bar, F&& rows) {
  const int nv = m.nv;
  const int c = sg_int(d.contact_pair()[k]);
  contact_jacobian(m, d, k, jac);
  for (int i = 0; i < 6 * nv; ++i) jac_bar[i] = Real(0);
  // J_c[r][col] = sum_a frame[f][a] jac[blk + a][col]  ->  frame and jac adjoints
  auto adj_frame_row = [&](int r, int col, Real g) {
    const int blk = r < 3 ? 0 : 3, f = r < 3 ? r : r - 3;
    for (int aa = 0; aa < 3; ++aa) {
      a.contact_frame()[9 * k + 3 * f + aa] += g * jac[(blk + aa) * nv + col];
      jac_bar[(blk + aa) * nv + col] += g * d.contact_frame()[9 * k + 3 * f + aa];
    }
  };
  rows(adj_frame_row);
  const int ref = contact_reference_body(m, c);
  const int b1 = m.geom_bodyid[m.cpair_geom1[c]], b2 = m.geom_bodyid[m.cpair_geom2[c]];
  for (int side = 0; side < 2; ++side) {
    const int b = side == 0 ? b1 : b2;
    Real point[3], point_bar[3] = {Real(0), Real(0), Real(0)};
    for (int i = 0; i < 3; ++i)
      point[i] =
          d.contact_pos()[3 * k + i] + (d.tree_origin()[3 * ref + i] - d.tree_origin()[3 * b + i]);
    adj_add_point_jacobian(m, d, a, b, point, side == 0 ? Real(-1) : Real(1), jac_bar, point_bar);
    for (int i = 0; i < 3; ++i) {
      a.contact_pos()[3 * k + i] += point_bar[i];
      a.tree_origin()[3 * ref + i] += point_bar[i];
      a.tree_origin()[3 * b + i] -= point_bar[i];
    }
  }
}

// Adjoint of contact_rows for contact k whose rows start at row `first`: row adjoints -> contact
// dist, pos (relative to the reference origin), frame; cdof, subtree_com, tree_origin; qvel.
// jac and jac_bar are 6 x nv scratch.
template <class Real, class L>
SG_HD void adj_contact_rows(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a, int k,
                            int first, View<Real, L> jac, View<Real, L> jac_bar) {
  const int nv = m.nv;
  const int c = sg_int(d.contact_pair()[k]);
  const int dim = m.cpair_condim[c];
  const bool elliptic = m.cone == 1 && dim > 1;
  const int nrows = dim == 1 ? 1 : (elliptic ? dim : 2 * (dim - 1));
  const Real* fr = m.cpair_friction + 5 * c;

  // per-row scalars: R, aref, vel -> imp and pos; all rows share the contact's impedance, and
  // their R are all at the floor or none (contact_R_is_floor)
  const int b1 = m.geom_bodyid[m.cpair_geom1[c]], b2 = m.geom_bodyid[m.cpair_geom2[c]];
  const Real W = m.body_invweight0[2 * b1] + m.body_invweight0[2 * b2];
  const Real imp = d.efc_KBIP()[4 * first + 2];
  const bool R_floor =
      contact_R_is_floor(imp, dim == 1 || elliptic ? W : W * (Real(1) + fr[0] * fr[0]));
  Real imp_bar(0), dist_bar(0);
  for (int r = 0; r < nrows; ++r) {
    Real pos_bar(0);
    adj_finish_row(m, d, a, first + r, &imp_bar, &pos_bar, R_floor);
    dist_bar += pos_bar;  // rows with pos = dist (elliptic rows > 0 have pos 0: their K is 0)
  }
  dist_bar += adj_impedance(d.efc_KBIP()[4 * first + 3], imp_bar);
  a.contact_dist()[k] += dist_bar;

  // the rows' columns: the chain contact_rows recorded (the same for every row of the contact)
  const int chain = row_chain(d, first);
  adj_contact_jacobian(m, d, a, k, jac, jac_bar, [&](auto&& adj_frame_row) {
    if (dim == 1 || elliptic) {
      for (int r = 0; r < nrows; ++r)
        for_each_row_entry(m, chain, [&](int slot, int col) {
          adj_frame_row(r, col, a.efc_J()[(first + r) * nv + slot]);
        });
    } else {
      for (int kk = 1; kk < dim; ++kk)
        for (int sgn = 0; sgn < 2; ++sgn) {
          const int row = first + 2 * (kk - 1) + sgn;
          const Real s = sgn == 0 ? fr[kk - 1] : -fr[kk - 1];
          for_each_row_entry(m, chain, [&](int slot, int col) {
            const Real g = a.efc_J()[row * nv + slot];
            adj_frame_row(0, col, g);
            adj_frame_row(kk, col, s * g);
          });
        }
    }
  });
}

// Adjoint of fwd_constraint_rows: the rows' adjoints (a.efc_J, efc_aref, efc_R, efc_D, as left
// by adj_constraint_solve) -> contact geometry, kinematic and state adjoints. Scratch: 12 nv
// Reals at the start of d.solver_ws (free after the solver's adjoint).
template <class Real, class L>
SG_HD void adj_fwd_constraint_rows(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  const int nefc = sg_int(d.nefc()[0]);
  const View<Real, L> jac = d.solver_ws();
  const View<Real, L> jac_bar = d.solver_ws().at(6 * m.nv);
  int first_contact_row = nefc;
  for (int i = 0; i < nefc; ++i)
    if (sg_int(d.efc_type()[i]) >= kCnstrContactFrictionless) {
      first_contact_row = i;
      break;
    }
  // contacts, last to first: each contact's rows are consecutive and share efc_id
  for (int i = nefc; i > first_contact_row;) {
    const int k = sg_int(d.efc_id()[i - 1]);
    int first = i - 1;
    while (first > first_contact_row && sg_int(d.efc_id()[first - 1]) == k) --first;
    adj_contact_rows(m, d, a, k, first, jac, jac_bar);
    i = first;
  }
  adj_joint_and_tendon_rows(m, d, a, first_contact_row);
}

// Adjoint of fwd_collision, pair by pair: the contact list holds each candidate pair's contacts
// consecutively, pairs in increasing order (fwd_collision, staged_gather_contacts).
//
// adj_pair_contacts: the n contacts k .. k + n - 1 of pair c (contact adjoints a.contact_dist,
// contact_pos, contact_frame) pulled back to its two geoms' poses, relative to the pair's
// reference body (pos_bar[side], mat_bar[side]; side 0 geom1, 1 geom2), by routine R
// (kRoutineNone: from the geom types).
template <int R = kRoutineNone, class Real, class L>
SG_HD void adj_pair_contacts(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a, int c, int k,
                             int n, Real pos_bar[2][3], Real mat_bar[2][9]) {
  const int g1 = m.cpair_geom1[c], g2 = m.cpair_geom2[c];
  const int ref = contact_reference_body(m, c);
  GeomPose<Real> p1, p2;
  geom_pose_relative(m, d, g1, ref, p1);
  geom_pose_relative(m, d, g2, ref, p2);
  Contact<Real> bar[kMaxContactsPerPair];
  for (int j = 0; j < n; ++j) {
    bar[j].dist = a.contact_dist()[k + j];
    for (int i = 0; i < 3; ++i) bar[j].pos[i] = a.contact_pos()[3 * (k + j) + i];
    for (int i = 0; i < 9; ++i) bar[j].frame[i] = a.contact_frame()[9 * (k + j) + i];
  }
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < 3; ++i) pos_bar[side][i] = Real(0);
    for (int i = 0; i < 9; ++i) mat_bar[side][i] = Real(0);
  }
  adj_collide_geoms<Real, R>(p1, p2, m.cpair_margin[c], bar, n, pos_bar[0], mat_bar[0], pos_bar[1], mat_bar[1]);
}

// One Dual pass of adj_pair_contacts: directions first .. first + K - 1 of the 24 (geom1's pos
// and mat, then geom2's: pos_bar[0], mat_bar[0], pos_bar[1], mat_bar[1] in that order) into
// acc[K], the contact adjoints read from a in place (adj_collide_geoms_pass). The passes of
// adj_pair_contacts, split: each direction's value is the same bit for bit.
template <int R, int K, class Real, class L>
SG_HD void adj_pair_contacts_pass(const ModelView<Real>& m, const Data<Real, L>& d,
                                  const Data<Real, L>& a, int c, int k, int n, int first,
                                  Real acc[K]) {
  const int ref = contact_reference_body(m, c);
  GeomPose<Real> p1, p2;
  geom_pose_relative(m, d, m.cpair_geom1[c], ref, p1);
  geom_pose_relative(m, d, m.cpair_geom2[c], ref, p2);
  const auto bar = [&](int j) {
    Contact<Real> b;
    b.dist = a.contact_dist()[k + j];
    for (int i = 0; i < 3; ++i) b.pos[i] = a.contact_pos()[3 * (k + j) + i];
    for (int i = 0; i < 9; ++i) b.frame[i] = a.contact_frame()[9 * (k + j) + i];
    return b;
  };
  adj_collide_geoms_pass<Real, K, R>(p1, p2, m.cpair_margin[c], bar, n, first, acc);
}

// What adj_pair_contacts found for pair c into the geom pose and tree origin adjoints.
template <class Real, class L>
SG_HD void add_pair_pose_adjoint(const ModelView<Real>& m, const Data<Real, L>& a, int c, const Real pos_bar[2][3],
                                 const Real mat_bar[2][9]) {
  const int ref = contact_reference_body(m, c);
  for (int side = 0; side < 2; ++side) {
    const int g = side == 0 ? m.cpair_geom1[c] : m.cpair_geom2[c];
    const int b = m.geom_bodyid[g];
    for (int i = 0; i < 3; ++i) {
      a.geom_xpos()[3 * g + i] += pos_bar[side][i];
      a.tree_origin()[3 * b + i] += pos_bar[side][i];
      a.tree_origin()[3 * ref + i] -= pos_bar[side][i];
    }
    for (int i = 0; i < 9; ++i) a.geom_xmat()[9 * g + i] += mat_bar[side][i];
  }
}

// Pair c's contacts in the contact list: the first one's index, their count (0: none).
template <class Real, class L>
SG_HD SG_INLINE int pair_contacts_in_list(const Data<Real, L>& d, int c, int* count) {
  const int ncon = sg_int(d.ncon()[0]);
  int k = 0;
  while (k < ncon && sg_int(d.contact_pair()[k]) != c) ++k;
  int n = 0;
  while (k + n < ncon && sg_int(d.contact_pair()[k + n]) == c) ++n;
  *count = n;
  return k;
}

// Adjoint of fwd_collision: contact adjoints (a.contact_dist, contact_pos, contact_frame) ->
// geom poses -> body frames and tree origins.
template <class Real, class L>
SG_HD SG_OUTLINE void adj_fwd_collision(const ModelView<Real>& m, const Data<Real, L>& d, const Data<Real, L>& a) {
  const int ncon = sg_int(d.ncon()[0]);
  for (int k = 0; k < ncon;) {
    const int c = sg_int(d.contact_pair()[k]);
    int n = 1;
    while (k + n < ncon && sg_int(d.contact_pair()[k + n]) == c) ++n;
    Real pos_bar[2][3], mat_bar[2][9];
    adj_pair_contacts(m, d, a, c, k, n, pos_bar, mat_bar);
    add_pair_pose_adjoint(m, a, c, pos_bar, mat_bar);
    k += n;
  }
  adj_geom_poses(m, d, a);
}

}  // namespace stiffgrad::kern
