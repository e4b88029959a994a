// The `stiffgrad` command line: info, dynamics, rollout, grad, gradcheck, demo.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "host/demo.hpp"
#include "stiffgrad/stiffgrad.hpp"

namespace {

using namespace stiffgrad;

const char* kUsage =
    "usage: stiffgrad <command> [options]\n"
    "commands:\n"
    "  info MODEL.xml                         model summary\n"
    "  dynamics MODEL.xml --states FILE       M, bias, passive, actuator forces, qacc per state\n"
    "  rollout MODEL.xml --states FILE --steps N [--backend cpu|cuda] [--float]\n"
    "                                         final qpos, qvel after N Euler steps per state\n"
    "  grad MODEL.xml --states FILE --steps N --weights W.csv\n"
    "                                         gradient of w.[qpos_N; qvel_N] per state\n"
    "  gradcheck MODEL.xml [--steps T] [--substeps S] [--states FILE] [--float]\n"
    "                                         adjoint vs finite differences and forward mode\n"
    "  demo [--model PATH] [--nenv N] ...     batched stepping demonstration (main job)\n"
    "Run `stiffgrad <command> --help` for a command's options.\n";

const char* kInfoHelp =
    "usage: stiffgrad info MODEL.xml\n"
    "Prints bodies, joints, degrees of freedom (nq, nv), actuators, geoms, total mass,\n"
    "timestep and keyframes of an MJCF model.\n";

const char* kDynamicsHelp =
    "usage: stiffgrad dynamics MODEL.xml --states STATES.csv\n"
    "STATES.csv: one state per line, comma-separated: nq qpos, nv qvel, nu ctrl values\n"
    "(MuJoCo conventions, quaternions w x y z); lines starting with # are comments.\n"
    "For each state prints one JSON object with M (nv x nv, row-major), qfrc_bias,\n"
    "qfrc_passive, qfrc_actuator and qacc of the smooth dynamics (no contacts, limits or\n"
    "friction loss), with 17 significant digits.\n";

const char* kRolloutHelp =
    "usage: stiffgrad rollout MODEL.xml --states STATES.csv --steps N [--backend cpu|cuda] [--float]\n"
    "From each state (format as for `dynamics`), N smooth semi-implicit Euler steps of the\n"
    "model timestep with the control held; all states are stepped together as one batch.\n"
    "Prints per state one line: the final qpos then qvel, comma-separated, 17 significant\n"
    "digits. --float simulates in single precision. --implicit-actuators treats actuator\n"
    "velocity gains implicitly too (Integrator::ImplicitDampingEuler; default: MuJoCo's Euler).\n";

const char* kGradHelp =
    "usage: stiffgrad grad MODEL.xml --states STATES.csv --steps N --weights W.csv\n"
    "For each state row (qpos, qvel, ctrl as for `dynamics`; ctrl held for all N smooth Euler\n"
    "steps of the model timestep) and the matching row of W.csv (nq + nv weights), the loss is\n"
    "L = w . [qpos_N; qvel_N]. Prints one JSON object per line with dL_dqpos (nv, MuJoCo's\n"
    "tangent convention: qpos perturbed as mj_integratePos(qpos, delta, 1)), dL_dqvel (nv) and\n"
    "dL_dctrl (nu, for the held control), 17 significant digits. Exact reverse mode with\n"
    "checkpointed replay. --implicit-actuators as for `rollout`.\n";

const char* kGradcheckHelp =
    "usage: stiffgrad gradcheck MODEL.xml [--steps T] [--substeps S] [--states FILE] [--float]\n"
    "                           [--samples K] [--seed N] [--fd-step H] [--implicit-actuators]\n"
    "Runs a rollout of T control steps (default 20) of S substeps (default 4) and checks the\n"
    "adjoint gradient of the fixed loss L = w . [qpos_T; qvel_T], w ~ N(0, 1) drawn from the\n"
    "seed (default 1), against central finite differences (4-point stencil, step H, default\n"
    "1e-5) of the same kernels run in 80-bit extended precision, so that rounding noise\n"
    "amplified along the rollout does not limit the check (plain double FD is printed beside)\n"
    "on K random inputs (default 12: initial qpos in the tangent convention, initial qvel,\n"
    "controls) and against dual-number forward mode (dot-product test). The initial state is\n"
    "the first row of --states (controls held), else qpos0 with small random offsets and\n"
    "velocities, controls near the middle of their range. Prints a table of relative errors\n"
    "|adj - fd| / max(1, |fd|) and the dot-product residual; exits with status 1 above\n"
    "tolerance (double: 1e-6 and 1e-10; --float: 1e-2 and 1e-3).\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Minimal option parser: positional arguments and --key [value] pairs.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool has(const std::string& k) const { return options.count(k) > 0; }
  std::string get(const std::string& k) const {
    auto it = options.find(k);
    if (it == options.end() || it->second.empty()) throw UsageError("missing required option --" + k);
    return it->second;
  }
};

Args parse_args(int argc, char** argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued) {
  Args a;
  for (int i = 2; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) == 0) {
      const std::string k = s.substr(2);
      if (std::find(flags.begin(), flags.end(), k) != flags.end()) {
        a.options[k] = "1";
      } else if (std::find(valued.begin(), valued.end(), k) != valued.end()) {
        if (i + 1 >= argc) throw UsageError("option --" + k + " needs a value");
        a.options[k] = argv[++i];
      } else {
        throw UsageError("unknown option " + s);
      }
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

int parse_positive_int(const std::string& s, const std::string& what) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0' || v < 0 || v > 1000000000)
    throw UsageError(what + " must be a non-negative integer, got '" + s + "'");
  return static_cast<int>(v);
}

const std::string& model_path(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("expected exactly one MODEL.xml argument");
  return a.positional[0];
}

std::shared_ptr<const Model> load_with_notes(const std::string& path) {
  LoadNotes notes;
  auto m = load_mjcf(path, &notes);
  for (const auto& n : notes.notes) std::fprintf(stderr, "%s\n", n.c_str());
  return m;
}

// State rows stacked environment-major, as Simulator::set_state / set_ctrl take them.
struct Batch {
  std::vector<double> qpos, qvel, ctrl;
};
Batch stack(const std::vector<StateRow>& states) {
  Batch b;
  for (const auto& s : states) {
    b.qpos.insert(b.qpos.end(), s.qpos.begin(), s.qpos.end());
    b.qvel.insert(b.qvel.end(), s.qvel.begin(), s.qvel.end());
    b.ctrl.insert(b.ctrl.end(), s.ctrl.begin(), s.ctrl.end());
  }
  return b;
}

void print_array(const char* key, const std::vector<double>& v, bool last) {
  std::printf("\"%s\": [", key);
  for (std::size_t i = 0; i < v.size(); ++i) std::printf(i ? ", %.17g" : "%.17g", v[i]);
  std::printf(last ? "]" : "], ");
}

int cmd_info(const Args& a) {
  const auto m = load_with_notes(model_path(a));
  std::printf("model      %s\n", m->name.c_str());
  std::printf("file       %s\n", m->file.c_str());
  std::printf("bodies     %d (including world)\n", m->nbody);
  std::printf("joints     %d\n", m->njnt);
  std::printf("nq, nv     %d, %d\n", m->nq, m->nv);
  std::printf("actuators  %d\n", m->nu);
  std::printf("geoms      %d\n", m->ngeom);
  std::printf("tendons    %d\n", m->ntendon);
  std::printf("total mass %.6g\n", m->total_mass());
  std::printf("timestep   %.6g\n", m->opt.timestep);
  std::printf("gravity    %g %g %g\n", m->opt.gravity[0], m->opt.gravity[1], m->opt.gravity[2]);
  std::printf("keyframes  %zu", m->keyframes.size());
  for (const auto& k : m->keyframes) std::printf(" %s", k.name.empty() ? "(unnamed)" : k.name.c_str());
  std::printf("\n");
  static const char* kTypes[] = {"free", "ball", "slide", "hinge"};
  for (int j = 0; j < m->njnt; ++j)
    std::printf("  joint %-28s %-5s body %-24s qposadr %d dofadr %d\n", m->jnt_name[j].c_str(),
                kTypes[static_cast<int>(m->jnt_type[j])], m->body_name[m->jnt_bodyid[j]].c_str(),
                m->jnt_qposadr[j], m->jnt_dofadr[j]);
  return 0;
}

int cmd_dynamics(const Args& a) {
  const std::string& path = model_path(a);
  const std::string states_path = a.get("states");
  const auto m = load_with_notes(path);
  const auto states = read_states_csv(states_path, *m);
  for (const auto& s : states) {
    const auto r = smooth_dynamics(*m, s.qpos.data(), s.qvel.data(), s.ctrl.data());
    std::printf("{");
    print_array("M", r.M, false);
    print_array("qfrc_bias", r.qfrc_bias, false);
    print_array("qfrc_passive", r.qfrc_passive, false);
    print_array("qfrc_actuator", r.qfrc_actuator, false);
    print_array("qacc", r.qacc, true);
    std::printf("}\n");
  }
  return 0;
}

int cmd_rollout(const Args& a) {
  // usage errors before any file is read
  const std::string& path = model_path(a);
  const std::string states_path = a.get("states");
  const int steps = parse_positive_int(a.get("steps"), "--steps");
  SimulatorOptions opt;
  opt.precision = a.has("float") ? Precision::Float : Precision::Double;
  if (a.has("implicit-actuators")) opt.integrator = Integrator::ImplicitDampingEuler;
  const std::string backend = a.has("backend") ? a.get("backend") : "cpu";
  if (backend == "cpu") opt.backend = Backend::Cpu;
  else if (backend == "cuda") opt.backend = Backend::Cuda;
  else throw UsageError("--backend must be cpu or cuda, got '" + backend + "'");
  const auto m = load_with_notes(path);
  const auto states = read_states_csv(states_path, *m);
  if (states.empty()) return 0;
  opt.nenv = static_cast<int>(states.size());
  Simulator sim(m, opt);
  const Batch b = stack(states);
  std::vector<double> qpos = b.qpos, qvel = b.qvel, ctrl = b.ctrl;
  sim.set_state(qpos.data(), qvel.data());
  sim.set_ctrl(ctrl.data());
  for (int t = 0; t < steps; ++t) sim.step();
  sim.synchronize();
  sim.get_state(qpos.data(), qvel.data());
  const auto status = sim.status();
  for (int e = 0; e < opt.nenv; ++e) {
    if (status[e] != 0)
      std::fprintf(stderr, "warning: state %d became non-finite; its last finite state is printed\n", e + 1);
    bool first = true;
    for (int i = 0; i < m->nq; ++i, first = false) std::printf(first ? "%.17g" : ",%.17g", qpos[e * m->nq + i]);
    for (int i = 0; i < m->nv; ++i, first = false) std::printf(first ? "%.17g" : ",%.17g", qvel[e * m->nv + i]);
    std::printf("\n");
  }
  return sim.num_failed() > 0 ? 3 : 0;
}

int cmd_grad(const Args& a) {
  const std::string& path = model_path(a);
  const std::string states_path = a.get("states"), weights_path = a.get("weights");
  const int steps = parse_positive_int(a.get("steps"), "--steps");
  if (steps < 1) throw UsageError("--steps must be at least 1");
  const auto m = load_with_notes(path);
  const auto states = read_states_csv(states_path, *m);
  const auto weights = read_csv_rows(weights_path, m->nq + m->nv);
  if (weights.size() != states.size())
    throw std::runtime_error(weights_path + ": " + std::to_string(weights.size()) + " weight rows for " +
                             std::to_string(states.size()) + " states");
  if (states.empty()) return 0;
  const int nenv = static_cast<int>(states.size());
  SimulatorOptions opt;
  opt.nenv = nenv;
  if (a.has("implicit-actuators")) opt.integrator = Integrator::ImplicitDampingEuler;
  Simulator sim(m, opt);
  const Batch b = stack(states);
  std::vector<double> qpos = b.qpos, qvel = b.qvel, ctrl = b.ctrl;
  sim.set_state(qpos.data(), qvel.data());
  sim.set_ctrl(ctrl.data());
  Rollout ro(sim, steps);
  ro.begin();
  for (int t = 0; t < steps; ++t) ro.step();
  std::vector<double> dq(static_cast<std::size_t>(steps + 1) * nenv * m->nq, 0.0);
  std::vector<double> dv(static_cast<std::size_t>(steps + 1) * nenv * m->nv, 0.0);
  for (int e = 0; e < nenv; ++e) {
    std::copy(weights[e].begin(), weights[e].begin() + m->nq,
              dq.begin() + (static_cast<std::ptrdiff_t>(steps) * nenv + e) * m->nq);
    std::copy(weights[e].begin() + m->nq, weights[e].end(),
              dv.begin() + (static_cast<std::ptrdiff_t>(steps) * nenv + e) * m->nv);
  }
  std::vector<double> gq(static_cast<std::size_t>(nenv) * m->nv), gv(gq.size());
  std::vector<double> gu(static_cast<std::size_t>(steps) * nenv * m->nu);
  ro.backward(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
  const auto status = sim.status();
  for (int e = 0; e < nenv; ++e) {
    if (status[e] != 0) std::fprintf(stderr, "warning: state %d became non-finite; its gradient is meaningless\n", e + 1);
    std::vector<double> held(m->nu, 0.0);  // the control is held: sum over the steps
    for (int t = 0; t < steps; ++t)
      for (int u = 0; u < m->nu; ++u) held[u] += gu[(static_cast<std::size_t>(t) * nenv + e) * m->nu + u];
    std::printf("{");
    print_array("dL_dqpos", std::vector<double>(gq.begin() + e * m->nv, gq.begin() + (e + 1) * m->nv), false);
    print_array("dL_dqvel", std::vector<double>(gv.begin() + e * m->nv, gv.begin() + (e + 1) * m->nv), false);
    print_array("dL_dctrl", held, true);
    std::printf("}\n");
  }
  return sim.num_failed() > 0 ? 3 : 0;
}

int cmd_gradcheck(const Args& a) {
  const std::string& path = model_path(a);
  GradcheckOptions opt;
  if (a.has("steps")) opt.steps = parse_positive_int(a.get("steps"), "--steps");
  if (a.has("substeps")) opt.substeps = parse_positive_int(a.get("substeps"), "--substeps");
  if (a.has("samples")) opt.samples = parse_positive_int(a.get("samples"), "--samples");
  if (a.has("fd-step")) {
    char* end = nullptr;
    opt.fd_step = std::strtod(a.get("fd-step").c_str(), &end);
    if (*end != '\0' || !(opt.fd_step > 0)) throw UsageError("--fd-step must be a positive number");
  }
  if (a.has("seed")) opt.seed = static_cast<std::uint64_t>(parse_positive_int(a.get("seed"), "--seed"));
  if (opt.steps < 1 || opt.substeps < 1) throw UsageError("--steps and --substeps must be at least 1");
  opt.precision = a.has("float") ? Precision::Float : Precision::Double;
  if (a.has("implicit-actuators")) opt.integrator = Integrator::ImplicitDampingEuler;
  const auto m = load_with_notes(path);
  if (a.has("states")) {
    const auto states = read_states_csv(a.get("states"), *m);
    if (states.empty()) throw std::runtime_error(a.get("states") + ": no state rows");
    opt.qpos = states[0].qpos;
    opt.qvel = states[0].qvel;
    opt.ctrl = states[0].ctrl;
  }
  const auto rep = run_gradcheck(m, opt);
  std::printf("gradcheck %s: T=%d S=%d %s, loss w.[qpos_T; qvel_T], w ~ N(0,1) seed %llu\n",
              m->file.c_str(), opt.steps, opt.substeps, opt.precision == Precision::Float ? "float" : "double",
              static_cast<unsigned long long>(opt.seed));
  std::printf("%-20s %23s %23s %9s %23s\n", "input", "adjoint", "FD (extended)", "rel err", "FD (double)");
  for (const auto& r : rep.rows)
    std::printf("%-20s %23.15e %23.15e %9.2e %23.15e\n", r.input.c_str(), r.adjoint, r.finite_difference,
                r.rel_error, r.finite_difference_double);
  std::printf("max relative error      %.2e (tolerance %.0e; against double FD: %.2e)\n", rep.max_rel_error,
              rep.tolerance, rep.max_rel_error_double_fd);
  std::printf("dot-product residual    %.2e (tolerance %.0e)\n", rep.dot_residual, rep.dot_tolerance);
  std::printf("replay bitwise          %s\n", rep.replay_bitwise ? "yes" : "NO");
  std::printf("%s\n", rep.passed ? "PASSED" : "FAILED");
  return rep.passed ? 0 : 1;
}

bool wants_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "info") {
      if (wants_help(argc, argv)) return std::fputs(kInfoHelp, stdout), 0;
      return cmd_info(parse_args(argc, argv, {}, {}));
    }
    if (cmd == "dynamics") {
      if (wants_help(argc, argv)) return std::fputs(kDynamicsHelp, stdout), 0;
      return cmd_dynamics(parse_args(argc, argv, {}, {"states"}));
    }
    if (cmd == "rollout") {
      if (wants_help(argc, argv)) return std::fputs(kRolloutHelp, stdout), 0;
      return cmd_rollout(parse_args(argc, argv, {"float", "implicit-actuators"}, {"states", "steps", "backend"}));
    }
    if (cmd == "grad") {
      if (wants_help(argc, argv)) return std::fputs(kGradHelp, stdout), 0;
      return cmd_grad(parse_args(argc, argv, {"implicit-actuators"}, {"states", "steps", "weights"}));
    }
    if (cmd == "gradcheck") {
      if (wants_help(argc, argv)) return std::fputs(kGradcheckHelp, stdout), 0;
      return cmd_gradcheck(parse_args(argc, argv, {"float", "implicit-actuators"},
                                      {"steps", "substeps", "states", "samples", "seed", "fd-step"}));
    }
    if (cmd == "demo") return stiffgrad::run_demo(argc, argv);
    std::fprintf(stderr, "stiffgrad: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "stiffgrad %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stiffgrad %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
