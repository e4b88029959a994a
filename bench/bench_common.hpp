// Helpers shared by the benchmark binaries (bench_forward, bench_backward): machine info,
// model paths, the seeded random workload, and MuJoCo 2.2.2 model loading for side-by-side
// comparisons. Header-only; each bench_*.cpp is its own binary.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
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
