// Per-environment simulation data (the analogue of MuJoCo's mjData): the state being
// integrated, the control, and every derived quantity of one substep. One flat Real buffer
// per environment, carved into fields by DataLayout; the Layout of the views decides whether
// an environment's buffer is contiguous (CPU) or interleaved with the others (device).
#pragma once

#include "kernels/base/model_view.hpp"
#include "kernels/impulse/impulse_workspace.hpp"
#include "kernels/constraint/solver_workspace.hpp"
#include "kernels/base/view.hpp"

namespace stiffgrad::kern {

// Offsets of each field inside one environment's buffer, in Real elements.
struct DataLayout {
  int qpos, qvel, ctrl;                 // nq, nv, nu
  // Positions (xpos, xipos, xanchor, subtree_com) are tree-relative: world axes, origin at
  // tree_origin (kernels/dynamics/kinematics.hpp). Spatial quantities (cdof .. cfrc) are taken about
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
  // ---- constraints (sized by the capacities ncon_max, nefc_max; empty when they are 0) ----
  // Counts and ids are stored as Reals (exact below 2^24 in float).
  int qacc_smooth, qfrc_constraint;     // nv  M^-1 qfrc_smooth; J^T efc_force
  int qacc_solver;                      // nv  the constraint solve's qacc (before the Euler solve)
  // The solve's warm start (MuJoCo's qacc_warmstart): the previous solve's qacc. Part of the
  // state a step depends on (with the warmstart flag on), carried from step to step by the
  // backends and checkpointed by Rollout (kernels/step/batch.hpp).
  int qacc_warmstart;                   // nv
  int geom_xpos, geom_xmat;             // ngeom x 3 (tree-relative, as xpos), x 9
  int ncon;                             // 1  contacts found this substep
  int contact_dist;                     // ncon_max
  int contact_pos;                      // ncon_max x 3  world position
  int contact_frame;                    // ncon_max x 9  rows (normal geom1->geom2, t1, t2)
  int contact_pair;                     // ncon_max  candidate pair id (Model::cpair_*)
  int nefc;                             // 1  constraint rows this substep
  int efc_type, efc_id;                 // nefc_max  kCnstr*; dof/joint/tendon/contact id
  int efc_J;                            // nefc_max x nv  row-major
  int efc_chain;                        // nefc_max  J's structural non-zeros (row_sparsity.hpp)
  int efc_pos, efc_margin;              // nefc_max
  int efc_frictionloss;                 // nefc_max  friction-loss rows: the loss f
  int efc_mu;                           // nefc_max  elliptic rows: row 0 mu_reg, row k friction[k-1]
  int efc_dim;                          // nefc_max  elliptic rows: condim on each row of the contact
  int efc_diag_approx, efc_R, efc_D;    // nefc_max
  int efc_KBIP;                         // nefc_max x 4  stiffness, damping, impedance, d imp/d r
  int efc_vel, efc_aref;                // nefc_max  J qvel; reference acceleration
  int efc_force, efc_state;             // nefc_max  solver output (kState*)
  int solver_niter;                     // 1  Newton iterations of the last solve
  int solver_ws;                        // newton_workspace_size(nv, nefc_max) (kernels/constraint/solver.hpp)
  int imp_ws;                           // impulse_workspace_size (kernels/impulse/impulse_workspace.hpp;
                                        //   the Impulse contact model only, else empty)
  // ---- Runge–Kutta substeps (kernels/integrators/integrator_rk.hpp; empty for the Euler family). Last in
  // the buffer: clear_adjoint_scratch stops before them, the adjoint keeps its sums there ----
  int rk_y0;                            // nq + nv  the step's start state
  int rk_tmp;                           // nv  the velocity integrate_pos is given
  int rk_stage_q;                       // kRkMaxStages x nq  stage positions
  int rk_stage_k;                       // kRkMaxStages x 2nv  stage velocity V_i, then qacc_i
  int rk_steps;                         // rk_max_steps x (nq + nv + 1)  accepted steps: start, size
  int rk_count;                         // 3  accepted steps, dynamics evaluations, Newton iterations of the substep
  int rk_warm;                          // nv  the solve's warm start when the substep began (with constraints)
  int rk_event;                         // nv + 4 ncon_max  saltation at an event (rk_event_gradients):
                                        //   ∇g, then per active contact its pair and position
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
    const int nc = m.ncon_max, ne = m.nefc_max;
    d.qacc_smooth = take(m.nv); d.qfrc_constraint = take(m.nv);
    d.qacc_solver = take(nc > 0 || ne > 0 ? m.nv : 0);
    d.qacc_warmstart = take(nc > 0 || ne > 0 ? m.nv : 0);
    d.geom_xpos = take(3 * m.ngeom); d.geom_xmat = take(9 * m.ngeom);
    d.ncon = take(1);
    d.contact_dist = take(nc); d.contact_pos = take(3 * nc); d.contact_frame = take(9 * nc);
    d.contact_pair = take(nc);
    d.nefc = take(1);
    d.efc_type = take(ne); d.efc_id = take(ne); d.efc_J = take(ne * m.nv);
    d.efc_chain = take(ne);
    d.efc_pos = take(ne); d.efc_margin = take(ne); d.efc_frictionloss = take(ne);
    d.efc_mu = take(ne); d.efc_dim = take(ne);
    d.efc_diag_approx = take(ne); d.efc_R = take(ne); d.efc_D = take(ne);
    d.efc_KBIP = take(4 * ne); d.efc_vel = take(ne); d.efc_aref = take(ne);
    d.efc_force = take(ne); d.efc_state = take(ne);
    d.solver_niter = take(1);
    d.solver_ws = take(ne > 0 ? newton_workspace_size(m.nv, ne) : 0);
    d.imp_ws = take(ne > 0 && m.contact_model == kContactImpulse
                        ? impulse_workspace_size(m.nq, m.nv, m.nbody, ne, m.impulse_sweeps)
                        : 0);
    const bool rk = m.rk_integrator != kIntEuler;
    const int rk_records = rk ? (m.rk_max_steps > 1 ? m.rk_max_steps : 1) : 0;
    d.rk_y0 = take(rk ? m.nq + m.nv : 0);
    d.rk_tmp = take(rk ? m.nv : 0);
    d.rk_stage_q = take(rk ? kRkMaxStages * m.nq : 0);
    d.rk_stage_k = take(rk ? kRkMaxStages * 2 * m.nv : 0);
    d.rk_steps = take(rk_records * (m.nq + m.nv + 1));
    d.rk_count = take(rk ? 3 : 0);
    d.rk_warm = take(rk && (nc > 0 || ne > 0) ? m.nv : 0);
    d.rk_event = take(rk && m.rk_event_gradients && (nc > 0 || ne > 0) ? m.nv + 4 * nc : 0);
    d.size = o;
    return d;
  }
};

// Whether Data has the constraint solve's warm start (qacc_warmstart): with constraints.
// The Impulse contact model has no warm start (its sweeps start from the diagonal blocks).
template <class Real>
SG_HD SG_INLINE bool has_warmstart(const ModelView<Real>& m) {
  return (m.ncon_max > 0 || m.nefc_max > 0) && m.contact_model != kContactImpulse;
}

// Every field of Data, in DataLayout's order: X(name) for each.
// clang-format off
#define SG_DATA_FIELDS(X) \
  X(qpos) X(qvel) X(ctrl) \
  X(tree_origin) X(xpos) X(xquat) X(xmat) X(xipos) X(ximat) X(xanchor) X(xaxis) \
  X(jnt_frame_quat) X(jnt_qloc) X(xquat_raw) X(subtree_com) \
  X(cdof) X(cdof_dot) X(cinert) X(crb) X(cvel) X(cacc) X(cfrc) \
  X(qM) X(qLD) \
  X(qfrc_bias) X(qfrc_passive) X(qfrc_actuator) X(qfrc_smooth) X(qacc) \
  X(actuator_length) X(actuator_velocity) X(actuator_force) \
  X(ten_length) X(ten_velocity) \
  X(qacc_smooth) X(qfrc_constraint) X(qacc_solver) X(qacc_warmstart) X(geom_xpos) X(geom_xmat) \
  X(ncon) X(contact_dist) X(contact_pos) X(contact_frame) X(contact_pair) \
  X(nefc) X(efc_type) X(efc_id) X(efc_J) X(efc_chain) X(efc_pos) X(efc_margin) \
  X(efc_frictionloss) X(efc_mu) X(efc_dim) \
  X(efc_diag_approx) X(efc_R) X(efc_D) X(efc_KBIP) X(efc_vel) X(efc_aref) X(efc_force) \
  X(efc_state) \
  X(solver_niter) X(solver_ws) X(imp_ws) \
  X(rk_y0) X(rk_tmp) X(rk_stage_q) X(rk_stage_k) X(rk_steps) X(rk_count) X(rk_warm) X(rk_event)
// clang-format on

// One environment's fields, each formed where it is used (d.qpos()[i]) from a view of element 0
// of the environment's buffer and the layout's offset. This Data is 24 bytes, not a struct of 74
// views: on a device it stays in registers (passed by reference to an outlined function, it takes
// 24 B of local memory instead of 876 B), and the offsets are read from the kernel's
// __grid_constant__ parameter, the same address in every lane (issue 38, item 6). The layout
// must outlive the Data, so bind() takes no temporary.
template <class Real, class L>
struct Data {
  using V = View<Real, L>;
  V base;                              // element 0 of this environment's buffer
  const DataLayout* layout = nullptr;  // the fields' offsets (DataLayout::make)

#define SG_DATA_FIELD(name) \
  SG_HD SG_INLINE V name() const { return base.at(layout->name); }
  SG_DATA_FIELDS(SG_DATA_FIELD)
#undef SG_DATA_FIELD

  static SG_HD SG_INLINE Data bind(V base, const DataLayout& o) { return Data{base, &o}; }
  static Data bind(V base, const DataLayout&& o) = delete;
};

// The CPU's Data (each environment contiguous) keeps every field's view, formed once by bind():
// a host core keeps the few it uses in a loop in registers, and forming them at each use cost
// 1-2% more instructions (callgrind, G1 gradient, 2026-12-07). The same accessors as above, so
// that one kernel body serves both.
template <class Real>
struct Data<Real, Contiguous> {
  using V = View<Real, Contiguous>;

#define SG_DATA_FIELD(name) \
  V name##_;                \
  SG_HD SG_INLINE V name() const { return name##_; }
  SG_DATA_FIELDS(SG_DATA_FIELD)
#undef SG_DATA_FIELD

  static SG_HD Data bind(V base, const DataLayout& o) {
    Data d;
#define SG_DATA_FIELD(name) d.name##_ = base.at(o.name);
    SG_DATA_FIELDS(SG_DATA_FIELD)
#undef SG_DATA_FIELD
    return d;
  }
  static Data bind(V base, const DataLayout&& o) = delete;
};

}  // namespace stiffgrad::kern
