// compiler fusestatic="true" (issue 39): stiffgrad keeps static bodies (no joints) as bodies
// instead of merging them into their parents; such a body shares its parent's weld body, so
// contacts are filtered and inertia composed as if fused. One thing fusion changes is the
// contacts' regularization: a contact's diagApprox takes its bodies' invweight0, measured at the
// body's centre of mass, and a fused body's centre is its group's. So where MuJoCo 2.2.2 fuses
// (a model without actuators, tendons, equality constraints, pairs, excludes, sensors, cameras
// or lights) stiffgrad weighs each body as its fused group (Model::body_fusedid). Checked: qacc
// of mj_forward against ours at states along MuJoCo's simulation of a model with static links
// carrying geoms and mass, in contact with the floor (without the group weights: 0.28 relative).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "mujoco_bridge.hpp"
#include "stiffgrad/dynamics.hpp"
#include "stiffgrad/mjcf.hpp"

namespace {

const char* kXml = R"(<mujoco><compiler fusestatic="true"/><option timestep="0.002"/>
<worldbody><geom type="plane" size="2 2 0.1"/>
 <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.05 0.04"/>
  <body pos="0.12 0 0" euler="0 30 0"><geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.02" density="3000"/>
   <body pos="0.1 0 0"><geom type="sphere" size="0.04"/></body></body>
  <body pos="-0.1 0.05 0"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.15" size="0.02"/>
   <body pos="0 0 -0.15" euler="20 0 0"><geom type="box" size="0.03 0.03 0.01"/></body></body></body>
</worldbody></mujoco>)";

TEST(FusestaticVsMujoco, KeptStaticBodiesGiveMujocosFusedDynamics) {
  ASSERT_EQ(sgtest::mujoco_version_problem(), "");
  stiffgrad::LoadNotes notes;
  sgtest::BothModels both = sgtest::load_both_converged(kXml, &notes);
  ASSERT_TRUE(both.mj) << both.error;
  mjModel* mj_ptr = both.mj.get();
  const stiffgrad::Model& ours = *both.ours;
  // MuJoCo fused the three static bodies; we keep them, and say so
  EXPECT_EQ(mj_ptr->nbody, 3);
  EXPECT_EQ(ours.nbody, 6);
  ASSERT_EQ(ours.nv, mj_ptr->nv);
  bool noted = false;
  for (const auto& n : notes.notes) noted = noted || n.find("fusestatic") != std::string::npos;
  EXPECT_TRUE(noted);
  const sgtest::MjModelPtr& mj = both.mj;
  sgtest::MjDataPtr d(mj_makeData(mj.get()));
  double worst = 0;
  int states = 0, contacts = 0;
  for (int s = 1; s <= 400; ++s) {
    mj_step(mj.get(), d.get());
    if (s % 20) continue;
    mj_forward(mj.get(), d.get());
    const auto cd = stiffgrad::constrained_dynamics(ours, d->qpos, d->qvel, d->ctrl);
    ASSERT_EQ(cd.status, 0);
    double scale = 1;
    for (int i = 0; i < mj->nv; ++i) scale = std::max(scale, std::abs(d->qacc[i]));
    for (int i = 0; i < mj->nv; ++i)
      worst = std::max(worst, std::abs(cd.qacc[static_cast<std::size_t>(i)] - d->qacc[i]) / scale);
    ++states;
    contacts += d->ncon;
  }
  std::printf(
      "[fusestatic] %d states, %d contacts: qacc (ours, kept bodies) vs MuJoCo (fused) %.2e "
      "relative\n",
      states, contacts, worst);
  EXPECT_GT(contacts, 0);
  // measured 2.5e-14 (2026-12-08): the same rigid bodies' inertia summed in another order
  EXPECT_LE(worst, 1e-12);
}

}  // namespace
