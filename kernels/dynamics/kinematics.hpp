// Forward kinematics (MuJoCo's mj_kinematics + mj_comPos): body frames, joint anchors and
// axes, the spatial inertia of each body (cinert) and the motion subspace of each degree of
// freedom (cdof).
//
// Precision away from the origin. Positions are kept *tree-relative*: every body of a
// kinematic tree (the subtree of one child of the world, its root) stores its position, COM
// and joint anchors relative to the tree origin, the root's frame origin in the world
// (`tree_origin`, a free root's qpos translation or a fixed root's body_pos). The world
// position is tree_origin + xpos. Spatial quantities (cinert, cdof, and from
// them cvel, cacc, cfrc) are taken about the tree's centre of mass subtree_com[root], as
// MuJoCo's mj_comPos does, so they equal MuJoCo's mjData fields. A robot 1000 m from the
// origin therefore computes its dynamics from the same small numbers as at the origin: in
// float, absolute coordinates would lose 6e-5 m of every lever arm at 1000 m.
#pragma once

#include "kernels/base/data.hpp"
#include "kernels/base/spatial.hpp"

namespace stiffgrad::kern {

// Frame of body b before its joints act: its fixed placement in the parent's final frame,
// tree-relative. A root body (child of the world) sits at its tree's origin.
template <class Real, class L>
SG_HD SG_INLINE void body_frame_in_parent(const ModelView<Real>& m, const Data<Real, L>& d, int b,
                                          Real xpos[3], Real xquat[4]) {
  const int p = m.body_parentid[b];
  const Real* bpos = m.body_pos + 3 * b;
  const Real* bquat = m.body_quat + 4 * b;
  if (p > 0) {
    Real pmat[9], ppos[3], pquat[4], off[3];
    load9(pmat, d.xmat(), 9 * p);
    load3(ppos, d.xpos(), 3 * p);
    load4(pquat, d.xquat(), 4 * p);
    mat_vec3(off, pmat, bpos);
    add3(xpos, ppos, off);
    quat_mul(xquat, pquat, bquat);
  } else {
    xpos[0] = xpos[1] = xpos[2] = Real(0);
    copy4(xquat, bquat);
  }
}

// One hinge, slide or ball joint j acting on the body frame (xpos, xquat), in place; also
// returns the joint's world anchor and axis (taken before the joint moves the frame) and, for
// hinge and ball joints, its local rotation qloc (untouched for a slide).
// Hinge/slide joints move by qpos - qpos0 (MuJoCo's `ref` convention); a ball joint by its
// normalized quaternion. Rotations turn about the anchor, not the body origin.
template <class Real, class L>
SG_HD SG_INLINE void apply_joint(const ModelView<Real>& m, View<Real, L> qpos, int j, Real xpos[3],
                                 Real xquat[4], Real xanchor[3], Real xaxis[3], Real qloc[4]) {
  const int a = m.jnt_qposadr[j];
  const int type = m.jnt_type[j];
  const Real* jpos = m.jnt_pos + 3 * j;
  const Real* jaxis = m.jnt_axis + 3 * j;
  quat_rotate(xaxis, xquat, jaxis);
  quat_rotate(xanchor, xquat, jpos);
  xanchor[0] += xpos[0]; xanchor[1] += xpos[1]; xanchor[2] += xpos[2];
  if (type == kJntSlide) {
    const Real s = qpos[a] - m.qpos0[a];
    xpos[0] += xaxis[0] * s; xpos[1] += xaxis[1] * s; xpos[2] += xaxis[2] * s;
  } else {
    if (type == kJntBall) {
      load4(qloc, qpos, a);
      normalize4(qloc);
    } else {
      axis_angle_to_quat(qloc, jaxis, qpos[a] - m.qpos0[a]);
    }
    quat_mul(xquat, xquat, qloc);
    Real v[3];
    quat_rotate(v, xquat, jpos);
    sub3(xpos, xanchor, v);
  }
}

// True when body b is moved by a single free joint (its frame comes straight from qpos; the
// loader only allows free joints in root bodies).
template <class Real>
SG_HD SG_INLINE bool is_free_body(const ModelView<Real>& m, int b) {
  return m.body_jntnum[b] == 1 && m.jnt_type[m.body_jntadr[b]] == kJntFree;
}

// Body and joint frames from qpos, base to tip (bodies are numbered parent-first). Positions
// are tree-relative (see the top of this file): body b is at tree_origin[b] + xpos[b] in the
// world, tree_origin[b] being its root's world origin.
template <class Real, class L>
SG_HD void fwd_kinematics_base_to_tip(const ModelView<Real>& m, const Data<Real, L>& d) {
  {
    const Real zero3[3] = {Real(0), Real(0), Real(0)};
    const Real unit[4] = {Real(1), Real(0), Real(0), Real(0)};
    const Real eye[9] = {Real(1), Real(0), Real(0), Real(0), Real(1), Real(0), Real(0), Real(0), Real(1)};
    store3(d.xpos(), 0, zero3);
    store4(d.xquat(), 0, unit);
    store9(d.xmat(), 0, eye);
    store3(d.xipos(), 0, zero3);
    store9(d.ximat(), 0, eye);
    store3(d.tree_origin(), 0, zero3);
  }
  for (int b = 1; b < m.nbody; ++b) {
    Real xpos[3], xquat[4];
    const int jnt0 = m.body_jntadr[b];
    if (is_free_body(m, b)) {
      const int a = m.jnt_qposadr[jnt0];
      Real origin[3];
      load3(origin, d.qpos(), a);
      store3(d.tree_origin(), 3 * b, origin);
      xpos[0] = xpos[1] = xpos[2] = Real(0);
      load4(xquat, d.qpos(), a + 3);
      normalize4(xquat);
      store3(d.xanchor(), 3 * jnt0, xpos);
      store3(d.xaxis(), 3 * jnt0, m.jnt_axis + 3 * jnt0);
    } else {
      const int p = m.body_parentid[b];
      for (int k = 0; k < 3; ++k)
        d.tree_origin()[3 * b + k] = p == 0 ? m.body_pos[3 * b + k] : d.tree_origin()[3 * p + k];
      body_frame_in_parent(m, d, b, xpos, xquat);
      for (int k = 0; k < m.body_jntnum[b]; ++k) {
        const int j = jnt0 + k;
        // kept for the adjoint, which would otherwise recompute every joint's entry rotation
        store4(d.jnt_frame_quat(), 4 * j, xquat);
        Real xanchor[3], xaxis[3], qloc[4] = {Real(1), Real(0), Real(0), Real(0)};
        apply_joint(m, d.qpos(), j, xpos, xquat, xanchor, xaxis, qloc);
        store3(d.xanchor(), 3 * j, xanchor);
        store3(d.xaxis(), 3 * j, xaxis);
        store4(d.jnt_qloc(), 4 * j, qloc);
      }
    }
    store4(d.xquat_raw(), 4 * b, xquat);
    normalize4(xquat);
    Real xmat[9];
    quat_to_mat(xmat, xquat);
    store3(d.xpos(), 3 * b, xpos);
    store4(d.xquat(), 4 * b, xquat);
    store9(d.xmat(), 9 * b, xmat);

    // centre-of-mass frame
    Real xipos[3], off[3], iq[4], imat[9];
    mat_vec3(off, xmat, m.body_ipos + 3 * b);
    add3(xipos, xpos, off);
    quat_mul(iq, xquat, m.body_iquat + 4 * b);
    quat_to_mat(imat, iq);
    store3(d.xipos(), 3 * b, xipos);
    store9(d.ximat(), 9 * b, imat);
  }
}

// Centre of mass of every kinematic tree, tree-relative, into subtree_com[root] (MuJoCo's
// subtree_com of the root body; a massless tree uses its root's COM, as mj_comPos does).
// Bodies are numbered depth-first, so each tree is a contiguous run of bodies starting at its
// root (ModelArrays checks this when a model is bound).
template <class Real, class L>
SG_HD SG_INLINE void tree_com(const ModelView<Real>& m, const Data<Real, L>& d) {
  Real sum[3] = {Real(0), Real(0), Real(0)}, mass = Real(0);
  for (int b = 1; b < m.nbody; ++b) {
    const int r = m.body_rootid[b];
    if (r == b) { sum[0] = sum[1] = sum[2] = Real(0); mass = Real(0); }
    const Real mb = m.body_mass[b];
    for (int k = 0; k < 3; ++k) sum[k] += mb * d.xipos()[3 * b + k];
    mass += mb;
    if (b + 1 == m.nbody || m.body_rootid[b + 1] != r) {
      if (mass < min_norm<Real>()) {
        for (int k = 0; k < 3; ++k) d.subtree_com()[3 * r + k] = d.xipos()[3 * r + k];
      } else {
        const Real inv = Real(1) / mass;
        for (int k = 0; k < 3; ++k) d.subtree_com()[3 * r + k] = sum[k] * inv;
      }
    }
  }
}

// Spatial inertia of every body (cinert) and motion subspace of every dof (cdof) about its
// tree's centre of mass p = subtree_com[root] (MuJoCo's mj_comPos). A hinge about unit axis s
// through anchor a moves points with the twist [s; (a - p) x s]; a slide along s with [0; s].
// Ball and free rotations use the columns of the body's final rotation (the loader forbids
// joints after a ball in the same body).
template <class Real, class L>
SG_HD void com_inertia_and_dofs(const ModelView<Real>& m, const Data<Real, L>& d) {
  tree_com(m, d);
  for (int k = 0; k < 10; ++k) d.cinert()[k] = Real(0);
  for (int b = 1; b < m.nbody; ++b) {
    Real R[9], c[3], Ic[9], cin[10];
    load9(R, d.ximat(), 9 * b);
    const int root = m.body_rootid[b];
    for (int k = 0; k < 3; ++k) c[k] = d.xipos()[3 * b + k] - d.subtree_com()[3 * root + k];
    const Real* D = m.body_inertia + 3 * b;
    // Ic = R diag(D) R^T
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s)
        Ic[3 * r + s] = R[3 * r] * D[0] * R[3 * s] + R[3 * r + 1] * D[1] * R[3 * s + 1] +
                        R[3 * r + 2] * D[2] * R[3 * s + 2];
    inertia_from_com(cin, m.body_mass[b], c, Ic);
    for (int k = 0; k < 10; ++k) d.cinert()[10 * b + k] = cin[k];
  }
  for (int j = 0; j < m.njnt; ++j) {
    const int da = m.jnt_dofadr[j];
    const int b = m.jnt_bodyid[j];
    const int r = m.body_rootid[b];
    Real anchor[3], axis[3], dof[6];  // anchor relative to the tree's centre of mass
    for (int k = 0; k < 3; ++k) anchor[k] = d.xanchor()[3 * j + k] - d.subtree_com()[3 * r + k];
    switch (m.jnt_type[j]) {
      case kJntFree:
        for (int i = 0; i < 3; ++i) {
          for (int k = 0; k < 6; ++k) dof[k] = Real(0);
          dof[3 + i] = Real(1);
          store6(d.cdof(), 6 * (da + i), dof);
        }
        for (int i = 0; i < 3; ++i) {
          axis[0] = d.xmat()[9 * b + i];
          axis[1] = d.xmat()[9 * b + 3 + i];
          axis[2] = d.xmat()[9 * b + 6 + i];
          copy3(dof, axis);
          cross3(dof + 3, anchor, axis);
          store6(d.cdof(), 6 * (da + 3 + i), dof);
        }
        break;
      case kJntBall:
        for (int i = 0; i < 3; ++i) {
          axis[0] = d.xmat()[9 * b + i];
          axis[1] = d.xmat()[9 * b + 3 + i];
          axis[2] = d.xmat()[9 * b + 6 + i];
          copy3(dof, axis);
          cross3(dof + 3, anchor, axis);
          store6(d.cdof(), 6 * (da + i), dof);
        }
        break;
      case kJntSlide:
        load3(axis, d.xaxis(), 3 * j);
        dof[0] = dof[1] = dof[2] = Real(0);
        copy3(dof + 3, axis);
        store6(d.cdof(), 6 * da, dof);
        break;
      default:  // hinge
        load3(axis, d.xaxis(), 3 * j);
        copy3(dof, axis);
        cross3(dof + 3, anchor, axis);
        store6(d.cdof(), 6 * da, dof);
        break;
    }
  }
}

}  // namespace stiffgrad::kern
