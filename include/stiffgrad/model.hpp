// stiffgrad — compiled, immutable model (the analogue of MuJoCo's mjModel).
//
// A Model is produced by load_mjcf() and never changes afterwards. All arrays are flat
// std::vectors in double precision, indexed the way MuJoCo indexes mjModel, so that a
// field here and the mjModel field of the same name hold the same numbers (parity tests
// compare them directly). Backends convert the arrays once, at creation, into the
// kernel-facing ModelView<Real> (kernels/base/model_view.hpp).
#pragma once

#include <string>
#include <vector>

namespace stiffgrad {

// Numbering follows MuJoCo's mjtJoint / mjtGeom so that parity tests compare ids directly.
enum class JointType : int { Free = 0, Ball = 1, Slide = 2, Hinge = 3 };
enum class GeomType : int {
  Plane = 0, HField = 1, Sphere = 2, Capsule = 3, Ellipsoid = 4, Cylinder = 5, Box = 6, Mesh = 7
};
enum class GainType : int { Fixed = 0 };
enum class BiasType : int { None = 0, Affine = 1 };

// Integrators a user may request from the simulator (MJCF `option integrator` is only noted).
//   SemiImplicitEuler  MuJoCo's Euler: (M + h D) dv = h f, joint damping D implicit.
//   ImplicitDampingEuler  the same, with the velocity gains of joint actuators implicit too:
//                      (M + h (D + K)) dv = h f, K_ii = -sum gear^2 b2 over the (unclamped)
//                      affine actuators of dof i. This is the diagonal part of MuJoCo's
//                      implicitfast, and keeps position servos with kv stable at large steps.
//   RK4                MuJoCo 2.2.2's RK4 (mj_RungeKutta): four dynamics evaluations per
//                      substep, joint damping explicit.
//   Tsit5, Dopri5, Bosh3  embedded adaptive Runge–Kutta (DiffMJX): each environment takes its
//                      own steps inside every substep, with AdaptiveTolerances
//                      (kernels/integrators/integrator_rk.hpp).
enum class Integrator : int {
  SemiImplicitEuler = 0, ImplicitDampingEuler = 1, RK4 = 2, Tsit5 = 3, Dopri5 = 4, Bosh3 = 5
};

// Error control of the adaptive integrators (DiffMJX's defaults).
struct AdaptiveTolerances {
  double rtol = 1e-3;  // relative tolerance
  double atol = 1e-6;  // absolute tolerance
  int max_steps = 16;  // trial steps per substep at most; the last takes the time left (status bit 4)
  // Event location (s; 0: off). When > 0, a trial step during whose stages the constraint rows
  // change (a contact or limit row switching on or off: with MuJoCo's clamped impedance a jump of
  // force; or a row changing its solver state, e.g. a contact separating: a jump of the force's
  // derivative) is halved until it is at most this long, so that every such event falls inside
  // an accepted step of at most event_step. A gradient through the steps then converges with
  // the tolerance (to the derivative of the flow without the events' saltation terms) instead
  // of keeping the first-order error of a large step across the event, which the error
  // estimate does not see when the jump is small. Each event costs about log2(h / event_step)
  // rejected trials, which count toward max_steps.
  double event_step = 0;
  // Event-aware gradients (off by default; needs event_step > 0 and the Soft contact model). A
  // contact row switching on or off makes the force jump (MuJoCo's impedance is >= 1e-4 at zero
  // depth), and a gradient through the steps misses how the event's time moves with the input.
  // When on, the adjoint (and the dual-number forward mode) applies the saltation matrix
  //   S = I + (f+ − f−) ∇gᵀ / (∇gᵀ f−)
  // at every located event (an accepted step of at most event_step across which the set of
  // contacts with constraint rows changed): f∓ the dynamics before and after the step, g the
  // switching contact's distance (∇g its normal Jacobian row; contacts switching together count
  // as one event on their mean distance). The gradient is then that of the simulated flow. The
  // forward values do not change (kernels/integrators/integrator_rk_event.hpp). Joint and tendon limits
  // switching are not corrected.
  bool event_gradients = false;
};

// "euler", "implicit-actuators", "rk4", "tsit5", "dopri5", "bosh3" (the CLI's names).
const char* integrator_name(Integrator integrator);
// The integrator of that name; false for an unknown name.
bool parse_integrator(const std::string& name, Integrator* integrator);

// Contact models a user may request from the simulator (SimulatorOptions::contact_model).
//   Soft     MuJoCo 2.2.2's soft constraints with the Newton solve (kernels/constraint/constraint.hpp).
//   Impulse  Schwarke et al.'s velocity-level impulses with Moreau midpoint stepping, the
//            contact model BCG trains with (stiffgrad/impulse_contact.hpp).
enum class ContactModel : int { Soft = 0, Impulse = 1 };

// "soft", "impulse" (the CLI's names).
const char* contact_model_name(ContactModel contact_model);
// The contact model of that name; false for an unknown name.
bool parse_contact_model(const std::string& name, ContactModel* contact_model);

struct Options {
  double timestep = 0.002;                 // seconds per substep (MJCF option/timestep)
  double gravity[3] = {0.0, 0.0, -9.81};   // world gravity (MJCF option/gravity)
  bool gravity_enabled = true;             // option/flag gravity
  bool contact_enabled = true;             // option/flag contact (used by the contact issue)
  bool constraint_enabled = true;          // option/flag constraint
  bool eulerdamp_enabled = true;           // option/flag eulerdamp (recorded only; newer than 2.2.2)
  std::string mjcf_integrator = "Euler";   // what the MJCF asked for, as written

  // ---- constraints (MuJoCo 2.2.2 option defaults; docs/references/mujoco-2.2.2-constraints.md §0) ----
  bool limit_enabled = true;               // option/flag limit
  bool equality_enabled = true;            // option/flag equality
  bool frictionloss_enabled = true;        // option/flag frictionloss
  bool refsafe_enabled = true;             // option/flag refsafe
  bool warmstart_enabled = true;           // option/flag warmstart: solve from the last qacc (kernels/constraint/solver.hpp)
  bool filterparent_enabled = true;        // option/flag filterparent
  bool override_enabled = false;           // option/flag override (o_margin, o_solref, o_solimp)
  int iterations = 100;                    // option/iterations (Newton steps, upper bound)
  double tolerance = 1e-8;                 // option/tolerance (scaled early-exit threshold)
  double impratio = 1.0;                   // option/impratio
  int cone = 0;                            // option/cone: 0 pyramidal, 1 elliptic (mjtCone)
  std::string solver = "Newton";           // option/solver as written (CG/PGS solved by Newton)
  int collision = 0;                       // option/collision: 0 all, 1 predefined, 2 dynamic
  double o_margin = 0.0;                   // option/o_margin
  double o_solref[2] = {0.02, 1.0};        // option/o_solref
  double o_solimp[5] = {0.9, 0.95, 0.001, 0.5, 2.0};  // option/o_solimp
};

struct Keyframe {
  std::string name;
  double time = 0.0;
  std::vector<double> qpos;  // nq (qpos0 where the file omits it)
  std::vector<double> qvel;  // nv (zeros where omitted)
  std::vector<double> ctrl;  // nu (zeros where omitted)
};

struct Model {
  std::string name;   // <mujoco model="...">
  std::string file;   // path the model was loaded from

  // ---- sizes ----
  int nq = 0;        // generalized positions
  int nv = 0;        // degrees of freedom
  int nbody = 0;     // bodies, including the world body 0
  int njnt = 0;      // joints
  int ngeom = 0;     // geoms (visual-only meshes are dropped)
  int nu = 0;        // actuators
  int ntendon = 0;   // fixed tendons
  int nwrap = 0;     // tendon wrap entries (joint, coef)
  int npair = 0;     // explicit contact pairs
  int nexclude = 0;  // contact excludes

  Options opt;

  // ---- bodies (nbody; body 0 is the world) ----
  std::vector<std::string> body_name;  // nbody
  std::vector<int> body_parentid;      // nbody
  std::vector<int> body_rootid;        // nbody  top-level ancestor (child of world)
  std::vector<int> body_weldid;        // nbody  top-most ancestor welded to it (0: static)
  std::vector<int> body_jntnum;        // nbody
  std::vector<int> body_jntadr;        // nbody  first joint (-1 if none)
  std::vector<int> body_dofnum;        // nbody
  std::vector<int> body_dofadr;        // nbody  first dof (-1 if none)
  std::vector<double> body_pos;        // nbody x 3  position in parent frame
  std::vector<double> body_quat;       // nbody x 4  orientation in parent frame (w x y z)
  std::vector<double> body_ipos;       // nbody x 3  centre of mass in body frame
  std::vector<double> body_iquat;      // nbody x 4  principal inertia frame in body frame
  std::vector<double> body_mass;       // nbody
  std::vector<int> body_fusedid;  // nbody  the body MuJoCo 2.2.2's fusestatic would merge b into
                                  //   (its nearest ancestor-or-self with joints, 0 the world);
                                  //   empty: no fusion. Only body_invweight0 follows it.
  std::vector<double> body_gravcomp;   // nbody  fraction of the weight cancelled by a passive
                                       //   force at the centre of mass (MuJoCo >= 3's gravcomp)
  std::vector<double> body_inertia;    // nbody x 3  principal moments about the COM
  std::vector<double> body_invweight0; // nbody x 2  mean inverse inertia at qpos0 (trans, rot)

  // ---- joints (njnt) ----
  std::vector<std::string> jnt_name;   // njnt
  std::vector<JointType> jnt_type;     // njnt
  std::vector<int> jnt_qposadr;        // njnt
  std::vector<int> jnt_dofadr;         // njnt
  std::vector<int> jnt_bodyid;         // njnt
  std::vector<int> jnt_limited;        // njnt  0/1
  std::vector<double> jnt_pos;         // njnt x 3  anchor in body frame
  std::vector<double> jnt_axis;        // njnt x 3  unit axis in body frame (hinge/slide)
  std::vector<double> jnt_stiffness;   // njnt
  std::vector<double> jnt_range;       // njnt x 2  (radians / metres)
  std::vector<double> jnt_solref;      // njnt x 2  limit solref (solreflimit)
  std::vector<double> jnt_solimp;      // njnt x 5  limit solimp (solimplimit)
  std::vector<double> jnt_margin;      // njnt  limit activation distance
  std::vector<int> jnt_actfrclimited;  // njnt  0/1
  std::vector<double> jnt_actfrcrange; // njnt x 2  clamp on the summed actuator force

  // ---- degrees of freedom (nv) ----
  std::vector<int> dof_bodyid;         // nv
  std::vector<int> dof_jntid;          // nv
  std::vector<int> dof_parentid;       // nv  previous dof in the tree (-1 at a root)
  std::vector<double> dof_armature;    // nv
  std::vector<double> dof_damping;     // nv
  std::vector<double> dof_frictionloss;// nv
  std::vector<double> dof_solref;      // nv x 2  frictionloss solref (joint solreffriction)
  std::vector<double> dof_solimp;      // nv x 5  frictionloss solimp (joint solimpfriction)
  std::vector<double> dof_invweight0;  // nv  inverse inertia at qpos0 (block means for ball/free)

  std::vector<double> qpos0;           // nq  reference configuration
  std::vector<double> qpos_spring;     // nq  spring reference configuration

  // ---- geoms (ngeom) ----
  std::vector<std::string> geom_name;  // ngeom
  std::vector<GeomType> geom_type;     // ngeom
  std::vector<int> geom_bodyid;        // ngeom
  std::vector<int> geom_contype;       // ngeom
  std::vector<int> geom_conaffinity;   // ngeom
  std::vector<int> geom_condim;        // ngeom
  std::vector<int> geom_priority;      // ngeom
  std::vector<int> geom_group;         // ngeom
  std::vector<double> geom_size;       // ngeom x 3
  std::vector<double> geom_pos;        // ngeom x 3  in body frame
  std::vector<double> geom_quat;       // ngeom x 4  in body frame
  std::vector<double> geom_friction;   // ngeom x 3
  std::vector<double> geom_solref;     // ngeom x 2
  std::vector<double> geom_solimp;     // ngeom x 5
  std::vector<double> geom_margin;     // ngeom
  std::vector<double> geom_gap;        // ngeom
  std::vector<double> geom_solmix;     // ngeom
  std::vector<double> geom_rbound;     // ngeom  bounding-sphere radius (0 for planes)
  std::vector<int> geom_dataid;        // ngeom  a mesh geom's mesh (index below), else -1

  // ---- meshes of colliding mesh geoms (MuJoCo 2.2.2's mesh_* arrays) ----
  // A mesh geom is the convex hull of its vertices (mesh frame = geom frame); the narrow phase
  // reads the hull graph to find support points and a plane's contact vertices
  // (kernels/collision/collision_mesh.hpp).
  int nmesh = 0;
  std::vector<int> mesh_vertadr;   // nmesh  first vertex in mesh_vert
  std::vector<int> mesh_vertnum;   // nmesh
  std::vector<float> mesh_vert;    // nmeshvert x 3  in the mesh frame, float as MuJoCo keeps them
  std::vector<int> mesh_graphadr;  // nmesh  start in mesh_graph, -1: none (every vertex searched)
  std::vector<int> mesh_graph;     // MuJoCo's layout: numvert, numface, vert_edgeadr[numvert],
                                   //   vert_globalid[numvert], edge_localid[numvert + 3 numface],
                                   //   face_globalid[3 numface] (mjcf/mesh.hpp)

  // ---- equality constraints (MuJoCo 2.2.2's eq_*: connect, joint and tendon; weld is refused)
  // ----
  int neq = 0;
  std::vector<std::string> eq_name;  // neq
  std::vector<int> eq_type;          // neq  0 connect, 2 joint, 3 tendon (mjtEq)
  std::vector<int> eq_obj1id;        // neq  body (connect), joint or tendon
  std::vector<int> eq_obj2id;        // neq  body (connect; 0 the world) or joint/tendon (-1: none)
  std::vector<int> eq_active;        // neq
  std::vector<int> eq_objtype;       // neq  connect: 1 between bodies (anchor 2 set at qpos0), 6
                                     //   between sites (both anchors given; MuJoCo 3's mjOBJ_SITE)
  std::vector<double> eq_solref;     // neq x 2
  std::vector<double> eq_solimp;     // neq x 5
  std::vector<double> eq_data;       // neq x 11  connect: anchor in body1's frame (0..2) and in
                                     //   body2's frame at qpos0 (3..5, set_constants); joint,
                                     //   tendon: the polynomial's coefficients (0..4)

  // ---- explicit contact pairs / excludes ----
  std::vector<int> pair_geom1, pair_geom2;   // npair
  std::vector<int> pair_condim;              // npair
  std::vector<double> pair_friction;         // npair x 5
  std::vector<double> pair_solref;           // npair x 2
  std::vector<double> pair_solimp;           // npair x 5
  std::vector<double> pair_margin, pair_gap; // npair
  std::vector<int> exclude_body1, exclude_body2;  // nexclude

  // ---- candidate geom pairs for collision, compiled once (core/collision_pairs.cpp) ----
  // Every geom pair the narrow phase may test, in MuJoCo 2.2.2's contact order (body-pair
  // signature, then geom ids; <pair>s merged by signature), after MuJoCo's filters that do not
  // depend on the state (contype/conaffinity, weld, filterparent, exclude) and with geom1/geom2
  // ordered by type as MuJoCo orders them, and the mixed contact parameters (facts §1).
  int ncpair = 0;
  std::vector<int> cpair_geom1, cpair_geom2;   // ncpair
  std::vector<int> cpair_condim;               // ncpair
  std::vector<double> cpair_friction;          // ncpair x 5  (slide, slide, torsion, roll, roll)
  std::vector<double> cpair_solref;            // ncpair x 2
  std::vector<double> cpair_solimp;            // ncpair x 5
  std::vector<double> cpair_margin;            // ncpair
  std::vector<double> cpair_gap;               // ncpair
  std::vector<int> cpair_maxcon;               // ncpair  most contacts its narrow phase returns
  double stat_meaninertia = 1.0;               // mean of diag(M) at qpos0 (solver scaling)

  // ---- actuators (nu); transmission is always a hinge or slide joint ----
  std::vector<std::string> actuator_name;   // nu
  std::vector<int> actuator_trntype;        // nu  transmission: 0 joint, 3 tendon (mjtTrn)
  std::vector<int> actuator_trnid;          // nu  joint or (fixed) tendon id
  std::vector<double> actuator_gear;        // nu  (first gear component)
  std::vector<GainType> actuator_gaintype;  // nu
  std::vector<double> actuator_gainprm;     // nu x 3  force = gain*ctrl + bias
  std::vector<BiasType> actuator_biastype;  // nu
  std::vector<double> actuator_biasprm;     // nu x 3  bias = b0 + b1*length + b2*velocity
  std::vector<int> actuator_ctrllimited;    // nu  0/1
  std::vector<double> actuator_ctrlrange;   // nu x 2
  std::vector<int> actuator_forcelimited;   // nu  0/1
  std::vector<double> actuator_forcerange;  // nu x 2

  // ---- fixed tendons (ntendon); length = sum coef * qpos[jnt] ----
  std::vector<std::string> tendon_name;     // ntendon
  std::vector<int> tendon_adr;              // ntendon  first wrap entry
  std::vector<int> tendon_num;              // ntendon  wrap entries
  std::vector<double> tendon_stiffness;     // ntendon
  std::vector<double> tendon_damping;       // ntendon
  std::vector<double> tendon_lengthspring;  // ntendon
  std::vector<int> tendon_limited;          // ntendon
  std::vector<double> tendon_range;         // ntendon x 2
  std::vector<double> tendon_margin;        // ntendon  limit activation distance
  std::vector<double> tendon_solref_lim;    // ntendon x 2
  std::vector<double> tendon_solimp_lim;    // ntendon x 5
  std::vector<double> tendon_frictionloss;  // ntendon
  std::vector<double> tendon_solref_fri;    // ntendon x 2
  std::vector<double> tendon_solimp_fri;    // ntendon x 5
  std::vector<double> tendon_invweight0;    // ntendon
  std::vector<int> wrap_jntid;              // nwrap
  std::vector<double> wrap_coef;            // nwrap

  std::vector<Keyframe> keyframes;

  // Total mass of all bodies.
  double total_mass() const;
  // Index of a named keyframe, or -1.
  int keyframe_id(const std::string& name) const;
};

}  // namespace stiffgrad
