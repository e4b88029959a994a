// What SHAC and PPO share: the simulator and task of a training run, the networks, the
// observation and return normalizers, per-environment episode bookkeeping and the log.
// Episodes end inside a horizon by a mask (the environment steps on, its later rewards and
// gradients ignored) and restart at the horizon's end, so a recorded horizon is one unbroken
// trajectory per environment for the Rollout's backward pass.
#pragma once

#include <omp.h>

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

// Shapes in the comments below use the names of TrainerCore::Sizes: nenv, nq, nv, nu, na, no, H,
// nd. Horizon rows are environment-major: row t of environment e of an array `(H + 1) x nenv x
// w` starts at (t nenv + e) w.
class TrainerCore {
 public:
  TrainerCore(Task& task, const std::string& task_spec, const TrainOptions& options);

  // ---- The run's setup: set by the constructor; the algorithms read it (rng and the
  // simulator's state move on as the run does; train() sets eval after construction).
  Task& task;                          // the environments' task: resets, observations, rewards, episode ends
  std::string task_spec;               // the task as make_task named it (checked by restore, written to policy files)
  TrainOptions options;                // the run's options (train() has made bundles.enabled follow the algorithm)
  std::shared_ptr<const Model> model;  // the task's model
  std::unique_ptr<Simulator> sim;      // nenv environments in double precision on options.backend
  std::mt19937_64 rng;                 // every host draw (first episode limits, resets, noise, minibatch order, ADD); seed options.seed
  EvalSchedule eval;                   // train()'s evaluation schedule (finish_iteration runs it)

  // OpenMP threads of the trainer's per-environment loops (observations, actions, rewards, the
  // SHAC adjoint's per-environment parts): options.threads, or OpenMP's default when it is 0, as
  // the CPU simulator takes it. Two runs side by side (ctest -j2) with threads = 1 then each use
  // one core; these loops used OpenMP's default before, and two such processes on two cores ran
  // a 5 s training test for 27 to 78 s.
  int loop_threads() const { return options.threads > 0 ? options.threads : omp_get_max_threads(); }

  // The run's dimensions: set by the constructor, read everywhere.
  struct Sizes {
    int nenv = 0;  // environments simulated in parallel (options.nenv; N in shac.cpp and ppo.cpp)
    int nq = 0;    // generalized positions per environment (model->nq)
    int nv = 0;    // generalized velocities per environment (model->nv)
    int nu = 0;    // controls per environment (model->nu)
    int na = 0;    // actions: the actor's outputs (Task::act_dim())
    int no = 0;    // observations: the networks' inputs (Task::obs_dim())
    int H = 0;     // control steps per horizon (options.horizon; SHAC's H)
    int nd = 0;    // ADD difference features (Task::add_dim() with RewardKind::Add, else 0)
  };
  Sizes sizes;

  // The networks and the normalizers: built by the constructor (or warm_start, restore), trained
  // by the algorithms (apply_actor_update, Shac::fit_critic, train_ppo), the normalizers and the
  // discriminator updated by finish_horizon; read by policy_file and store.
  struct Networks {
    Mlp<float> actor;                        // no -> na  the policy's mean action μ(x)
    std::vector<float> log_std;              // na        log σ of the Gaussian policy (state-independent)
    std::vector<Mlp<float>> critics;         // options.critic_ensemble x (no -> 1)  values V(x) (PPO uses critics[0])
    std::vector<Mlp<float>> target_critics;  // as critics  SHAC's V', moved towards critics by Polyak averaging
    std::unique_ptr<AddDiscriminator> add;   // nd -> 1  RewardKind::Add's discriminator (null with the task's reward)
    RunningMeanStd obs_rms;                  // no  observation statistics (used with options.normalize_obs)
    RunningMeanStd ret_rms;                  // 1   discounted-return statistics (reward_scale with options.normalize_returns)
  };
  Networks net;

  // One horizon's records (host memory): written by start_horizon, observe, actor_forward,
  // sample_actions / draw_noise and record_step / score_step (or, with the backend policy loop,
  // by PolicyLoop::download into Q, V, OBS, X, MU, A); read by the algorithms' losses and by
  // finish_horizon. Overwritten every iteration; not in checkpoints.
  struct HorizonBuffers {
    std::vector<double> Q;          // (H + 1) x nenv x nq  qpos of the states s_0 .. s_H
    std::vector<double> V;          // (H + 1) x nenv x nv  qvel of the same
    std::vector<double> OBS;        // (H + 1) x nenv x no  raw observations (zeroed where non-finite)
    std::vector<float> X;           // (H + 1) x nenv x no  normalized observations: the networks' inputs
    std::vector<double> XD;         // nenv x no            one row of X in double (observe's scratch)
    std::vector<float> MU;          // H x nenv x na        actor means μ
    std::vector<float> EPS;         // H x nenv x na        standard normal noise ε
    std::vector<double> A;          // H x nenv x na        actions a = μ + σ ε
    std::vector<double> CTRL;       // nenv x nu            controls of the step being taken (from A row t)
    std::vector<double> R;          // H x nenv             rewards (task units, action-rate penalty included)
    std::vector<double> DELTA;      // H x nenv x nd        ADD: Δ of state t + 1 (zeros where inactive; empty without ADD)
    std::vector<int> steps_active;  // nenv  k_e: steps before the episode ended in this horizon (H if it did not)
    std::vector<char> terminated;   // nenv  the episode ended by a failure (no bootstrap) rather than a truncation
  };
  HorizonBuffers buf;

  // Every environment's episode, across horizons (an episode runs on over horizon ends), and
  // the completed episodes' statistics: set by the constructor, advanced by finish_horizon,
  // read by score_step (limit), episode_t and base_log; in checkpoints.
  struct Episodes {
    std::vector<int> step;               // nenv  the episode's step at the horizon's start
    std::vector<int> limit;              // nenv  its length limit (the task's, or shorter for the first episodes)
    std::vector<char> counted;           // nenv  whether it enters the return statistics (done_returns)
    std::vector<double> return_so_far;   // nenv  its undiscounted return (task units) before this horizon
    std::vector<double> running_return;  // nenv  γ running_return + r at every step, 0 at its start: what ret_rms learns
    std::deque<double> done_returns;     // <= 64  returns of the last completed episodes
    std::deque<double> done_lengths;     // <= 64  their lengths (steps), in the same order
  };
  Episodes episodes;

  // What the current iteration adds to its log beyond the records: written by start_horizon and
  // score_step (nonfinite) and finish_horizon (disc_*), read by base_log and finish_iteration.
  struct IterationStats {
    int nonfinite = 0;     // environments masked this iteration for a non-finite state or reward
    double disc_loss = 0;  // ADD: the last finish_horizon's discriminator loss (0 without ADD)
    double disc_s = 0;     // ADD: seconds the last finish_horizon spent on the discriminator
  };
  IterationStats stats;

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
  // whether step t of environment e is inside its episode (t < k_e)
  bool active(int t, int e) const { return t < buf.steps_active[e]; }
  // the episode step of horizon row t of environment e
  int episode_t(int e, int t) const { return episodes.step[e] + t; }

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
    return !options.checkpoint_path.empty() && options.checkpoint_every > 0 &&
           ((it + 1) % options.checkpoint_every == 0 || it + 1 == options.iterations);
  }

  // Rows of the horizon buffers: state t of environment e (qpos nq, qvel nv), its raw
  // observation (no), normalized observation row t of every environment (nenv x no), action
  // row t of environment e (na).
  double* q(int t, int e) { return buf.Q.data() + (static_cast<std::size_t>(t) * sizes.nenv + e) * sizes.nq; }
  double* v(int t, int e) { return buf.V.data() + (static_cast<std::size_t>(t) * sizes.nenv + e) * sizes.nv; }
  double* obs(int t, int e) { return buf.OBS.data() + (static_cast<std::size_t>(t) * sizes.nenv + e) * sizes.no; }
  float* x(int t) { return buf.X.data() + static_cast<std::size_t>(t) * sizes.nenv * sizes.no; }
  double* a(int t, int e) { return buf.A.data() + (static_cast<std::size_t>(t) * sizes.nenv + e) * sizes.na; }

 private:
  std::chrono::steady_clock::time_point start_;  // when the constructor ran (seconds_since_start)
  double restored_seconds_ = 0;      // a resumed run's training time before the resume
  double eval_seconds_ = 0;          // spent in evaluations, not training time
  std::vector<double> iteration_rewards_;  // up to H x nenv  this iteration's rewards of active steps (mean_step_reward)
  std::vector<double> step_tracking_;  // nenv  this step's tracking errors (NaN: none)
  double tracking_sum_ = 0;          // this iteration's sum of finite step_tracking_ entries
  std::vector<int> status_;          // nenv  the simulator's status after the step
  std::vector<char> ended_, failed_;  // nenv  record_step's flags (failed: 1 terminated, 2 non-finite)
  long tracking_n_ = 0;              // how many entries tracking_sum_ has
  std::vector<float> actor_params_;  // actor parameters + na log_std, for apply_actor_update
  std::vector<double> prev_action_;  // nenv x na  the previous horizon's last actions
  std::vector<double> add_samples_;  // H nenv x nd  the discriminator's rows of one horizon
  std::vector<double> add_r_;        // nenv  one step's discriminator rewards (score_step)
};

TrainResult train_shac(TrainerCore& core, const std::function<void(const IterationLog&)>& on_iteration);
TrainResult train_ppo(TrainerCore& core, const std::function<void(const IterationLog&)>& on_iteration);

}  // namespace stiffgrad::learn
