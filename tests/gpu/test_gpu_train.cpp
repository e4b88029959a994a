// Training on the CUDA backend: SHAC's actor loss and gradient agree with the CPU backend's from
// the same start, for cartpole, the ant on the Impulse floor and the G1, with both policy loops
// on CUDA: the host loop (the CUDA Rollout's backward_policy with the trainer's host networks)
// and the device loop (learn/policy_loop.hpp: observation, MlpDevice actor and VJPs on the
// device, backward_policy_backend). A few SHAC+BCG (the device loop, bundles stepped by
// Rollout::step_backend_ctrl) and PPO iterations run on CUDA and stay finite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "learn/shac.hpp"
#include "stiffgrad/learn/train.hpp"
#include "learn_support.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

struct Pass {
  double loss;
  std::vector<float> grad;
};

Pass actor_pass(const std::string& spec, TrainOptions o, Backend backend, PolicyLoopKind loop,
                TaskOptions::ServoTargets targets) {
  o.backend = backend;
  o.policy_loop = loop;
  TaskOptions t = sgtest::learn_task_options();
  t.servo_targets = targets;
  auto task = make_task(spec, t);
  TrainerCore core(*task, spec, o);
  Shac shac(core);
  EXPECT_EQ(shac.backend_loop(), loop == PolicyLoopKind::Backend);
  Pass p;
  p.loss = shac.actor_pass(true);
  p.grad = shac.grad();
  return p;
}

void compare(const std::string& spec, TrainOptions o, double bound,
             TaskOptions::ServoTargets targets = TaskOptions::ServoTargets::Home) {
  for (const PolicyLoopKind loop : {PolicyLoopKind::Host, PolicyLoopKind::Backend}) {
    const Pass cpu = actor_pass(spec, o, Backend::Cpu, PolicyLoopKind::Host, targets),
               gpu = actor_pass(spec, o, Backend::Cuda, loop, targets);
    ASSERT_EQ(cpu.grad.size(), gpu.grad.size());
    double err = 0, norm = 1e-30;
    for (std::size_t i = 0; i < cpu.grad.size(); ++i) {
      err = std::max(err, std::fabs(static_cast<double>(cpu.grad[i]) - gpu.grad[i]));
      norm = std::max(norm, std::fabs(static_cast<double>(cpu.grad[i])));
    }
    std::printf("[ gpu shac ] %s, %s loop: loss CPU %.9g CUDA %.9g, gradient max difference / max %.2e\n", spec.c_str(),
                policy_loop_name(loop).c_str(), cpu.loss, gpu.loss, err / norm);
    EXPECT_NEAR(gpu.loss, cpu.loss, 1e-5 * std::fabs(cpu.loss) + 1e-9) << policy_loop_name(loop);
    EXPECT_LT(err / norm, bound) << policy_loop_name(loop);
  }
}

TEST(GpuTrain, ShacActorGradientMatchesTheCpuBackend) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: training on CUDA runs on a device machine (scripts/device_check.sh)";
  TrainOptions c = defaults_for("cartpole-swingup", Algorithm::Shac);
  c.nenv = 16;
  c.horizon = 16;
  compare("cartpole-swingup", c, 1e-4);
  TrainOptions a = defaults_for("ant-run", Algorithm::Shac);
  a.nenv = 8;
  a.horizon = 8;
  a.actor_hidden = {32, 32};
  a.critic_hidden = {32};
  compare("ant-run", a, 1e-3);
  TrainOptions g = defaults_for("g1-imitate:run1_subject2", Algorithm::Shac);
  g.nenv = 8;
  g.horizon = 8;
  g.actor_hidden = {64};
  g.critic_hidden = {32};
  compare("g1-imitate:run1_subject2", g, 1e-3);
  compare("g1-imitate:run1_subject2", g, 1e-3, TaskOptions::ServoTargets::Reference);
}

TEST(GpuTrain, ShacBcgAndPpoRunOnCuda) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: training on CUDA runs on a device machine (scripts/device_check.sh)";
  for (const Algorithm algo : {Algorithm::ShacBcg, Algorithm::Ppo}) {
    TrainOptions o = defaults_for("ant-run", algo);
    o.backend = Backend::Cuda;
    o.nenv = 16;
    o.iterations = 3;
    o.horizon = 8;
    o.actor_hidden = {32};
    o.critic_hidden = {32};
    o.bundles.tau = 0;
    auto task = make_task("ant-run", sgtest::learn_task_options());
    const TrainResult r = train(*task, "ant-run", o);
    ASSERT_EQ(r.log.size(), 3u);
    for (const IterationLog& l : r.log) {
      EXPECT_TRUE(std::isfinite(l.actor_loss)) << algorithm_name(algo);
      EXPECT_TRUE(std::isfinite(l.actor_grad_norm)) << algorithm_name(algo);
      EXPECT_EQ(l.nonfinite, 0) << algorithm_name(algo);
    }
    if (algo == Algorithm::ShacBcg) EXPECT_GT(r.log.back().bundle_rate, 0.0);
    sgtest::expect_time_split_within_wall(r, algorithm_name(algo).c_str());
  }
}

}  // namespace
