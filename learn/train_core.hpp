// What SHAC and PPO share: the simulator and task of a training run, the networks, the
// observation and return normalizers, per-environment episode bookkeeping and the log.
// Episodes end inside a horizon by a mask (the environment steps on, its later rewards and
// gradients ignored) and restart at the horizon's end, so a recorded horizon is one unbroken
// trajectory per environment for the Rollout's backward pass.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "learn/train_checkpoint.hpp"
#include "stiffgrad/learn/add.hpp"
#include "stiffgrad/learn/gaussian.hpp"
#include "stiffgrad/learn/mlp.hpp"
#include "stiffgrad/learn/normalizer.hpp"
#include "stiffgrad/learn/optim.hpp"
#include "stiffgrad/learn/train.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::learn {

class TrainerCore {
 public:
  TrainerCore(Task& task, const std::string& task_spec, const TrainOptions& options);

  Task& task;
  std::string task_spec;
  TrainOptions o;
  std::shared_ptr<const Model> model;
  std::unique_ptr<Simulator> sim;
  int nenv, nq, nv, nu, na, no, H;
  std::mt19937_64 rng;
  RunningMeanStd obs_rms, ret_rms;
  Mlp<float> actor;
  std::vector<Mlp<float>> critics, target_critics;  // critic_ensemble each (PPO uses critics[0])
  std::unique_ptr<AddDiscriminator> add;            // RewardKind::Add
  int nd = 0;                                       // Task::add_dim() with ADD
  std::vector<float> log_std;   // na

  // horizon buffers (host, environment-major rows)
  std::vector<double> Q, V;      // (H + 1) x nenv x nq, nv  states
  std::vector<double> OBS;       // (H + 1) x nenv x no      raw observations
  std::vector<float> X;          // (H + 1) x nenv x no      normalized observations
  std::vector<double> XD;        // nenv x no                one row of them in double (scratch)
  std::vector<float> MU;         // H x nenv x na            actor means
  std::vector<float> EPS;        // H x nenv x na            standard normal noise
  std::vector<double> A;         // H x nenv x na            actions
  std::vector<double> CTRL;      // nenv x nu
  std::vector<double> R;         // H x nenv                 rewards (task units)
  std::vector<double> DELTA;     // H x nenv x nd            ADD: Δ of state t + 1 (zeros where inactive)
  std::vector<int> steps_active; // nenv  k_e: steps before the episode ended in this horizon (H if not)
  std::vector<char> terminated_; // nenv  ended by a failure (no bootstrap) rather than truncation
  std::vector<double> ret_run;   // nenv  running discounted return (return normalization)

  // episodes
  std::vector<int> ep_step;      // nenv  episode step at the horizon's start
  std::vector<int> ep_limit;     // nenv  the episode's length limit (the task's, or shorter for the first)
  std::vector<char> ep_counted;  // nenv  whether the episode enters the return statistics
  std::vector<double> ep_return; // nenv
  std::deque<double> done_returns, done_lengths;  // the last completed episodes
  int nonfinite_this_iteration = 0;

  // the start of an iteration: states of every environment into Q/V row 0 (after resets)
  void start_horizon();
  // observation rows t of OBS and X from Q/V row t (normalized with the current statistics)
  void observe(int t);
  // actor means for X row t into MU row t (ws: the actor workspace to keep)
  void actor_forward(int t, Mlp<float>::Workspace& ws);
  // actions A row t = MU + σ EPS (sampled here), controls from them into CTRL
  void sample_actions(int t, bool deterministic = false);
  // EPS row t alone (what sample_actions draws first; the same draws from rng)
  void draw_noise(int t, bool deterministic = false);
  // after the simulator stepped from row t: row t + 1 of Q/V, rewards R row t, episode ends
  void record_step(int t);
  // record_step's second half, with Q/V row t + 1 in place and the simulator's status after
  // the step (nenv): rewards R row t, tracking, episode ends (a policy loop on the backend
  // calls it after the horizon, for every t in order)
  void score_step(int t, const int* status);
  // the end of an iteration: episode bookkeeping, normalizer updates, resets of ended episodes
  void finish_horizon();
  double reward_scale() const;   // 1 / std of the discounted return (1 without normalization)
  // the action before A row t of environment e (null at an episode's first step), and the
  // action-rate term mean_k (a_t,k − a_{t−1},k)² (0 there)
  const double* previous_action(int t, int e) const;
  double action_rate(int t, int e) const;
  double disc_loss = 0, disc_s = 0;  // the last finish_horizon's discriminator loss and time
  bool active(int t, int e) const { return t < steps_active[e]; }
  int episode_t(int e, int t) const { return ep_step[e] + t; }

  IterationLog base_log(int iteration, double wall_s) const;
  // θ ← Adam step on [actor parameters; log_std] with `grad` (the same layout)
  void apply_actor_update(Adam<float>& opt, const std::vector<float>& grad);
  // the end of an iteration: finish_horizon, then the episode statistics into `log`, which is
  // appended to result and passed to on_iteration
  void finish_iteration(IterationLog log, TrainResult& result, const std::function<void(const IterationLog&)>& on_iteration);
  PolicyFile policy_file() const;
  // TrainOptions::init_policy: the actor, its log-std and the observation statistics from p
  void warm_start(const PolicyFile& p);
  // training time since the start, without the time spent in `eval` episodes (a resumed run
  // adds its checkpoint's)
  double seconds_since_start() const;
  // TrainOptions::checkpoint_path / resume_from: everything this object holds for the next
  // iteration, with the logs of the `done` iterations run so far, into f; restore reads it back
  // (after checking that the task and options match), appends its logs to `log` and returns the
  // iterations done. The algorithm's optimizer states are its own (Shac::store / restore).
  void store(CheckpointFile& f, const std::vector<IterationLog>& log, int done) const;
  int restore(const CheckpointFile& f, std::vector<IterationLog>& log);
  // The algorithm's optimizers by name (their moments and step counts go into checkpoints).
  using NamedOptimizers = std::vector<std::pair<std::string, Adam<float>*>>;
  // The start of a run: with TrainOptions::resume_from, everything restored (this object and
  // `optimizers`), the restored logs appended to result and passed to on_iteration; returns the
  // first iteration to run (0 without a resume).
  int begin_run(TrainResult& result, const NamedOptimizers& optimizers,
                const std::function<void(const IterationLog&)>& on_iteration);
  // After iteration `it`'s finish_iteration: the checkpoint when one is due.
  void checkpoint_after(int it, const TrainResult& result, const NamedOptimizers& optimizers) const;
  // whether to write a checkpoint after iteration `it` (0-based)
  bool checkpoint_due(int it) const {
    return !o.checkpoint_path.empty() && o.checkpoint_every > 0 &&
           ((it + 1) % o.checkpoint_every == 0 || it + 1 == o.iterations);
  }
  EvalSchedule eval;  // train()'s

  double* q(int t, int e) { return Q.data() + (static_cast<std::size_t>(t) * nenv + e) * nq; }
  double* v(int t, int e) { return V.data() + (static_cast<std::size_t>(t) * nenv + e) * nv; }
  double* obs(int t, int e) { return OBS.data() + (static_cast<std::size_t>(t) * nenv + e) * no; }
  float* x(int t) { return X.data() + static_cast<std::size_t>(t) * nenv * no; }
  double* a(int t, int e) { return A.data() + (static_cast<std::size_t>(t) * nenv + e) * na; }

 private:
  std::chrono::steady_clock::time_point start_;
  double restored_seconds_ = 0;      // a resumed run's training time before the resume
  double eval_seconds_ = 0;          // spent in evaluations, not training time
  std::vector<double> iteration_rewards_;
  std::vector<double> step_tracking_;  // nenv  this step's tracking errors (NaN: none)
  double tracking_sum_ = 0;
  std::vector<int> status_;          // nenv  the simulator's status after the step
  std::vector<char> ended_, failed_;  // nenv  record_step's flags (failed: 1 terminated, 2 non-finite)
  long tracking_n_ = 0;
  std::vector<float> actor_params_;  // actor parameters + log_std, for apply_actor_update
  std::vector<double> prev_action_;  // nenv x na  the previous horizon's last actions
  std::vector<double> add_samples_;  // H nenv x nd  the discriminator's rows of one horizon
  std::vector<double> add_r_;        // nenv
};

TrainResult train_shac(TrainerCore& core, const std::function<void(const IterationLog&)>& on_iteration);
TrainResult train_ppo(TrainerCore& core, const std::function<void(const IterationLog&)>& on_iteration);

}  // namespace stiffgrad::learn
