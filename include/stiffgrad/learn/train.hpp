// stiffgrad — policy learning from C++: SHAC, SHAC with Bundled Contact Gradients, and PPO.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stiffgrad/bundle.hpp"
#include "stiffgrad/learn/add.hpp"
#include "stiffgrad/learn/policy_file.hpp"
#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::learn {

enum class Algorithm { Shac, ShacBcg, Ppo };
// The reward a run optimizes: the task's own (Task::reward), or the ADD discriminator's
// (stiffgrad/learn/add.hpp; tasks with Task::add_dim() > 0). Either way `eval` reports the task's.
enum class RewardKind { Task, Add };
std::string reward_name(RewardKind r);           // "task", "add"
RewardKind parse_reward(const std::string& name);  // std::invalid_argument otherwise
std::string algorithm_name(Algorithm a);    // "shac", "shac-bcg", "ppo"
Algorithm parse_algorithm(const std::string& name);  // std::invalid_argument otherwise

// Hyperparameters. Defaults are BCG's SHAC settings (docs/references/bcg-diffmjx-shac.md) where it
// gives them; `defaults_for(task, algo)` adapts the network sizes and rates to small tasks.
enum class PolicyLoopKind { Auto, Host, Backend };
std::string policy_loop_name(PolicyLoopKind k);
PolicyLoopKind parse_policy_loop(const std::string& name);  // auto, host, backend

struct TrainOptions {
  Algorithm algorithm = Algorithm::Shac;
  int nenv = 64;
  int iterations = 500;
  std::uint64_t seed = 0;
  Backend backend = Backend::Cpu;
  int threads = 0;                 // CPU backend: OpenMP threads of the simulator and of the
                                   // trainer's per-environment loops (0: OpenMP's default)
  int horizon = 32;                // control steps per iteration (SHAC's short horizon; PPO's rollout length)
  double gamma = 0.99;
  double lambda = 0.95;            // TD(λ) (SHAC critic) and GAE (PPO)
  std::vector<int> actor_hidden{512, 256, 128};
  std::vector<int> critic_hidden{256, 256};
  double actor_lr = 5e-3;
  double critic_lr = 2e-3;
  double lr_end = 1e-5;            // both rates decay linearly to this over the iterations
  double beta1 = 0.7, beta2 = 0.95;  // Adam
  double actor_grad_clip = 1.0;    // gradient-norm clipping
  double critic_grad_clip = 10.0;
  int critic_iterations = 16;      // SHAC: critic epochs per iteration, each over
  int critic_minibatches = 4;      //   this many minibatches of the horizon's samples
  double target_alpha = 0.995;     // target critic θ' ← α θ' + (1 - α) θ
  double init_log_std = 0.0;       // action std 1 at the start, learned
  bool normalize_obs = true;
  bool normalize_returns = true;
  BundleOptions bundles;           // SHAC+BCG (enabled by the algorithm); B, H, τ, σ
  RewardKind reward = RewardKind::Task;
  AddOptions add;                  // the discriminator with RewardKind::Add
  // r_t −= action_rate_penalty · mean_k (a_t,k − a_{t−1},k)² (no term at an episode's first step);
  // differentiated by SHAC into both actions
  double action_rate_penalty = 0.0;
  int critic_ensemble = 1;         // SHAC: critics (each with its target) whose mean is the value
  // SHAC: where the policy in the loop runs. Host: observations, actor and controls on the host,
  // the state crossing every step (on CUDA a host round trip per step, forward and backward).
  // Backend: where the simulator runs (learn/policy_loop.hpp), nothing crossing per step
  // (bundles included); needs a task with backend kernels. Auto: Backend on CUDA when it can,
  // else Host.
  PolicyLoopKind policy_loop = PolicyLoopKind::Auto;
  // PPO
  int ppo_epochs = 5;
  int ppo_minibatches = 4;
  double ppo_clip = 0.2;
  double ppo_lr = 3e-4;
  double ppo_value_coef = 0.5;     // critic loss weight (its own optimizer; kept for the printed loss)
  double ppo_entropy_coef = 0.0;
  // Warm start (empty: none): the actor's parameters, its log-std and the observation
  // normalizer's statistics come from this policy file (learn/policy_file.hpp; e.g. an earlier
  // run's DIR/policy.sgp), so a run can go on from where another ended, on the same task or
  // another with the same observation and action sizes. Everything else starts as in a fresh
  // run: the critics and their targets, Adam's moments, the return normalizer, the learning-rate
  // schedule, the environments. The file's actor sizes must equal this run's (obs, actor_hidden,
  // actions), else std::invalid_argument naming the file and both; a file without log-std keeps
  // init_log_std.
  std::string init_policy;
  // Checkpoints (every algorithm and reward): after every checkpoint_every-th
  // iteration and after the last, the run's whole state goes to checkpoint_path (written beside
  // it and renamed over it; learn/train_checkpoint.hpp): networks and target critics,
  // Adam's moments, both normalizers, the random generator, every environment's state, solver
  // warm start, last step's contact statistics (the bundle trigger) and episode bookkeeping, the
  // task's episode data, with RewardKind::Add the discriminator (AddDiscriminator::state), the
  // iteration logs so far and the training time. resume_from: start from such a file and run its remaining iterations.
  // Its task, task options and options (all of these but threads, policy_loop, the checkpoint
  // fields and init_policy) must equal this run's, else std::invalid_argument naming each
  // difference. The restored iterations' logs go to on_iteration first, then the new ones. A
  // resumed run equals the uninterrupted one bit for bit.
  std::string checkpoint_path;
  int checkpoint_every = 0;        // 0: no checkpoints
  std::string resume_from;
  // Policy snapshots: after every snapshot_every-th iteration (not the last unless it is one),
  // the policy as it stands to snapshot_dir/policy_itK.sgp (K: iterations done; save_policy's
  // format), e.g. to evaluate a run in MuJoCo at a fraction of its budget. Like evaluations,
  // they count neither in env-steps nor in the training time, and do not change training (so
  // they are not part of the options a resumed run must share).
  std::string snapshot_dir;
  int snapshot_every = 0;          // 0: no snapshots
};

// The options a resumed run must share with its checkpoint, as "key=value" lines.
std::string options_fingerprint(const TrainOptions& o);

// Task-dependent defaults: cartpole-swingup gets small networks ([64, 64]) and faster rates.
TrainOptions defaults_for(const std::string& task, Algorithm algorithm);

// One training iteration's record (a CSV row of `stiffgrad train`).
struct IterationLog {
  int iteration = 0;
  long long env_steps = 0;        // simulated environment-steps so far (nenv x horizon per iteration)
  double wall_s = 0;              // since training started
  double mean_return = 0;         // mean undiscounted return of the last completed episodes (NaN before any)
  double mean_episode_length = 0; // of the same episodes
  double mean_step_reward = 0;    // mean reward per active environment-step in this iteration
  double mean_tracking_error = 0; // imitation tasks: mean key-body error (m) over the same steps (NaN otherwise)
  double actor_loss = 0;          // SHAC: the short-horizon loss; PPO: the clipped surrogate
  double critic_loss = 0;
  double actor_grad_norm = 0;     // before clipping
  double bundle_rate = 0;         // bundles started per environment-step (SHAC+BCG)
  double disc_loss = 0;           // ADD: the discriminator's mean minibatch loss (0 without ADD)
  int nonfinite = 0;              // environments whose state or gradient became non-finite (contained)
  double sim_s = 0, adjoint_s = 0, network_s = 0;  // time in forward simulation, adjoint, networks
  // EvalSchedule's deterministic episodes after this iteration (evaluated false: none, fields NaN)
  bool evaluated = false;
  double eval_return = 0, eval_episode_length = 0, eval_tracking_error = 0;
  int eval_falls = 0, eval_episodes = 0;
};

// Deterministic evaluation while training (`train --eval-every`): after every `every`-th
// iteration and after the last, evaluate_in_stiffgrad of the current policy on `task`, a second
// instance of the training task (evaluation resizes and resets its task, which must not be the
// trainer's). The episodes count neither in env_steps nor in wall_s, and do not change training.
struct EvalSchedule {
  Task* task = nullptr;
  int every = 0;                  // 0: no evaluation
  int episodes = 5;
  std::uint64_t seed = 1;         // the same initial states at every evaluation
};

struct TrainResult {
  std::vector<IterationLog> log;
  PolicyFile policy;
  double final_mean_return = 0;   // the last iteration's mean_return
};

// Trains a policy for `task`; `on_iteration` (may be empty) sees every iteration's record.
TrainResult train(Task& task, const std::string& task_spec, const TrainOptions& options,
                  const std::function<void(const IterationLog&)>& on_iteration = {},
                  const EvalSchedule& eval = {});

// A saved policy at run time: normalizer + actor, deterministic action = actor mean.
class PolicyRunner {
 public:
  explicit PolicyRunner(const PolicyFile& file);
  int obs_dim() const;
  int act_dim() const;
  // actions (n x act_dim) for observations (n x obs_dim), double.
  void act(const double* obs, int n, double* action);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Deterministic episodes of a policy in stiffgrad (`stiffgrad eval --in stiffgrad`).
struct EvalResult {
  int episodes = 0;
  double mean_return = 0;
  double mean_length = 0;
  int falls = 0;                  // episodes in which the root fell below 0.3 m (floating-base robots)
  double tracking_error = 0;      // mean key-body error (m), NaN for tasks without a reference
  double mean_penetration = 0;    // mean over steps of the largest contact penetration (m)
};
EvalResult evaluate_in_stiffgrad(Task& task, const PolicyFile& policy, int episodes, std::uint64_t seed,
                                 Backend backend = Backend::Cpu);

}  // namespace stiffgrad::learn
