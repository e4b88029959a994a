// The kernel-facing model: flat read-only arrays in the simulation scalar, shared by every
// environment. Built once from stiffgrad::Model (core/model_arrays.hpp on the CPU, a device
// copy in backends/cuda/). Field meanings and shapes are those of include/stiffgrad/model.hpp.
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

// Joint type ids, equal to stiffgrad::JointType / MuJoCo's mjtJoint.
enum : int { kJntFree = 0, kJntBall = 1, kJntSlide = 2, kJntHinge = 3 };
enum : int { kBiasNone = 0, kBiasAffine = 1 };
// Equality constraint types, equal to MuJoCo's mjtEq (weld is refused by the loader).
enum : int { kEqConnect = 0, kEqWeld = 1, kEqJoint = 2, kEqTendon = 3 };
constexpr int kEqData = 11;  // mjNEQDATA

// Constraint row types and solver states, equal to MuJoCo's mjtConstraint / mjtConstraintState
// so that tests compare efc_type / efc_state directly.
enum : int {
  kCnstrEquality = 0, kCnstrFrictionDof = 1, kCnstrFrictionTendon = 2, kCnstrLimitJoint = 3,
  kCnstrLimitTendon = 4, kCnstrContactFrictionless = 5, kCnstrContactPyramidal = 6,
  kCnstrContactElliptic = 7
};
enum : int {
  kStateSatisfied = 0, kStateQuadratic = 1, kStateLinearNeg = 2, kStateLinearPos = 3, kStateCone = 4
};

// Integrators of a substep (stiffgrad::Integrator): the Euler family (kernels/step/step.hpp), or an
// explicit Runge–Kutta method (kernels/integrators/integrator_rk.hpp).
enum : int { kIntEuler = 0, kIntRK4 = 1, kIntTsit5 = 2, kIntDopri5 = 3, kIntBosh3 = 4 };
constexpr int kRkMaxStages = 7;

// Contact models of a substep (stiffgrad::ContactModel): MuJoCo's soft constraints with the
// Newton solve (kernels/constraint/constraint.hpp), or Schwarke et al.'s velocity-level impulses with
// Moreau midpoint stepping (kernels/impulse/impulse_step.hpp; the model BCG trains with).
enum : int { kContactSoft = 0, kContactImpulse = 1 };

template <class Real>
struct ModelView {
  int nq, nv, nbody, njnt, nu, ntendon;
  int ngeom;     // geoms
  int ncpair;    // candidate collision pairs (Model::cpair_*)
  int ncon_max;  // contact capacity per environment (0: contacts off)
  int nefc_max;  // constraint-row capacity per environment (0: constraints off)
  Real timestep;
  int opt_iterations;      // option/iterations: Newton steps, upper bound (facts §5)
  Real opt_tolerance;      // option/tolerance: scaled early-exit threshold (facts §5)
  int opt_warmstart;       // option/flag warmstart: the solve may start at Data::qacc_warmstart
  Real stat_meaninertia;   // mean of diag(M) at qpos0: the solver's scale (facts §5)
  int implicit_actuator_damping;  // 1: Integrator::ImplicitDampingEuler (set by the backend)
  int dof_damping_any;            // 1: some dof has damping > 0 (MuJoCo's Euler then solves)
  int gravcomp_any;               // 1: some body has gravcomp != 0 (and gravity is on)
  int rk_integrator;              // kInt*: kIntEuler, or the Runge–Kutta method (set by the backend)
  Real rk_rtol, rk_atol;          // adaptive methods: relative and absolute error tolerances
  int rk_max_steps;               // adaptive methods: trial steps per timestep, at most
  double rk_event_step;           // adaptive methods: event location, largest step across a row change (0: off)
  int rk_event_gradients;         // 1: saltation at located contact events (integrator_rk_event.hpp)
  int cfd;                        // 1: the contacts-from-distance model the adjoint differentiates
  int contact_model;              // kContactSoft or kContactImpulse (set by the backend)
  Real impulse_kappa;             // Impulse: the soft activation's sharpness κ in σ(κ d), 1/m
  int impulse_sweeps;             // Impulse: projected Gauss–Seidel sweeps per substep
  int team_width;                 // the order of a team's sums (kernels/base/team.hpp): 1 on the CPU
                                  //   backend, 32 on the CUDA backend, whose warp-per-environment
                                  //   stages sum as a warp does; a thread-per-environment kernel
                                  //   or replay sums in that order with SerialTeam{team_width}
  Real gravity[3];  // zero when gravity is disabled
  // constraint options (Model::Options; read only when nefc_max > 0)
  Real impratio;              // option/impratio
  int cone;                   // option/cone: 0 pyramidal, 1 elliptic
  int refsafe;                // option/flag refsafe
  int limit_enabled;          // option/flag limit
  int frictionloss_enabled;   // option/flag frictionloss
  int contact_enabled;        // option/flag contact
  int equality_enabled;       // option/flag equality
  int neq;                    // equality constraints

  const int* body_parentid;   // nbody
  const int* body_rootid;     // nbody  root of the body's tree (child of the world); trees are
                              //        contiguous runs of bodies starting at their root
  const int* body_jntnum;     // nbody
  const int* body_jntadr;     // nbody
  const int* body_dofnum;     // nbody
  const int* body_dofadr;     // nbody
  const Real* body_pos;       // nbody x 3
  const Real* body_quat;      // nbody x 4
  const Real* body_ipos;      // nbody x 3
  const Real* body_iquat;     // nbody x 4
  const Real* body_mass;      // nbody
  const Real* body_gravcomp;  // nbody
  const Real* body_inertia;   // nbody x 3

  const int* jnt_type;        // njnt
  const int* jnt_qposadr;     // njnt
  const int* jnt_dofadr;      // njnt
  const int* jnt_bodyid;      // njnt
  const Real* jnt_pos;        // njnt x 3
  const Real* jnt_axis;       // njnt x 3
  const Real* jnt_stiffness;  // njnt
  const int* jnt_actfrclimited;   // njnt
  const Real* jnt_actfrcrange;    // njnt x 2

  const int* dof_bodyid;      // nv
  const int* dof_parentid;    // nv
  // Dof i's chain to the root as a list (derived from dof_parentid by ModelArrays), so that
  // tree-sparse loops read an array instead of chasing parent links:
  const int* dof_chainadr;    // nv  where dof i's chain starts in dof_chain
  const int* dof_chainnum;    // nv  its length: i, parent(i), ..., the root dof
  const int* dof_chain;       // sum of dof_chainnum
  const Real* dof_armature;   // nv
  const Real* dof_damping;    // nv

  const Real* qpos0;          // nq
  const Real* qpos_spring;    // nq

  const int* actuator_trntype;      // nu  kTrnJoint or kTrnTendon (a fixed tendon)
  const int* actuator_trnid;        // nu  joint or tendon
  const Real* actuator_gear;        // nu
  const Real* actuator_gainprm;     // nu x 3
  const int* actuator_biastype;     // nu
  const Real* actuator_biasprm;     // nu x 3
  const int* actuator_ctrllimited;  // nu
  const Real* actuator_ctrlrange;   // nu x 2
  const int* actuator_forcelimited; // nu
  const Real* actuator_forcerange;  // nu x 2

  const int* tendon_adr;            // ntendon
  const int* tendon_num;            // ntendon
  const Real* tendon_stiffness;     // ntendon
  const Real* tendon_damping;       // ntendon
  const Real* tendon_lengthspring;  // ntendon
  const int* wrap_jntid;            // nwrap
  const Real* wrap_coef;            // nwrap

  // ---- constraints (read only when nefc_max > 0) ----
  const int* geom_type;             // ngeom
  const int* geom_bodyid;           // ngeom
  const Real* geom_size;            // ngeom x 3
  const Real* geom_pos;             // ngeom x 3  in body frame
  const Real* geom_quat;            // ngeom x 4  in body frame
  const Real* geom_rbound;          // ngeom
  const int* geom_dataid;           // ngeom  mesh of a mesh geom, else -1
  const int* mesh_vertadr;          // nmesh
  const int* mesh_vertnum;          // nmesh
  const int* mesh_vert;      // nmeshvert x 3  float bit patterns (sg_float_from_bits), mesh frame
  const int* mesh_graphadr;  // nmesh  -1: no hull graph
  const int* mesh_graph;     // Model::mesh_graph
  const int* cpair_geom1;           // ncpair
  const int* cpair_geom2;           // ncpair
  const int* cpair_condim;          // ncpair
  const Real* cpair_friction;       // ncpair x 5
  const Real* cpair_solref;         // ncpair x 2
  const Real* cpair_solimp;         // ncpair x 5
  const Real* cpair_margin;         // ncpair
  const Real* cpair_gap;            // ncpair
  const int* cpair_contactadr;      // ncpair + 1  first slot of the pair's contacts in the staged
                                    //   narrow phase (kernels/step/staged_step.hpp); the difference
                                    //   of consecutive entries is the pair's most contacts
  const Real* body_invweight0;      // nbody x 2
  const Real* dof_invweight0;       // nv
  const Real* dof_frictionloss;     // nv
  const Real* dof_solref;           // nv x 2
  const Real* dof_solimp;           // nv x 5
  const int* jnt_limited;           // njnt
  const Real* jnt_range;            // njnt x 2
  const Real* jnt_margin;           // njnt
  const Real* jnt_solref;           // njnt x 2
  const Real* jnt_solimp;           // njnt x 5
  const int* tendon_limited;        // ntendon
  const Real* tendon_range;         // ntendon x 2
  const Real* tendon_margin;        // ntendon
  const Real* tendon_solref_lim;    // ntendon x 2
  const Real* tendon_solimp_lim;    // ntendon x 5
  const Real* tendon_frictionloss;  // ntendon
  const Real* tendon_solref_fri;    // ntendon x 2
  const Real* tendon_solimp_fri;    // ntendon x 5
  const Real* tendon_invweight0;    // ntendon
  const int* eq_type;               // neq  kEqConnect, kEqJoint, kEqTendon (mjtEq)
  const int* eq_obj1id;             // neq
  const int* eq_obj2id;             // neq
  const int* eq_active;             // neq
  const Real* eq_solref;            // neq x 2
  const Real* eq_solimp;            // neq x 5
  const Real* eq_data;              // neq x kEqData
};

}  // namespace stiffgrad::kern
