// stiffgrad — MJCF loader: compiling the parsed body tree into the flat Model.
//
// Numbering follows MuJoCo: bodies in depth-first pre-order (world = 0), joints and dofs in
// body order and then in the order written, geoms body by body. Each rule below that is not
// obvious from the XML reference was checked against MuJoCo 2.2.2's mj_loadXML.
#include "mjcf/compile.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "core/collision_pairs.hpp"
#include "core/model_setconst.hpp"
#include "mjcf/actuator.hpp"
#include "mjcf/inertia.hpp"
#include "mjcf/mesh.hpp"

namespace stiffgrad::mjcf {
namespace {

constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL

struct FlatBody {
  const BodySpec* spec;
  int parent;
};

void flatten(const BodySpec& b, int parent, std::vector<FlatBody>& out) {
  const int self = static_cast<int>(out.size());
  out.push_back({&b, parent});
  for (const BodySpec& c : b.children) flatten(c, self, out);
}

// Duplicate non-empty names are errors for every named kind MuJoCo indexes by name.
void add_name(NameIndex& index, const std::string& name, int id, const Elem& where, const char* kind) {
  if (name.empty()) return;
  if (!index.emplace(name, id).second) where.fail("repeated " + std::string(kind) + " name '" + name + "'");
}

int dofs_of(JointType t) {
  switch (t) {
    case JointType::Free: return 6;
    case JointType::Ball: return 3;
    default: return 1;
  }
}
int qpos_of(JointType t) {
  switch (t) {
    case JointType::Free: return 7;
    case JointType::Ball: return 4;
    default: return 1;
  }
}

class Compiler {
 public:
  Compiler(const ParsedModel& pm, Model& m, const std::string& file, LoadNotes* notes)
      : pm_(pm), m_(m), notes_(notes) {
    const std::size_t slash = file.find_last_of('/');
    model_dir_ = slash == std::string::npos ? std::string() : file.substr(0, slash + 1);
    for (std::size_t i = 0; i < pm_.meshes.size(); ++i) {
      const MeshSpec& mesh = pm_.meshes[i];
      if (!mesh_index_.emplace(mesh.name, i).second)
        mesh.where.fail("repeated mesh name '" + mesh.name + "'");
    }
  }

  void run() {
    m_.name = pm_.model_name;
    m_.opt = pm_.opt;
    flatten(pm_.world, -1, bodies_);
    m_.nbody = static_cast<int>(bodies_.size());
    for (int b = 0; b < m_.nbody; ++b) add_name(body_names_, bodies_[b].spec->name, b, where(b), "body");
    for (int b = 0; b < m_.nbody; ++b)
      for (const SiteSpec& s : bodies_[b].spec->sites) {
        add_name(site_names_, s.name, static_cast<int>(sites_.size()), s.where, "site");
        sites_.push_back(Site{b, {s.pos[0], s.pos[1], s.pos[2]}});
      }

    for (int b = 0; b < m_.nbody; ++b) body_tree(b);
    for (int b = 0; b < m_.nbody; ++b) joints(b);
    weld_ids();
    m_.njnt = static_cast<int>(m_.jnt_type.size());
    m_.nv = static_cast<int>(m_.dof_bodyid.size());
    m_.nq = static_cast<int>(m_.qpos0.size());
    for (int b = 0; b < m_.nbody; ++b) geoms_and_inertia(b);
    m_.ngeom = static_cast<int>(m_.geom_type.size());
    mass_adjustments();
    tendons();
    equalities();
    compile_actuators(pm_, joint_names_, tendon_names_, m_);
    pairs();
    excludes();
    keyframes();
    check_finite();
    // Both need the finished model: the candidate pairs its geoms, pairs and excludes, the
    // constants its mass matrix at qpos0 (facts §1, §4).
    compile_collision_pairs(m_);
    fused_bodies();
    set_constants(m_);
    apply_dampratios(pm_, m_);
    if (notes_ && dropped_count_ > 0)
      notes_->notes.push_back(
          first_dropped_ + ": note: dropped " + std::to_string(dropped_count_) +
          " visual-only geom" + (dropped_count_ == 1 ? "" : "s") +
          " (meshes that cannot collide; the mass a mesh gives stays in its body), this one first");
  }

 private:
  static const char* geom_type_name(GeomType t) {
    static const char* kNames[] = {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"};
    return kNames[static_cast<int>(t)];
  }
  const Elem& where(int b) const { return bodies_[b].spec->where; }

  // ------------------------------------------------------------ tree
  void body_tree(int b) {
    const BodySpec& s = *bodies_[b].spec;
    const int parent = bodies_[b].parent;
    m_.body_name.push_back(s.name);
    m_.body_gravcomp.push_back(s.gravcomp);
    m_.body_parentid.push_back(b == 0 ? 0 : parent);
    // rootid: the ancestor that is a child of the world (world: 0).
    m_.body_rootid.push_back(b == 0 ? 0 : (parent == 0 ? b : m_.body_rootid[parent]));
    for (int i = 0; i < 3; ++i) m_.body_pos.push_back(s.pos[i]);
    for (int i = 0; i < 4; ++i) m_.body_quat.push_back(s.quat[i]);
  }

  // MuJoCo's weld id: a body with joints welds to itself, a body without joints to its
  // parent's weld (so the world and every body fixed to it weld to 0). Collision filtering
  // compares these (facts §1, filters 3 and 4).
  void weld_ids() {
    m_.body_weldid.assign(m_.nbody, 0);
    for (int b = 1; b < m_.nbody; ++b)
      m_.body_weldid[b] = m_.body_jntnum[b] > 0 ? b : m_.body_weldid[bodies_[b].parent];
  }

  // ------------------------------------------------------------ joints and dofs
  void joints(int b) {
    const BodySpec& s = *bodies_[b].spec;
    const CompilerSpec& c = pm_.compiler;
    const int jntadr = static_cast<int>(m_.jnt_type.size());
    const int dofadr = static_cast<int>(m_.dof_bodyid.size());
    int ndof = 0;
    bool after_ball = false;
    for (const JointSpec& j : s.joints) {
      const Elem& e = j.where;
      // MuJoCo 2.2.2: "free joint can only be used on top level", "more than 6 dofs in body",
      // "ball followed by rotation in body" (a hinge or a ball after a ball).
      if (j.type == JointType::Free && bodies_[b].parent != 0)
        e.fail("a free joint is only allowed in a body that is a direct child of the world");
      if (after_ball && (j.type == JointType::Hinge || j.type == JointType::Ball))
        e.fail("a ball joint followed by a rotational joint in body '" + s.name +
               "' (MuJoCo: ball followed by rotation)");
      if (j.type == JointType::Ball) after_ball = true;
      ndof += dofs_of(j.type);
      if (ndof > 6) e.fail("more than 6 degrees of freedom in body '" + s.name + "'");

      const int id = static_cast<int>(m_.jnt_type.size());
      add_name(joint_names_, j.name, id, e, "joint");
      m_.jnt_name.push_back(j.name);
      m_.jnt_type.push_back(j.type);
      m_.jnt_qposadr.push_back(static_cast<int>(m_.qpos0.size()));
      m_.jnt_dofadr.push_back(static_cast<int>(m_.dof_bodyid.size()));
      m_.jnt_bodyid.push_back(b);

      // Free joints sit at the body origin; ball and free have no axis (MuJoCo stores 0 0 1).
      double pos[3] = {j.pos[0], j.pos[1], j.pos[2]};
      double axis[3] = {0, 0, 1};
      if (j.type == JointType::Free) pos[0] = pos[1] = pos[2] = 0;
      if (j.type == JointType::Hinge || j.type == JointType::Slide) {
        const double n = std::sqrt(j.axis[0] * j.axis[0] + j.axis[1] * j.axis[1] + j.axis[2] * j.axis[2]);
        if (!(n > kMinVal)) e.fail("zero joint axis");
        for (int i = 0; i < 3; ++i) axis[i] = j.axis[i] / n;
      }
      for (int i = 0; i < 3; ++i) m_.jnt_pos.push_back(pos[i]), m_.jnt_axis.push_back(axis[i]);

      // Limits. Only a limited range is converted to radians: MuJoCo 2.2.2 keeps the range of
      // an unlimited hinge as written (verified).
      int limited = resolve_limited(j.limited, j.range, c.autolimits, e, "joint", "range", "limited");
      double range[2] = {j.range[0], j.range[1]};
      if (limited) {
        if (j.type == JointType::Free) e.fail("a free joint cannot be limited");
        if (!(range[0] < range[1])) e.fail("joint range[0] must be smaller than range[1]");
        if (j.type == JointType::Hinge || j.type == JointType::Ball)
          for (double& r : range) r = c.angles.to_radians(r);
      }
      m_.jnt_limited.push_back(limited);
      m_.jnt_range.push_back(range[0]);
      m_.jnt_range.push_back(range[1]);
      m_.jnt_stiffness.push_back(j.stiffness);
      for (double v : j.solref) m_.jnt_solref.push_back(v);
      for (double v : j.solimp) m_.jnt_solimp.push_back(v);
      m_.jnt_margin.push_back(j.margin);
      const int afl = resolve_limited(j.actfrclimited, j.actfrcrange, c.autolimits, e, "joint",
                                      "actuatorfrcrange", "actuatorfrclimited");
      if (afl && !(j.actfrcrange[0] < j.actfrcrange[1]))
        e.fail("joint actuatorfrcrange[0] must be smaller than actuatorfrcrange[1]");
      m_.jnt_actfrclimited.push_back(afl);
      m_.jnt_actfrcrange.push_back(j.actfrcrange[0]);
      m_.jnt_actfrcrange.push_back(j.actfrcrange[1]);

      // Reference configurations: hinge/slide at ref (springref), ball at identity, free at
      // the body's pose in its parent (= world) frame.
      switch (j.type) {
        case JointType::Free:
          for (int i = 0; i < 3; ++i) m_.qpos0.push_back(s.pos[i]), m_.qpos_spring.push_back(s.pos[i]);
          for (int i = 0; i < 4; ++i) m_.qpos0.push_back(s.quat[i]), m_.qpos_spring.push_back(s.quat[i]);
          break;
        case JointType::Ball:
          for (double v : {1.0, 0.0, 0.0, 0.0}) m_.qpos0.push_back(v), m_.qpos_spring.push_back(v);
          break;
        case JointType::Hinge:
          m_.qpos0.push_back(c.angles.to_radians(j.ref));
          m_.qpos_spring.push_back(c.angles.to_radians(j.springref));
          break;
        case JointType::Slide:
          m_.qpos0.push_back(j.ref);
          m_.qpos_spring.push_back(j.springref);
          break;
      }

      // dof_parentid: the previous dof of this body, else the last dof of the nearest
      // ancestor that has dofs, else -1.
      for (int k = 0; k < dofs_of(j.type); ++k) {
        const int dof = static_cast<int>(m_.dof_bodyid.size());
        int parent = dof > dofadr ? dof - 1 : last_dof_of_ancestors(b);
        m_.dof_bodyid.push_back(b);
        m_.dof_jntid.push_back(id);
        m_.dof_parentid.push_back(parent);
        m_.dof_armature.push_back(j.armature);
        m_.dof_damping.push_back(j.damping);
        m_.dof_frictionloss.push_back(j.frictionloss);
        for (double v : j.solref_friction) m_.dof_solref.push_back(v);
        for (double v : j.solimp_friction) m_.dof_solimp.push_back(v);
      }
      (void)qpos_of;
    }
    const int nj = static_cast<int>(s.joints.size());
    m_.body_jntnum.push_back(nj);
    m_.body_jntadr.push_back(nj ? jntadr : -1);
    m_.body_dofnum.push_back(ndof);
    m_.body_dofadr.push_back(ndof ? dofadr : -1);
  }

  // Finite inputs can still overflow (a sphere of radius 1e200 has infinite mass); no
  // non-finite number may reach the kernels.
  void check_finite() const {
    auto finite = [](const std::vector<double>& v, int i, int n) {
      for (int k = 0; k < n; ++k)
        if (!std::isfinite(v[n * i + k])) return false;
      return true;
    };
    for (int b = 0; b < m_.nbody; ++b)
      if (!finite(m_.body_mass, b, 1) || !finite(m_.body_inertia, b, 3) || !finite(m_.body_ipos, b, 3) ||
          !finite(m_.body_iquat, b, 4))
        where(b).fail("mass or inertia of body '" + m_.body_name[b] + "' is not finite (numeric overflow)");
    for (int g = 0; g < m_.ngeom; ++g)
      if (!finite(m_.geom_pos, g, 3) || !finite(m_.geom_size, g, 3) || !finite(m_.geom_quat, g, 4))
        where(m_.geom_bodyid[g]).fail("a geom of body '" + m_.body_name[m_.geom_bodyid[g]] +
                                     "' has a non-finite position or size (numeric overflow)");
    for (int t = 0; t < m_.ntendon; ++t)
      if (!finite(m_.tendon_lengthspring, t, 1)) pm_.tendons[t].where.fail("tendon spring length is not finite");
  }

  int last_dof_of_ancestors(int b) const {
    for (int a = bodies_[b].parent; a > 0; a = bodies_[a].parent)
      if (m_.body_dofnum[a] > 0) return m_.body_dofadr[a] + m_.body_dofnum[a] - 1;
    return -1;
  }

  // Contacts are generated unless the contact or the constraint flag is off (mj_collision).
  bool contacts_enabled() const { return pm_.opt.contact_enabled && pm_.opt.constraint_enabled; }

  // Bounding-sphere radius about the geom centre, per type (MuJoCo's mjCGeom::GetRBound;
  // facts §1); planes are unbounded and get 0, which the culling tests read as "no bound".
  static double bounding_radius(GeomType t, const double* s) {
    switch (t) {
      case GeomType::Sphere: return s[0];
      case GeomType::Capsule: return s[0] + s[1];
      case GeomType::Cylinder: return std::sqrt(s[0] * s[0] + s[1] * s[1]);
      case GeomType::Ellipsoid: return std::max({s[0], s[1], s[2]});
      case GeomType::Box:
      case GeomType::Mesh:  // the mesh's aabb half-sizes
        return std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      default: return 0.0;
    }
  }

  // ------------------------------------------------------------ geoms and body inertia
  void geoms_and_inertia(int b) {
    const BodySpec& s = *bodies_[b].spec;
    const CompilerSpec& c = pm_.compiler;
    const bool use_inertial = s.has_inertial && c.inertiafromgeom != kTrue;
    const bool inertia_from_geoms = !use_inertial && c.inertiafromgeom != kFalse;
    std::vector<GeomMass> masses;

    for (const GeomSpec& g : s.geoms) {
      const Elem& e = g.where;
      double size[3] = {g.size[0], g.size[1], g.size[2]};
      double pos[3] = {g.pos[0], g.pos[1], g.pos[2]};
      double quat[4] = {g.quat[0], g.quat[1], g.quat[2], g.quat[3]};
      for (double v : size)
        if (v < 0) e.fail("geom sizes must be non-negative");
      if (g.condim != 1 && g.condim != 3 && g.condim != 4 && g.condim != 6)
        e.fail("geom condim must be 1, 3, 4 or 6");
      const bool in_inertia_group = g.group >= c.inertiagrouprange[0] && g.group <= c.inertiagrouprange[1];
      const bool has_volume_mass = g.has_mass ? g.mass > 0 : g.density > 0;

      // A primitive with a mesh attribute is sized from the mesh (MuJoCo's FitGeom: the mesh's
      // inertia box, `size` ignored) and placed in the mesh's frame; then it is a primitive.
      const bool mesh_fitted = g.type != GeomType::Mesh && g.type != GeomType::HField && !g.mesh.empty();
      const std::string named = g.name.empty() ? std::string() : " '" + g.name + "'";
      // A mesh geom that cannot collide (the Menagerie "visual" class: contype=conaffinity=0, or
      // contacts disabled) gives its body its mass and is then dropped; its file is read only
      // when it has a mass to give. A colliding one stays, as the convex hull of its vertices.
      const bool can_collide = (g.contype != 0 || g.conaffinity != 0) && contacts_enabled();
      const bool gives_mass = b != 0 && inertia_from_geoms && in_inertia_group && has_volume_mass;
      if (g.type == GeomType::Mesh && !can_collide && !gives_mass) {
        drop_visual_geom(g);
        continue;
      }
      int dataid = -1;
      if (g.type == GeomType::Mesh || mesh_fitted) {
        if (g.mesh.empty()) e.fail("mesh geom" + named + " needs a 'mesh' attribute");
        if (g.has_fromto) e.fail("fromto cannot be used with a mesh geom");
        const CompiledMesh& mesh = compiled_mesh(g.mesh, e);
        if (mesh_fitted) {
          if (c.fitaabb)
            e.fail("unsupported mesh-fitted geom" + named +
                   " with compiler fitaabb=\"true\" (only the inertia-box fit)");
          if (!fit_primitive_to_mesh(mesh, g.type, g.fitscale, size))
            e.fail("a " + std::string(geom_type_name(g.type)) + " geom cannot be fitted to a mesh");
        } else {
          for (int i = 0; i < 3; ++i) size[i] = mesh.aabb[i];
        }
        // the geom frame accumulates the mesh frame (MuJoCo's mjuu_frameaccum)
        double R[9], q[4];
        quat_normalize(quat);
        quat_to_mat(quat, R);
        for (int i = 0; i < 3; ++i)
          pos[i] +=
              R[3 * i] * mesh.pos[0] + R[3 * i + 1] * mesh.pos[1] + R[3 * i + 2] * mesh.pos[2];
        quat_mul(quat, mesh.quat, q);
        for (int i = 0; i < 4; ++i) quat[i] = q[i];
        if (g.type == GeomType::Mesh) {
          if (gives_mass) {
            require_mesh_inertia_mode(g.mesh, e);
            GeomMass gm = mesh_geom_mass(mesh, g.density, g.has_mass, g.mass);
            for (int i = 0; i < 3; ++i) gm.pos[i] = pos[i];
            for (int i = 0; i < 4; ++i) gm.quat[i] = quat[i];
            masses.push_back(gm);
          }
          if (!can_collide) {
            drop_visual_geom(g);
            continue;
          }
          dataid = model_mesh(g.mesh, mesh, e);
        }
      }
      switch (g.type) {
        case GeomType::HField:
          e.fail("unsupported geom type 'hfield'");
        case GeomType::Plane:
          if (m_.body_weldid[b] != 0)  // a joint on this body or an ancestor
            e.fail("plane geoms are only allowed in static bodies (MuJoCo rule)");
          break;
        default: break;
      }

      if (g.has_fromto) {
        if (g.type != GeomType::Capsule && g.type != GeomType::Cylinder &&
            g.type != GeomType::Box && g.type != GeomType::Ellipsoid)
          e.fail("fromto requires a capsule, cylinder, box or ellipsoid geom");
        const double* f = g.fromto;
        // The frame's z axis points from "to" towards "from" (MuJoCo, verified), centred
        // between the two points; half-length = half the distance.
        const double v[3] = {f[0] - f[3], f[1] - f[4], f[2] - f[5]};
        const double len = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (!(len > kMinVal)) e.fail("fromto points too close");
        for (int i = 0; i < 3; ++i) pos[i] = 0.5 * (f[i] + f[i + 3]);
        z_to_quat(v, quat);
        if (g.type == GeomType::Box || g.type == GeomType::Ellipsoid) {
          size[1] = size[0];
          size[2] = 0.5 * len;
        } else {
          size[1] = 0.5 * len;
        }
      }
      switch (g.type) {
        case GeomType::Sphere:
          if (!(size[0] > 0)) e.fail("geom sizes must be positive (sphere radius)");
          break;
        case GeomType::Capsule:
        case GeomType::Cylinder:
          if (!(size[0] > 0 && size[1] > 0)) e.fail("geom sizes must be positive (radius, half-length)");
          break;
        case GeomType::Box:
        case GeomType::Ellipsoid:
          if (!(size[0] > 0 && size[1] > 0 && size[2] > 0)) e.fail("geom sizes must be positive (three half-sizes)");
          break;
        default: break;
      }

      const int id = static_cast<int>(m_.geom_type.size());
      add_name(geom_names_, g.name, id, e, "geom");
      m_.geom_name.push_back(g.name);
      m_.geom_type.push_back(g.type);
      m_.geom_bodyid.push_back(b);
      m_.geom_contype.push_back(g.contype);
      m_.geom_conaffinity.push_back(g.conaffinity);
      m_.geom_condim.push_back(g.condim);
      m_.geom_priority.push_back(g.priority);
      m_.geom_group.push_back(g.group);
      for (int i = 0; i < 3; ++i) m_.geom_size.push_back(size[i]), m_.geom_pos.push_back(pos[i]);
      for (int i = 0; i < 4; ++i) m_.geom_quat.push_back(quat[i]);
      for (double v : g.friction) m_.geom_friction.push_back(v);
      for (double v : g.solref) m_.geom_solref.push_back(v);
      for (double v : g.solimp) m_.geom_solimp.push_back(v);
      m_.geom_margin.push_back(g.margin);
      m_.geom_gap.push_back(g.gap);
      m_.geom_solmix.push_back(g.solmix);
      m_.geom_rbound.push_back(bounding_radius(g.type, size));
      m_.geom_dataid.push_back(dataid);

      if (in_inertia_group && g.type != GeomType::Plane && g.type != GeomType::Mesh) {
        GeomMass gm = geom_mass(g.type, size, g.density, g.has_mass, g.mass);
        for (int i = 0; i < 3; ++i) gm.pos[i] = pos[i];
        for (int i = 0; i < 4; ++i) gm.quat[i] = quat[i];
        masses.push_back(gm);
      }
    }
    body_inertia(b, use_inertial, inertia_from_geoms, masses);
  }

  void body_inertia(int b, bool use_inertial, bool from_geoms, const std::vector<GeomMass>& masses) {
    const BodySpec& s = *bodies_[b].spec;
    BodyInertia bi;
    if (b == 0) {
      // The world body has no mass.
    } else if (from_geoms && !masses.empty()) {
      bi = combine_geoms(masses, s.where);
    } else if (s.has_inertial && (use_inertial || masses.empty())) {
      // (inertiafromgeom="true" with no geoms keeps the <inertial>, as in MuJoCo.)
      const InertialSpec& in = s.inertial;
      bi.mass = in.mass;
      for (int i = 0; i < 3; ++i) bi.ipos[i] = in.pos[i];
      if (in.full) {
        if (!diagonalize(in.inertia, bi.inertia, bi.iquat))
          in.where.fail("'fullinertia' is not positive semi-definite");
        if (!satisfies_triangle(bi.inertia, 1e-12))
          in.where.fail("inertia must satisfy A + B >= C for its principal moments");
      } else {
        for (int i = 0; i < 3; ++i) bi.inertia[i] = in.inertia[i];
        for (int i = 0; i < 4; ++i) bi.iquat[i] = in.quat[i];
        if (!satisfies_triangle(bi.inertia, 0))
          in.where.fail("inertia must satisfy A + B >= C for its principal moments");
      }
    } else {
      // No inertial and no geoms: MuJoCo 2.2.2 leaves the body massless and sets its inertial
      // frame to the body's own frame in its parent (ipos = pos, iquat = quat; verified).
      for (int i = 0; i < 3; ++i) bi.ipos[i] = s.pos[i];
      for (int i = 0; i < 4; ++i) bi.iquat[i] = s.quat[i];
    }
    m_.body_mass.push_back(bi.mass);
    for (int i = 0; i < 3; ++i) m_.body_ipos.push_back(bi.ipos[i]);
    for (int i = 0; i < 4; ++i) m_.body_iquat.push_back(bi.iquat[i]);
    for (int i = 0; i < 3; ++i) m_.body_inertia.push_back(bi.inertia[i]);
  }

  void mass_adjustments() {
    const CompilerSpec& c = pm_.compiler;
    for (int b = 1; b < m_.nbody; ++b) {
      m_.body_mass[b] = std::max(m_.body_mass[b], c.boundmass);
      for (int i = 0; i < 3; ++i) m_.body_inertia[3 * b + i] = std::max(m_.body_inertia[3 * b + i], c.boundinertia);
    }
    if (c.settotalmass > 0) {
      const double total = std::accumulate(m_.body_mass.begin(), m_.body_mass.end(), 0.0);
      if (!(total > kMinVal)) where(0).fail("settotalmass: the model has no mass to scale");
      const double scale = c.settotalmass / total;
      for (double& v : m_.body_mass) v *= scale;
      for (double& v : m_.body_inertia) v *= scale;
    }
    // MuJoCo: "mass and inertia of moving bodies must be larger than mjMINVAL", checked on
    // each body with joints together with the bodies welded to it (verified: a massless
    // jointed body passes when a welded child carries the mass).
    std::vector<double> sum(4 * m_.nbody, 0.0);
    for (int b = 1; b < m_.nbody; ++b) {
      const int w = m_.body_weldid[b];
      sum[4 * w] += m_.body_mass[b];
      for (int i = 0; i < 3; ++i) sum[4 * w + 1 + i] += m_.body_inertia[3 * b + i];
    }
    for (int b = 1; b < m_.nbody; ++b) {
      if (m_.body_jntnum[b] == 0) continue;
      for (int i = 0; i < 4; ++i)
        if (sum[4 * b + i] < kMinVal)
          where(b).fail("mass and inertia of moving body '" + m_.body_name[b] +
                        "' must be larger than 1e-15");
    }
  }

  // ------------------------------------------------------------ tendons
  void tendons() {
    for (const TendonSpec& t : pm_.tendons) {
      const Elem& e = t.where;
      const int id = static_cast<int>(m_.tendon_name.size());
      add_name(tendon_names_, t.name, id, e, "tendon");
      m_.tendon_name.push_back(t.name);
      m_.tendon_adr.push_back(static_cast<int>(m_.wrap_jntid.size()));
      m_.tendon_num.push_back(static_cast<int>(t.wraps.size()));
      double length_spring = 0;
      for (const WrapSpec& w : t.wraps) {
        auto it = joint_names_.find(w.joint);
        if (it == joint_names_.end()) w.where.fail("tendon references unknown joint '" + w.joint + "'");
        const int j = it->second;
        if (m_.jnt_type[j] != JointType::Hinge && m_.jnt_type[j] != JointType::Slide)
          w.where.fail("unsupported: fixed tendon on joint '" + w.joint + "' which is not a hinge or slide joint");
        m_.wrap_jntid.push_back(j);
        m_.wrap_coef.push_back(w.coef);
        length_spring += w.coef * m_.qpos_spring[m_.jnt_qposadr[j]];
      }
      m_.tendon_stiffness.push_back(t.stiffness);
      m_.tendon_damping.push_back(t.damping);
      // springlength < 0 (the default -1): the tendon length at qpos_spring (2.2.2, verified).
      m_.tendon_lengthspring.push_back(t.springlength < 0 ? length_spring : t.springlength);
      const int limited = resolve_limited(t.limited, t.range, pm_.compiler.autolimits, e, "tendon", "range", "limited");
      if (limited && !(t.range[0] < t.range[1])) e.fail("tendon range[0] must be smaller than range[1]");
      m_.tendon_limited.push_back(limited);
      m_.tendon_range.push_back(t.range[0]);
      m_.tendon_range.push_back(t.range[1]);
      m_.tendon_margin.push_back(t.margin);
      m_.tendon_frictionloss.push_back(t.frictionloss);
      for (double v : t.solref_lim) m_.tendon_solref_lim.push_back(v);
      for (double v : t.solimp_lim) m_.tendon_solimp_lim.push_back(v);
      for (double v : t.solref_fri) m_.tendon_solref_fri.push_back(v);
      for (double v : t.solimp_fri) m_.tendon_solimp_fri.push_back(v);
    }
    m_.ntendon = static_cast<int>(m_.tendon_name.size());
    m_.nwrap = static_cast<int>(m_.wrap_jntid.size());
  }

  // fusestatic: the body each would be merged into, as MuJoCo 2.2.2's FuseStatic merges (every
  // body without joints into its parent, parents first) unless the model has elements that
  // could name a body (then it fuses nothing). The bodies are kept; set_constants weighs them
  // as fused.
  void fused_bodies() {
    if (!pm_.compiler.fusestatic || pm_.fuse_blockers || m_.nu > 0 || m_.ntendon > 0 ||
        m_.neq > 0 || !pm_.pairs.empty() || !pm_.excludes.empty())
      return;
    m_.body_fusedid.assign(static_cast<std::size_t>(m_.nbody), 0);
    for (int b = 1; b < m_.nbody; ++b)
      m_.body_fusedid[static_cast<std::size_t>(b)] =
          m_.body_jntnum[static_cast<std::size_t>(b)] > 0
              ? b
              : m_.body_fusedid[static_cast<std::size_t>(
                    m_.body_parentid[static_cast<std::size_t>(b)])];
  }

  // ------------------------------------------------------------ equality constraints
  // MuJoCo 2.2.2's mjCEquality::Compile: names resolved, a missing body2 is the world, joints
  // must be hinges or slides; the second anchor of a connect is set at qpos0 (set_constants).
  void equalities() {
    NameIndex names;
    for (const EqualitySpec& q : pm_.equalities) {
      const Elem& e = q.where;
      const int id = m_.neq;
      add_name(names, q.name, id, e, "equality");
      const NameIndex& index = q.sites                           ? site_names_
                               : q.kind == EqualityKind::Connect ? body_names_
                               : q.kind == EqualityKind::Joint   ? joint_names_
                                                                 : tendon_names_;
      const char* what = q.sites                           ? "site"
                         : q.kind == EqualityKind::Connect ? "body"
                         : q.kind == EqualityKind::Joint   ? "joint"
                                                           : "tendon";
      auto find = [&](const std::string& name) {
        const auto it = index.find(name);
        if (it == index.end())
          e.fail("unknown " + std::string(what) + " '" + name + "' in equality constraint");
        return it->second;
      };
      int obj1 = find(q.name1);
      int obj2 = q.name2.empty() ? -1 : find(q.name2);
      if (q.kind == EqualityKind::Connect && obj2 < 0) obj2 = 0;  // the world
      if (obj1 == obj2)
        e.fail(std::string(what) + " '" + q.name1 + "' is repeated in equality constraint");
      double data[11];
      std::copy(q.data, q.data + 11, data);
      if (q.sites) {  // the sites' bodies, and their positions as the two anchors
        const Site& s1 = sites_[static_cast<std::size_t>(obj1)];
        const Site& s2 = sites_[static_cast<std::size_t>(obj2)];
        obj1 = s1.body;
        obj2 = s2.body;
        if (obj1 == obj2) e.fail("the sites of a <connect> must be on different bodies");
        for (int k = 0; k < 3; ++k) data[k] = s1.pos[k], data[3 + k] = s2.pos[k];
      }
      if (q.kind == EqualityKind::Joint)
        for (int j : {obj1, obj2})
          if (j >= 0 && m_.jnt_type[static_cast<std::size_t>(j)] != JointType::Hinge &&
              m_.jnt_type[static_cast<std::size_t>(j)] != JointType::Slide)
            e.fail("only hinge and slide joints can be coupled by a <joint> equality constraint");
      m_.eq_name.push_back(q.name);
      m_.eq_type.push_back(static_cast<int>(q.kind));
      m_.eq_obj1id.push_back(obj1);
      m_.eq_obj2id.push_back(obj2);
      m_.eq_active.push_back(q.active ? 1 : 0);
      m_.eq_objtype.push_back(q.sites ? 6 : 1);
      m_.eq_solref.insert(m_.eq_solref.end(), q.solref, q.solref + 2);
      m_.eq_solimp.insert(m_.eq_solimp.end(), q.solimp, q.solimp + 5);
      m_.eq_data.insert(m_.eq_data.end(), data, data + 11);
      ++m_.neq;
    }
  }

  // ------------------------------------------------------------ contact pairs and excludes
  int geom_id(const std::string& name, const Elem& e) const {
    auto it = geom_names_.find(name);
    if (it != geom_names_.end()) return it->second;
    if (dropped_geoms_.count(name)) e.fail("pair references visual-only mesh geom '" + name + "' (dropped)");
    e.fail("unknown geom '" + name + "'");
  }

  int body_id(const std::string& name, const Elem& e) const {
    auto it = body_names_.find(name);
    if (it == body_names_.end()) e.fail("unknown body '" + name + "'");
    return it->second;
  }

  void pairs() {
    // MuJoCo 2.2.2 orders each pair so that body(geom1) <= body(geom2) and sorts pairs by
    // that body signature (stable); pair attributes come from the pair's class, not from the
    // two geoms (verified).
    struct P { int g1, g2, sig; const PairSpec* s; };
    std::vector<P> ps;
    NameIndex names;
    for (const PairSpec& p : pm_.pairs) {
      add_name(names, p.name, static_cast<int>(ps.size()), p.where, "pair");
      int g1 = geom_id(p.geom1, p.where), g2 = geom_id(p.geom2, p.where);
      if (p.condim != 1 && p.condim != 3 && p.condim != 4 && p.condim != 6)
        p.where.fail("pair condim must be 1, 3, 4 or 6");
      int b1 = m_.geom_bodyid[g1], b2 = m_.geom_bodyid[g2];
      if (b1 > b2) std::swap(g1, g2), std::swap(b1, b2);
      ps.push_back({g1, g2, (b1 << 16) + b2, &p});
    }
    std::stable_sort(ps.begin(), ps.end(), [](const P& a, const P& b) { return a.sig < b.sig; });
    for (const P& p : ps) {
      m_.pair_geom1.push_back(p.g1);
      m_.pair_geom2.push_back(p.g2);
      m_.pair_condim.push_back(p.s->condim);
      for (double v : p.s->friction) m_.pair_friction.push_back(v);
      for (double v : p.s->solref) m_.pair_solref.push_back(v);
      for (double v : p.s->solimp) m_.pair_solimp.push_back(v);
      m_.pair_margin.push_back(p.s->margin);
      m_.pair_gap.push_back(p.s->gap);
    }
    m_.npair = static_cast<int>(ps.size());
  }

  void excludes() {
    // Same normalization as pairs: body1 <= body2, sorted by signature.
    std::vector<std::pair<int, int>> xs;
    for (const ExcludeSpec& x : pm_.excludes) {
      int b1 = body_id(x.body1, x.where), b2 = body_id(x.body2, x.where);
      if (b1 > b2) std::swap(b1, b2);
      xs.emplace_back(b1, b2);
    }
    std::stable_sort(xs.begin(), xs.end());
    for (auto [b1, b2] : xs) m_.exclude_body1.push_back(b1), m_.exclude_body2.push_back(b2);
    m_.nexclude = static_cast<int>(xs.size());
  }

  // ------------------------------------------------------------ keyframes
  void keyframes() {
    // <size nkey> makes at least that many keys; missing vectors default to qpos0 / zeros.
    const int n = std::max<int>(pm_.size_nkey, static_cast<int>(pm_.keys.size()));
    NameIndex names;
    for (int k = 0; k < n; ++k) {
      Keyframe key;
      key.qpos = m_.qpos0;
      key.qvel.assign(m_.nv, 0.0);
      key.ctrl.assign(m_.nu, 0.0);
      if (k < static_cast<int>(pm_.keys.size())) {
        const KeySpec& s = pm_.keys[k];
        add_name(names, s.name, k, s.where, "keyframe");
        key.name = s.name;
        key.time = s.time;
        auto take = [&](bool has, const std::vector<double>& v, std::vector<double>& out, const char* what) {
          if (!has) return;
          if (v.size() != out.size())
            s.where.fail("key '" + std::string(what) + "' has " + std::to_string(v.size()) +
                         " values, expected " + std::to_string(out.size()));
          out = v;
        };
        take(s.has_qpos, s.qpos, key.qpos, "qpos");
        take(s.has_qvel, s.qvel, key.qvel, "qvel");
        take(s.has_ctrl, s.ctrl, key.ctrl, "ctrl");
      }
      m_.keyframes.push_back(std::move(key));
    }
  }

  const ParsedModel& pm_;
  Model& m_;
  std::vector<FlatBody> bodies_;
  NameIndex body_names_, joint_names_, geom_names_, tendon_names_;
  struct Site {
    int body;
    double pos[3];
  };
  std::vector<Site> sites_;  // every site, in order; site_names_ indexes the named ones
  NameIndex site_names_;
  // A mesh geom that cannot collide leaves the model (its mass, if any, stays in its body's).
  void drop_visual_geom(const GeomSpec& g) {
    if (!g.name.empty()) dropped_geoms_.insert(g.name);
    if (dropped_count_++ == 0)
      first_dropped_ = g.where.file() + ":" + std::to_string(g.where.line());
  }

  // The mesh named `name` (a <mesh> of <asset>), read and compiled at its first use.
  const CompiledMesh& compiled_mesh(const std::string& name, const Elem& user) {
    const auto it = mesh_index_.find(name);
    if (it == mesh_index_.end()) user.fail("unknown mesh '" + name + "'");
    auto done = compiled_meshes_.find(name);
    if (done != compiled_meshes_.end()) return done->second;
    const MeshSpec& spec = pm_.meshes[it->second];
    // MuJoCo 2.2.2 (mjuu_makefullname): an absolute file as is, else relative to meshdir, which
    // is itself relative to the main file's directory unless absolute
    std::string path = spec.file;
    if (path.empty() || path[0] != '/') {
      const std::string& dir = pm_.compiler.meshdir;
      std::string base = dir.empty() || dir[0] != '/' ? model_dir_ + dir : dir;
      if (!base.empty() && base.back() != '/') base += '/';
      path = base + path;
    }
    MeshData data;
    if (!spec.vertex.empty()) {
      data.vert = spec.vertex;  // inline data (MuJoCo's uservert, userface)
      data.face = spec.face;
    } else {
      if (spec.file.empty())
        spec.where.fail("mesh '" + spec.name + "' has neither 'file' nor 'vertex'");
      try {
        data = read_mesh_file(path);
      } catch (const std::exception& ex) {
        spec.where.fail(std::string("mesh '") + spec.name + "': " + ex.what());
      }
    }
    const bool exact = pm_.compiler.exactmeshinertia || spec.inertia == "exact";
    return compiled_meshes_
        .emplace(name, compile_mesh(std::move(data), spec, exact, pm_.compiler.convexhull))
        .first->second;
  }

  // A mesh's mass needs an inertia mode of MuJoCo 2.2.2's (legacy, or exact = exactmeshinertia).
  void require_mesh_inertia_mode(const std::string& name, const Elem& user) {
    const MeshSpec& spec = pm_.meshes[mesh_index_.at(name)];
    if (spec.inertia != "legacy" && spec.inertia != "exact")
      user.fail("unsupported inertia=\"" + spec.inertia + "\" of mesh '" + spec.name +
                "' for a geom with mass (only legacy and exact; or give the geom density=\"0\")");
  }

  // The model's index of mesh `name` (added to Model::mesh_* at its first colliding geom), with
  // its hull graph.
  int model_mesh(const std::string& name, const CompiledMesh& mesh, const Elem& user) {
    const auto it = model_meshes_.find(name);
    if (it != model_meshes_.end()) return it->second;
    if (!mesh.hull_error.empty())
      user.fail("mesh '" + name + "' cannot collide: " + mesh.hull_error);
    const int id = m_.nmesh++;
    m_.mesh_vertadr.push_back(static_cast<int>(m_.mesh_vert.size() / 3));
    m_.mesh_vertnum.push_back(static_cast<int>(mesh.vert.size() / 3));
    m_.mesh_vert.insert(m_.mesh_vert.end(), mesh.vert.begin(), mesh.vert.end());
    m_.mesh_graphadr.push_back(mesh.graph.empty() ? -1 : static_cast<int>(m_.mesh_graph.size()));
    m_.mesh_graph.insert(m_.mesh_graph.end(), mesh.graph.begin(), mesh.graph.end());
    model_meshes_.emplace(name, id);
    return id;
  }

  std::string model_dir_;  // the main file's directory (with its slash), where mesh paths start
  std::map<std::string, std::size_t> mesh_index_;
  std::map<std::string, CompiledMesh> compiled_meshes_;
  std::map<std::string, int> model_meshes_;  // meshes of colliding geoms: their Model index
  std::set<std::string> dropped_geoms_;
  int dropped_count_ = 0;      // visual-only geoms dropped (named or not)
  std::string first_dropped_;  // "file:line" of the first
  LoadNotes* notes_;
};

}  // namespace

std::shared_ptr<Model> compile_model(const ParsedModel& pm, const std::string& file, LoadNotes* notes) {
  auto m = std::make_shared<Model>();
  m->file = file;
  Compiler(pm, *m, file, notes).run();
  return m;
}

}  // namespace stiffgrad::mjcf
