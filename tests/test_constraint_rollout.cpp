// Constrained rollouts against libmujoco 2.2.2's mj_step (issue 7, "Rollouts"): humanoid.xml
// falling from qpos0 onto its floor and the Unitree G1 at `home` under its position servos,
// 300 steps each, stepped by our Simulator (double, one substep per step, constraints on) and
// by mj_step side by side.
//
// Both solve to convergence (tolerance 1e-14, iterations 100 on both sides, MuJoCo's warm start
// off): our solver starts cold on every step, so MuJoCo warm-started would differ at its
// default tolerance, not ours. The bound at step t is max(1e-6, 100 x the divergence of a
// MuJoCo twin started from the same state with qvel perturbed by 1e-10 relative, its largest
// over steps <= t): contact onsets amplify any difference, MuJoCo's own included, and the twin
// measures how much. Metric: max|a - b| / max(1, max|b|) over qpos and over qvel.
// The same with MuJoCo's RK4 (mjINT_RK4) against Integrator::RK4 (issue 8): four constrained
// forward evaluations per step on both sides.
// And with both engines as the model ships (warm start on, the model's tolerance and iterations;
// G1: 5): the warm start (kernels/constraint/solver.hpp) must start each solve where MuJoCo's does, so
// the Newton iterations per step agree (mean over the run within 0.1; they are not bitwise
// MuJoCo's, whose Cholesky updates round differently) and the trajectories stay within the same
// twin-derived bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mujoco_bridge.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/simulator.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

constexpr int kSteps = 300;
constexpr double kTolerance = 1e-14;
constexpr int kIterations = 100;
constexpr double kTwinNoise = 1e-10;

struct Case {
  const char* name;
  std::string path;
  const char* key;  // keyframe ("" : qpos0, zero control)
};

void compare(const Case& c, Integrator integrator = Integrator::SemiImplicitEuler, bool as_shipped = false) {
  const bool rk4 = integrator == Integrator::RK4;
  std::string error;
  sgtest::MjModelPtr mm = sgtest::mujoco_load(c.path, &error);
  ASSERT_TRUE(mm) << error;
  if (!as_shipped) {
    mm->opt.tolerance = kTolerance;
    mm->opt.iterations = kIterations;
    mm->opt.disableflags |= mjDSBL_WARMSTART;
  }
  ASSERT_EQ(mm->opt.disableflags & mjDSBL_WARMSTART, as_shipped ? 0 : mjDSBL_WARMSTART);
  if (rk4) mm->opt.integrator = mjINT_RK4;
  sgtest::MjDataPtr md(mj_makeData(mm.get())), twin(mj_makeData(mm.get()));
  const int key = *c.key ? mj_name2id(mm.get(), mjOBJ_KEY, c.key) : -1;
  for (mjData* d : {md.get(), twin.get()}) {
    if (key >= 0) mj_resetDataKeyframe(mm.get(), d, key);
    else mj_resetData(mm.get(), d);
  }
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  for (int i = 0; i < mm->nv; ++i) twin->qvel[i] += kTwinNoise * (1.0 + std::abs(twin->qvel[i])) * n01(rng);

  auto loaded = load_mjcf(c.path);
  auto model = std::make_shared<Model>(*loaded);
  if (!as_shipped) {
    model->opt.tolerance = kTolerance;
    model->opt.iterations = kIterations;
    model->opt.warmstart_enabled = false;
  }
  const int nq = model->nq, nv = model->nv, nu = model->nu;
  ASSERT_EQ(nq, mm->nq);
  ASSERT_EQ(nv, mm->nv);
  ASSERT_EQ(nu, mm->nu);
  SimulatorOptions opt;
  opt.substeps = 1;
  opt.constraints = true;
  opt.integrator = integrator;
  Simulator sim(model, opt);
  sim.set_state(md->qpos, md->qvel);
  sim.set_ctrl(md->ctrl);

  std::vector<double> q(nq), v(nv);
  double twin_div = 0, worst_ratio = 0, worst_q = 0, worst_v = 0;
  int worst_step = 0, contact_steps = 0, max_contacts = 0;
  double iterations_ours = 0, iterations_mj = 0;
  for (int t = 1; t <= kSteps; ++t) {
    mj_step(mm.get(), md.get());
    mj_step(mm.get(), twin.get());
    sim.step();
    sim.get_state(q.data(), v.data());
    iterations_ours += sim.contact_stats()[6];
    iterations_mj += md->solver_iter;
    ASSERT_EQ(md->warning[mjWARN_BADQACC].number, 0) << c.name << ": MuJoCo went unstable at step " << t;
    twin_div = std::max({twin_div, sgtest::rel_diff(twin->qpos, md->qpos, nq), sgtest::rel_diff(twin->qvel, md->qvel, nv)});
    const double bound = std::max(1e-6, 100 * twin_div);
    const double eq = sgtest::rel_diff(q.data(), md->qpos, nq), ev = sgtest::rel_diff(v.data(), md->qvel, nv);
    EXPECT_LE(eq, bound) << c.name << " qpos at step " << t;
    EXPECT_LE(ev, bound) << c.name << " qvel at step " << t;
    if (std::max(eq, ev) / bound > worst_ratio) {
      worst_ratio = std::max(eq, ev) / bound;
      worst_step = t;
    }
    worst_q = std::max(worst_q, eq);
    worst_v = std::max(worst_v, ev);
    contact_steps += md->ncon > 0;
    max_contacts = std::max(max_contacts, md->ncon);
  }
  EXPECT_EQ(sim.num_failed(), 0);
  EXPECT_GT(contact_steps, kSteps / 3) << c.name << ": the rollout was meant to be contact-rich";
  iterations_ours /= kSteps;
  iterations_mj /= kSteps;
  if (as_shipped && !rk4) EXPECT_NEAR(iterations_ours, iterations_mj, 0.1) << c.name << ": Newton iterations per step";
  std::printf("[constraint rollout] %-9s %-5s %s %d steps (%d with contact, up to %d contacts): qpos %.1e qvel %.1e; "
              "MuJoCo twin (1e-10) %.1e; worst error / bound %.2f (step %d); Newton iterations per step %.2f "
              "(MuJoCo %.2f%s)\n",
              c.name, rk4 ? "rk4" : "euler", as_shipped ? "as shipped (warm start)" : "converged, cold", kSteps,
              contact_steps, max_contacts, worst_q, worst_v, twin_div, worst_ratio, worst_step, iterations_ours,
              iterations_mj, rk4 ? ", its last stage's solve only" : "");
}

TEST(ConstraintRollout, HumanoidFallingOntoTheFloorMatchesMjStep) {
  compare({"humanoid", sgtest::humanoid_xml(), ""});
}

TEST(ConstraintRollout, G1AtHomeUnderServosMatchesMjStep) {
  const std::string path = sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  if (!sgtest::file_exists(path)) GTEST_FAIL() << "G1 model missing: " << path;
  compare({"g1", path, "home"});
}

TEST(ConstraintRollout, HumanoidRK4MatchesMjStepRK4) {
  compare({"humanoid", sgtest::humanoid_xml(), ""}, Integrator::RK4);
}

TEST(ConstraintRollout, G1RK4MatchesMjStepRK4) {
  const std::string path = sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  if (!sgtest::file_exists(path)) GTEST_FAIL() << "G1 model missing: " << path;
  compare({"g1", path, "home"}, Integrator::RK4);
}

TEST(ConstraintRollout, HumanoidWarmStartedAsShippedMatchesMjStep) {
  compare({"humanoid", sgtest::humanoid_xml(), ""}, Integrator::SemiImplicitEuler, /*as_shipped=*/true);
}

TEST(ConstraintRollout, G1WarmStartedAsShippedMatchesMjStep) {
  const std::string path = sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  if (!sgtest::file_exists(path)) GTEST_FAIL() << "G1 model missing: " << path;
  compare({"g1", path, "home"}, Integrator::SemiImplicitEuler, /*as_shipped=*/true);
}

}  // namespace
