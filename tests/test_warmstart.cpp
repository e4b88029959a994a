// The constraint solve's warm start as simulator state (kernels/constraint/solver.hpp, kernels/step/batch.hpp):
// MuJoCo's qacc_warmstart, carried from step to step by the backend, zeroed by set_state,
// exposed by Simulator::{get,set}_warmstart and recorded with every Rollout checkpoint, so that
// a step is a deterministic function of (qpos, qvel, ctrl, warm start) and replays bit for bit.
// The G1 at `home` under its servos (iterations = 5, the model's setting), double, CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

std::shared_ptr<const Model> g1() {
  const std::string path = sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  if (!sgtest::file_exists(path)) return nullptr;
  return load_mjcf(path);
}

std::shared_ptr<const Model> without_warmstart(const Model& m) {
  auto cold = std::make_shared<Model>(m);
  cold->opt.warmstart_enabled = false;
  return cold;
}

SimulatorOptions options(int nenv) {
  SimulatorOptions o;
  o.nenv = nenv;
  o.constraints = true;
  o.integrator = Integrator::ImplicitDampingEuler;
  return o;
}

TEST(WarmStart, IsStateThatSetStateZeroesAndSetWarmstartRestores) {
  const auto model = g1();
  ASSERT_TRUE(model) << "G1 model missing";
  const int nenv = 3, nq = model->nq, nv = model->nv;
  Simulator a(model, options(nenv));
  a.reset_keyframe("home");
  std::vector<double> w(static_cast<std::size_t>(nenv * nv), 1.0);
  a.get_warmstart(w.data());
  EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](double x) { return x == 0.0; })) << "reset must zero it";
  for (int t = 0; t < 5; ++t) a.step();
  std::vector<double> q(static_cast<std::size_t>(nenv * nq)), v(static_cast<std::size_t>(nenv * nv));
  a.get_state(q.data(), v.data());
  a.get_warmstart(w.data());
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](double x) { return x != 0.0; })) << "a step must leave the last qacc";
  for (int t = 0; t < 5; ++t) a.step();
  std::vector<double> q_a(q.size()), v_a(v.size());
  a.get_state(q_a.data(), v_a.data());

  // continuing from (qpos, qvel, warm start) reproduces the trajectory bit for bit
  Simulator b(model, options(nenv));
  b.reset_keyframe("home");  // the keyframe's controls, as in a
  b.step();                  // leaves a warm start that set_state must clear
  b.set_state(q.data(), v.data());
  std::vector<double> w_back(w.size());
  b.get_warmstart(w_back.data());
  EXPECT_TRUE(std::all_of(w_back.begin(), w_back.end(), [](double x) { return x == 0.0; })) << "set_state must zero it";
  b.set_warmstart(w.data());
  b.get_warmstart(w_back.data());
  EXPECT_TRUE(w_back == w);
  for (int t = 0; t < 5; ++t) b.step();
  std::vector<double> q_b(q.size()), v_b(v.size());
  b.get_state(q_b.data(), v_b.data());
  EXPECT_TRUE(q_b == q_a && v_b == v_a) << "continuation with the warm start must be bitwise";

  // without constraints there is none
  SimulatorOptions smooth = options(nenv);
  smooth.constraints = false;
  Simulator c(model, smooth);
  c.reset_keyframe("home");
  c.step();
  std::fill(w_back.begin(), w_back.end(), 1.0);
  c.get_warmstart(w_back.data());
  EXPECT_TRUE(std::all_of(w_back.begin(), w_back.end(), [](double x) { return x == 0.0; }));
}

// Rollout::checkpoint returns the warm start recorded with each state: the one
// Simulator::get_warmstart gave at that time. The replay of the backward pass starts from it
// (bitwise: replay_bitwise()).
TEST(WarmStart, RolloutCheckpointsRecordIt) {
  const auto model = g1();
  ASSERT_TRUE(model) << "G1 model missing";
  const int nenv = 2, T = 6, nq = model->nq, nv = model->nv;
  Simulator sim(model, options(nenv));
  sim.reset_keyframe("home");
  Rollout ro(sim, T);
  ro.begin();
  std::vector<std::vector<double>> seen;
  std::vector<double> w(static_cast<std::size_t>(nenv * nv));
  sim.get_warmstart(w.data());
  seen.push_back(w);
  for (int t = 0; t < T; ++t) {
    ro.step();
    sim.get_warmstart(w.data());
    seen.push_back(w);
  }
  std::vector<double> q(static_cast<std::size_t>(nenv * nq)), v(static_cast<std::size_t>(nenv * nv));
  for (int t = 0; t <= T; ++t) {
    ro.checkpoint(t, q.data(), v.data(), w.data());
    EXPECT_TRUE(w == seen[static_cast<std::size_t>(t)]) << "checkpoint " << t;
  }
  std::vector<double> dv(static_cast<std::size_t>((T + 1) * nenv * nv), 1.0), g(static_cast<std::size_t>(nenv * nv));
  ro.backward(nullptr, dv.data(), nullptr, g.data(), nullptr);
  EXPECT_TRUE(ro.replay_bitwise());
}

// The point of it: fewer Newton iterations per step than a cold start (step statistics row 6),
// here where the model's cap of 5 iterations binds the cold solve.
TEST(WarmStart, NeedsFewerNewtonIterationsThanColdStart) {
  const auto model = g1();
  ASSERT_TRUE(model) << "G1 model missing";
  const int nenv = 4, steps = 50;
  double mean[2] = {0, 0};
  for (int cold = 0; cold < 2; ++cold) {
    Simulator sim(cold ? without_warmstart(*model) : model, options(nenv));
    sim.reset_keyframe("home");
    for (int t = 0; t < steps; ++t) {
      sim.step();
      const auto st = sim.contact_stats();
      for (int e = 0; e < nenv; ++e) mean[cold] += st[static_cast<std::size_t>(Simulator::kStepStats * e + 6)];
    }
    mean[cold] /= steps * nenv;
  }
  std::printf("[warmstart] G1 at home, %d steps: Newton iterations per step %.2f warm, %.2f cold\n", steps, mean[0],
              mean[1]);
  EXPECT_GT(mean[0], 0.0);
  EXPECT_LT(mean[0], 0.7 * mean[1]);
}

}  // namespace
