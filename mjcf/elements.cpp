// stiffgrad — MJCF loader: joint, geom, inertial, tendon and pair attribute readers.
//
// Attribute lists follow the MuJoCo 2.2.2 XML reference. Attributes are sorted into: read and
// implemented; accepted and ignored because they are cosmetic or only matter for features
// stiffgrad does not model (rendering, user data); and accepted only at their default value
// because any other value would change the dynamics.
#include "mjcf/elements.hpp"

#include <cmath>
#include <vector>

namespace stiffgrad::mjcf {

void require_default(const Elem& e, const char* name, std::initializer_list<double> defaults) {
  if (!e.has(name)) return;
  std::vector<double> v(defaults);
  e.doubles(name, v.data(), static_cast<int>(v.size()), 1);
  size_t i = 0;
  for (double d : defaults) {
    if (v[i++] != d)
      e.fail("unsupported attribute '" + std::string(name) + "' of <" + std::string(e.tag()) +
             "> (only its default value is supported)");
  }
}

void require_keyword(const Elem& e, const char* name, const char* only_value) {
  const char* v = e.raw(name);
  if (v && std::string_view(v) != only_value)
    e.fail("unsupported attribute '" + std::string(name) + "' of <" + std::string(e.tag()) +
           "> (only " + name + "=\"" + only_value + "\" is supported)");
}

namespace {

// Names and classes are only meaningful on real elements.
void check_no_name(const Elem& e, bool in_default) {
  if (!in_default) return;
  for (const char* a : {"name", "class"})
    if (e.has(a)) e.unsupported_attribute(a);
}

}  // namespace

void read_joint(const Elem& e, const CompilerSpec& c, JointSpec& j, bool in_default) {
  (void)c;
  e.check_attributes({"name", "class", "type", "pos", "axis", "limited", "range", "ref",
                      "springref", "stiffness", "damping", "armature", "frictionloss",
                      "solreflimit", "solimplimit", "solreffriction", "solimpfriction", "margin",
                      "actuatorfrcrange", "actuatorfrclimited",
                      // cosmetic
                      "group", "user",
                      // only at their default values
                      "springdamper", "actuatorgravcomp"});
  check_no_name(e, in_default);
  j.where = e;
  j.name = e.str("name", j.name);
  int type = static_cast<int>(j.type);
  // Same order as JointType (MuJoCo's mjtJoint).
  if (e.keyword("type", {"free", "ball", "slide", "hinge"}, type)) j.type = static_cast<JointType>(type);
  e.exact("pos", j.pos, 3);
  e.exact("axis", j.axis, 3);
  e.tristate("limited", j.limited);
  e.exact("range", j.range, 2);
  e.real("ref", j.ref);
  e.real("springref", j.springref);
  e.real("stiffness", j.stiffness);
  e.real("damping", j.damping);
  e.real("armature", j.armature);
  e.real("frictionloss", j.frictionloss);
  e.real("margin", j.margin);
  e.doubles("solreflimit", j.solref, 2, 1);
  e.doubles("solimplimit", j.solimp, 5, 1);
  e.doubles("solreffriction", j.solref_friction, 2, 1);
  e.doubles("solimpfriction", j.solimp_friction, 5, 1);
  e.exact("actuatorfrcrange", j.actfrcrange, 2);
  e.tristate("actuatorfrclimited", j.actfrclimited);
  require_default(e, "springdamper", {0, 0});
  require_keyword(e, "actuatorgravcomp", "false");
  if (j.stiffness < 0 || j.damping < 0 || j.armature < 0 || j.frictionloss < 0)
    e.fail("joint stiffness, damping, armature and frictionloss must be non-negative");
}

void read_geom(const Elem& e, const CompilerSpec& c, GeomSpec& g, bool in_default) {
  e.check_attributes({"name", "class", "type", "contype", "conaffinity", "condim", "group",
                      "priority", "size", "friction", "solref", "solimp", "margin", "gap",
                      "solmix", "density", "mass", "fromto", "pos", "quat", "axisangle",
                      "euler", "xyaxes", "zaxis", "mesh",
                      // cosmetic or only relevant to features that are rejected elsewhere
                      "material", "rgba", "user", "hfield", "fitscale", "fluidcoef",
                      // only at their default values
                      "shellinertia", "fluidshape"});
  check_no_name(e, in_default);
  g.where = e;
  g.name = e.str("name", g.name);
  if (const char* t = e.raw("type"); t && std::string_view(t) == "sdf")
    e.fail("unsupported geom type 'sdf'");
  int type = static_cast<int>(g.type);
  // Same order as GeomType (MuJoCo's mjtGeom).
  if (e.keyword("type", {"plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box",
                         "mesh"},
                type))
    g.type = static_cast<GeomType>(type);
  e.integer("contype", g.contype);
  e.integer("conaffinity", g.conaffinity);
  e.integer("condim", g.condim);
  e.integer("group", g.group);
  e.integer("priority", g.priority);
  if (int n = e.doubles("size", g.size, 3, 1)) g.nsize = std::max(g.nsize, n);
  e.doubles("friction", g.friction, 3, 1);
  e.doubles("solref", g.solref, 2, 1);
  e.doubles("solimp", g.solimp, 5, 1);
  e.real("margin", g.margin);
  e.real("gap", g.gap);
  e.real("solmix", g.solmix);
  e.real("density", g.density);
  if (e.real("mass", g.mass)) g.has_mass = true;
  if (e.exact("fromto", g.fromto, 6)) g.has_fromto = true;
  e.exact("pos", g.pos, 3);
  read_orientation(e, c.angles, g.quat);
  g.mesh = e.str("mesh", g.mesh);
  if (e.real("fitscale", g.fitscale) && !(g.fitscale > 0)) e.fail("fitscale must be positive");
  require_keyword(e, "shellinertia", "false");
  require_keyword(e, "fluidshape", "none");
  if (g.density < 0) e.fail("geom density must be non-negative");
  if (g.has_mass && g.mass < 0) e.fail("geom mass must be non-negative");
  if (g.contype < 0 || g.conaffinity < 0) e.fail("geom contype and conaffinity must be non-negative");
}

void read_inertial(const Elem& e, const CompilerSpec& c, InertialSpec& in) {
  e.check_attributes({"pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "mass",
                      "diaginertia", "fullinertia"});
  in.where = e;
  e.exact("pos", in.pos, 3);
  if (!e.real("mass", in.mass)) e.fail("<inertial> requires 'mass'");
  if (in.mass < 0) e.fail("negative mass in <inertial>");
  const bool diag = e.has("diaginertia"), full = e.has("fullinertia");
  if (diag == full) e.fail("<inertial> requires exactly one of 'diaginertia' and 'fullinertia'");
  if (diag) {
    e.exact("diaginertia", in.inertia, 3);
    read_orientation(e, c.angles, in.quat);
    for (int i = 0; i < 3; ++i)
      if (in.inertia[i] < 0) e.fail("negative moment in 'diaginertia'");
  } else {
    // The principal frame comes from diagonalizing the full matrix; an extra orientation
    // would be ambiguous (MuJoCo rejects it too).
    for (const char* a : {"quat", "axisangle", "euler", "xyaxes", "zaxis"})
      if (e.has(a)) e.fail("<inertial> with 'fullinertia' cannot also have '" + std::string(a) + "'");
    e.exact("fullinertia", in.inertia, 6);
    in.full = true;
  }
}

void read_tendon(const Elem& e, TendonSpec& t, bool in_default) {
  e.check_attributes({"name", "class", "limited", "range", "stiffness", "damping",
                      "springlength", "margin", "frictionloss", "solreflimit", "solimplimit",
                      "solreffriction", "solimpfriction",
                      // cosmetic
                      "group", "rgba", "width", "material", "user",
                      // only at its default value
                      "armature"});
  check_no_name(e, in_default);
  t.where = e;
  t.name = e.str("name", t.name);
  e.tristate("limited", t.limited);
  e.exact("range", t.range, 2);
  e.real("stiffness", t.stiffness);
  e.real("damping", t.damping);
  // MuJoCo 2.2.2 has one spring length; newer versions accept a dead band "low high".
  double sl[2] = {t.springlength, t.springlength};
  if (int n = e.doubles("springlength", sl, 2, 1)) {
    if (n == 2 && sl[0] != sl[1]) e.fail("unsupported attribute 'springlength' of <fixed> (dead band)");
    t.springlength = sl[0];
  }
  e.real("margin", t.margin);
  e.real("frictionloss", t.frictionloss);
  e.doubles("solreflimit", t.solref_lim, 2, 1);
  e.doubles("solimplimit", t.solimp_lim, 5, 1);
  e.doubles("solreffriction", t.solref_fri, 2, 1);
  e.doubles("solimpfriction", t.solimp_fri, 5, 1);
  require_default(e, "armature", {0});
  if (t.stiffness < 0 || t.damping < 0 || t.frictionloss < 0)
    e.fail("tendon stiffness, damping and frictionloss must be non-negative");
}

void read_pair(const Elem& e, PairSpec& p, bool in_default) {
  e.check_attributes({"name", "class", "geom1", "geom2", "condim", "friction", "solref",
                      "solimp", "margin", "gap", "solreffriction"});
  check_no_name(e, in_default);
  if (in_default && (e.has("geom1") || e.has("geom2"))) e.fail("<pair> default cannot name geoms");
  p.where = e;
  p.name = e.str("name", p.name);
  p.geom1 = e.str("geom1", p.geom1);
  p.geom2 = e.str("geom2", p.geom2);
  e.integer("condim", p.condim);
  e.doubles("friction", p.friction, 5, 1);
  e.doubles("solref", p.solref, 2, 1);
  e.doubles("solimp", p.solimp, 5, 1);
  e.real("margin", p.margin);
  e.real("gap", p.gap);
  require_default(e, "solreffriction", {0, 0});
}

void read_equality(const Elem& e, EqualitySpec& q, bool in_default) {
  q.where = e;
  if (in_default) {
    e.check_attributes({"active", "solref", "solimp"});
  } else {
    const std::string_view tag = e.tag();
    if (tag == "connect") {
      q.kind = EqualityKind::Connect;
      e.check_attributes({"name", "class", "active", "solref", "solimp", "body1", "body2", "anchor",
                          "site1", "site2"});
      q.sites = e.has("site1") || e.has("site2");
      if (q.sites) {
        // MuJoCo 3: the two sites are held together (their bodies and positions give the anchors)
        if (!e.has("site1") || !e.has("site2"))
          e.fail("<connect> between sites needs 'site1' and 'site2'");
        if (e.has("body1") || e.has("body2") || e.has("anchor"))
          e.fail("<connect> takes either site1 and site2, or body1, body2 and anchor");
      } else {
        if (!e.has("body1")) e.fail("<connect> needs 'body1'");
        if (!e.exact("anchor", q.data, 3)) e.fail("<connect> needs 'anchor'");
      }
    } else if (tag == "weld") {
      e.fail(
          "unsupported <weld>: weld equality constraints are not implemented (connect, joint and "
          "tendon are)");
    } else if (tag == "joint" || tag == "tendon") {
      const bool joint = tag == "joint";
      q.kind = joint ? EqualityKind::Joint : EqualityKind::Tendon;
      const char* one = joint ? "joint1" : "tendon1";
      const char* two = joint ? "joint2" : "tendon2";
      e.check_attributes({"name", "class", "active", "solref", "solimp", one, two, "polycoef"});
      if (!e.has(one)) e.fail("<" + std::string(tag) + "> of <equality> needs '" + one + "'");
      e.doubles("polycoef", q.data, 5, 1);
    } else if (tag == "distance") {
      e.fail("unsupported <distance>: MuJoCo 2.2.2 removed distance equality constraints");
    } else {
      e.unsupported();
    }
    q.name = e.str("name");
    const bool bodies = q.kind == EqualityKind::Connect;
    const bool joint = q.kind == EqualityKind::Joint;
    q.name1 = e.str(q.sites ? "site1" : bodies ? "body1" : joint ? "joint1" : "tendon1");
    q.name2 = e.str(q.sites ? "site2" : bodies ? "body2" : joint ? "joint2" : "tendon2");
  }
  int v = 1;
  if (e.boolean("active", v)) q.active = v == 1;
  e.doubles("solref", q.solref, 2, 1);
  e.doubles("solimp", q.solimp, 5, 1);
}

void read_mesh(const Elem& e, MeshSpec& m, bool in_default) {
  e.check_attributes({"name", "class", "file", "scale", "refpos", "refquat", "content_type",
                      "inertia", "maxhullvert", "vertex", "face",
                      // rendering only
                      "smoothnormal", "normal", "texcoord"});
  if (in_default) {
    for (const char* a : {"name", "file", "refpos", "refquat", "vertex", "face"})
      if (e.has(a)) e.fail("<mesh> default cannot set '" + std::string(a) + "'");
  }
  m.where = e;
  m.name = e.str("name", m.name);
  m.file = e.str("file", m.file);
  e.exact("scale", m.scale, 3);
  e.exact("refpos", m.refpos, 3);
  e.exact("refquat", m.refquat, 4);
  int inertia = 0;
  static const char* kInertia[] = {"legacy", "exact", "convex", "shell"};
  if (e.keyword("inertia", {"legacy", "exact", "convex", "shell"}, inertia))
    m.inertia = kInertia[inertia];
  for (double s : m.scale)
    if (!(s != 0) || !std::isfinite(s)) e.fail("mesh scale must be finite and nonzero");
  if (e.has("maxhullvert")) {
    e.integer("maxhullvert", m.maxhullvert);
    if (m.maxhullvert != -1 && m.maxhullvert < 4) e.fail("maxhullvert must be larger than 3");
  }
  if (e.has("vertex")) {
    if (e.has("file")) e.fail("a mesh takes its vertices from a file or from 'vertex', not both");
    e.numbers("vertex", m.vertex);
    if (m.vertex.size() < 12) e.fail("mesh 'vertex' needs at least 4 vertices");
    if (m.vertex.size() % 3 != 0) e.fail("mesh 'vertex' must hold a multiple of 3 numbers");
    for (double x : m.vertex)
      if (!std::isfinite(x)) e.fail("mesh 'vertex' values must be finite");
  }
  if (e.has("face")) {
    if (!e.has("vertex")) e.fail("mesh 'face' needs 'vertex'");
    std::vector<double> f;
    e.numbers("face", f);
    if (f.size() % 3 != 0) e.fail("mesh 'face' must hold a multiple of 3 indices");
    for (double x : f) {
      if (x != static_cast<int>(x) || x < 0 || x >= static_cast<double>(m.vertex.size() / 3))
        e.fail("mesh 'face' indices must be integers naming a vertex");
      m.face.push_back(static_cast<int>(x));
    }
  }
}

}  // namespace stiffgrad::mjcf
