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

// Equality constraints of every kind stiffgrad implements (issue 39), with contacts: a closed
// four-bar loop (a connect between two chains), a free box hung from the world by a connect (two
// trees: the residual crosses tree origins), a slide-hinge polynomial coupling and a coupling of
// two fixed tendons; a motor drives the loop. The residuals start non-zero (polycoef's c0).
inline constexpr const char* kEqualityXml = R"(<mujoco model="equality"><option timestep="0.002"/>
<default><geom friction="0.8 0.02 0.001"/><equality solref="0.03 1"/></default>
<worldbody><geom type="plane" size="2 2 0.1"/>
 <body name="a1" pos="0 0 0.6"><joint name="ja1" type="hinge" axis="0 1 0" damping="0.02"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
  <body name="a2" pos="0.3 0 0"><joint name="ja2" type="hinge" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/></body></body>
 <body name="b1" pos="0.5 0 0.6"><joint name="jb1" type="hinge" axis="0 1 0"/>
  <geom type="capsule" fromto="0 0 0 -0.2 0 -0.3" size="0.03"/></body>
 <body name="box" pos="0.6 0.4 0.5" euler="10 20 0"><freejoint/><geom type="box" size="0.05 0.04 0.06"/></body>
 <body name="c1" pos="-0.5 0 0.3"><joint name="jc1" type="slide" axis="0 0 1" damping="0.1"/>
  <geom type="sphere" size="0.05"/>
  <body name="c2"><joint name="jc2" type="hinge" axis="1 0 0"/><geom type="capsule" fromto="0 0 0 0 0.2 0" size="0.02"/></body></body>
 <body name="d1" pos="-0.5 0.5 0.3"><joint name="jd1" type="hinge" axis="0 0 1"/>
  <geom type="box" size="0.1 0.02 0.02" pos="0.1 0 0"/></body>
</worldbody>
<tendon><fixed name="t1"><joint joint="ja1" coef="1"/><joint joint="ja2" coef="0.5"/></fixed>
 <fixed name="t2"><joint joint="jd1" coef="-1"/></fixed></tendon>
<equality><connect body1="a2" body2="b1" anchor="0 0 -0.3"/>
 <connect name="hang" body1="box" anchor="0.05 0 0.06" solimp="0.9 0.95 0.01"/>
 <joint joint1="jc1" joint2="jc2" polycoef="0.02 0.3 0.2 -0.1 0.05"/>
 <tendon tendon1="t2" tendon2="t1" polycoef="0.05 0.5 0.1 0 0"/></equality>
<actuator><motor joint="ja1" gear="2"/></actuator>
<keyframe><key name="start" ctrl="0.3"/></keyframe>
</mujoco>)";

// Mesh geoms given as inline vertices (MuJoCo takes their faces from the convex hull): two rocks
// and a cube dropped on a floor (plane-mesh contacts, exact against MuJoCo; the MPR pairs with
// meshes are checked in tests/test_mesh_collision_vs_mujoco.cpp).
inline constexpr const char* kMeshPileXml = R"(<mujoco model="mesh pile"><option timestep="0.002"/>
<asset><mesh name="rock" vertex="0.12 0.01 0.02  -0.11 0.02 -0.01  0.01 0.09 0.01  0.02 -0.1 0.02  0.01 0.02 0.08
  -0.01 0.01 -0.09  0.07 0.06 0.05  -0.06 -0.07 -0.04  0.06 -0.05 -0.06  -0.05 0.06 0.06  0.02 0.01 0.01"/>
 <mesh name="cube" vertex="-0.06 -0.06 -0.06  0.06 -0.06 -0.06  0.06 0.06 -0.06  -0.06 0.06 -0.06
  -0.06 -0.06 0.06  0.06 -0.06 0.06  0.06 0.06 0.06  -0.06 0.06 0.06"/></asset>
<default><geom friction="0.8 0.02 0.001"/></default>
<worldbody><geom type="plane" size="2 2 0.1"/>
 <body pos="0 0 0.15" euler="20 30 10"><freejoint/><geom type="mesh" mesh="rock"/></body>
 <body pos="0.4 0 0.12" euler="5 -7 40"><freejoint/><geom type="mesh" mesh="cube"/></body>
 <body pos="-0.4 0.02 0.12" euler="-30 10 0"><freejoint/><geom type="mesh" mesh="rock"/></body>
</worldbody></mujoco>)";

// Gravity compensation (MuJoCo >= 3's body gravcomp): a three-link arm whose links cancel all,
// half and none of their weight, a free box cancelling 30% of its own, and a floor to land on.
inline constexpr const char* kGravcompXml = R"(<mujoco model="gravcomp"><option timestep="0.002"/>
<worldbody><geom type="plane" size="2 2 0.1"/>
 <body pos="0 0 0.6" gravcomp="1"><joint type="hinge" axis="0 1 0" damping="0.01"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0.05" size="0.03"/>
  <body pos="0.3 0 0.05" gravcomp="0.5"><joint type="hinge" axis="1 0 1"/>
   <geom type="capsule" fromto="0 0 0 0.25 0.1 0" size="0.03"/>
   <body pos="0.25 0.1 0"><joint type="slide" axis="0 0 1"/><geom type="sphere" size="0.04"/></body></body></body>
 <body pos="-0.3 0.2 0.3" euler="20 10 0" gravcomp="0.3"><freejoint/><geom type="box" size="0.05 0.06 0.04"/></body>
</worldbody></mujoco>)";

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
