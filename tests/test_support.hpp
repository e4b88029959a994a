// Shared helpers for the test suites: where the model files are.
#pragma once
#include <string>
#include <vector>

namespace sgtest {

// ../shared/data (configured at build time; overridable with SG_SHARED_DATA env var).
std::string shared_data();
// MuJoCo's sample models (/usr/share/mujoco/model).
std::string mujoco_models();
// Path of MuJoCo's humanoid.xml (the project's default model).
std::string humanoid_xml();
// Every MJCF model in shared/data/models that is a top-level model (not an included file),
// plus the G1 files: relative paths under shared_data().
std::vector<std::string> shared_models();
// humanoid.xml plus every shared model MuJoCo 2.2.2 loads (all but unitree_g1/scene_mjx.xml,
// which uses newer MJCF): absolute paths, for parameterized MuJoCo comparisons.
std::vector<std::string> mujoco_loadable_models();
// A gtest-safe name for such a path (relative to shared/data/models, or mujoco_<file>).
std::string model_test_name(const std::string& path);
bool file_exists(const std::string& path);
// tests/data (this repository's test inputs).
std::string test_data();

// The body-frame inertia tensor R diag(I) R^T (row-major 3x3) of a principal frame given as a
// unit quaternion q (w x y z) and principal moments I.
void inertia_tensor(const double q[4], const double I[3], double out[9]);

// A hinge-hinge-slide-ball chain with joint limits, friction loss on every dof and a limited
// fixed tendon with friction loss (the constraint tests' rows without contacts).
inline constexpr const char* kLimitedChainXml = R"(<mujoco><option timestep="0.002"/>
<default><joint limited="true" range="-40 50" damping="0.05" frictionloss="0.3"/></default>
<worldbody><body pos="0 0 1"><joint name="j1" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
 <body pos="0.3 0 0"><joint type="hinge" axis="0 1 0" range="-10 20"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
  <body pos="0.3 0 0"><joint type="slide" axis="1 0 0" range="-0.05 0.05"/><geom type="sphere" size="0.05"/>
   <body pos="0.1 0 0"><joint type="ball" range="0 30"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03"/></body>
  </body></body></body></worldbody>
<tendon><fixed limited="true" range="-0.2 0.3" frictionloss="0.1"><joint joint="j1" coef="1"/></fixed></tendon>
</mujoco>)";

}  // namespace sgtest
