// Training end to end: a short SHAC run that improves cartpole-swingup (CI time), PPO and
// SHAC+BCG runs whose records are consistent, the saved policy's round trip, and the train and
// eval commands (eval in MuJoCo 2.2.2 on a saved policy).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "stiffgrad/learn/policy_file.hpp"
#include "stiffgrad/learn/train.hpp"
#include "learn_support.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

// Also the warm start with learning on (TrainOptions::init_policy, below for the rest): it
// begins where the file's policy is, so after its first iteration its deterministic episodes
// score more than halfway from a fresh first iteration's (`start`, the same settings) to the
// file's policy's. Here because this test trains that policy already (CI time).
TEST(Train, ShacImprovesCartpoleSwingup) {
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 32;
  o.iterations = 1;
  o.threads = 1;  // ctest runs tests two at a time: OpenMP threads of two processes would contend
  const TrainResult start = train(*task, "cartpole-swingup", o);
  o.iterations = 120;
  const TrainResult trained = train(*task, "cartpole-swingup", o);
  ASSERT_EQ(trained.log.size(), 120u);
  EXPECT_EQ(trained.log.back().env_steps, 120LL * 32 * 32);
  // deterministic episodes (1000 steps) of the first iteration's and the trained policy, from
  // the same initial states
  const EvalResult before = evaluate_in_stiffgrad(*task, start.policy, 8, 3);
  const EvalResult after = evaluate_in_stiffgrad(*task, trained.policy, 8, 3);
  std::printf("[ shac cartpole ] deterministic return: %.1f after 1 iteration, %.1f after 120 (of at most 1000)\n",
              before.mean_return, after.mean_return);
  EXPECT_EQ(after.mean_length, 1000.0);
  EXPECT_GT(after.mean_return, before.mean_return + 100.0);
  for (const IterationLog& l : trained.log) {
    EXPECT_TRUE(std::isfinite(l.actor_loss));
    EXPECT_TRUE(std::isfinite(l.critic_loss));
    EXPECT_EQ(l.nonfinite, 0);
  }

  const std::string path = ::testing::TempDir() + "/sg_policy_trained.sgp";
  save_policy(path, trained.policy);
  o.iterations = 1;
  o.init_policy = path;
  const TrainResult warm_one = train(*task, "cartpole-swingup", o);
  const double r_warm = evaluate_in_stiffgrad(*task, warm_one.policy, 8, 3).mean_return;
  std::printf("[ warm start ] deterministic return: file's policy %.1f, warm start after 1 iteration %.1f, fresh %.1f\n",
              after.mean_return, r_warm, before.mean_return);
  EXPECT_GT(r_warm, before.mean_return + 0.5 * (after.mean_return - before.mean_return));
  std::filesystem::remove(path);
}

// Evaluation while training (EvalSchedule) runs on its own task and changes nothing in the run:
// the same records and policy as without it, evaluations after every 2nd and the last iteration,
// each equal to evaluate_in_stiffgrad of that iteration's policy.
TEST(Train, EvalScheduleDoesNotChangeTrainingAndMatchesEval) {
  for (const Algorithm algo : {Algorithm::Shac, Algorithm::Ppo}) {
    auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
    auto eval_task = make_task("cartpole-swingup", sgtest::learn_task_options());
    TrainOptions o = defaults_for("cartpole-swingup", algo);
    o.nenv = 8;
    o.iterations = 5;
    o.threads = 1;
    const TrainResult plain = train(*task, "cartpole-swingup", o);
    EvalSchedule schedule;
    schedule.task = eval_task.get();
    schedule.every = 2;
    schedule.episodes = 3;
    schedule.seed = 4;
    const TrainResult evaluated = train(*task, "cartpole-swingup", o, {}, schedule);
    ASSERT_EQ(evaluated.log.size(), plain.log.size());
    for (std::size_t i = 0; i < plain.log.size(); ++i) {
      EXPECT_EQ(evaluated.log[i].actor_loss, plain.log[i].actor_loss) << i;
      EXPECT_EQ(evaluated.log[i].critic_loss, plain.log[i].critic_loss) << i;
      EXPECT_EQ(evaluated.log[i].mean_step_reward, plain.log[i].mean_step_reward) << i;
      EXPECT_FALSE(plain.log[i].evaluated);
      EXPECT_EQ(evaluated.log[i].evaluated, i == 1 || i == 3 || i == 4) << i;
    }
    EXPECT_EQ(evaluated.policy.actor_params, plain.policy.actor_params);
    const EvalResult last = evaluate_in_stiffgrad(*eval_task, evaluated.policy, 3, 4);
    EXPECT_EQ(evaluated.log.back().eval_return, last.mean_return);
    EXPECT_EQ(evaluated.log.back().eval_episode_length, last.mean_length);
    EXPECT_EQ(evaluated.log.back().eval_episodes, 3);
    EXPECT_NE(evaluated.log[1].eval_return, evaluated.log[4].eval_return);  // the policy changed between them
    // the trainer's own task cannot be the evaluation's
    schedule.task = task.get();
    EXPECT_THROW(train(*task, "cartpole-swingup", o, {}, schedule), std::invalid_argument);
  }
}

TEST(Train, PpoRecordsAreConsistent) {
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Ppo);
  o.nenv = 16;
  o.iterations = 4;
  const TrainResult r = train(*task, "cartpole-swingup", o);
  ASSERT_EQ(r.log.size(), 4u);
  for (std::size_t i = 0; i < r.log.size(); ++i) {
    EXPECT_EQ(r.log[i].env_steps, static_cast<long long>(i + 1) * 16 * 32);
    EXPECT_TRUE(std::isfinite(r.log[i].actor_loss));
    EXPECT_GT(r.log[i].actor_grad_norm, 0.0);
    EXPECT_EQ(r.log[i].adjoint_s, 0.0);  // PPO takes no simulator gradients
  }
  sgtest::expect_time_split_within_wall(r, "ppo");
  EXPECT_EQ(r.policy.algorithm, "ppo");
  EXPECT_EQ(r.policy.actor_sizes.front(), task->obs_dim());
  EXPECT_EQ(r.policy.actor_sizes.back(), task->act_dim());
}

TEST(Train, ShacBcgBundlesOnTheAntsFloor) {
  auto task = make_task("ant-run", sgtest::learn_task_options());
  TrainOptions o = defaults_for("ant-run", Algorithm::ShacBcg);
  o.nenv = 4;
  o.iterations = 2;
  o.horizon = 8;
  o.bundles.tau = 0;  // every contact triggers
  o.bundles.branches = 3;
  o.actor_hidden = {32};
  o.critic_hidden = {32};
  const TrainResult r = train(*task, "ant-run", o);
  ASSERT_EQ(r.log.size(), 2u);
  for (const IterationLog& l : r.log) {
    EXPECT_GT(l.bundle_rate, 0.0);
    EXPECT_TRUE(std::isfinite(l.actor_grad_norm));
    EXPECT_GT(l.adjoint_s, 0.0);
  }
  sgtest::expect_time_split_within_wall(r, "shac-bcg");
  EXPECT_EQ(r.policy.algorithm, "shac-bcg");
}

TEST(Train, AddRewardTrainsItsDiscriminatorWithShacAndPpo) {
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  const std::string spec = "g1-imitate:run1_subject2";
  auto task = make_task(spec, sgtest::learn_task_options());
  for (const Algorithm algo : {Algorithm::Shac, Algorithm::Ppo}) {
    TrainOptions o = defaults_for(spec, algo);
    o.nenv = 4;
    o.iterations = 3;
    o.horizon = 6;
    o.actor_hidden = {32};
    o.critic_hidden = {32};
    o.reward = RewardKind::Add;
    o.add.hidden = {32};
    o.action_rate_penalty = 0.8;
    const TrainResult r = train(*task, spec, o);
    ASSERT_EQ(r.log.size(), 3u);
    for (const IterationLog& l : r.log) {
      EXPECT_GT(l.disc_loss, 0.0) << algorithm_name(algo);
      EXPECT_TRUE(std::isfinite(l.disc_loss));
      EXPECT_TRUE(std::isfinite(l.mean_step_reward));
      EXPECT_TRUE(std::isfinite(l.actor_grad_norm));
      EXPECT_EQ(l.nonfinite, 0);
    }
  }
  // a task without reference features refuses the ADD reward by name
  auto cartpole = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.reward = RewardKind::Add;
  try {
    train(*cartpole, "cartpole-swingup", o);
    ADD_FAILURE() << "ADD on cartpole was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cartpole-swingup"), std::string::npos) << e.what();
  }
}

TEST(Train, SavedPolicyRoundTripActsTheSame) {
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 8;
  o.iterations = 3;
  const TrainResult r = train(*task, "cartpole-swingup", o);
  // the library call records the task's options, as `stiffgrad train` does
  EXPECT_EQ(r.policy.task_options, format_task_options(sgtest::learn_task_options()));
  const std::string path = ::testing::TempDir() + "/sg_policy_roundtrip.sgp";
  save_policy(path, r.policy);
  const PolicyFile loaded = load_policy(path);
  EXPECT_EQ(loaded.task, "cartpole-swingup");
  EXPECT_EQ(loaded.task_options, r.policy.task_options);
  PolicyRunner a(r.policy), b(loaded);
  const double obs[10] = {0.1, -0.9, 0.4, 0.3, -2.0, -0.5, 1.0, 0.0, 0.0, 0.7};
  double ya[2], yb[2];
  a.act(obs, 2, ya);
  b.act(obs, 2, yb);
  EXPECT_EQ(ya[0], yb[0]);
  EXPECT_EQ(ya[1], yb[1]);
  const EvalResult ea = evaluate_in_stiffgrad(*task, r.policy, 3, 9), eb = evaluate_in_stiffgrad(*task, loaded, 3, 9);
  EXPECT_EQ(ea.mean_return, eb.mean_return);
  std::filesystem::remove(path);
}

// Policy snapshots (train --policy-every): the file after the last iteration is the run's final
// policy bit for bit, earlier ones differ from it, and taking them changes nothing in training.
TEST(Train, PolicySnapshotsAreThePolicyAsItStoodAndChangeNothing) {
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Ppo);
  o.nenv = 8;
  o.iterations = 4;
  const TrainResult plain = train(*task, "cartpole-swingup", o);
  const std::string dir = unique_temp("snapshots");
  std::filesystem::create_directories(dir);
  TrainOptions snap = o;
  snap.snapshot_every = 2;
  snap.snapshot_dir = dir;
  const TrainResult snapped = train(*task, "cartpole-swingup", snap);
  ASSERT_EQ(snapped.log.size(), plain.log.size());
  for (std::size_t i = 0; i < plain.log.size(); ++i) {
    EXPECT_EQ(snapped.log[i].mean_step_reward, plain.log[i].mean_step_reward) << i;
    EXPECT_EQ(snapped.log[i].actor_loss, plain.log[i].actor_loss) << i;
    EXPECT_EQ(snapped.log[i].critic_loss, plain.log[i].critic_loss) << i;
  }
  EXPECT_EQ(snapped.policy.actor_params, plain.policy.actor_params);
  ASSERT_TRUE(std::filesystem::exists(dir + "/policy_it2.sgp"));
  ASSERT_TRUE(std::filesystem::exists(dir + "/policy_it4.sgp"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/policy_it1.sgp"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/policy_it3.sgp"));
  const PolicyFile last = load_policy(dir + "/policy_it4.sgp"), second = load_policy(dir + "/policy_it2.sgp");
  EXPECT_EQ(last.actor_params, plain.policy.actor_params);
  EXPECT_EQ(last.log_std, plain.policy.log_std);
  EXPECT_EQ(last.obs_mean, plain.policy.obs_mean);
  EXPECT_NE(second.actor_params, plain.policy.actor_params);
  std::filesystem::remove_all(dir);
  TrainOptions no_dir = o;
  no_dir.snapshot_every = 1;
  EXPECT_THROW(train(*task, "cartpole-swingup", no_dir), std::invalid_argument);
}

// TrainOptions::init_policy: a run goes on from a saved policy. With the actor's learning rate
// at 0 its actor and log-std stay the file's bit for bit, and the observation statistics go on
// from the file's count; without the warm start the same settings give the seed's actor. A file
// whose sizes or normalization differ is refused with what differs.
TEST(Train, InitPolicyWarmStartsTheActorAndObservationStatistics) {
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 8;
  o.iterations = 3;
  o.threads = 1;  // ctest runs tests two at a time: OpenMP threads of two processes would contend
  const TrainResult first = train(*task, "cartpole-swingup", o);
  const std::string path = ::testing::TempDir() + "/sg_policy_init.sgp";
  save_policy(path, first.policy);

  TrainOptions w = o;
  w.iterations = 2;
  w.actor_lr = 0;
  w.lr_end = 0;
  w.init_policy = path;
  const TrainResult warm = train(*task, "cartpole-swingup", w);
  EXPECT_EQ(warm.policy.actor_params, first.policy.actor_params);
  EXPECT_EQ(warm.policy.log_std, first.policy.log_std);
  w.init_policy.clear();
  const TrainResult fresh = train(*task, "cartpole-swingup", w);
  EXPECT_NE(fresh.policy.actor_params, first.policy.actor_params);
  // the same samples (2 iterations) added to the file's count, against a fresh count of 1e-4
  EXPECT_NEAR(warm.policy.obs_count - first.policy.obs_count, fresh.policy.obs_count - 1e-4, 1e-6);
  EXPECT_NE(warm.policy.obs_mean, fresh.policy.obs_mean);

  // with learning on: Train.ShacImprovesCartpoleSwingup, which trains the policy it needs

  // sizes and normalization must agree, else the file is named with what differs
  auto ant = make_task("ant-run", sgtest::learn_task_options());
  TrainOptions a = defaults_for("ant-run", Algorithm::Shac);
  a.threads = 1;
  a.nenv = 2;
  a.iterations = 1;
  a.init_policy = path;
  try {
    train(*ant, "ant-run", a);
    ADD_FAILURE() << "a cartpole policy warm-started an ant";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": its actor has sizes {5, 64, 64, 1}"), std::string::npos) << e.what();
  }
  TrainOptions raw = w;
  raw.init_policy = path;
  raw.normalize_obs = false;
  try {
    train(*task, "cartpole-swingup", raw);
    ADD_FAILURE() << "a normalized policy warm-started a run without normalization";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("normalizes its observations; this run does not"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

double value_after(const std::string& text, const std::string& key) {
  const auto p = text.find(key);
  if (p == std::string::npos) return NAN;
  return std::strtod(text.c_str() + p + key.size(), nullptr);
}

TEST(TrainCli, TrainWritesLogPolicyAndFinalLineAndEvalRunsInMujoco) {
  const std::string dir = unique_temp("train_out");
  const ::Run t = run_cli("train cartpole-swingup --algo shac --envs 8 --iterations 3 --eval-every 2 --eval-episodes 2 --policy-every 2 --out " + dir +
                        " --data " + sgtest::data_dir());
  ASSERT_EQ(t.status, 0) << t.err;
  // the last line of stdout
  std::string last = t.out.substr(0, t.out.size() - 1);
  last = last.substr(last.rfind('\n') + 1);
  EXPECT_EQ(last.rfind("final mean return: ", 0), 0u) << t.out;
  std::ifstream csv(dir + "/log.csv");
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("iteration,env_steps,wall_s,mean_return", 0), 0u) << header;
  EXPECT_NE(header.find(",eval_return,eval_episode_length,eval_falls,eval_tracking_error"), std::string::npos) << header;
  int rows = 0;
  while (std::getline(csv, line)) {
    // evaluations after iterations 2 and 3 (the last): the four eval_* fields filled, else empty
    const bool evaluated = rows >= 1;
    const std::string tail = line.substr(line.size() - 4);
    EXPECT_EQ(tail == ",,,,", !evaluated) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 3);
  ASSERT_TRUE(std::filesystem::exists(dir + "/policy.sgp"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/policy_it2.sgp"));  // --policy-every 2
  EXPECT_FALSE(std::filesystem::exists(dir + "/policy_it3.sgp"));
  EXPECT_NE(t.err.find("it 3/3"), std::string::npos) << t.err;

  const ::Run e = run_cli("eval " + dir + "/policy.sgp --in mujoco --episodes 2 --data " + sgtest::data_dir());
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("mujoco: mean return"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("stiffgrad: mean return"), std::string::npos) << e.out;
  // cartpole cannot fall and has no feet: neither falls nor penetration is printed
  // (MainJob.EvalPrintsFallsAndPenetrationOnlyWhereTheyMeanSomething), and the smooth dynamics
  // are MuJoCo's, so the returns agree closely
  EXPECT_EQ(e.out.find("falls"), std::string::npos) << e.out;
  EXPECT_EQ(e.out.find("delta_d"), std::string::npos) << e.out;
  const double mj = value_after(e.out, "mujoco: mean return "), sg = value_after(e.out, "stiffgrad: mean return ");
  EXPECT_NEAR(mj, sg, 1e-3 * std::abs(sg) + 1e-6) << e.out;
  std::filesystem::remove_all(dir);
}

TEST(TrainCli, EvalRunsThePolicyOnTheTaskItsFileRecords) {
  // a G1 policy trained with its servo targets at the reference: the file records the task's
  // options, eval uses them without being told, and an override is applied with a note
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  const std::string dir = unique_temp("train_g1_ref");
  const ::Run t = run_cli("train g1-imitate:run1_subject2 --algo shac --envs 2 --iterations 1 --horizon 4 "
                          "--servo-targets reference --kappa 200 --clip-window 95:105 --out " + dir + " --data " + sgtest::data_dir());
  ASSERT_EQ(t.status, 0) << t.err;
  const PolicyFile p = load_policy(dir + "/policy.sgp");
  TaskOptions recorded;
  parse_task_options(p.task_options, &recorded);
  EXPECT_EQ(recorded.servo_targets, TaskOptions::ServoTargets::Reference) << p.task_options;
  EXPECT_EQ(recorded.kappa, 200.0) << p.task_options;
  EXPECT_EQ(recorded.clip_begin, 95.0) << p.task_options;
  EXPECT_EQ(recorded.clip_end, 105.0) << p.task_options;
  const std::string eval = "eval " + dir + "/policy.sgp --episodes 1 --data " + sgtest::data_dir();
  const ::Run plain = run_cli(eval);
  const ::Run told = run_cli(eval + " --servo-targets reference --kappa 200 --clip-window 95:105");
  const ::Run home = run_cli(eval + " --servo-targets home");
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(told.status, 0) << told.err;
  ASSERT_EQ(home.status, 0) << home.err;
  EXPECT_EQ(plain.out, told.out) << "eval did not use the recorded options";
  EXPECT_EQ(plain.err.find("eval: note"), std::string::npos) << plain.err;
  {
    // a file written before a key existed (here: without clip-window, as before 2026-12-03 (3))
    // keeps that key's default and gets no note when nothing is overridden
    PolicyFile older = p;
    older.task_options = "contact=impulse kappa=200 episode-steps=0 explicit-servos=0 servo-targets=reference "
                         "action-scale=0";
    const std::string older_path = dir + "/older.sgp";
    save_policy(older_path, older);
    const ::Run r = run_cli("eval " + older_path + " --episodes 1 --data " + sgtest::data_dir());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("eval: note"), std::string::npos) << r.err;
    const ::Run whole = run_cli(eval + " --clip-window 0:0");
    ASSERT_EQ(whole.status, 0) << whole.err;
    EXPECT_EQ(r.out, whole.out) << "the older file should run on the whole clip";
  }
  EXPECT_NE(home.out, plain.out) << "the override changed nothing";
  EXPECT_NE(home.err.find("eval: note: the policy was trained with"), std::string::npos) << home.err;
  EXPECT_NE(home.err.find("servo-targets=home"), std::string::npos) << home.err;
  std::filesystem::remove_all(dir);
}

TEST(TrainCli, BadInputsGetClearErrors) {
  ::Run r = run_cli("train no-such-task --algo shac --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("unknown task"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo sgd");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("unknown algorithm"), std::string::npos) << r.err;
  r = run_cli("eval /nonexistent/policy.sgp");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/policy.sgp"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo shac --reward gan --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--reward must be task or add"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo shac --policy-loop gpu --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--policy-loop must be auto, host or backend"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo ppo --policy-loop backend --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--policy-loop backend runs with --algo shac or shac-bcg"), std::string::npos) << r.err;
  for (const char* opt : {"--disc-replay 0", "--disc-minibatches 2"}) {
    r = run_cli(std::string("train cartpole-swingup --algo shac ") + opt + " --data " + sgtest::data_dir());
    EXPECT_EQ(r.status, 2) << opt;
    EXPECT_NE(r.err.find("sets the ADD discriminator: it needs --reward add"), std::string::npos) << r.err;
  }
  r = run_cli("train g1-imitate:run1_subject2 --algo shac --servo-targets ref --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--servo-targets must be home or reference"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo shac --servo-targets reference --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--servo-targets applies to g1-imitate tasks only"), std::string::npos) << r.err;
  r = run_cli("train g1-imitate:run1_subject2 --algo shac --action-scale 0 --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--action-scale must be a number in (0, 10]"), std::string::npos) << r.err;
  r = run_cli("train ant-run --algo shac --action-scale 0.5 --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--action-scale applies to g1-imitate tasks only"), std::string::npos) << r.err;
  r = run_cli("train g1-imitate:run1_subject2 --algo shac --clip-window 5-9 --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--clip-window must be B:E"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo shac --clip-window 5:9 --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--clip-window applies to g1-imitate tasks only"), std::string::npos) << r.err;
  r = run_cli("train g1-imitate:run1_subject2 --algo shac --clip-window 230:400 --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("clip window [230, 400] s must lie in the clip's"), std::string::npos) << r.err;
  r = run_cli("train cartpole-swingup --algo shac --init /nonexistent/init.sgp --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/init.sgp"), std::string::npos) << r.err;
  r = run_cli("train g1-imitate:no_such_clip --algo shac --data " + sgtest::data_dir());
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no_such_clip"), std::string::npos) << r.err;
}

}  // namespace
