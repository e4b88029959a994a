// stiffgrad — MJCF loader: the document walk.
//
// Sections are read in MuJoCo's order regardless of where they appear in the file (compiler
// first, then option/size, then defaults, then the rest), because the compiler settings decide
// how angles are read and the default classes must exist before any element names them.
#include "mjcf/parse.hpp"

#include <cstring>

#include "mjcf/elements.hpp"

namespace stiffgrad::mjcf {
namespace {

// Upper bound on <size nkey>: beyond it a keyframe table would only exhaust memory.
constexpr int kMaxKeys = 10000;

class Parser {
 public:
  Parser(IncludeContext& ctx, LoadNotes* notes) : ctx_(ctx), notes_(notes) {}

  ParsedModel run(const Source& main) {
    Elem root{main.doc.RootElement(), &main};
    root.check_attributes({"model"});
    pm_.model_name = root.str("model");
    pm_.world.where = root;
    pm_.world.name = "world";

    std::vector<Elem> top;
    ctx_.for_each_child(root, [&](const Elem& e) { top.push_back(e); });
    for (const Elem& e : top)
      if (e.tag() == "compiler") compiler(e);
    for (const Elem& e : top) {
      if (e.tag() == "option") option(e);
      if (e.tag() == "size") size(e);
    }
    for (const Elem& e : top)
      if (e.tag() == "default") defaults_.parse_top(e, ctx_, pm_.compiler);
    for (const Elem& e : top) section(e);
    return std::move(pm_);
  }

 private:
  // ------------------------------------------------------------ compiler / option / size
  void compiler(const Elem& e) {
    e.check_attributes({"angle", "eulerseq", "autolimits", "inertiafromgeom", "settotalmass",
                        "coordinate", "boundmass", "boundinertia", "inertiagrouprange",
                        // asset handling and performance switches: no effect on dynamics
                        "meshdir", "texturedir", "assetdir", "strippath", "discardvisual",
                        "convexhull", "usethread", "fitaabb", "exactmeshinertia", "saveinertial",
                        "lengthrange",
                        // only at their default values
                        "balanceinertia", "fusestatic", "alignfree"});
    CompilerSpec& c = pm_.compiler;
    int v = 0;
    if (e.keyword("angle", {"radian", "degree"}, v)) c.angles.degree = (v == 1);
    if (const char* seq = e.raw("eulerseq")) {
      if (std::strlen(seq) != 3 || std::strspn(seq, "xyzXYZ") != 3)
        e.fail("invalid eulerseq '" + std::string(seq) + "' (three of x, y, z, X, Y, Z)");
      for (int i = 0; i < 3; ++i) c.angles.eulerseq[i] = seq[i];
    }
    if (e.boolean("autolimits", v)) c.autolimits = (v == 1);
    e.tristate("inertiafromgeom", c.inertiafromgeom);
    e.real("settotalmass", c.settotalmass);
    if (const char* coord = e.raw("coordinate"); coord && std::string_view(coord) != "local") {
      if (std::string_view(coord) == "global")
        e.fail("unsupported attribute 'coordinate' of <compiler>: coordinate=\"global\"");
      e.fail("invalid value '" + std::string(coord) + "' of attribute 'coordinate'");
    }
    e.real("boundmass", c.boundmass);
    e.real("boundinertia", c.boundinertia);
    if (c.boundmass < 0 || c.boundinertia < 0) e.fail("boundmass and boundinertia must be >= 0");
    if (e.has("inertiagrouprange")) {
      double r[2];
      e.exact("inertiagrouprange", r, 2);
      for (int i = 0; i < 2; ++i) {
        if (r[i] != static_cast<int>(r[i])) e.fail("inertiagrouprange must be integers");
        c.inertiagrouprange[i] = static_cast<int>(r[i]);
      }
    }
    for (const char* a : {"strippath", "discardvisual", "usethread", "saveinertial"})
      e.boolean(a, v);  // validated, no effect
    if (e.boolean("convexhull", v)) c.convexhull = (v == 1);
    if (e.boolean("fitaabb", v)) c.fitaabb = (v == 1);
    if (e.boolean("exactmeshinertia", v)) c.exactmeshinertia = (v == 1);
    // mesh files: meshdir, else assetdir (which sets both mesh and texture directories)
    if (e.has("assetdir") && c.meshdir.empty()) c.meshdir = e.str("assetdir");
    if (e.has("meshdir")) c.meshdir = e.str("meshdir");
    require_keyword(e, "balanceinertia", "false");
    // fusestatic merges bodies without joints into their parents: the same rigid parts (such a
    // body already shares its parent's weld body, so contacts and inertia do not change), fewer
    // bodies. stiffgrad keeps them as bodies; the dynamics are the same up to rounding.
    int fuse = 0;
    if (e.boolean("fusestatic", fuse) && fuse == 1) {
      c.fusestatic = true;
      note(e,
           "fusestatic: static bodies are kept as bodies (body ids differ from a fused model's); "
           "where MuJoCo "
           "2.2.2 would fuse them, contacts take the fused bodies' inverse weights");
    }
    require_keyword(e, "alignfree", "false");
    ctx_.for_each_child(e, [&](const Elem& child) {
      if (child.tag() != "lengthrange") child.unsupported();
    });
  }

  void option(const Elem& e) {
    e.check_attributes(
        {"timestep", "gravity", "integrator", "impratio", "tolerance", "iterations", "solver",
         "cone", "collision", "o_margin", "o_solref", "o_solimp", "noslip_iterations",
         // solver/collision settings without an effect on stiffgrad's results: accepted
         "apirate", "ls_tolerance", "noslip_tolerance", "mpr_tolerance", "ccd_tolerance",
         "ls_iterations", "mpr_iterations", "ccd_iterations", "sdf_iterations",
         "sdf_initpoints", "jacobian", "o_friction", "actuatorgroupdisable", "magnetic",
         // fluid forces: only their default (off)
         "density", "viscosity", "wind"});
    Options& o = pm_.opt;
    if (e.real("timestep", o.timestep) && !(o.timestep > 0)) e.fail("timestep must be positive");
    e.exact("gravity", o.gravity, 3);
    int integ = 0;
    if (e.keyword("integrator", {"Euler", "RK4", "implicit", "implicitfast"}, integ)) {
      o.mjcf_integrator = e.str("integrator");
      if (integ != 0) note(e, "integrator " + o.mjcf_integrator +
                                  " requested; stiffgrad's integrator is a simulator option, the "
                                  "model records it in opt.mjcf_integrator");
    }
    constraint_options(e, o);
    require_default(e, "density", {0});
    require_default(e, "viscosity", {0});
    require_default(e, "wind", {0, 0, 0});
    ctx_.for_each_child(e, [&](const Elem& child) {
      if (child.tag() == "flag") {
        flag(child);
      } else {
        child.unsupported();
      }
    });
  }

  // Solver and contact options (MuJoCo 2.2.2 names, enum orders and defaults; facts §0).
  void constraint_options(const Elem& e, Options& o) {
    if (e.real("impratio", o.impratio) && !(o.impratio > 0)) e.fail("impratio must be positive");
    if (e.real("tolerance", o.tolerance) && o.tolerance < 0) e.fail("tolerance must be non-negative");
    if (e.integer("iterations", o.iterations) && o.iterations < 0) e.fail("iterations must be non-negative");
    int v = 0;
    if (e.keyword("cone", {"pyramidal", "elliptic"}, v)) o.cone = v;
    if (e.keyword("collision", {"all", "predefined", "dynamic"}, v)) o.collision = v;
    if (e.keyword("solver", {"PGS", "CG", "Newton"}, v)) {
      o.solver = e.str("solver");
      // Every solver minimizes the same strictly convex problem (facts §5); one is enough.
      if (v != 2) note(e, "solver " + o.solver + " requested; stiffgrad solves the same optimum with Newton");
    }
    e.real("o_margin", o.o_margin);
    e.doubles("o_solref", o.o_solref, 2, 1);  // partial vectors allowed, as in MuJoCo
    e.doubles("o_solimp", o.o_solimp, 5, 1);
    int noslip = 0;
    if (e.integer("noslip_iterations", noslip) && noslip != 0) {
      if (noslip < 0) e.fail("noslip_iterations must be non-negative");
      e.fail("unsupported attribute 'noslip_iterations' of <option> (the noslip post-pass is not "
             "supported; only noslip_iterations=\"0\")");
    }
  }

  void note(const Elem& e, const std::string& text) {
    if (notes_) notes_->notes.push_back(e.file() + ":" + std::to_string(e.line()) + ": note: " + text);
  }

  void flag(const Elem& e) {
    // Recorded: every flag the constraint pipeline reads. Accepted: flags without an effect
    // on stiffgrad's results. Rejected away from their default: flags that switch off forces
    // stiffgrad always applies.
    static const char* const kAccepted[] = {"sensor",      "midphase",    "energy",   "fwdinv",
                                            "invdiscrete", "sensornoise", "multiccd", "island",
                                            "nativeccd",   "autoreset"};
    static const char* const kOnlyEnabled[] = {"passive", "actuation", "clampctrl"};
    struct Recorded { const char* name; bool Options::*field; };
    static const Recorded kRecorded[] = {{"gravity", &Options::gravity_enabled},
                                         {"contact", &Options::contact_enabled},
                                         {"constraint", &Options::constraint_enabled},
                                         {"eulerdamp", &Options::eulerdamp_enabled},
                                         {"limit", &Options::limit_enabled},
                                         {"frictionloss", &Options::frictionloss_enabled},
                                         {"equality", &Options::equality_enabled},
                                         {"refsafe", &Options::refsafe_enabled},
                                         {"warmstart", &Options::warmstart_enabled},
                                         {"filterparent", &Options::filterparent_enabled},
                                         {"override", &Options::override_enabled}};
    std::vector<std::string_view> known;
    for (const Recorded& r : kRecorded) known.push_back(r.name);
    for (const char* a : kAccepted) known.push_back(a);
    for (const char* a : kOnlyEnabled) known.push_back(a);
    e.check_attributes(known);
    int v = 1;
    Options& o = pm_.opt;
    for (const Recorded& r : kRecorded)
      if (e.enable(r.name, v)) o.*(r.field) = (v == 1);
    for (const char* a : kAccepted) e.enable(a, v);
    for (const char* a : kOnlyEnabled) {
      if (e.enable(a, v) && v == 0)
        e.fail("unsupported attribute '" + std::string(a) + "' of <flag> (" + a +
               "=\"disable\" is not supported)");
    }
  }

  void size(const Elem& e) {
    // Memory sizes and user-data counts do not matter here; nkey adds default keyframes.
    int nkey = 0;
    if (e.integer("nkey", nkey)) {
      if (nkey < 0 || nkey > kMaxKeys) e.fail("nkey out of range (0.." + std::to_string(kMaxKeys) + ")");
      pm_.size_nkey = nkey;
    }
  }

  // ------------------------------------------------------------ other sections
  void section(const Elem& e) {
    const std::string_view tag = e.tag();
    if (tag == "compiler" || tag == "option" || tag == "size" || tag == "default") return;
    if (tag == "sensor") {
      ctx_.for_each_child(e, [&](const Elem&) { pm_.fuse_blockers = true; });
      return;
    }
    if (tag == "visual" || tag == "statistic" || tag == "custom") return;
    if (tag == "asset") return asset(e);
    if (tag == "worldbody") {
      e.check_attributes({});
      return body_children(e, pm_.world, 0, true);
    }
    if (tag == "contact") return contact(e);
    if (tag == "tendon") return tendon(e);
    if (tag == "actuator") return actuator(e);
    if (tag == "keyframe") return keyframe(e);
    if (tag == "equality") {
      e.check_attributes({});
      ctx_.for_each_child(e, [&](const Elem& child) {
        EqualitySpec q = defaults_.get(defaults_.class_of(child, 0)).equality;
        read_equality(child, q, false);
        pm_.equalities.push_back(std::move(q));
      });
      return;
    }
    if (tag == "deformable" || tag == "extension") {
      // An empty section is harmless; any content would be unsupported physics.
      ctx_.for_each_child(e, [&](const Elem& child) { child.unsupported(); });
      return;
    }
    e.unsupported();
  }

  void asset(const Elem& e) {
    // Meshes are kept (their files are read at compile time, by the geoms that use them);
    // textures, materials and skins are rendering only; a height field is refused by the geom
    // that uses it.
    ctx_.for_each_child(e, [&](const Elem& child) {
      const std::string_view t = child.tag();
      if (t == "mesh") {
        MeshSpec m = defaults_.get(defaults_.class_of(child, 0)).mesh;
        read_mesh(child, m, false);
        if (m.file.empty() && m.vertex.empty())
          child.fail("<mesh> needs a 'file' or 'vertex' data");
        if (m.name.empty() && m.file.empty())
          child.fail("a <mesh> with inline 'vertex' data needs a 'name'");
        if (m.name.empty()) {
          // MuJoCo names an unnamed mesh after its file, without directory and extension
          const std::size_t slash = m.file.find_last_of("/\\");
          std::string stem = slash == std::string::npos ? m.file : m.file.substr(slash + 1);
          const std::size_t dot = stem.rfind('.');
          if (dot != std::string::npos) stem.resize(dot);
          m.name = stem;
        }
        pm_.meshes.push_back(std::move(m));
      } else if (t != "texture" && t != "material" && t != "hfield" && t != "skin") {
        child.unsupported();
      }
    });
  }

  // ------------------------------------------------------------ bodies
  void body(const Elem& e, BodySpec& b, int childclass) {
    e.check_attributes({"name", "childclass", "pos", "quat", "axisangle", "euler", "xyaxes",
                        "zaxis", "user", "mocap", "gravcomp"});
    b.where = e;
    b.name = e.str("name");
    if (e.has("childclass")) childclass = defaults_.lookup(e, "childclass");
    e.exact("pos", b.pos, 3);
    read_orientation(e, pm_.compiler.angles, b.quat);
    require_keyword(e, "mocap", "false");
    e.real("gravcomp", b.gravcomp);
    body_children(e, b, childclass, false);
  }

  void body_children(const Elem& e, BodySpec& b, int childclass, bool is_world) {
    ctx_.for_each_child(e, [&](const Elem& c) {
      const std::string_view tag = c.tag();
      if (tag == "body") {
        b.children.emplace_back();
        body(c, b.children.back(), childclass);
      } else if (tag == "geom") {
        GeomSpec g = defaults_.get(defaults_.class_of(c, childclass)).geom;
        read_geom(c, pm_.compiler, g, false);
        b.geoms.push_back(std::move(g));
      } else if (tag == "joint" || tag == "freejoint") {
        if (is_world) c.fail("<" + std::string(tag) + "> is not allowed in <worldbody>");
        if (tag == "joint") {
          JointSpec j = defaults_.get(defaults_.class_of(c, childclass)).joint;
          read_joint(c, pm_.compiler, j, false);
          b.joints.push_back(std::move(j));
        } else {
          // <freejoint> ignores default classes (MuJoCo 2.2.2, verified: no armature,
          // damping or frictionloss from main or childclass).
          c.check_attributes({"name", "group", "align"});
          require_keyword(c, "align", "false");
          JointSpec j;
          j.where = c;
          j.name = c.str("name");
          j.type = JointType::Free;
          j.limited = kFalse;
          j.actfrclimited = kFalse;
          b.joints.push_back(std::move(j));
        }
      } else if (tag == "inertial") {
        if (is_world) c.fail("<inertial> is not allowed in <worldbody>");
        if (b.has_inertial) c.fail("more than one <inertial> in a body");
        read_inertial(c, pm_.compiler, b.inertial);
        b.has_inertial = true;
      } else if (tag == "site") {
        // A site has no dynamics; its position anchors a <connect site1 site2>.
        SiteSpec site;
        site.where = c;
        site.name = c.str("name");
        if (!c.exact("pos", site.pos, 3)) {
          double f[6];
          if (c.exact("fromto", f, 6))
            for (int i = 0; i < 3; ++i) site.pos[i] = 0.5 * (f[i] + f[i + 3]);
        }
        b.sites.push_back(std::move(site));
      } else if (tag == "camera" || tag == "light") {
        // Cameras and lights have no dynamics here (MuJoCo 2.2.2 does not fuse static bodies
        // in a model that has them).
        pm_.fuse_blockers = true;
      } else {
        c.unsupported();  // frame, composite, flexcomp, replicate, plugin, attach, ...
      }
    });
  }

  // ------------------------------------------------------------ contact / tendon / actuator
  void contact(const Elem& e) {
    ctx_.for_each_child(e, [&](const Elem& c) {
      if (c.tag() == "pair") {
        PairSpec p = defaults_.get(defaults_.class_of(c, 0)).pair;
        read_pair(c, p, false);
        if (p.geom1.empty() || p.geom2.empty()) c.fail("<pair> needs 'geom1' and 'geom2'");
        pm_.pairs.push_back(std::move(p));
      } else if (c.tag() == "exclude") {
        c.check_attributes({"name", "body1", "body2"});
        ExcludeSpec x{c, c.str("body1"), c.str("body2")};
        if (!c.has("body1") || !c.has("body2")) c.fail("<exclude> needs 'body1' and 'body2'");
        pm_.excludes.push_back(std::move(x));
      } else {
        c.unsupported();
      }
    });
  }

  void tendon(const Elem& e) {
    ctx_.for_each_child(e, [&](const Elem& c) {
      if (c.tag() != "fixed") c.unsupported();  // spatial tendons
      TendonSpec t = defaults_.get(defaults_.class_of(c, 0)).tendon;
      read_tendon(c, t, false);
      t.wraps.clear();
      ctx_.for_each_child(c, [&](const Elem& w) {
        if (w.tag() != "joint") w.unsupported();
        w.check_attributes({"joint", "coef"});
        if (!w.has("joint")) w.fail("<joint> in a fixed tendon needs 'joint'");
        // MuJoCo requires coef here as well.
        WrapSpec ws{w, w.str("joint"), 1.0};
        if (!w.real("coef", ws.coef)) w.fail("<joint> in a fixed tendon needs 'coef'");
        t.wraps.push_back(std::move(ws));
      });
      if (t.wraps.empty()) c.fail("fixed tendon without joints");
      pm_.tendons.push_back(std::move(t));
    });
  }

  void actuator(const Elem& e) {
    ctx_.for_each_child(e, [&](const Elem& c) {
      const std::string_view tag = c.tag();
      ActuatorKind kind;
      if (tag == "motor") kind = ActuatorKind::Motor;
      else if (tag == "position") kind = ActuatorKind::Position;
      else if (tag == "velocity") kind = ActuatorKind::Velocity;
      else if (tag == "general") kind = ActuatorKind::General;
      else c.unsupported();  // cylinder, muscle, adhesion, intvelocity, damper, plugin, ...
      ActuatorSpec a = defaults_.get(defaults_.class_of(c, 0)).actuator;
      a.element_ctrlrange = false;
      read_actuator(c, kind, a, false);
      pm_.actuators.push_back(std::move(a));
    });
  }

  // ------------------------------------------------------------ keyframes
  void keyframe(const Elem& e) {
    e.check_attributes({});
    ctx_.for_each_child(e, [&](const Elem& c) {
      if (c.tag() != "key") c.unsupported();
      c.check_attributes({"name", "time", "qpos", "qvel", "act", "ctrl", "mpos", "mquat"});
      KeySpec k;
      k.where = c;
      k.name = c.str("name");
      c.real("time", k.time);
      k.has_qpos = vector(c, "qpos", k.qpos);
      k.has_qvel = vector(c, "qvel", k.qvel);
      k.has_ctrl = vector(c, "ctrl", k.ctrl);
      std::vector<double> unused;
      if (vector(c, "act", unused) && !unused.empty())
        c.fail("key 'act' has " + std::to_string(unused.size()) +
               " values, but the model has no actuator activations");
      for (const char* m : {"mpos", "mquat"})
        if (c.has(m)) c.fail("key '" + std::string(m) + "' given, but the model has no mocap bodies");
      if (static_cast<int>(pm_.keys.size()) >= kMaxKeys) c.fail("too many keyframes");
      pm_.keys.push_back(std::move(k));
    });
  }

  // A whitespace-separated list of any length (keyframe vectors).
  static bool vector(const Elem& e, const char* name, std::vector<double>& out) {
    return e.numbers(name, out);
  }

  IncludeContext& ctx_;
  LoadNotes* notes_;
  ParsedModel pm_;
  Defaults defaults_;
};

}  // namespace

ParsedModel parse_document(IncludeContext& ctx, const Source& main, LoadNotes* notes) {
  return Parser(ctx, notes).run(main);
}

}  // namespace stiffgrad::mjcf
