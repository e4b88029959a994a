// Adjoints of kernels/dynamics/kinematics.hpp. `d` holds the primal results of the forward pass
// (recomputed by replay), `a` the adjoints of the same fields (accumulated with +=).
#pragma once

#include "kernels/dynamics/kinematics.hpp"
#include "kernels/base/math3_adjoint.hpp"
#include "kernels/base/spatial_adjoint.hpp"

namespace stiffgrad::kern {

template <class Real, class L>
SG_HD SG_INLINE void accumulate(View<Real, L> v, int i, const Real* x, int n) {
  for (int k = 0; k < n; ++k) v[i + k] += x[k];
}

// Adjoint of tree_com: subtree_com[root] adjoints -> xipos adjoints of the tree's bodies.
template <class Real, class L>
SG_HD SG_INLINE void adj_tree_com(const ModelView<Real>& m, const Data<Real, L>& a) {
  int root = 0;
  Real mass = Real(0);
  for (int b = 1; b < m.nbody; ++b) {
    const int r = m.body_rootid[b];
    if (r == b) {  // the tree's mass (a model constant, summed in the primal's order)
      root = b;
      mass = Real(0);
      for (int c = b; c < m.nbody && m.body_rootid[c] == b; ++c) mass += m.body_mass[c];
    }
    Real adj_p[3];
    load3(adj_p, a.subtree_com(), 3 * root);
    if (mass < min_norm<Real>()) {
      if (b == root)
        for (int k = 0; k < 3; ++k) a.xipos()[3 * b + k] += adj_p[k];
    } else {
      const Real w = m.body_mass[b] * (Real(1) / mass);
      for (int k = 0; k < 3; ++k) a.xipos()[3 * b + k] += w * adj_p[k];
    }
  }
}

// Adjoint of com_inertia_and_dofs: cinert and cdof adjoints -> ximat, xipos, xmat, xanchor,
// xaxis adjoints; the offsets from the tree's centre of mass pass their adjoints on to
// subtree_com and through tree_com to xipos. (The dynamics do not depend on the reference
// point, so these contributions cancel in M and qfrc_bias; they are kept so that every stage
// is the exact adjoint of its primal.)
template <class Real, class L>
SG_HD void adj_com_inertia_and_dofs(const ModelView<Real>& m, const Data<Real, L>& d,
                                    const Data<Real, L>& a) {
  for (int j = m.njnt - 1; j >= 0; --j) {
    const int da = m.jnt_dofadr[j];
    const int b = m.jnt_bodyid[j];
    const int root = m.body_rootid[b];
    Real anchor[3], axis[3], adj_dof[6];
    for (int k = 0; k < 3; ++k) anchor[k] = d.xanchor()[3 * j + k] - d.subtree_com()[3 * root + k];
    Real adj_anchor[3] = {}, adj_axis[3] = {};
    const int type = m.jnt_type[j];
    if (type == kJntFree || type == kJntBall) {
      const int rot0 = type == kJntFree ? da + 3 : da;  // free translations are constant
      for (int i = 0; i < 3; ++i) {
        axis[0] = d.xmat()[9 * b + i];
        axis[1] = d.xmat()[9 * b + 3 + i];
        axis[2] = d.xmat()[9 * b + 6 + i];
        load6(adj_dof, a.cdof(), 6 * (rot0 + i));
        Real adj_col[3] = {adj_dof[0], adj_dof[1], adj_dof[2]};
        adj_cross3(anchor, axis, adj_anchor, adj_col, adj_dof + 3);
        a.xmat()[9 * b + i] += adj_col[0];
        a.xmat()[9 * b + 3 + i] += adj_col[1];
        a.xmat()[9 * b + 6 + i] += adj_col[2];
      }
    } else if (type == kJntSlide) {
      load6(adj_dof, a.cdof(), 6 * da);
      for (int k = 0; k < 3; ++k) adj_axis[k] += adj_dof[3 + k];
    } else {
      load3(axis, d.xaxis(), 3 * j);
      load6(adj_dof, a.cdof(), 6 * da);
      for (int k = 0; k < 3; ++k) adj_axis[k] += adj_dof[k];
      adj_cross3(anchor, axis, adj_anchor, adj_axis, adj_dof + 3);
    }
    accumulate(a.xanchor(), 3 * j, adj_anchor, 3);
    for (int k = 0; k < 3; ++k) a.subtree_com()[3 * root + k] -= adj_anchor[k];
    accumulate(a.xaxis(), 3 * j, adj_axis, 3);
  }
  for (int b = m.nbody - 1; b >= 1; --b) {
    const int root = m.body_rootid[b];
    Real R[9], c[3], adj_I[10], adj_c[3] = {}, adj_Ic[9] = {}, adj_R[9] = {};
    load9(R, d.ximat(), 9 * b);
    for (int k = 0; k < 3; ++k) c[k] = d.xipos()[3 * b + k] - d.subtree_com()[3 * root + k];
    for (int k = 0; k < 10; ++k) adj_I[k] = a.cinert()[10 * b + k];
    adj_inertia_from_com(m.body_mass[b], c, adj_c, adj_Ic, adj_I);
    // Ic[rs] = sum_k R[r,k] D_k R[s,k], for the entries the primal reads
    const Real* D = m.body_inertia + 3 * b;
    const int rs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    for (const auto& e : rs) {
      const Real g = adj_Ic[3 * e[0] + e[1]];
      for (int k = 0; k < 3; ++k) {
        adj_R[3 * e[0] + k] += g * D[k] * R[3 * e[1] + k];
        adj_R[3 * e[1] + k] += g * D[k] * R[3 * e[0] + k];
      }
    }
    accumulate(a.ximat(), 9 * b, adj_R, 9);
    accumulate(a.xipos(), 3 * b, adj_c, 3);
    for (int k = 0; k < 3; ++k) a.subtree_com()[3 * root + k] -= adj_c[k];
  }
  adj_tree_com(m, a);
}

// Adjoint of fwd_kinematics_base_to_tip: frame adjoints -> qpos adjoints, tip to base.
// Intermediate frames inside a body (between its joints) come from the forward pass.
template <class Real, class L>
SG_HD void adj_fwd_kinematics_base_to_tip(const ModelView<Real>& m, const Data<Real, L>& d,
                                          const Data<Real, L>& a) {
  for (int b = m.nbody - 1; b > 0; --b) {
    // tree_origin: a child's copy of its parent's, a free root's from qpos, else constant
    const int parent = m.body_parentid[b];
    if (parent > 0) {
      Real adj_origin[3];
      load3(adj_origin, a.tree_origin(), 3 * b);
      accumulate(a.tree_origin(), 3 * parent, adj_origin, 3);
    }
    Real xquat[4], xmat[9];
    load4(xquat, d.xquat(), 4 * b);
    load9(xmat, d.xmat(), 9 * b);
    Real adj_xpos[3], adj_xquat[4], adj_xmat[9];
    load3(adj_xpos, a.xpos(), 3 * b);
    load4(adj_xquat, a.xquat(), 4 * b);
    load9(adj_xmat, a.xmat(), 9 * b);

    // centre-of-mass frame: xipos = xpos + xmat ipos, ximat = mat(xquat * iquat)
    {
      Real adj_xipos[3], adj_ximat[9], dummy[3] = {};
      load3(adj_xipos, a.xipos(), 3 * b);
      load9(adj_ximat, a.ximat(), 9 * b);
      for (int k = 0; k < 3; ++k) adj_xpos[k] += adj_xipos[k];
      adj_mat_vec3(xmat, m.body_ipos + 3 * b, adj_xmat, dummy, adj_xipos);
      Real iq[4], adj_iq[4] = {}, adj_iquat[4] = {};
      quat_mul(iq, xquat, m.body_iquat + 4 * b);
      adj_quat_to_mat(iq, adj_iq, adj_ximat);
      adj_quat_mul(xquat, m.body_iquat + 4 * b, adj_xquat, adj_iquat, adj_iq);
    }
    adj_quat_to_mat(xquat, adj_xquat, adj_xmat);

    const int jnt0 = m.body_jntadr[b];
    if (is_free_body(m, b)) {
      const int qa = m.jnt_qposadr[jnt0];
      // xpos and xanchor are the tree-relative zero: only tree_origin depends on qpos[0:3]
      for (int k = 0; k < 3; ++k) a.qpos()[qa + k] += a.tree_origin()[3 * b + k];
      Real q_in[4], adj_q_in[4] = {};
      load4(q_in, d.qpos(), qa + 3);
      adj_normalize4(q_in, adj_q_in, adj_xquat);
      accumulate(a.qpos(), qa + 3, adj_q_in, 4);
      continue;
    }

    // undo the final normalization (the raw quaternion was kept by the forward pass)
    {
      Real raw[4], adj_pre[4] = {};
      load4(raw, d.xquat_raw(), 4 * b);
      adj_normalize4(raw, adj_pre, adj_xquat);
      copy4(adj_xquat, adj_pre);
    }
    // joints in reverse; adj_xpos / adj_xquat are the adjoints of the frame after joint k.
    // The frame before joint k, its local rotation and the frame after it were kept by the
    // forward pass (jnt_frame_*, jnt_qloc, xquat_raw).
    const int nj = m.body_jntnum[b];
    for (int k = nj - 1; k >= 0; --k) {
      const int j = jnt0 + k;
      Real q[4], q_after[4], qloc[4], ax[3];
      load4(q, d.jnt_frame_quat(), 4 * j);
      load4(qloc, d.jnt_qloc(), 4 * j);
      load3(ax, d.xaxis(), 3 * j);
      if (k + 1 < nj)
        load4(q_after, d.jnt_frame_quat(), 4 * (j + 1));
      else
        load4(q_after, d.xquat_raw(), 4 * b);

      const int qa = m.jnt_qposadr[j];
      const int type = m.jnt_type[j];
      const Real* jpos = m.jnt_pos + 3 * j;
      const Real* jaxis = m.jnt_axis + 3 * j;
      Real adj_anchor[3], adj_axis[3], adj_q[4] = {}, adj_p[3], dummy[3] = {};
      load3(adj_anchor, a.xanchor(), 3 * j);
      load3(adj_axis, a.xaxis(), 3 * j);
      if (type == kJntSlide) {
        const Real s = d.qpos()[qa] - m.qpos0[qa];
        copy3(adj_p, adj_xpos);
        for (int c = 0; c < 3; ++c) adj_axis[c] += adj_xpos[c] * s;
        a.qpos()[qa] += dot3(adj_xpos, ax);
        copy4(adj_q, adj_xquat);
      } else {
        // p_after = anchor - rot(q_after, jpos); q_after = q * qloc
        for (int c = 0; c < 3; ++c) adj_anchor[c] += adj_xpos[c];
        Real neg[3] = {-adj_xpos[0], -adj_xpos[1], -adj_xpos[2]};
        Real adj_qa[4];
        copy4(adj_qa, adj_xquat);
        adj_quat_rotate(q_after, jpos, adj_qa, dummy, neg);
        Real adj_qloc[4] = {};
        adj_quat_mul(q, qloc, adj_q, adj_qloc, adj_qa);
        if (type == kJntBall) {
          Real q_in[4], adj_q_in[4] = {};
          load4(q_in, d.qpos(), qa);
          adj_normalize4(q_in, adj_q_in, adj_qloc);
          accumulate(a.qpos(), qa, adj_q_in, 4);
        } else {
          // qloc = (cos(t/2), axis sin(t/2)): dqloc/dt = (-sin/2, axis cos/2), with sin and
          // cos read back from qloc rather than re-evaluated (axis is unit)
          const Real c = qloc[0], sn = dot3(jaxis, qloc + 1);
          a.qpos()[qa] += Real(0.5) * (-sn * adj_qloc[0] + c * dot3(jaxis, adj_qloc + 1));
        }
        adj_p[0] = adj_p[1] = adj_p[2] = Real(0);
      }
      // anchor = rot(q, jpos) + p ; axis = rot(q, jaxis): one rotation matrix for both
      for (int c = 0; c < 3; ++c) adj_p[c] += adj_anchor[c];
      {
        Real R[9], adj_R[9] = {};
        quat_to_mat(R, q);
        adj_mat_vec3(R, jpos, adj_R, dummy, adj_anchor);
        adj_mat_vec3(R, jaxis, adj_R, dummy, adj_axis);
        adj_quat_to_mat(q, adj_q, adj_R);
      }
      copy3(adj_xpos, adj_p);
      copy4(adj_xquat, adj_q);
    }
    // placement in the parent: pos = ppos + pmat bpos, quat = pquat * bquat
    const int p = m.body_parentid[b];
    if (p > 0) {
      Real pmat[9], pquat[4], adj_pmat[9] = {}, adj_pquat[4] = {}, adj_bquat[4] = {}, dummy[3] = {};
      load9(pmat, d.xmat(), 9 * p);
      load4(pquat, d.xquat(), 4 * p);
      accumulate(a.xpos(), 3 * p, adj_xpos, 3);
      adj_mat_vec3(pmat, m.body_pos + 3 * b, adj_pmat, dummy, adj_xpos);
      accumulate(a.xmat(), 9 * p, adj_pmat, 9);
      adj_quat_mul(pquat, m.body_quat + 4 * b, adj_pquat, adj_bquat, adj_xquat);
      accumulate(a.xquat(), 4 * p, adj_pquat, 4);
    }
  }
}

}  // namespace stiffgrad::kern
