// SHAC's actor-loss gradient (the simulator's adjoint with the policy, observation, reward,
// action map, normalizer and bootstrap critic VJPs assembled by learn/shac.cpp) against
// central differences of the same loss along random directions of the actor's parameters and
// log-std, with the same noise and start states; a short SHAC run that improves cartpole.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "learn/shac.hpp"
#include "stiffgrad/learn/train.hpp"
#include "learn_support.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

// The directional derivative of the actor loss along unit directions u against its central
// difference with step h (the networks run in float: the loss carries ~1e-7 relative rounding,
// so h is large and the bound is set by h² truncation, measured and printed).
void check_actor_gradient(const std::string& spec, TrainOptions o, int episode_steps, double h, double bound,
                          bool expect_contact = false, double lift = 0.0,
                          TaskOptions::ServoTargets targets = TaskOptions::ServoTargets::Home) {
  TaskOptions task_options = sgtest::learn_task_options(episode_steps);
  task_options.servo_targets = targets;
  auto task = make_task(spec, task_options);
  TrainerCore core(*task, spec, o);
  // non-trivial normalizer statistics
  {
    std::mt19937_64 r(5);
    std::normal_distribution<double> n(0.0, 1.0);
    std::vector<double> x(50 * core.sizes.no);
    for (double& v : x) v = 0.5 + 2 * n(r);
    core.net.obs_rms.update(x.data(), 50);
  }
  std::vector<double> q(core.sizes.nenv * core.sizes.nq), v(core.sizes.nenv * core.sizes.nv);
  core.sim->get_state(q.data(), v.data());
  if (expect_contact) {
    // resting on the floor (the torso sphere, radius 0.25, carries the ant at qpos0's joint
    // angles) instead of the reset's drop from 0.75 m: a landing inside the horizon is an event
    // whose timing central differences see and a gradient through the steps does not
    for (int e = 0; e < core.sizes.nenv; ++e) {
      q[e * core.sizes.nq + 2] = 0.26 + 0.01 * e;
      for (int k = 0; k < core.sizes.nv; ++k) v[e * core.sizes.nv + k] *= 0.1;
    }
    core.sim->set_state(q.data(), v.data());
  }
  if (lift > 0) {  // off the floor for the whole horizon: no contact events
    for (int e = 0; e < core.sizes.nenv; ++e) q[e * core.sizes.nq + 2] += lift;
    core.sim->set_state(q.data(), v.data());
  }
  const std::mt19937_64 rng0 = core.rng;
  const auto restore = [&] {
    core.sim->set_state(q.data(), v.data());
    core.rng = rng0;
  };
  Shac shac(core);
  restore();
  const double L0 = shac.actor_pass(true);
  if (expect_contact) {  // the horizon reaches the floor: the gradient goes through contacts
    const std::vector<double> stats = core.sim->contact_stats();
    double touching = 0;
    for (int e = 0; e < core.sizes.nenv; ++e) touching += stats[e * Simulator::kStepStats] > 0;
    EXPECT_EQ(touching, core.sizes.nenv) << "not every environment is on the floor at the horizon's end";
  }
  const std::vector<float> g = shac.grad();
  const std::size_t n_actor = core.net.actor.num_params();
  ASSERT_EQ(g.size(), n_actor + core.sizes.na);
  std::vector<float> theta(core.net.actor.params(), core.net.actor.params() + n_actor);
  const std::vector<float> log_std = core.net.log_std;
  std::mt19937_64 r(11);
  std::normal_distribution<double> n(0.0, 1.0);
  double worst = 0;
  for (int dir = 0; dir < 4; ++dir) {
    std::vector<double> u(g.size());
    double norm = 0;
    for (double& x : u) { x = n(r); norm += x * x; }
    for (double& x : u) x /= std::sqrt(norm);
    double gu = 0;
    for (std::size_t i = 0; i < g.size(); ++i) gu += g[i] * u[i];
    const auto loss_at = [&](double s) {
      for (std::size_t i = 0; i < n_actor; ++i) core.net.actor.params()[i] = static_cast<float>(theta[i] + s * u[i]);
      for (int k = 0; k < core.sizes.na; ++k) core.net.log_std[k] = static_cast<float>(log_std[k] + s * u[n_actor + k]);
      restore();
      return shac.actor_pass(false);
    };
    const double fd = (loss_at(h) - loss_at(-h)) / (2 * h);
    const double rel = std::abs(fd - gu) / std::max(std::abs(fd), 1e-12);
    worst = std::max(worst, rel);
    EXPECT_LT(rel, bound) << spec << " direction " << dir << ": adjoint " << gu << ", FD " << fd;
    ASSERT_GT(std::abs(fd), 1e-8) << "the loss does not depend on the actor along this direction";
  }
  std::printf("[ shac gradient ] %s (%d envs, H %d, episode %d): loss %.6g, worst |FD - adjoint| / |FD| = %.2e\n",
              spec.c_str(), o.nenv, o.horizon, episode_steps, L0, worst);
}

// The G1 with 2 environments, a 4-step horizon and [32] networks.
TrainOptions small_g1_options() {
  TrainOptions o = defaults_for("g1-imitate:run1_subject2", Algorithm::Shac);
  o.nenv = 2;
  o.horizon = 4;
  o.actor_hidden = {32};
  o.critic_hidden = {32};
  return o;
}

TEST(ShacGradient, CartpoleActorLossMatchesFiniteDifferences) {
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 4;
  o.horizon = 16;
  check_actor_gradient("cartpole-swingup", o, 0, 1e-2, 2e-3);
}

TEST(ShacGradient, CartpoleWithEpisodeEndsInsideTheHorizon) {
  // episodes of 10 steps in a 16-step horizon: masked steps after the end, bootstrap at step 10
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 3;
  o.horizon = 16;
  o.normalize_returns = true;
  check_actor_gradient("cartpole-swingup", o, 10, 1e-2, 2e-3);
}

TEST(ShacGradient, AntOnImpulseFloorActorLossMatchesFiniteDifferences) {
  TrainOptions o = defaults_for("ant-run", Algorithm::Shac);
  o.nenv = 2;
  o.horizon = 8;
  o.actor_hidden = {32, 32};
  o.critic_hidden = {32};
  // h = 1e-3: the error falls from 4.5e-3 at h = 3e-3 to 7e-4 here, the stencil's truncation
  check_actor_gradient("ant-run", o, 0, 1e-3, 5e-3, /*expect_contact=*/true);
}

TEST(ShacGradient, CartpoleWithActionRatePenaltyAndCriticEnsemble) {
  // the penalty couples consecutive actions (its gradient reaches action t and t - 1); three
  // critics' mean is the bootstrap value
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 3;
  o.horizon = 12;
  o.action_rate_penalty = 0.5;
  o.critic_ensemble = 3;
  check_actor_gradient("cartpole-swingup", o, 0, 1e-2, 2e-3);
}

TEST(ShacGradient, G1WithAddRewardMatchesFiniteDifferences) {
  // the ADD reward: the discriminator's input VJP and the features' adjoint (kernels/tasks/
  // imitation_add_adjoint.hpp) inside SHAC's loss; the robot 0.3 m above its reference start,
  // so no contact event falls inside the 4-step horizon
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  TrainOptions o = small_g1_options();
  o.reward = RewardKind::Add;
  o.add.hidden = {32};
  o.action_rate_penalty = 0;  // the ADD reward alone (the penalty has its own test above)
  // measured: 4.4e-4 at h = 3e-3 (4.2e-4 with the servos explicit), 1.9e-3 at 1e-3, 2.6e-3 at 3e-4 (the float networks' rounding)
  check_actor_gradient("g1-imitate:run1_subject2", o, 0, 3e-3, 2e-3, false, 0.3);
}

TEST(ShacGradient, CartpoleBackendPolicyLoopMatchesFiniteDifferences) {
  // the policy loop on the simulator's backend (learn/policy_loop.hpp, the Rollout's
  // BackendControlVjp), with episode ends inside the horizon
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 3;
  o.horizon = 16;
  o.policy_loop = PolicyLoopKind::Backend;
  check_actor_gradient("cartpole-swingup", o, 10, 1e-2, 2e-3);
}

TEST(ShacGradient, G1BackendPolicyLoopMatchesFiniteDifferences) {
  // the imitation observation's VJP (forward kinematics, reference rows) inside the backend
  // loop; the tracking reward; lifted 0.3 m, no contact event inside the horizon
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  TrainOptions o = small_g1_options();
  o.action_rate_penalty = 0;
  o.policy_loop = PolicyLoopKind::Backend;
  // measured: 5.9e-4 at h = 1e-2, 2.1e-3 at 3e-3, 7.0e-3 at 1e-3: the float networks' rounding
  // grows as h shrinks, so the stencil's step is the largest of them
  check_actor_gradient("g1-imitate:run1_subject2", o, 0, 1e-2, 2e-3, false, 0.3);
}

TEST(ShacGradient, G1ReferenceServoTargetsBackendPolicyLoopMatchesFiniteDifferences) {
  // the servo targets read from each environment's reference row in the backend loop
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  TrainOptions o = small_g1_options();
  o.action_rate_penalty = 0;
  o.policy_loop = PolicyLoopKind::Backend;
  check_actor_gradient("g1-imitate:run1_subject2", o, 0, 1e-2, 2e-3, false, 0.3, TaskOptions::ServoTargets::Reference);
}

// SHAC+BCG keys every iteration's recording anew (Shac::bundle_seed): the same key for the same
// iteration and seeds, another for the next iteration, another seed or another BundleOptions
// seed (that another key draws other perturbations: BundleRollout.RecordingKey...).
TEST(ShacBundles, EveryIterationDrawsNewPerturbations) {
  auto task = make_task("ant-run", sgtest::learn_task_options());
  TrainOptions o = defaults_for("ant-run", Algorithm::ShacBcg);
  o.nenv = 2;
  o.horizon = 4;
  o.threads = 1;
  o.actor_hidden = {16};
  o.critic_hidden = {16};
  TrainerCore core(*task, "ant-run", o);
  Shac shac(core);
  const std::uint64_t k0 = shac.bundle_seed();
  shac.iterate(0);
  EXPECT_EQ(shac.bundle_seed(), k0);
  shac.iterate(1);
  const std::uint64_t k1 = shac.bundle_seed();
  EXPECT_NE(k1, k0);
  shac.iterate(0);
  EXPECT_EQ(shac.bundle_seed(), k0);
  TrainOptions s = o;
  s.seed = 1;
  TrainerCore core_s(*task, "ant-run", s);
  EXPECT_NE(Shac(core_s).bundle_seed(), k0);
  s = o;
  s.bundles.seed = 2;
  TrainerCore core_b(*task, "ant-run", s);
  EXPECT_NE(Shac(core_b).bundle_seed(), k0);
}

}  // namespace
