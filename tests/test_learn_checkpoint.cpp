// Training checkpoints (TrainOptions::checkpoint_path / resume_from): a run stopped after some
// iterations and resumed from its checkpoint equals the uninterrupted run bit for bit (records,
// actor, log-std, normalizer) on a smooth task, on both ant floors (the soft one's solver
// warm starts restored), with bundles (the contact statistics their trigger reads restored),
// with PPO and on G1 imitation (the clip start times restored), with the task reward and with
// ADD's (the discriminator restored); a checkpoint whose task or options differ is refused
// naming each difference; a corrupt or missing file is named; the command line rewrites the
// whole log on --resume.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <vector>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_support.hpp"
#include "learn_support.hpp"
#include "stiffgrad/learn/train.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

// A file name of this test's own (ctest runs tests of this file at the same time).
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/sg_ckpt_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// The run of `o` uninterrupted, writing a checkpoint every `stop` iterations, and the same run
// resumed from the checkpoint it held after `stop` iterations: equal bit for bit.
// Returns the uninterrupted run's logs.
std::vector<IterationLog> expect_resume_is_bitwise(const std::string& spec, TaskOptions topts, TrainOptions o, int stop) {
  auto task = make_task(spec, topts);
  const std::string path = temp_path(spec.substr(0, spec.find(':')) + ".sgc");
  const std::string mid = path + ".mid";
  o.checkpoint_path = path;
  o.checkpoint_every = stop;
  // on_iteration of iteration `stop` runs before that iteration's checkpoint: the file then
  // still holds the one written after `stop` iterations
  const TrainResult whole = train(*task, spec, o, [&](const IterationLog& l) {
    if (l.iteration == stop) std::filesystem::copy_file(path, mid, std::filesystem::copy_options::overwrite_existing);
  });
  EXPECT_TRUE(std::filesystem::exists(mid));
  if (!std::filesystem::exists(mid)) return {};
  TrainOptions r = o;
  r.resume_from = mid;
  r.threads = o.threads == 1 ? 2 : 1;  // not part of the run's identity
  int replayed = 0;
  auto task2 = make_task(spec, topts);  // a fresh task: its episode data comes from the file
  const TrainResult resumed = train(*task2, spec, r, [&](const IterationLog& l) { replayed += l.iteration < stop; });
  EXPECT_EQ(replayed, stop) << "the restored iterations' logs go to on_iteration first";
  EXPECT_EQ(resumed.log.size(), whole.log.size());
  if (resumed.log.size() != whole.log.size()) return {};
  for (std::size_t i = 0; i < whole.log.size(); ++i) {
    const IterationLog &a = whole.log[i], &b = resumed.log[i];
    EXPECT_EQ(a.iteration, b.iteration);
    EXPECT_EQ(a.env_steps, b.env_steps);
    EXPECT_EQ(a.actor_loss, b.actor_loss) << spec << " iteration " << i;
    EXPECT_EQ(a.critic_loss, b.critic_loss) << spec << " iteration " << i;
    EXPECT_EQ(a.actor_grad_norm, b.actor_grad_norm) << spec << " iteration " << i;
    EXPECT_EQ(a.mean_step_reward, b.mean_step_reward) << spec << " iteration " << i;
    EXPECT_EQ(a.bundle_rate, b.bundle_rate) << spec << " iteration " << i;
    EXPECT_EQ(a.disc_loss, b.disc_loss) << spec << " iteration " << i;
    EXPECT_TRUE(a.mean_return == b.mean_return || (std::isnan(a.mean_return) && std::isnan(b.mean_return))) << i;
    EXPECT_TRUE(a.mean_tracking_error == b.mean_tracking_error ||
                (std::isnan(a.mean_tracking_error) && std::isnan(b.mean_tracking_error))) << i;
  }
  // the training time goes on from the checkpoint's
  EXPECT_GE(resumed.log[static_cast<std::size_t>(stop)].wall_s, resumed.log[static_cast<std::size_t>(stop) - 1].wall_s);
  EXPECT_EQ(resumed.policy.actor_params, whole.policy.actor_params) << spec;
  EXPECT_EQ(resumed.policy.log_std, whole.policy.log_std) << spec;
  EXPECT_EQ(resumed.policy.obs_mean, whole.policy.obs_mean) << spec;
  EXPECT_EQ(resumed.policy.obs_var, whole.policy.obs_var) << spec;
  EXPECT_EQ(resumed.final_mean_return == whole.final_mean_return ||
                (std::isnan(resumed.final_mean_return) && std::isnan(whole.final_mean_return)),
            true);
  // and a stop that did not happen would have continued differently: a fresh run with another
  // seed differs (the comparison can fail)
  TrainOptions other = o;
  other.seed = o.seed + 1;
  other.checkpoint_path.clear();
  auto task3 = make_task(spec, topts);
  EXPECT_NE(train(*task3, spec, other).policy.actor_params, whole.policy.actor_params);
  std::printf("[ checkpoint ] %s: %zu iterations, resumed after %d: records, actor, log-std and normalizer bitwise equal\n",
              spec.c_str(), whole.log.size(), stop);
  std::filesystem::remove(path);
  std::filesystem::remove(mid);
  return whole.log;
}

TEST(Checkpoint, ResumedCartpoleRunEqualsTheUninterruptedRun) {
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 8;
  o.iterations = 6;
  o.threads = 1;
  expect_resume_is_bitwise("cartpole-swingup", sgtest::learn_task_options(), o, 3);
}

TEST(Checkpoint, ResumedPpoRunEqualsTheUninterruptedRun) {
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Ppo);
  o.nenv = 8;
  o.iterations = 4;
  o.threads = 1;
  expect_resume_is_bitwise("cartpole-swingup", sgtest::learn_task_options(), o, 2);
}

// A small ant run: 4 environments, 4 iterations of 8 steps, small networks.
TrainOptions small_ant(Algorithm algo) {
  TrainOptions o = defaults_for("ant-run", algo);
  o.nenv = 4;
  o.iterations = 4;
  o.horizon = 8;
  o.threads = 1;
  o.actor_hidden = {32, 32};
  o.critic_hidden = {32};
  return o;
}

TEST(Checkpoint, ResumedAntRunsOnBothFloorsEqualTheUninterruptedRuns) {
  const TrainOptions o = small_ant(Algorithm::Shac);
  // Impulse floor: short episodes, resets (new starts, warm starts restarted) on both sides of
  // the stop. Soft floor: full-length episodes, no reset at the stop, where the constraint solve
  // starts from the last one's qacc (the warm start the checkpoint restores; without it this
  // run differs after the resume)
  for (const ContactModel cm : {ContactModel::Impulse, ContactModel::Soft}) {
    TaskOptions t = sgtest::learn_task_options(cm == ContactModel::Impulse ? 12 : 0);
    t.contact = cm;
    expect_resume_is_bitwise("ant-run", t, o, 2);
  }
}

// SHAC+BCG: the bundle trigger at a recording's first step reads the last step's contact
// statistics (restored; without them no bundle could start there and the run would differ)
TEST(Checkpoint, ResumedShacBcgRunEqualsTheUninterruptedRun) {
  TrainOptions o = small_ant(Algorithm::ShacBcg);
  o.bundles.tau = 5;  // the ant weighs about 9 N: bundles start often
  o.bundles.branches = 3;
  const std::vector<IterationLog> log = expect_resume_is_bitwise("ant-run", sgtest::learn_task_options(), o, 2);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_GT(log[2].bundle_rate, 0.0) << "no bundle after the resume: the test would not see the trigger";
}

// A small G1 imitation run on the stretch.
TrainOptions small_g1() {
  TrainOptions o = defaults_for("g1-imitate:run1_subject2", Algorithm::Shac);
  o.nenv = 2;
  o.iterations = 3;
  o.horizon = 4;
  o.threads = 1;
  o.actor_hidden = {32};
  o.critic_hidden = {32};
  o.critic_ensemble = 2;
  return o;
}

TaskOptions g1_stretch() {
  TaskOptions t = sgtest::learn_task_options(6);
  t.clip_begin = 95;
  t.clip_end = 105;
  return t;
}

TEST(Checkpoint, ResumedG1ImitationRunEqualsTheUninterruptedRun) {
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  expect_resume_is_bitwise("g1-imitate:run1_subject2", g1_stretch(), small_g1(), 1);
}

// With the ADD reward the discriminator (network, Adam, mean|Δ|, replay ring) is restored: the
// rewards after the stop come from it, and its update after the stop replays the rows of the
// iteration before
TEST(Checkpoint, ResumedG1AddRunEqualsTheUninterruptedRun) {
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  TrainOptions o = small_g1();
  o.reward = RewardKind::Add;
  o.add.hidden = {16};
  const std::vector<IterationLog> log = expect_resume_is_bitwise("g1-imitate:run1_subject2", g1_stretch(), o, 1);
  ASSERT_EQ(log.size(), 3u);
  EXPECT_GT(log[2].disc_loss, 0.0) << "the discriminator did not train after the stop";
}

TEST(Checkpoint, MismatchesCorruptionAndUncoveredRunsAreRefused) {
  auto task = make_task("cartpole-swingup", sgtest::learn_task_options());
  TrainOptions o = defaults_for("cartpole-swingup", Algorithm::Shac);
  o.nenv = 4;
  o.iterations = 2;
  o.threads = 1;
  o.checkpoint_path = temp_path("refuse.sgc");
  o.checkpoint_every = 1;
  train(*task, "cartpole-swingup", o);
  ASSERT_TRUE(std::filesystem::exists(o.checkpoint_path));
  TrainOptions r = o;
  r.resume_from = o.checkpoint_path;
  r.checkpoint_path.clear();
  r.nenv = 8;
  r.actor_lr = 0.5;
  try {
    train(*task, "cartpole-swingup", r);
    ADD_FAILURE() << "a checkpoint of 4 environments resumed with 8";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(o.checkpoint_path), std::string::npos) << m;
    EXPECT_NE(m.find("envs: checkpoint 4, this run 8"), std::string::npos) << m;
    EXPECT_NE(m.find("actor_lr: checkpoint 0.01"), std::string::npos) << m;
  }
  // another task
  auto ant = make_task("ant-run", sgtest::learn_task_options());
  TrainOptions a = defaults_for("ant-run", Algorithm::Shac);
  a.resume_from = o.checkpoint_path;
  a.threads = 1;
  a.nenv = 4;
  a.iterations = 2;
  try {
    train(*ant, "ant-run", a);
    ADD_FAILURE() << "a cartpole checkpoint resumed an ant run";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("it trains cartpole-swingup, this run ant-run"), std::string::npos) << e.what();
  }
  // a flipped byte, a truncated file, a missing file: std::runtime_error naming the file
  r = o;
  r.resume_from = temp_path("corrupt.sgc");
  r.checkpoint_path.clear();
  std::filesystem::copy_file(o.checkpoint_path, r.resume_from, std::filesystem::copy_options::overwrite_existing);
  {
    std::fstream f(r.resume_from, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x5a');
  }
  try {
    train(*task, "cartpole-swingup", r);
    ADD_FAILURE() << "a corrupt checkpoint was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(r.resume_from), std::string::npos) << e.what();
  }
  std::filesystem::resize_file(r.resume_from, 100);
  EXPECT_THROW(train(*task, "cartpole-swingup", r), std::runtime_error);
  r.resume_from = temp_path("does_not_exist.sgc");
  try {
    train(*task, "cartpole-swingup", r);
    ADD_FAILURE() << "a missing checkpoint was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does_not_exist.sgc: cannot open it"), std::string::npos) << e.what();
  }
  // an ADD run's discriminator options are part of its identity
  if (!sgtest::file_exists(sgtest::data_dir() + "/motions/lafan1_g1/run1_subject2.csv"))
    FAIL() << "no G1 motion data under " << sgtest::data_dir();
  auto g1 = make_task("g1-imitate:run1_subject2", sgtest::learn_task_options(4));
  TrainOptions d = small_g1();
  d.iterations = 2;
  d.horizon = 2;
  d.reward = RewardKind::Add;
  d.add.hidden = {8};
  d.checkpoint_path = temp_path("add.sgc");
  d.checkpoint_every = 1;
  train(*g1, "g1-imitate:run1_subject2", d);
  ASSERT_TRUE(std::filesystem::exists(d.checkpoint_path));
  TrainOptions d2 = d;
  d2.resume_from = d.checkpoint_path;
  d2.checkpoint_path.clear();
  d2.add.replay_capacity = 100;
  auto g1b = make_task("g1-imitate:run1_subject2", sgtest::learn_task_options(4));
  try {
    train(*g1b, "g1-imitate:run1_subject2", d2);
    ADD_FAILURE() << "a checkpoint with other discriminator options was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("add: checkpoint"), std::string::npos) << e.what();
  }
  std::filesystem::remove(d.checkpoint_path);
  std::filesystem::remove(o.checkpoint_path);
  std::filesystem::remove(temp_path("corrupt.sgc"));
}

TEST(CheckpointCli, ResumeGoesOnAndRewritesTheWholeLog) {
  const std::string dir = unique_temp("train_ckpt");
  const std::string base = "train cartpole-swingup --algo shac --envs 4 --iterations 4 --threads 1 --out " + dir +
                           " --data " + sgtest::data_dir();
  const ::Run whole = run_cli(base);
  ASSERT_EQ(whole.status, 0) << whole.err;
  // the log's rows without their timing columns (wall_s, sim_s, adjoint_s, network_s)
  const auto untimed_rows = [&] {
    std::ifstream csv(dir + "/log.csv");
    std::string line;
    std::getline(csv, line);  // header
    std::vector<std::string> rows;
    while (std::getline(csv, line)) {
      std::stringstream fields(line);
      std::string field, kept;
      for (int i = 0; std::getline(fields, field, ','); ++i)
        if (i != 2 && (i < 11 || i > 13)) kept += field + ",";
      rows.push_back(kept);
    }
    return rows;
  };
  const std::vector<std::string> whole_rows = untimed_rows();
  ASSERT_EQ(whole_rows.size(), 4u);
  // the same run writing checkpoints after iterations 2 and 4
  const ::Run checkpointed = run_cli(base + " --checkpoint-every 2");
  ASSERT_EQ(checkpointed.status, 0) << checkpointed.err;
  ASSERT_TRUE(std::filesystem::exists(dir + "/checkpoint.sgc"));
  EXPECT_EQ(untimed_rows(), whole_rows) << "checkpoints changed the run";
  // resuming the last checkpoint (all 4 done) runs nothing: the log is rewritten whole from it
  std::filesystem::remove(dir + "/log.csv");
  const ::Run again = run_cli(base + " --resume " + dir + "/checkpoint.sgc");
  ASSERT_EQ(again.status, 0) << again.err;
  const auto last_line = [](const std::string& out) {
    const std::string s = out.substr(0, out.size() - 1);
    return s.substr(s.rfind('\n') + 1);
  };
  EXPECT_EQ(last_line(again.out), last_line(whole.out));
  EXPECT_EQ(untimed_rows(), whole_rows) << "the resumed run's log holds every iteration";
  // options that differ are named, with exit status 1
  const ::Run bad = run_cli("train cartpole-swingup --algo shac --envs 8 --iterations 4 --out " + dir + " --data " +
                            sgtest::data_dir() + " --resume " + dir + "/checkpoint.sgc");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("envs: checkpoint 4, this run 8"), std::string::npos) << bad.err;
  const ::Run both = run_cli(base + " --resume " + dir + "/checkpoint.sgc --init " + dir + "/policy.sgp");
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.err.find("--init and --resume exclude each other"), std::string::npos) << both.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
