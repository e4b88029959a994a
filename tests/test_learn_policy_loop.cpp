// The backend policy loop (learn/policy_loop.hpp: observation, actor, controls and their
// VJPs where the simulator runs, the Rollout's BackendControlVjp) against the host trainer's
// loop (learn/shac.cpp's host hook). On the CPU backend both run the same functions in the
// same order, so whole SHAC iterations must agree bit for bit: loss, gradient, records, critic
// and the updated actor, for every task with backend kernels, with episode ends and resets
// inside the horizons. The loop's gradient against finite differences is in
// test_learn_shac.cpp (ShacGradient.*BackendPolicyLoop*).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "learn/policy_loop.hpp"
#include "learn/shac.hpp"
#include "stiffgrad/learn/train.hpp"
#include "learn_support.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

template <class T>
int count_different(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return -1;
  int n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += !(a[i] == b[i]) && !(std::isnan(double(a[i])) && std::isnan(double(b[i])));
  return n;
}

struct Run {
  std::unique_ptr<Task> task;
  std::unique_ptr<TrainerCore> core;
  std::unique_ptr<Shac> shac;
  TrainResult result;
};

Run make_run(const std::string& spec, TrainOptions o, int episode_steps, PolicyLoopKind loop,
             TaskOptions::ServoTargets targets) {
  Run r;
  TaskOptions t = sgtest::learn_task_options(episode_steps);
  t.servo_targets = targets;
  r.task = make_task(spec, t);
  o.policy_loop = loop;
  r.core = std::make_unique<TrainerCore>(*r.task, spec, o);
  std::mt19937_64 g(5);  // the same non-trivial normalizer statistics in both
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<double> x(50 * r.core->sizes.no);
  for (double& v : x) v = 0.5 + 2 * n(g);
  r.core->net.obs_rms.update(x.data(), 50);
  r.shac = std::make_unique<Shac>(*r.core);
  return r;
}

// Returns the bundles started per environment-step, summed over the iterations.
double expect_same_iterations(const std::string& spec, TrainOptions o, int episode_steps, int iterations,
                              TaskOptions::ServoTargets targets = TaskOptions::ServoTargets::Home) {
  Run host = make_run(spec, o, episode_steps, PolicyLoopKind::Host, targets);
  Run backend = make_run(spec, o, episode_steps, PolicyLoopKind::Backend, targets);
  EXPECT_FALSE(host.shac->backend_loop());
  EXPECT_TRUE(backend.shac->backend_loop());
  int episodes = 0;
  double bundle_rate = 0;
  for (int it = 0; it < iterations; ++it) {
    const IterationLog lh = host.shac->iterate(it);
    const IterationLog lb = backend.shac->iterate(it);
    const TrainerCore& ch = *host.core;
    const TrainerCore& cb = *backend.core;
    EXPECT_EQ(lh.actor_loss, lb.actor_loss) << spec << " iteration " << it;
    EXPECT_EQ(lh.actor_grad_norm, lb.actor_grad_norm) << spec << " iteration " << it;
    EXPECT_EQ(lh.critic_loss, lb.critic_loss) << spec << " iteration " << it;
    EXPECT_EQ(lh.nonfinite, lb.nonfinite) << spec << " iteration " << it;
    EXPECT_EQ(lh.bundle_rate, lb.bundle_rate) << spec << " iteration " << it;
    bundle_rate += lb.bundle_rate;
    EXPECT_EQ(count_different(host.shac->grad(), backend.shac->grad()), 0) << spec << " iteration " << it << ": gradient";
    EXPECT_EQ(count_different(ch.buf.Q, cb.buf.Q), 0) << "qpos records";
    EXPECT_EQ(count_different(ch.buf.V, cb.buf.V), 0) << "qvel records";
    EXPECT_EQ(count_different(ch.buf.OBS, cb.buf.OBS), 0) << "observations";
    EXPECT_EQ(count_different(ch.buf.X, cb.buf.X), 0) << "normalized observations";
    EXPECT_EQ(count_different(ch.buf.A, cb.buf.A), 0) << "actions";
    EXPECT_EQ(count_different(ch.buf.R, cb.buf.R), 0) << "rewards";
    EXPECT_EQ(ch.buf.steps_active, cb.buf.steps_active);
    for (int e = 0; e < ch.sizes.nenv; ++e) episodes += ch.buf.steps_active[e] < ch.sizes.H;
    host.core->finish_iteration(lh, host.result, {});
    backend.core->finish_iteration(lb, backend.result, {});
    const double rh = host.result.log.back().mean_return, rb = backend.result.log.back().mean_return;
    EXPECT_TRUE(rh == rb || (std::isnan(rh) && std::isnan(rb))) << rh << " vs " << rb;  // NaN: no episode yet
  }
  EXPECT_TRUE(std::isfinite(backend.result.log.back().mean_return)) << "no completed episode to compare";
  EXPECT_EQ(count_different(host.core->net.actor.param_vector(), backend.core->net.actor.param_vector()), 0)
      << "the actors after " << iterations << " updates";
  EXPECT_EQ(count_different(host.core->net.critics[0].param_vector(), backend.core->net.critics[0].param_vector()), 0);
  double gn = 0;
  for (float g : backend.shac->grad()) gn += double(g) * g;
  EXPECT_GT(gn, 0) << "a zero gradient compares equal trivially";
  std::printf("[ policy loop ] %s: %d iterations, %d episode ends inside horizons, %s\n", spec.c_str(), iterations,
              episodes, ::testing::Test::HasFailure() ? "DIFFERENT from the host loop" : "bitwise equal to the host loop");
  return bundle_rate;
}

TEST(PolicyLoop, CartpoleIterationsEqualTheHostLoopBitwise) {
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 5;
  o.horizon = 16;
  o.normalize_returns = true;
  o.action_rate_penalty = 0.3;
  // episodes of 20 steps: they end inside the second horizon and restart at its end
  expect_same_iterations("cartpole-swingup", o, 20, 4);
}

TEST(PolicyLoop, AntOnImpulseFloorIterationsEqualTheHostLoopBitwise) {
  TrainOptions o = defaults_for("ant-run", Algorithm::Shac);
  o.nenv = 3;
  o.horizon = 8;
  o.actor_hidden = {32, 32};
  o.critic_hidden = {32};
  expect_same_iterations("ant-run", o, 12, 4);
}

// Three G1 environments, 6-step horizons, episodes of 10 steps, 4 iterations.
void expect_same_g1_iterations(TaskOptions::ServoTargets targets) {
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  TrainOptions o = defaults_for("g1-imitate:run1_subject2", Algorithm::Shac);
  o.nenv = 3;
  o.horizon = 6;
  o.actor_hidden = {32};
  o.critic_hidden = {32};
  o.critic_iterations = 2;
  expect_same_iterations("g1-imitate:run1_subject2", o, 10, 4, targets);
}

TEST(PolicyLoop, G1ImitationIterationsEqualTheHostLoopBitwise) {
  expect_same_g1_iterations(TaskOptions::ServoTargets::Home);
}

TEST(PolicyLoop, G1WithReferenceServoTargetsIterationsEqualTheHostLoopBitwise) {
  // the servo map reads each environment's reference row (kActionServoReference) in the
  // backend loop, the task's own reference on the host
  expect_same_g1_iterations(TaskOptions::ServoTargets::Reference);
}

TEST(PolicyLoop, AntWithBundlesIterationsEqualTheHostLoopBitwise) {
  // SHAC+BCG: the bundle scheduler runs inside Rollout::step_backend_ctrl; τ = 0 starts a
  // bundle at every step in contact
  TrainOptions o = defaults_for("ant-run", Algorithm::ShacBcg);
  o.nenv = 3;
  o.horizon = 8;
  o.actor_hidden = {32};
  o.critic_hidden = {32};
  o.bundles.tau = 0;
  o.bundles.branches = 3;
  o.critic_iterations = 2;
  EXPECT_GT(expect_same_iterations("ant-run", o, 12, 3), 0.0) << "no bundle started";
}

TEST(PolicyLoop, AutoIsTheHostLoopOnTheCpu) {
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 2;
  o.horizon = 4;
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options(0));
  TrainerCore core(*task, "cartpole-swingup", o);
  Shac shac(core);
  EXPECT_FALSE(shac.backend_loop());
  EXPECT_THROW(parse_policy_loop("device"), std::invalid_argument);
}

}  // namespace
