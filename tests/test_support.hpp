// Shared helpers for the test suites: where the model files are.
#pragma once
#include <string>
#include <vector>

namespace sgtest {

// The repository's data/ (configured at build time as SG_DATA; overridable with the SG_DATA
// environment variable).
std::string data_dir();
// MuJoCo's sample models (/usr/share/mujoco/model).
std::string mujoco_models();
// Path of MuJoCo's humanoid.xml (the project's default model).
std::string humanoid_xml();
// Every MJCF model in data/models that is a top-level model (not an included file),
// plus the G1 files: relative paths under data_dir().
std::vector<std::string> data_models();
// humanoid.xml plus every shared model MuJoCo 2.2.2 loads (all but unitree_g1/scene_mjx.xml,
// which uses newer MJCF): absolute paths, for parameterized MuJoCo comparisons.
std::vector<std::string> mujoco_loadable_models();
// A gtest-safe name for such a path (relative to data/models, or mujoco_<file>).
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

// Dof structure for a hand-built ModelView whose matrices are dense (a general SPD M, rows
// written column by column): every dof is the child of the previous one, so each dof's chain
// is all dofs before it, M's "tree pattern" is the whole lower triangle and the solver's
// tree-sparse code paths are exact for any matrix. Keep the object alive with the view.
struct SerialDofChain {
  std::vector<int> parent, adr, num, list;
  explicit SerialDofChain(int nv) {
    for (int i = 0; i < nv; ++i) {
      parent.push_back(i - 1);
      adr.push_back(static_cast<int>(list.size()));
      num.push_back(i + 1);
      for (int j = i; j >= 0; --j) list.push_back(j);
    }
    list.push_back(0);  // never hand out the data() of an empty vector
    parent.push_back(-1); adr.push_back(0); num.push_back(0);
  }
  template <class View>
  void bind(View& m) const {
    m.dof_parentid = parent.data();
    m.dof_chainadr = adr.data();
    m.dof_chainnum = num.data();
    m.dof_chain = list.data();
  }
};

}  // namespace sgtest
