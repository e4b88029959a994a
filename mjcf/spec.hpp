// stiffgrad — MJCF loader, private: the parsed model before compilation.
//
// The parser fills these specs from the XML (default classes first, then elements on top of
// a copy of their class's spec: MuJoCo's rule that an element starts from its class and a
// partial vector overrides only its leading entries). The compiler then turns the body tree
// into the flat Model. Values are kept as written (angles in the file's unit) until compile,
// because the unit conversion depends on the final joint type.
#pragma once

#include <string>
#include <vector>

#include "mjcf/orientation.hpp"
#include "mjcf/xml.hpp"
#include "stiffgrad/model.hpp"

namespace stiffgrad::mjcf {

// Tri-state flags ("limited", "ctrllimited", ...), encoded as Elem::tristate reads them.
enum Tri : int { kFalse = 0, kTrue = 1, kAuto = 2 };

struct CompilerSpec {
  AngleSettings angles;
  // MuJoCo 2.2.2 defaults autolimits to false and then rejects a range without `limited`.
  // We default it to true (MuJoCo >= 2.3's default): every file 2.2.2 accepts compiles the
  // same either way (such a file states `limited` wherever it gives a range), and the newer
  // Menagerie files (unitree_g1/g1_mjx.xml) rely on it. autolimits="false" restores 2.2.2's
  // error.
  bool autolimits = true;
  int inertiafromgeom = kAuto;  // false / true / auto (auto: only bodies without <inertial>)
  double settotalmass = -1;     // > 0: scale all masses and inertias to this total
  double boundmass = 0;         // lower bound on the mass of every non-world body
  double boundinertia = 0;      // lower bound on every principal moment of non-world bodies
  int inertiagrouprange[2] = {0, 5};  // geom groups that contribute to body inertia
  std::string meshdir;  // mesh files: relative to the main file's directory (assetdir if unset)
  bool fitaabb =
      false;  // mesh-fitted primitives: from the bounding box (refused) or the inertia box
  bool exactmeshinertia = false;  // signed pyramid volumes (MuJoCo 2.2.2 default: absolute values)
  bool convexhull = true;   // colliding meshes get a hull graph (false: every vertex is searched)
  bool fusestatic = false;  // bodies kept; contacts use the fused bodies' invweight0 (compile.cpp)
};

struct JointSpec {
  Elem where;
  std::string name;
  JointType type = JointType::Hinge;
  double pos[3] = {0, 0, 0};
  double axis[3] = {0, 0, 1};
  int limited = kAuto;
  double range[2] = {0, 0};  // file units (degrees for hinge/ball when angle="degree")
  double ref = 0, springref = 0;
  double stiffness = 0, damping = 0, armature = 0, frictionloss = 0;
  double margin = 0;                                      // limit activation distance
  double solref[2] = {0.02, 1};                           // solreflimit
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};          // solimplimit
  double solref_friction[2] = {0.02, 1};                  // solreffriction
  double solimp_friction[5] = {0.9, 0.95, 0.001, 0.5, 2}; // solimpfriction
  int actfrclimited = kAuto;
  double actfrcrange[2] = {0, 0};
};

struct GeomSpec {
  Elem where;
  std::string name;
  GeomType type = GeomType::Sphere;
  int contype = 1, conaffinity = 1, condim = 3, priority = 0, group = 0;
  double size[3] = {0, 0, 0};
  int nsize = 0;  // how many size entries were given (class or element)
  double friction[3] = {1, 0.005, 0.0001};
  double solref[2] = {0.02, 1};
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double margin = 0, gap = 0;
  double solmix = 1;  // weight of this geom's solref/solimp when mixed with another geom's
  double density = 1000;
  bool has_mass = false;
  double mass = 0;
  bool has_fromto = false;
  double fromto[6] = {0, 0, 0, 0, 0, 0};
  double pos[3] = {0, 0, 0};
  double quat[4] = {1, 0, 0, 0};
  std::string mesh;
  double fitscale = 1;  // mesh-fitted primitive: scale of the fitted size
};

// <mesh> in <asset>: a mesh file and its transformation (mjcf/mesh.hpp compiles it).
struct MeshSpec {
  Elem where;
  std::string name;
  std::string file;  // as written
  std::string path;  // resolved: the main file's directory, meshdir, file
  double scale[3] = {1, 1, 1};
  double refpos[3] = {0, 0, 0};
  double refquat[4] = {1, 0, 0, 0};
  // inertia="legacy|exact|convex|shell" (MuJoCo >= 3): how a geom's mass comes from the mesh;
  // legacy is MuJoCo 2.2.2's, exact its exactmeshinertia; the others are refused where used
  std::string inertia = "legacy";
  // inline data (MuJoCo's uservert / userface) instead of a file: vertices 3 x n, triangles
  // 3 x m (none: the convex hull's triangles, as MuJoCo 2.2.2)
  std::vector<double> vertex;
  std::vector<int> face;
  // maxhullvert (MuJoCo >= 3): the hull of at most this many vertices (qhull's TA option, as
  // MuJoCo 3 builds it); -1: the whole hull (2.2.2)
  int maxhullvert = -1;
};

enum class ActuatorKind { Motor, Position, Velocity, General };

// One struct for every actuator shortcut, as MuJoCo keeps one actuator default per class:
// <position kp=...> in a default class sets gainprm/biasprm that a later <velocity> of the
// same class starts from.
struct ActuatorSpec {
  Elem where;
  ActuatorKind kind = ActuatorKind::General;
  std::string name;
  std::string joint;
  std::string tendon;  // a tendon transmission (fixed tendons) instead of a joint
  int ctrllimited = kAuto, forcelimited = kAuto;
  double ctrlrange[2] = {0, 0};
  double forcerange[2] = {0, 0};
  double gear[6] = {1, 0, 0, 0, 0, 0};
  GainType gaintype = GainType::Fixed;
  BiasType biastype = BiasType::None;
  double gainprm[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double biasprm[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double position_kv = 0;    // <position kv> (MuJoCo >= 3): biasprm[2] = -kv
  double position_dampratio =
      0;  // <position dampratio> (MuJoCo >= 3): kv from the reflected inertia at qpos0
  double inheritrange = 0;   // <position inheritrange> (MuJoCo >= 3)
  bool element_ctrlrange = false;  // ctrlrange written on the element itself
};

struct WrapSpec {
  Elem where;
  std::string joint;
  double coef = 1;
};

struct TendonSpec {
  Elem where;
  std::string name;
  int limited = kAuto;
  double range[2] = {0, 0};
  double stiffness = 0, damping = 0;
  double springlength = -1;  // < 0: the tendon length at qpos_spring (MuJoCo 2.2.2)
  double margin = 0, frictionloss = 0;
  double solref_lim[2] = {0.02, 1};                  // solreflimit
  double solimp_lim[5] = {0.9, 0.95, 0.001, 0.5, 2}; // solimplimit
  double solref_fri[2] = {0.02, 1};                  // solreffriction
  double solimp_fri[5] = {0.9, 0.95, 0.001, 0.5, 2}; // solimpfriction
  std::vector<WrapSpec> wraps;
};

// One <equality> child (MuJoCo 2.2.2's mjCEquality): connect, weld, joint or tendon. data is
// MuJoCo's eq_data: connect anchor (body1 frame) in 0..2; joint/tendon polycoef in 0..4 (default
// 0 1 0 0 0); weld anchor 0..2, relpose 3..9, torquescale 10.
enum class EqualityKind { Connect = 0, Weld = 1, Joint = 2, Tendon = 3 };
struct EqualitySpec {
  Elem where;
  std::string name;
  EqualityKind kind = EqualityKind::Connect;
  std::string name1, name2;  // body1/body2 (or site1/site2: sites), joint1/joint2, tendon1/tendon2
  bool sites = false;        // a connect between two sites (MuJoCo >= 3)
  double data[11] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  bool active = true;
  double solref[2] = {0.02, 1};
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
};

struct PairSpec {
  Elem where;
  std::string name, geom1, geom2;
  int condim = 3;
  double friction[5] = {1, 1, 0.005, 0.0001, 0.0001};
  double solref[2] = {0.02, 1};
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  double margin = 0, gap = 0;
};

struct ExcludeSpec {
  Elem where;
  std::string body1, body2;
};

struct InertialSpec {
  Elem where;
  double pos[3] = {0, 0, 0};
  double quat[4] = {1, 0, 0, 0};
  double mass = 0;
  bool full = false;           // fullinertia given (needs diagonalizing)
  double inertia[6] = {0, 0, 0, 0, 0, 0};  // diag (3) or full xx yy zz xy xz yz (6)
};

// A site: only its position matters here (the anchors of <connect site1 site2>).
struct SiteSpec {
  Elem where;
  std::string name;
  double pos[3] = {0, 0, 0};
};

struct BodySpec {
  Elem where;
  std::string name;
  double gravcomp = 0;  // MuJoCo >= 3: this fraction of the body's weight cancelled (passive force)
  double pos[3] = {0, 0, 0};
  double quat[4] = {1, 0, 0, 0};
  bool has_inertial = false;
  InertialSpec inertial;
  std::vector<JointSpec> joints;
  std::vector<GeomSpec> geoms;
  std::vector<SiteSpec> sites;
  std::vector<BodySpec> children;
};

struct KeySpec {
  Elem where;
  std::string name;
  double time = 0;
  std::vector<double> qpos, qvel, ctrl;
  bool has_qpos = false, has_qvel = false, has_ctrl = false;
};

struct ParsedModel {
  std::string model_name;
  CompilerSpec compiler;
  Options opt;
  int size_nkey = 0;
  BodySpec world;
  std::vector<TendonSpec> tendons;
  std::vector<ActuatorSpec> actuators;
  std::vector<PairSpec> pairs;
  std::vector<ExcludeSpec> excludes;
  std::vector<KeySpec> keys;
  std::vector<MeshSpec> meshes;
  std::vector<EqualitySpec> equalities;
  bool fuse_blockers = false;  // sensors, cameras or lights: MuJoCo 2.2.2's FuseStatic does nothing
};

}  // namespace stiffgrad::mjcf
