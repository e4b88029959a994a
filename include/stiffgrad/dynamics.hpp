// stiffgrad — single-state smooth dynamics on the host, in double (the `stiffgrad dynamics`
// command and the parity tests). Runs exactly the kernels the simulator runs.
#pragma once

#include <vector>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

struct SmoothDynamics {
  std::vector<double> M;              // nv x nv, row-major (armature included)
  std::vector<double> qfrc_bias;      // nv  Coriolis, centrifugal and gravity
  std::vector<double> qfrc_passive;   // nv  joint/tendon stiffness and damping
  std::vector<double> qfrc_actuator;  // nv
  std::vector<double> qacc;           // nv  M^-1 (passive + actuator - bias)
};

// qpos (nq), qvel (nv), ctrl (nu).
SmoothDynamics smooth_dynamics(const Model& model, const double* qpos, const double* qvel,
                               const double* ctrl);

// One contact, in MuJoCo's conventions (mjContact's geometric part and its pair's parameters).
struct ContactInfo {
  int geom1 = -1, geom2 = -1;  // MuJoCo's order: type(geom1) <= type(geom2)
  double dist = 0;             // signed distance (< 0: penetrating)
  double pos[3] = {};          // world position: midpoint between the surfaces
  double frame[9] = {};        // rows: normal (geom1 -> geom2), tangent 1, tangent 2
  int dim = 0;                 // condim
  double includemargin = 0;    // margin - gap: rows exist only when dist < includemargin
};

// The dynamics with constraints (contacts, limits, friction loss; MuJoCo 2.2.2's soft model and
// Newton solver, started as mj_forward starts it on fresh mjData: at qacc_smooth or, with the
// warmstart flag on, at a zero warm start when that costs less), at one state, in double. The base fields are as in
// SmoothDynamics with qacc the constrained acceleration (MuJoCo's mjData.qacc).
struct ConstrainedDynamics : SmoothDynamics {
  std::vector<double> qacc_smooth;      // nv  M^-1 qfrc_smooth
  std::vector<double> qfrc_constraint;  // nv  J^T efc_force
  std::vector<ContactInfo> contacts;    // every contact found (also those outside includemargin)
  int nefc = 0;                         // constraint rows
  std::vector<int> efc_type, efc_id;    // nefc  mjtConstraint; dof/joint/tendon/contact index
  std::vector<double> efc_J;            // nefc x nv
  std::vector<double> efc_pos, efc_margin, efc_frictionloss, efc_diag_approx;  // nefc
  std::vector<double> efc_R, efc_D, efc_vel, efc_aref, efc_force;            // nefc
  std::vector<int> efc_state;           // nefc  mjtConstraintState
  int solver_iterations = 0;
  int status = 0;                       // kEnvConstraintOverflow bit when capacities overflowed
};

// When the model disables constraints (flag constraint) or has nothing to constrain, this is the
// smooth dynamics with qfrc_constraint = 0 and no rows.
ConstrainedDynamics constrained_dynamics(const Model& model, const double* qpos, const double* qvel,
                                         const double* ctrl);

// `steps` Euler steps (each of model.opt.timestep, damping implicit) from (qpos, qvel) with
// ctrl held, on the host in double, with the model's constraints (as a default Simulator);
// qpos and qvel are updated in place.
void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps);

}  // namespace stiffgrad
