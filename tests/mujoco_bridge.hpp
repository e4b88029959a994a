// Test-only bridge to MuJoCo 2.2.2: builds a stiffgrad::Model straight from a compiled
// mjModel (so kernel parity can be checked independently of our MJCF compiler) and draws
// random states the way the parity tests need them.
//
// Always compiled: tests/CMakeLists.txt refuses to configure the tests without MuJoCo 2.2.2.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stiffgrad/mjcf.hpp"
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

// The MuJoCo version every parity bound was measured against (mj_version() of 2.2.2).
inline constexpr int kMujocoVersion = 222;

// Empty when the loaded MuJoCo library is 2.2.2, else a sentence saying which one it is.
std::string mujoco_version_problem();

// Loads with mj_loadXML; returns null (and fills `error`) on failure, and also when the loaded
// MuJoCo library is not 2.2.2, so that no parity test can compare against another version.
MjModelPtr mujoco_load(const std::string& path, std::string* error);

// The same MJCF text loaded by MuJoCo and by stiffgrad (through one temporary file, so that both
// see the same path), with both solvers converged (warmstart off, tolerance 1e-14, 200
// iterations): what a parity test of whole dynamics compares.
struct BothModels {
  MjModelPtr mj;
  std::shared_ptr<stiffgrad::Model> ours;
  std::string error;  // MuJoCo's, when mj is null
};
BothModels load_both_converged(const std::string& xml, stiffgrad::LoadNotes* notes = nullptr);

// Disable everything outside the smooth dynamics (contacts, limits, friction loss, equality).
void mujoco_disable_constraints(mjModel* m);

// stiffgrad::Model from an mjModel: the fields the smooth dynamics read, plus options, geoms,
// pairs, excludes and the constraint constants (invweight0, meaninertia, solref/solimp,
// margins) copied from mjModel, and the candidate pairs compiled by compile_collision_pairs.
stiffgrad::Model model_from_mujoco(const mjModel* m);

// A random state: hinge/slide joints uniform in their range when limited (else in [-1, 1]
// around qpos0), ball/free quaternions uniform on S^3, free positions near qpos0,
// velocities N(0, vel_scale^2), controls uniform in ctrlrange (else [-1, 1]).
struct RandomState {
  std::vector<double> qpos, qvel, ctrl;
};
RandomState random_state(const stiffgrad::Model& m, std::mt19937_64& rng, double vel_scale);

// Writes the state (qpos, qvel, ctrl) into d after mj_resetData.
void mujoco_set_state(const mjModel* m, mjData* d, const RandomState& s);

// Scale-relative difference max|a - b| / max(1, max|b|).
double rel_diff(const double* a, const double* b, int n);

}  // namespace sgtest
