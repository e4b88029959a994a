// stiffgrad — MJCF loader: actuators (<motor>, <position>, <velocity>, <general>).
//
// MuJoCo models every actuator as force = gain*ctrl + bias with
//   gain = gainprm[0]  (gaintype fixed),
//   bias = biasprm[0] + biasprm[1]*length + biasprm[2]*velocity  (biastype affine),
// and the shortcuts only preset these (XML reference, "actuator"):
//   motor:    gain 1, no bias;
//   position: gain kp, bias (0, -kp, -kv);
//   velocity: gain kv, bias (0, 0, -kv).
// Only joint transmissions to hinge/slide joints, fixed-tendon transmissions and dyntype none are
// supported: anything with activation dynamics or another transmission is rejected.
#include <algorithm>
#include <cmath>
#include <vector>

#include "mjcf/actuator.hpp"
#include "mjcf/elements.hpp"
#include "stiffgrad/dynamics.hpp"

namespace stiffgrad::mjcf {

void read_actuator(const Elem& e, ActuatorKind kind, ActuatorSpec& a, bool in_default) {
  std::vector<std::string_view> known = {
      "name", "class", "joint", "ctrllimited", "forcelimited", "ctrlrange", "forcerange", "gear",
      // cosmetic, or only relevant to activation dynamics / length-range computation
      "group", "user", "lengthrange", "actlimited", "actrange", "cranklength", "tendon",
      // other transmissions: rejected below with a clear message
      "jointinparent", "site", "refsite", "cranksite", "slidersite", "body"};
  switch (kind) {
    case ActuatorKind::General:
      for (const char* k : {"dyntype", "gaintype", "biastype", "dynprm", "gainprm", "biasprm",
                            "actearly", "actdim"})
        known.push_back(k);
      break;
    case ActuatorKind::Position:
      for (const char* k : {"kp", "kv", "inheritrange", "timeconst", "dampratio"}) known.push_back(k);
      break;
    case ActuatorKind::Velocity:
      known.push_back("kv");
      break;
    case ActuatorKind::Motor:
      break;
  }
  e.check_attributes(known);
  if (in_default)
    for (const char* k : {"name", "class", "joint", "tendon"})
      if (e.has(k)) e.unsupported_attribute(k);
  for (const char* k : {"jointinparent", "site", "refsite", "cranksite", "slidersite", "body"})
    if (e.has(k))
      e.fail("unsupported attribute '" + std::string(k) + "' of <" + std::string(e.tag()) +
             "> (only joint and tendon transmissions are supported)");
  if (e.has("joint") && e.has("tendon"))
    e.fail("an actuator has one transmission: 'joint' or 'tendon'");

  a.where = e;
  a.kind = kind;
  a.name = e.str("name", a.name);
  a.joint = e.str("joint", a.joint);
  a.tendon = e.str("tendon", a.tendon);
  e.tristate("ctrllimited", a.ctrllimited);
  e.tristate("forcelimited", a.forcelimited);
  if (e.exact("ctrlrange", a.ctrlrange, 2) && !in_default) a.element_ctrlrange = true;
  e.exact("forcerange", a.forcerange, 2);
  e.doubles("gear", a.gear, 6, 1);

  switch (kind) {
    case ActuatorKind::Motor:
      a.gainprm[0] = 1;
      a.gaintype = GainType::Fixed;
      a.biastype = BiasType::None;
      break;
    case ActuatorKind::Position: {
      // kp and kv start from the class's values (a <position kp kv> default).
      double kp = a.gainprm[0];
      e.real("kp", kp);
      // kv and dampratio are one setting (MuJoCo keeps both in biasprm[2], dampratio positive):
      // the one an element gives replaces the other its class gave
      if (e.has("kv") && e.has("dampratio"))
        e.fail("<position> cannot have both 'kv' and 'dampratio'");
      if (e.real("kv", a.position_kv)) a.position_dampratio = 0;
      if (e.real("dampratio", a.position_dampratio)) a.position_kv = 0;
      e.real("inheritrange", a.inheritrange);
      require_default(e, "timeconst", {0});
      if (kp < 0 || a.position_kv < 0) e.fail("<position> kp and kv must be non-negative");
      if (a.position_dampratio < 0) e.fail("<position> dampratio must be non-negative");
      if (a.inheritrange < 0) e.fail("<position> inheritrange must be non-negative");
      for (double& b : a.biasprm) b = 0;
      a.gainprm[0] = kp;
      a.biasprm[1] = -kp;
      a.biasprm[2] = a.position_kv > 0 ? -a.position_kv : 0.0;
      a.gaintype = GainType::Fixed;
      a.biastype = BiasType::Affine;
      break;
    }
    case ActuatorKind::Velocity: {
      double kv = a.gainprm[0];
      e.real("kv", kv);
      if (kv < 0) e.fail("<velocity> kv must be non-negative");
      for (double& b : a.biasprm) b = 0;
      a.gainprm[0] = kv;
      a.biasprm[2] = -kv;
      a.gaintype = GainType::Fixed;
      a.biastype = BiasType::Affine;
      break;
    }
    case ActuatorKind::General: {
      // MuJoCo 2.2.2 keyword lists; everything but the supported subset is rejected.
      if (const char* d = e.raw("dyntype"); d && std::string_view(d) != "none")
        e.fail("unsupported attribute 'dyntype' of <general> (only dyntype=\"none\" is supported)");
      if (const char* g = e.raw("gaintype"); g && std::string_view(g) != "fixed")
        e.fail("unsupported attribute 'gaintype' of <general> (only gaintype=\"fixed\" is supported)");
      if (e.has("actdim")) e.unsupported_attribute("actdim");
      int bias = static_cast<int>(a.biastype);
      if (const char* b = e.raw("biastype");
          b && std::string_view(b) != "none" && std::string_view(b) != "affine")
        e.fail("unsupported attribute 'biastype' of <general> (only none and affine are supported)");
      if (e.keyword("biastype", {"none", "affine"}, bias)) a.biastype = static_cast<BiasType>(bias);
      a.gaintype = GainType::Fixed;
      e.doubles("gainprm", a.gainprm, 10, 1);
      e.doubles("biasprm", a.biasprm, 10, 1);
      break;
    }
  }
}

// MuJoCo's limited flags: explicit true/false, or "auto": limited when a range is given
// (non-zero; a range inherited from a class counts). With autolimits="false", auto plus a range
// is the 2.2.2 error.
int resolve_limited(int flag, const double range[2], bool autolimits, const Elem& where,
                    const char* what, const char* range_name, const char* limited_name) {
  const bool has_range = !(range[0] == 0 && range[1] == 0);
  if (flag == kAuto) {
    if (has_range && !autolimits)
      where.fail(std::string(what) + " has '" + range_name + "' but not '" + limited_name +
                 "'; set compiler autolimits=\"true\" or state '" + limited_name + "'");
    return has_range ? 1 : 0;
  }
  return flag;
}

void compile_actuators(const ParsedModel& pm, const NameIndex& joints, const NameIndex& tendons,
                       Model& m) {
  m.nu = static_cast<int>(pm.actuators.size());
  NameIndex names;
  for (const ActuatorSpec& a : pm.actuators) {
    const Elem& e = a.where;
    if (!a.name.empty() && !names.emplace(a.name, static_cast<int>(names.size())).second)
      e.fail("repeated actuator name '" + a.name + "'");
    if (a.joint.empty() && a.tendon.empty()) e.fail("actuator needs a 'joint' or a 'tendon'");
    int j = -1, t = -1;
    if (!a.tendon.empty()) {
      const auto it = tendons.find(a.tendon);
      if (it == tendons.end()) e.fail("actuator references unknown tendon '" + a.tendon + "'");
      t = it->second;
      if (a.kind == ActuatorKind::Position && (a.inheritrange > 0 || a.position_dampratio > 0))
        e.fail(
            "<position> on a tendon: 'inheritrange' and 'dampratio' are supported on joints only");
    } else {
      auto it = joints.find(a.joint);
      if (it == joints.end()) e.fail("actuator references unknown joint '" + a.joint + "'");
      j = it->second;
      const JointType jt = m.jnt_type[j];
      if (jt != JointType::Hinge && jt != JointType::Slide)
        e.fail("unsupported transmission: actuator on joint '" + a.joint +
               "' which is not a hinge or slide joint");
    }
    int ctrllimited = resolve_limited(a.ctrllimited, a.ctrlrange, pm.compiler.autolimits, e,
                                      "actuator", "ctrlrange", "ctrllimited");
    double ctrlrange[2] = {a.ctrlrange[0], a.ctrlrange[1]};
    if (a.kind == ActuatorKind::Position && a.inheritrange > 0) {
      // MuJoCo >= 3: ctrlrange = midpoint of the joint range +- inheritrange * half width.
      if (a.element_ctrlrange) e.fail("<position> has both 'ctrlrange' and 'inheritrange'");
      if (!m.jnt_limited[j])
        e.fail("<position> inheritrange needs joint '" + a.joint + "' to have a range");
      const double lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
      const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
      ctrlrange[0] = mid - a.inheritrange * half;
      ctrlrange[1] = mid + a.inheritrange * half;
      ctrllimited = 1;
    }
    if (!std::isfinite(ctrlrange[0]) || !std::isfinite(ctrlrange[1]))
      e.fail("ctrlrange is not finite");
    if (ctrllimited && !(ctrlrange[0] < ctrlrange[1]))
      e.fail("invalid ctrlrange (need ctrlrange[0] < ctrlrange[1])");
    const int forcelimited = resolve_limited(a.forcelimited, a.forcerange, pm.compiler.autolimits,
                                             e, "actuator", "forcerange", "forcelimited");
    if (forcelimited && !(a.forcerange[0] < a.forcerange[1]))
      e.fail("invalid forcerange (need forcerange[0] < forcerange[1])");

    m.actuator_name.push_back(a.name);
    m.actuator_trntype.push_back(t >= 0 ? 3 : 0);
    m.actuator_trnid.push_back(t >= 0 ? t : j);
    m.actuator_gear.push_back(a.gear[0]);
    m.actuator_gaintype.push_back(a.gaintype);
    m.actuator_biastype.push_back(a.biastype);
    for (int k = 0; k < 3; ++k) m.actuator_gainprm.push_back(a.gainprm[k]);
    for (int k = 0; k < 3; ++k) m.actuator_biasprm.push_back(a.biasprm[k]);
    // Entries past the third would be ignored by fixed/affine models in MuJoCo as well.
    m.actuator_ctrllimited.push_back(ctrllimited);
    m.actuator_ctrlrange.push_back(ctrlrange[0]);
    m.actuator_ctrlrange.push_back(ctrlrange[1]);
    m.actuator_forcelimited.push_back(forcelimited);
    m.actuator_forcerange.push_back(a.forcerange[0]);
    m.actuator_forcerange.push_back(a.forcerange[1]);
  }
}

void apply_dampratios(const ParsedModel& pm, Model& m) {
  bool any = false;
  for (const ActuatorSpec& a : pm.actuators) any = any || a.position_dampratio > 0;
  if (!any) return;
  const std::vector<double> zeros(static_cast<std::size_t>(std::max(m.nv, m.nu)), 0.0);
  const SmoothDynamics sd = smooth_dynamics(m, m.qpos0.data(), zeros.data(), zeros.data());
  for (int i = 0; i < m.nu; ++i) {
    const ActuatorSpec& a = pm.actuators[static_cast<std::size_t>(i)];
    if (!(a.position_dampratio > 0)) continue;
    // the inertia reflected through the transmission: M0[d][d] / gear² (a joint's one dof)
    const int dof =
        m.jnt_dofadr[static_cast<std::size_t>(m.actuator_trnid[static_cast<std::size_t>(i)])];
    const double gear = m.actuator_gear[static_cast<std::size_t>(i)];
    const double gear2 = gear * gear;
    const double mass =
        gear2 > 1e-15 ? sd.M[static_cast<std::size_t>(dof) * m.nv + dof] / gear2 : 0.0;
    const double kp = m.actuator_gainprm[3 * static_cast<std::size_t>(i)];
    m.actuator_biasprm[3 * static_cast<std::size_t>(i) + 2] =
        -a.position_dampratio * 2 * std::sqrt(kp * mass);
  }
}

}  // namespace stiffgrad::mjcf
