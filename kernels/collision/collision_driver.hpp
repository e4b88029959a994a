// Per-substep collision (MuJoCo's mj_collision for the compiled candidate pairs): geom poses,
// bounding-sphere and plane culling, the narrow phase, and the contact list in MuJoCo 2.2.2's
// order (docs/references/mujoco-2.2.2-constraints.md §1-2).
//
// Precision: the narrow phase of a pair runs in a frame shifted to the tree origin of the pair's
// reference body (geom2's body, or geom1's when geom2 is static), so a robot far from the world
// origin collides with the same small numbers as at the origin; contact_pos is stored relative
// to that origin (contact_world_pos adds it back).
#pragma once

#include "kernels/collision/collision.hpp"
#include "kernels/base/data.hpp"
#include "kernels/base/math3.hpp"
#include "kernels/base/status.hpp"

namespace stiffgrad::kern {

// World poses of every geom, tree-relative like xpos: geom_xpos = xpos + xmat geom_pos,
// geom_xmat = xmat mat(geom_quat).
template <class Real, class L>
SG_HD void geom_poses(const ModelView<Real>& m, const Data<Real, L>& d) {
  for (int g = 0; g < m.ngeom; ++g) {
    const int b = m.geom_bodyid[g];
    Real xmat[9], xpos[3], off[3], gmat[9], rot[9];
    load9(xmat, d.xmat(), 9 * b);
    load3(xpos, d.xpos(), 3 * b);
    mat_vec3(off, xmat, m.geom_pos + 3 * g);
    for (int k = 0; k < 3; ++k) d.geom_xpos()[3 * g + k] = xpos[k] + off[k];
    quat_to_mat(rot, m.geom_quat + 4 * g);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        gmat[3 * r + c] = xmat[3 * r] * rot[c] + xmat[3 * r + 1] * rot[3 + c] + xmat[3 * r + 2] * rot[6 + c];
    store9(d.geom_xmat(), 9 * g, gmat);
  }
}

// The body whose tree origin is the reference frame of candidate pair c.
template <class Real>
SG_HD SG_INLINE int contact_reference_body(const ModelView<Real>& m, int c) {
  const int b2 = m.geom_bodyid[m.cpair_geom2[c]];
  return b2 != 0 ? b2 : m.geom_bodyid[m.cpair_geom1[c]];
}

// Geom g's pose in the frame whose origin is tree_origin[ref] (world axes).
template <class Real, class L>
SG_HD SG_INLINE void geom_pose_relative(const ModelView<Real>& m, const Data<Real, L>& d, int g, int ref,
                                        GeomPose<Real>& out) {
  const int b = m.geom_bodyid[g];
  out.type = m.geom_type[g];
  for (int k = 0; k < 3; ++k)
    out.pos[k] =
        d.geom_xpos()[3 * g + k] + (d.tree_origin()[3 * b + k] - d.tree_origin()[3 * ref + k]);
  load9(out.mat, d.geom_xmat(), 9 * g);
  for (int k = 0; k < 3; ++k) out.size[k] = m.geom_size[3 * g + k];
  const int mesh = out.type == kGeomMesh ? m.geom_dataid[g] : -1;
  out.mesh_vert = mesh >= 0 ? m.mesh_vert + 3 * m.mesh_vertadr[mesh] : nullptr;
  out.mesh_nvert = mesh >= 0 ? m.mesh_vertnum[mesh] : 0;
  out.mesh_graph =
      mesh >= 0 && m.mesh_graphadr[mesh] >= 0 ? m.mesh_graph + m.mesh_graphadr[mesh] : nullptr;
}

// Geom g's position alone, as geom_pose_relative computes it.
template <class Real, class L>
SG_HD SG_INLINE void geom_pos_relative(const ModelView<Real>& m, const Data<Real, L>& d, int g, int ref, Real* pos) {
  const int b = m.geom_bodyid[g];
  for (int k = 0; k < 3; ++k)
    pos[k] = d.geom_xpos()[3 * g + k] + (d.tree_origin()[3 * b + k] - d.tree_origin()[3 * ref + k]);
}

// MuJoCo's cheap rejections before the narrow phase (facts §1, filters 6-7): bounding spheres,
// and a plane (always geom1: it has the smallest type) against the other geom's sphere. From the
// geoms' positions (and the plane's normal) only, so that a rejected pair costs no full pose.
template <class Real, class L>
SG_HD SG_INLINE bool pair_may_touch(const ModelView<Real>& m, const Data<Real, L>& d, int g1, int g2, int ref,
                                    Real margin) {
  Real pos1[3], pos2[3], dc[3];
  geom_pos_relative(m, d, g1, ref, pos1);
  geom_pos_relative(m, d, g2, ref, pos2);
  sub3(dc, pos2, pos1);
  const Real rb1 = m.geom_rbound[g1], rb2 = m.geom_rbound[g2];
  if (m.geom_type[g1] == kGeomPlane) {
    const Real n[3] = {d.geom_xmat()[9 * g1 + 2], d.geom_xmat()[9 * g1 + 5],
                       d.geom_xmat()[9 * g1 + 8]};
    return !(dot3(n, dc) > margin + rb2);
  }
  if (rb1 > Real(0) && rb2 > Real(0)) return !(sg_sqrt(dot3(dc, dc)) > rb1 + rb2 + margin);
  return true;
}

// The narrow phase of candidate pair c alone: culling, the two poses in the pair's reference
// frame, and routine R (== pair_routine of the pair's types; kRoutineNone dispatches at run
// time). Writes the pair's contacts to found (room for kMaxContactsPerPair) and returns their
// number. Reads only geom_xpos, geom_xmat and tree_origin: the staged CUDA pipeline runs it for
// every (pair, environment) in its own kernel (kernels/step/staged_step.hpp).
template <int R = kRoutineNone, class Real, class L>
SG_HD int collide_candidate_pair(const ModelView<Real>& m, const Data<Real, L>& d, int c, Contact<Real>* found) {
  const int g1 = m.cpair_geom1[c], g2 = m.cpair_geom2[c];
  const int ref = contact_reference_body(m, c);
  const Real margin = m.cpair_margin[c];
  if (!pair_may_touch(m, d, g1, g2, ref, margin)) return 0;
  GeomPose<Real> p1, p2;
  geom_pose_relative(m, d, g1, ref, p1);
  geom_pose_relative(m, d, g2, ref, p2);
  if constexpr (R == kRoutineNone) return collide_geoms(p1, p2, margin, found);
  else return collide_with<R>(p1, p2, margin, found);
}

// Appends pair c's n contacts (from collide_candidate_pair) to the contact list at *ncon, in
// order; returns kEnvConstraintOverflow when the list is full (the rest are dropped), else 0.
template <class Real, class L>
SG_HD SG_INLINE int append_pair_contacts(const ModelView<Real>& m, const Data<Real, L>& d, int c,
                                         const Contact<Real>* found, int n, int* ncon) {
  for (int k = 0; k < n; ++k) {
    if (*ncon >= m.ncon_max) return kEnvConstraintOverflow;
    const int i = (*ncon)++;
    d.contact_dist()[i] = found[k].dist;
    for (int j = 0; j < 3; ++j) d.contact_pos()[3 * i + j] = found[k].pos[j];
    for (int j = 0; j < 9; ++j) d.contact_frame()[9 * i + j] = found[k].frame[j];
    d.contact_pair()[i] = Real(c);
  }
  return 0;
}

// Contacts of every candidate pair into d.contact_* (count in d.ncon), in pair order (MuJoCo
// 2.2.2's). Returns kEnvOk, or kEnvConstraintOverflow when more contacts were found than
// ncon_max (the rest are dropped).
template <class Real, class L>
SG_HD SG_OUTLINE int fwd_collision(const ModelView<Real>& m, const Data<Real, L>& d) {
  geom_poses(m, d);
  int ncon = 0, status = 0;
  if (m.contact_enabled)
    for (int c = 0; c < m.ncpair && status == 0; ++c) {
      Contact<Real> found[kMaxContactsPerPair];  // frames completed by collide_geoms
      const int n = collide_candidate_pair(m, d, c, found);
      status = append_pair_contacts(m, d, c, found, n, &ncon);
    }
  d.ncon()[0] = Real(ncon);
  return status;
}

// World position of contact k (its stored position is relative to the reference tree origin).
template <class Real, class L>
SG_HD SG_INLINE void contact_world_pos(const ModelView<Real>& m, const Data<Real, L>& d, int k, Real pos[3]) {
  const int ref = contact_reference_body(m, sg_int(d.contact_pair()[k]));
  for (int i = 0; i < 3; ++i) pos[i] = d.contact_pos()[3 * k + i] + d.tree_origin()[3 * ref + i];
}

}  // namespace stiffgrad::kern
