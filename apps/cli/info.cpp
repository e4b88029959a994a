// `stiffgrad info`: a model summary as text or, with --json, as one JSON object.
#include <cmath>
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"
#include "apps/cli/json.hpp"

namespace stiffgrad::cli {

const char* const kInfoHelp =
    "usage: stiffgrad info MODEL.xml [--json]\n"
    "Prints bodies, joints, degrees of freedom (nq, nv), actuators, geoms, total mass,\n"
    "timestep, gravity and keyframes of an MJCF model, then qpos0, one line per joint (type,\n"
    "body, addresses, range or 'unlimited') and one per actuator (joint, ctrlrange or\n"
    "'unlimited'). --json prints the same as one JSON object.\n";

namespace {

const char* joint_type_name(JointType t) {
  static const char* kTypes[] = {"free", "ball", "slide", "hinge"};
  return kTypes[static_cast<int>(t)];
}

std::string range_text(bool limited, const double* r) {
  if (!limited) return "unlimited";
  std::string t(1, '[');  // appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "[" + s
  t += json_number(r[0]);
  t += ", ";
  t += json_number(r[1]);
  t += ']';
  return t;
}

// ---- JSON ----

std::string json_numbers(const double* v, std::size_t n) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) out += (i ? ", " : "") + json_number(v[i]);
  return out + "]";
}

std::string json_range(bool limited, const double* r) {
  return limited ? json_numbers(r, 2) : "null";
}

std::string json_joints(const Model& m) {
  std::string out = "[";
  for (int j = 0; j < m.njnt; ++j)
    out += std::string(j ? ", " : "") + "{\"name\": " + json_string(m.jnt_name[j]) + ", \"type\": " +
           json_string(joint_type_name(m.jnt_type[j])) + ", \"body\": " + json_string(m.body_name[m.jnt_bodyid[j]]) +
           ", \"qposadr\": " + std::to_string(m.jnt_qposadr[j]) + ", \"dofadr\": " +
           std::to_string(m.jnt_dofadr[j]) + ", \"range\": " + json_range(m.jnt_limited[j], &m.jnt_range[2 * j]) + "}";
  return out + "]";
}

std::string json_actuators(const Model& m) {
  std::string out = "[";
  for (int u = 0; u < m.nu; ++u)
    out +=
        std::string(u ? ", " : "") + "{\"name\": " + json_string(m.actuator_name[u]) +
        (m.actuator_trntype[u] == 3
             ? ", \"tendon\": " + json_string(m.tendon_name[m.actuator_trnid[u]])
             : ", \"joint\": " + json_string(m.jnt_name[m.actuator_trnid[u]])) +
        ", \"ctrlrange\": " + json_range(m.actuator_ctrllimited[u], &m.actuator_ctrlrange[2 * u]) +
        "}";
  return out + "]";
}

std::string info_json(const Model& m) {
  std::string keys = "[";
  for (std::size_t k = 0; k < m.keyframes.size(); ++k) keys += (k ? ", " : "") + json_string(m.keyframes[k].name);
  keys += "]";
  return "{\"model\": " + json_string(m.name) + ", \"file\": " + json_string(m.file) + ", \"nbody\": " +
         std::to_string(m.nbody) + ", \"njnt\": " + std::to_string(m.njnt) + ", \"nq\": " + std::to_string(m.nq) +
         ", \"nv\": " + std::to_string(m.nv) + ", \"nu\": " + std::to_string(m.nu) + ", \"ngeom\": " +
         std::to_string(m.ngeom) + ", \"ntendon\": " + std::to_string(m.ntendon) + ", \"total_mass\": " +
         json_number(m.total_mass()) + ", \"timestep\": " + json_number(m.opt.timestep) + ", \"gravity\": " +
         json_numbers(m.opt.gravity, 3) + ", \"keyframes\": " + keys + ", \"qpos0\": " +
         json_numbers(m.qpos0.data(), m.qpos0.size()) + ", \"joints\": " + json_joints(m) +
         ", \"actuators\": " + json_actuators(m) + "}\n";
}

// ---- text ----

void print_summary(const Model& m) {
  std::printf("model      %s\n", m.name.c_str());
  std::printf("file       %s\n", m.file.c_str());
  std::printf("bodies     %d (including world)\n", m.nbody);
  std::printf("joints     %d\n", m.njnt);
  std::printf("nq, nv     %d, %d\n", m.nq, m.nv);
  std::printf("actuators  %d\n", m.nu);
  std::printf("geoms      %d\n", m.ngeom);
  std::printf("tendons    %d\n", m.ntendon);
  std::printf("total mass %.6g\n", m.total_mass());
  std::printf("timestep   %.6g\n", m.opt.timestep);
  std::printf("gravity    %g %g %g\n", m.opt.gravity[0], m.opt.gravity[1], m.opt.gravity[2]);
  std::printf("keyframes  %zu", m.keyframes.size());
  for (const auto& k : m.keyframes) std::printf(" %s", k.name.empty() ? "(unnamed)" : k.name.c_str());
  std::printf("\nqpos0     ");
  for (double x : m.qpos0) std::printf(" %.6g", x);
  std::printf("\n");
}

void print_joints(const Model& m) {
  for (int j = 0; j < m.njnt; ++j)
    std::printf("  joint %-28s %-5s body %-24s qposadr %d dofadr %d range %s\n", m.jnt_name[j].c_str(),
                joint_type_name(m.jnt_type[j]), m.body_name[m.jnt_bodyid[j]].c_str(), m.jnt_qposadr[j],
                m.jnt_dofadr[j], range_text(m.jnt_limited[j], &m.jnt_range[2 * j]).c_str());
}

void print_actuators(const Model& m) {
  for (int u = 0; u < m.nu; ++u)
    std::printf("  actuator %-25s %-6s %-24s ctrlrange %s\n", m.actuator_name[u].c_str(),
                m.actuator_trntype[u] == 3 ? "tendon" : "joint",
                (m.actuator_trntype[u] == 3 ? m.tendon_name[m.actuator_trnid[u]]
                                            : m.jnt_name[m.actuator_trnid[u]])
                    .c_str(),
                range_text(m.actuator_ctrllimited[u], &m.actuator_ctrlrange[2 * u]).c_str());
}

}  // namespace

int cmd_info(const Args& a) {
  const auto m = load_with_notes(model_path(a));
  if (a.has("json")) {
    const std::string text = info_json(*m);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  print_summary(*m);
  print_joints(*m);
  print_actuators(*m);
  return 0;
}

}  // namespace stiffgrad::cli
