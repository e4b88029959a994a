// Test-only bridge to MuJoCo 2.2.2: builds a stiffgrad::Model straight from a compiled
// mjModel (so kernel parity can be checked independently of our MJCF compiler) and draws
// random states the way the parity tests need them.
#pragma once
#ifdef SG_HAVE_MUJOCO

#include <mujoco/mujoco.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stiffgrad/model.hpp"

namespace sgtest {

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

// Loads with mj_loadXML; returns null (and fills `error`) on failure.
MjModelPtr mujoco_load(const std::string& path, std::string* error);

// Disable everything outside the smooth dynamics (contacts, limits, friction loss, equality).
void mujoco_disable_constraints(mjModel* m);

// stiffgrad::Model from an mjModel (only the fields the smooth dynamics read).
stiffgrad::Model model_from_mujoco(const mjModel* m);

// A random state: hinge/slide joints uniform in their range when limited (else in [-1, 1]
// around qpos0), ball/free quaternions uniform on S^3, free positions near qpos0,
// velocities N(0, vel_scale^2), controls uniform in ctrlrange (else [-1, 1]).
struct RandomState {
  std::vector<double> qpos, qvel, ctrl;
};
RandomState random_state(const stiffgrad::Model& m, std::mt19937_64& rng, double vel_scale);

// Scale-relative difference max|a - b| / max(1, max|b|).
double rel_diff(const double* a, const double* b, int n);

}  // namespace sgtest

#endif
