// Per-environment simulation data (the analogue of MuJoCo's mjData): the state being
// integrated, the control, and every derived quantity of one substep. One flat Real buffer
// per environment, carved into fields by DataLayout; the Layout of the views decides whether
// an environment's buffer is contiguous (CPU) or interleaved with the others (device).
#pragma once

#include "kernels/model_view.hpp"
#include "kernels/view.hpp"

namespace stiffgrad::kern {

// Offsets of each field inside one environment's buffer, in Real elements.
struct DataLayout {
  int qpos, qvel, ctrl;                 // nq, nv, nu
  // Positions (xpos, xipos, xanchor, subtree_com) are tree-relative: world axes, origin at
  // tree_origin (kernels/kinematics.hpp). Spatial quantities (cdof .. cfrc) are taken about
  // the centre of mass of the body's tree, subtree_com[body_rootid], as in MuJoCo.
  int tree_origin;                      // nbody x 3  world origin of the body's tree
  int xpos, xquat, xmat;                // nbody x 3, x 4, x 9
  int xipos, ximat;                     // nbody x 3, x 9   centre of mass frame
  int xanchor, xaxis;                   // njnt x 3, x 3
  int jnt_frame_quat;                   // njnt x 4  body orientation just before joint j acts
  int jnt_qloc;                         // njnt x 4  local rotation of a hinge/ball joint
  int xquat_raw;                        // nbody x 4  body quaternion before normalization
  int subtree_com;                      // nbody x 3  centre of mass of a tree (root rows only)
  int cdof, cdof_dot;                   // nv x 6  [angular; linear] about subtree_com[root]
  int cinert, crb;                      // nbody x 10  spatial inertia: I_p(6), m*(c-p)(3), m
  int cvel, cacc, cfrc;                 // nbody x 6
  int qM, qLD;                          // nv x nv  mass matrix (lower), factor of M + h*D
  int qfrc_bias, qfrc_passive, qfrc_actuator, qfrc_smooth, qacc;  // nv
  int actuator_length, actuator_velocity, actuator_force;        // nu
  int ten_length, ten_velocity;                                  // ntendon
  int size;                             // total Reals per environment

  template <class Real>
  static SG_HD DataLayout make(const ModelView<Real>& m) {
    DataLayout d{};
    int o = 0;
    auto take = [&o](int n) { int at = o; o += n; return at; };
    d.qpos = take(m.nq); d.qvel = take(m.nv); d.ctrl = take(m.nu);
    d.tree_origin = take(3 * m.nbody);
    d.xpos = take(3 * m.nbody); d.xquat = take(4 * m.nbody); d.xmat = take(9 * m.nbody);
    d.xipos = take(3 * m.nbody); d.ximat = take(9 * m.nbody);
    d.xanchor = take(3 * m.njnt); d.xaxis = take(3 * m.njnt);
    d.jnt_frame_quat = take(4 * m.njnt);
    d.jnt_qloc = take(4 * m.njnt); d.xquat_raw = take(4 * m.nbody);
    d.subtree_com = take(3 * m.nbody);
    d.cdof = take(6 * m.nv); d.cdof_dot = take(6 * m.nv);
    d.cinert = take(10 * m.nbody); d.crb = take(10 * m.nbody);
    d.cvel = take(6 * m.nbody); d.cacc = take(6 * m.nbody); d.cfrc = take(6 * m.nbody);
    d.qM = take(m.nv * m.nv); d.qLD = take(m.nv * m.nv);
    d.qfrc_bias = take(m.nv); d.qfrc_passive = take(m.nv); d.qfrc_actuator = take(m.nv);
    d.qfrc_smooth = take(m.nv); d.qacc = take(m.nv);
    d.actuator_length = take(m.nu); d.actuator_velocity = take(m.nu);
    d.actuator_force = take(m.nu);
    d.ten_length = take(m.ntendon); d.ten_velocity = take(m.ntendon);
    d.size = o;
    return d;
  }
};

// Views of one environment's fields.
template <class Real, class L>
struct Data {
  using V = View<Real, L>;
  V qpos, qvel, ctrl;
  V tree_origin, xpos, xquat, xmat, xipos, ximat, xanchor, xaxis;
  V jnt_frame_quat, jnt_qloc, xquat_raw, subtree_com;
  V cdof, cdof_dot, cinert, crb, cvel, cacc, cfrc;
  V qM, qLD;
  V qfrc_bias, qfrc_passive, qfrc_actuator, qfrc_smooth, qacc;
  V actuator_length, actuator_velocity, actuator_force;
  V ten_length, ten_velocity;

  // `base` views element 0 of this environment's buffer.
  static SG_HD Data bind(V base, const DataLayout& o) {
    Data d;
    d.qpos = base.at(o.qpos); d.qvel = base.at(o.qvel); d.ctrl = base.at(o.ctrl);
    d.tree_origin = base.at(o.tree_origin);
    d.xpos = base.at(o.xpos); d.xquat = base.at(o.xquat); d.xmat = base.at(o.xmat);
    d.xipos = base.at(o.xipos); d.ximat = base.at(o.ximat);
    d.xanchor = base.at(o.xanchor); d.xaxis = base.at(o.xaxis);
    d.jnt_frame_quat = base.at(o.jnt_frame_quat);
    d.jnt_qloc = base.at(o.jnt_qloc); d.xquat_raw = base.at(o.xquat_raw);
    d.subtree_com = base.at(o.subtree_com);
    d.cdof = base.at(o.cdof); d.cdof_dot = base.at(o.cdof_dot);
    d.cinert = base.at(o.cinert); d.crb = base.at(o.crb);
    d.cvel = base.at(o.cvel); d.cacc = base.at(o.cacc); d.cfrc = base.at(o.cfrc);
    d.qM = base.at(o.qM); d.qLD = base.at(o.qLD);
    d.qfrc_bias = base.at(o.qfrc_bias); d.qfrc_passive = base.at(o.qfrc_passive);
    d.qfrc_actuator = base.at(o.qfrc_actuator); d.qfrc_smooth = base.at(o.qfrc_smooth);
    d.qacc = base.at(o.qacc);
    d.actuator_length = base.at(o.actuator_length);
    d.actuator_velocity = base.at(o.actuator_velocity);
    d.actuator_force = base.at(o.actuator_force);
    d.ten_length = base.at(o.ten_length); d.ten_velocity = base.at(o.ten_velocity);
    return d;
  }
};

}  // namespace stiffgrad::kern
