// Helpers shared by the benchmark binaries (every bench_*.cpp): the command line, machine info,
// model paths, the seeded random workload, and MuJoCo 2.2.2 model loading for side-by-side
// comparisons. Header-only; each bench_*.cpp is its own binary.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/options/options.hpp"
#include "bench/experiment_io.hpp"
#include "stiffgrad/stiffgrad.hpp"

#ifdef SG_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

namespace stiffgrad::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Held controls are drawn within this fraction of each half-range around the range's centre:
// MuJoCo's humanoid has torque motors and no joint limits here, so full-range torques held
// for a second spin its limbs up until both engines diverge (checked: identically).
constexpr double kCtrlScale = 0.2;

// ---------------------------------------------------------------- command line

// Every bench reads its options with the project's one parser (apps/options/options.hpp), so that
// a mistyped option, a missing value or a bad number is a UsageError naming the option
// (read_command_line prints it with the usage and main exits 2) instead of being skipped or read
// as atoi's 0.

// argv[1..]: `flags` take no value, `valued` take one; --help (-h) is always accepted. No bench
// takes a positional argument, so a stray word is an error rather than silently ignored.
inline options::Args parse_command_line(int argc, char** argv, std::vector<std::string> flags,
                                        const std::vector<std::string>& valued) {
  flags.push_back("help");
  options::Args a = options::parse_args(argc, argv, 1, flags, valued);
  if (!a.positional.empty()) {
    const std::string& s = a.positional.front();
    throw options::UsageError(s.rfind('-', 0) == 0 ? "unknown option " + s
                                                   : "unexpected argument '" + s + "'");
  }
  return a;
}

// The whole command-line step of a bench's main, so that every bench answers --help and a
// malformed command line alike: parses argv (as parse_command_line), prints `usage` on stdout and
// returns 0 after --help, otherwise calls `read` to take the options it wants. A UsageError, from
// the parser or from `read`, is printed on stderr as "NAME: message" followed by `usage`, and
// returns 2. std::nullopt: the command line is good and main goes on.
//   const auto read_options = [&](const options::Args& a) { quick = a.has("quick"); ... };
//   if (const auto status = bench::read_command_line(argc, argv, "bench_x", kUsage, {"quick"},
//                                                    {...}, read_options))
//     return *status;
inline std::optional<int> read_command_line(int argc, char** argv, const char* name,
                                            const char* usage, std::vector<std::string> flags,
                                            const std::vector<std::string>& valued,
                                            const std::function<void(const options::Args&)>& read) {
  try {
    const options::Args a = parse_command_line(argc, argv, std::move(flags), valued);
    if (a.has("help")) {
      std::fputs(usage, stdout);
      return 0;
    }
    read(a);
  } catch (const options::UsageError& e) {
    std::fprintf(stderr, "%s: %s\n%s", name, e.what(), usage);
    return 2;
  }
  return std::nullopt;
}

// The folder an experiment writes to: --out DIR, or default_out_dir(experiment).
inline std::string out_option(const options::Args& a, const std::string& experiment) {
  return a.get_or("out", default_out_dir(experiment));
}

// The command line of an experiment whose only option is --out (bench_<experiment> [--out DIR]):
// *out_dir is set as out_option does; returns as read_command_line. Such experiments differ only
// in their name, so the name and the usage are built from `experiment` here, once.
inline std::optional<int> read_out_only_command_line(int argc, char** argv,
                                                     const std::string& experiment,
                                                     std::string* out_dir) {
  const std::string name = "bench_" + experiment;
  const std::string usage =
      "usage: " + name + " [--out DIR]\nDIR defaults to " + default_out_dir(experiment) + "\n";
  return read_command_line(argc, argv, name.c_str(), usage.c_str(), {}, {"out"},
                           [&](const options::Args& a) { *out_dir = out_option(a, experiment); });
}

// --backend cpu|cuda (cpu when it is not given). Whether CUDA is there is checked by the caller,
// after the command line: it is a property of the build and machine, not a usage error.
inline Backend backend_option(const options::Args& a) {
  const std::string backend = a.get_or("backend", "cpu");
  if (backend != "cpu" && backend != "cuda")
    throw options::UsageError("--backend must be cpu or cuda, got '" + backend + "'");
  return backend == "cpu" ? Backend::Cpu : Backend::Cuda;
}

// --key as an integer in [lo, hi], or `fallback` when it is not given.
inline int int_option(const options::Args& a, const std::string& key, int fallback, int lo,
                      int hi) {
  if (!a.has(key)) return fallback;
  return static_cast<int>(options::parse_int_in(a.options.at(key), "--" + key, lo, hi));
}

// --key as a finite number in [lo, hi], or `fallback` when it is not given.
inline double double_option(const options::Args& a, const std::string& key, double fallback,
                            double lo, double hi) {
  if (!a.has(key)) return fallback;
  return options::parse_double_in(a.options.at(key), "--" + key, lo, hi);
}

// --key as a comma-separated list of integers in [lo, hi] (--nenv 64,1024), or `fallback`.
inline std::vector<int> int_list_option(const options::Args& a, const std::string& key,
                                        std::vector<int> fallback, int lo, int hi) {
  if (!a.has(key)) return fallback;
  std::vector<int> out;
  for (const std::string& s : options::parse_list(a.options.at(key), "--" + key))
    out.push_back(static_cast<int>(options::parse_int_in(s, "--" + key, lo, hi)));
  return out;
}

// --key as a comma-separated list of names, each one of `allowed` (any name when `allowed` is
// empty), or `fallback` when it is not given.
inline std::vector<std::string> name_list_option(const options::Args& a, const std::string& key,
                                                 std::vector<std::string> fallback,
                                                 const std::vector<std::string>& allowed = {}) {
  if (!a.has(key)) return fallback;
  std::vector<std::string> out = options::parse_list(a.options.at(key), "--" + key);
  for (const std::string& s : out)
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
      std::string names;
      for (const std::string& n : allowed) names += (names.empty() ? "" : ", ") + n;
      throw options::UsageError("--" + key + ": unknown name '" + s + "' (" + names + ")");
    }
  return out;
}

// ---------------------------------------------------------------- machine info

inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown";
}

// The 1-minute load average: other processes on the machine distort the all-cores rows most.
inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string first;
  f >> first;
  return first.empty() ? "unknown" : first;
}

// ---------------------------------------------------------------- models

inline std::string data_dir() {
  if (const char* env = std::getenv("SG_DATA")) return env;
  return SG_DATA;
}

// libmujoco-samples' model folder; SG_MUJOCO_MODELS overrides the configured one (a machine
// that runs a build made elsewhere, such as the device machine, has the models elsewhere).
inline std::string mujoco_models_dir() {
  if (const char* env = std::getenv("SG_MUJOCO_MODELS")) return env;
  return SG_MUJOCO_MODELS;
}

// "humanoid" (MuJoCo's own), "g1" (the one-file variant MuJoCo 2.2.2 compiles) or a path.
inline std::string model_path(const std::string& key) {
  if (key == "humanoid") return mujoco_models_dir() + "/humanoid/humanoid.xml";
  if (key == "g1") return data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  if (key.size() > 4 && key.compare(key.size() - 4, 4, ".xml") == 0) return key;
  throw std::invalid_argument("unknown model '" + key + "' (humanoid, g1 or a path to an .xml)");
}

// ---------------------------------------------------------------- workload

// Seeded random initial states near qpos0 (hinge/slide coordinates and velocities perturbed,
// quaternions rotated slightly) and random controls inside ctrlrange (kCtrlScale), held.
struct Workload {
  int nenv = 0;
  std::vector<double> qpos, qvel, ctrl;  // environment-major: nenv x nq, nenv x nv, nenv x nu
};

inline Workload make_workload(const Model& m, int nenv, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Workload w;
  w.nenv = nenv;
  w.ctrl.resize(static_cast<std::size_t>(nenv) * m.nu + 1);
  stiffgrad::sample_states_near_qpos0(m, nenv, rng, 0.1, 0.1, &w.qpos, &w.qvel);
  for (int e = 0; e < nenv; ++e) {
    for (int a = 0; a < m.nu; ++a) {
      double lo = -1.0, hi = 1.0;
      if (m.actuator_ctrllimited[a]) {
        lo = m.actuator_ctrlrange[2 * a];
        hi = m.actuator_ctrlrange[2 * a + 1];
      }
      w.ctrl[static_cast<std::size_t>(e) * m.nu + a] =
          0.5 * (lo + hi) + kCtrlScale * 0.5 * (hi - lo) * u(rng);
    }
  }
  return w;
}

// ---------------------------------------------------------------- MuJoCo

#ifdef SG_HAVE_MUJOCO
struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;

struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

// The MuJoCo model configured for the comparison: constraint solver off (no contacts, limits
// or friction loss: stiffgrad's smooth step), semi-implicit Euler with implicit damping, the
// timestep stiffgrad uses. njmax and nconmax are set to 0 only to shrink each mjData: with the
// constraint solver off mj_step never touches those arrays.
inline MjModelPtr load_mujoco(const std::string& path, const Model& sg) {
  char error[1024] = "";
  MjModelPtr m(mj_loadXML(path.c_str(), nullptr, error, sizeof error));
  if (!m) throw std::runtime_error("MuJoCo could not load " + path + ": " + error);
  m->opt.disableflags |= mjDSBL_CONSTRAINT;
  m->opt.integrator = mjINT_EULER;
  m->opt.timestep = sg.opt.timestep;
  m->njmax = 0;
  m->nconmax = 0;
  if (m->nq != sg.nq || m->nv != sg.nv || m->nu != sg.nu)
    throw std::runtime_error("MuJoCo and stiffgrad disagree on the sizes of " + path);
  return m;
}
#endif

}  // namespace stiffgrad::bench
