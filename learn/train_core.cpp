#include "learn/train_core.hpp"

#include "stiffgrad/learn/policy_file.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace stiffgrad::learn {

namespace {
constexpr std::size_t kReturnWindow = 64;  // completed episodes averaged for mean_return

std::vector<int> layer_sizes(int in, const std::vector<int>& hidden, int out) {
  std::vector<int> s{in};
  s.insert(s.end(), hidden.begin(), hidden.end());
  s.push_back(out);
  return s;
}

bool all_finite(const double* x, int n) {
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}
}  // namespace

std::string algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Shac: return "shac";
    case Algorithm::ShacBcg: return "shac-bcg";
    case Algorithm::Ppo: return "ppo";
  }
  return "?";
}

std::string policy_loop_name(PolicyLoopKind k) {
  switch (k) {
    case PolicyLoopKind::Auto: return "auto";
    case PolicyLoopKind::Host: return "host";
    case PolicyLoopKind::Backend: return "backend";
  }
  return "?";
}

PolicyLoopKind parse_policy_loop(const std::string& name) {
  if (name == "auto") return PolicyLoopKind::Auto;
  if (name == "host") return PolicyLoopKind::Host;
  if (name == "backend") return PolicyLoopKind::Backend;
  throw std::invalid_argument("unknown policy loop '" + name + "' (auto, host, backend)");
}

std::string reward_name(RewardKind r) { return r == RewardKind::Add ? "add" : "task"; }

RewardKind parse_reward(const std::string& name) {
  if (name == "task") return RewardKind::Task;
  if (name == "add") return RewardKind::Add;
  throw std::invalid_argument("unknown reward '" + name + "' (task, add)");
}

Algorithm parse_algorithm(const std::string& name) {
  if (name == "shac") return Algorithm::Shac;
  if (name == "shac-bcg") return Algorithm::ShacBcg;
  if (name == "ppo") return Algorithm::Ppo;
  throw std::invalid_argument("unknown algorithm '" + name + "' (shac, shac-bcg, ppo)");
}

TrainOptions defaults_for(const std::string& task, Algorithm algorithm) {
  TrainOptions o;
  o.algorithm = algorithm;
  if (task == "cartpole-swingup") {
    // a 5-dimensional, smooth task: small networks, faster rates, no return normalization
    o.actor_hidden = {64, 64};
    o.critic_hidden = {64, 64};
    o.actor_lr = 1e-2;
    o.critic_lr = 1e-3;
    o.target_alpha = 0.2;
    o.normalize_returns = false;
    o.ppo_lr = 1e-3;
  } else if (task == "ant-run") {
    o.actor_hidden = {128, 64, 32};
    o.critic_hidden = {64, 64};
    o.actor_lr = 2e-3;
    o.critic_lr = 2e-3;
    o.target_alpha = 0.4;
  }
  if (task.rfind("g1-imitate:", 0) == 0) {
    // BCG's G1 settings: the action-rate penalty (all algorithms: it is part of the reward) and
    // SHAC's critic ensemble of 3
    o.action_rate_penalty = 0.8;
    if (algorithm != Algorithm::Ppo) o.critic_ensemble = 3;
  }
  if (algorithm == Algorithm::ShacBcg) {
    // BCG's bundle settings: B = 10 branches for H = 2 control steps when the largest contact
    // normal force exceeds τ = 400 N, σp = 1 cm, σv = 2 cm/s
    o.bundles.enabled = true;
    o.bundles.branches = 10;
    o.bundles.steps = 2;
    o.bundles.tau = 400.0;
    o.bundles.sigma_p = 0.01;
    o.bundles.sigma_v = 0.02;
  }
  return o;
}

TrainerCore::TrainerCore(Task& t, const std::string& spec, const TrainOptions& options)
    : task(t), task_spec(spec), o(options), model(t.model()) {
  if (o.nenv < 1) throw std::invalid_argument("train: nenv must be >= 1");
  if (o.horizon < 1) throw std::invalid_argument("train: horizon must be >= 1");
  SimulatorOptions so = task.sim_options();
  so.backend = o.backend;
  so.precision = Precision::Double;
  so.nenv = o.nenv;
  so.threads = o.threads;
  sim = std::make_unique<Simulator>(model, so);
  nenv = o.nenv; nq = model->nq; nv = model->nv; nu = model->nu;
  na = task.act_dim(); no = task.obs_dim(); H = o.horizon;
  rng.seed(o.seed);
  obs_rms = RunningMeanStd(no);
  ret_rms = RunningMeanStd(1);
  actor = Mlp<float>(layer_sizes(no, o.actor_hidden, na), o.seed * 7919 + 1, 0.1);
  if (o.critic_ensemble < 1) throw std::invalid_argument("train: critic_ensemble must be >= 1");
  for (int k = 0; k < o.critic_ensemble; ++k)
    critics.emplace_back(layer_sizes(no, o.critic_hidden, 1), o.seed * 7919 + 2 + 1000003ull * k);
  target_critics = critics;
  if (o.action_rate_penalty < 0) throw std::invalid_argument("train: action_rate_penalty must be >= 0");
  if (o.reward == RewardKind::Add) {
    nd = task.add_dim();
    if (nd < 1) throw std::invalid_argument("train: " + task.name() + " has no reference features for the ADD reward");
    add = std::make_unique<AddDiscriminator>(nd, H * nenv, o.add, o.seed * 7919 + 3);
    DELTA.assign(static_cast<std::size_t>(H) * nenv * nd, 0);
    add_samples_.assign(DELTA.size(), 0);
    add_r_.assign(nenv, 0);
  }
  prev_action_.assign(static_cast<std::size_t>(nenv) * na, 0);
  log_std.assign(na, static_cast<float>(o.init_log_std));
  if (o.checkpoint_every < 0) throw std::invalid_argument("train: checkpoint_every must be >= 0");
  if (o.snapshot_every < 0) throw std::invalid_argument("train: snapshot_every must be >= 0");
  if (o.snapshot_every > 0 && o.snapshot_dir.empty())
    throw std::invalid_argument("train: snapshot_every > 0 needs a snapshot_dir");
  if (!o.checkpoint_path.empty() || !o.resume_from.empty()) {
    if (!o.init_policy.empty() && !o.resume_from.empty())
      throw std::invalid_argument("train: --init and --resume exclude each other (a checkpoint holds the whole run)");
  }
  if (!o.init_policy.empty()) warm_start(load_policy(o.init_policy));
  const std::size_t rows = static_cast<std::size_t>(H + 1) * nenv;
  Q.assign(rows * nq, 0); V.assign(rows * nv, 0); OBS.assign(rows * no, 0); X.assign(rows * no, 0); XD.assign(static_cast<std::size_t>(nenv) * no, 0);
  MU.assign(static_cast<std::size_t>(H) * nenv * na, 0); EPS.assign(MU.size(), 0); A.assign(MU.size(), 0);
  CTRL.assign(static_cast<std::size_t>(nenv) * nu, 0);
  R.assign(static_cast<std::size_t>(H) * nenv, 0);
  steps_active.assign(nenv, H); terminated_.assign(nenv, 0); ret_run.assign(nenv, 0);
  ep_step.assign(nenv, 0); ep_return.assign(nenv, 0);
  // The first episodes end at random lengths so that the environments' episodes do not stay in
  // phase (every environment swinging up at once, then every one balancing: a per-iteration
  // reward that says more about the phase than about the policy); those shortened episodes are
  // left out of the return statistics.
  ep_limit.assign(nenv, task.max_episode_steps());
  ep_counted.assign(nenv, 1);
  if (task.max_episode_steps() > H && nenv > 1) {
    std::uniform_int_distribution<int> first(H, task.max_episode_steps());
    for (int e = 0; e < nenv; ++e) {
      ep_limit[e] = first(rng);
      ep_counted[e] = ep_limit[e] == task.max_episode_steps();
    }
  }
  iteration_rewards_.reserve(static_cast<std::size_t>(H) * nenv);
  step_tracking_.assign(nenv, std::numeric_limits<double>::quiet_NaN());
  ended_.assign(nenv, 0);
  failed_.assign(nenv, 0);
  task.resize(nenv);
  for (int e = 0; e < nenv; ++e) task.reset_env(e, rng, q(0, e), v(0, e));
  sim->set_state(Q.data(), V.data());
  start_ = std::chrono::steady_clock::now();
}

void TrainerCore::warm_start(const PolicyFile& p) {
  const auto sizes_text = [](const std::vector<int>& v) {
    std::string t;
    for (const int x : v) t += (t.empty() ? "" : ", ") + std::to_string(x);
    return "{" + t + "}";
  };
  if (p.actor_sizes != actor.sizes())
    throw std::invalid_argument("train: --init " + o.init_policy + ": its actor has sizes " + sizes_text(p.actor_sizes) +
                                ", this run's " + sizes_text(actor.sizes()) + " (observations, hidden layers, actions)");
  std::copy(p.actor_params.begin(), p.actor_params.end(), actor.params());  // load_policy checked the count
  if (!p.log_std.empty()) log_std = p.log_std;
  // The actor's inputs must mean what they meant: a run that normalizes needs the file's
  // statistics; one that does not needs a file whose statistics are the identity (what
  // policy_file writes then: mean 0, var 1 - 1e-5) or absent.
  bool identity = true;
  for (std::size_t i = 0; i < p.obs_mean.size(); ++i) identity = identity && p.obs_mean[i] == 0.0 && p.obs_var[i] == 1.0 - 1e-5;
  if (o.normalize_obs) {
    if (p.obs_mean.empty())
      throw std::invalid_argument("train: --init " + o.init_policy + " has no observation statistics; this run normalizes its observations");
    obs_rms.set(p.obs_mean, p.obs_var, p.obs_count, p.obs_clip);
  } else if (!identity) {
    throw std::invalid_argument("train: --init " + o.init_policy + " normalizes its observations; this run does not");
  }
}

double TrainerCore::seconds_since_start() const {
  return restored_seconds_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() - eval_seconds_;
}

void TrainerCore::start_horizon() {
  sim->get_state(Q.data(), V.data());
  std::fill(steps_active.begin(), steps_active.end(), H);
  std::fill(terminated_.begin(), terminated_.end(), 0);
  nonfinite_this_iteration = 0;
  iteration_rewards_.clear();
  tracking_sum_ = 0;
  tracking_n_ = 0;
}

void TrainerCore::observe(int t) {
#pragma omp parallel for schedule(static)
  for (int e = 0; e < nenv; ++e) task.observe(e, episode_t(e, t), q(t, e), v(t, e), obs(t, e));
  // a non-finite observation (a diverged environment) is zeroed so that no network row is NaN;
  // the environment is masked by record_step
  for (int e = 0; e < nenv; ++e)
    if (!all_finite(obs(t, e), no)) std::fill(obs(t, e), obs(t, e) + no, 0.0);
  if (o.normalize_obs) obs_rms.normalize(obs(t, 0), nenv, XD.data());
  else std::copy(obs(t, 0), obs(t, 0) + static_cast<std::size_t>(nenv) * no, XD.begin());
  for (std::size_t i = 0; i < static_cast<std::size_t>(nenv) * no; ++i) x(t)[i] = static_cast<float>(XD[i]);
}

void TrainerCore::actor_forward(int t, Mlp<float>::Workspace& ws) {
  actor.forward(x(t), nenv, MU.data() + static_cast<std::size_t>(t) * nenv * na, ws);
}

void TrainerCore::draw_noise(int t, bool deterministic) {
  float* eps = EPS.data() + static_cast<std::size_t>(t) * nenv * na;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int i = 0; i < nenv * na; ++i) eps[i] = deterministic ? 0.0f : normal(rng);
}

void TrainerCore::sample_actions(int t, bool deterministic) {
  draw_noise(t, deterministic);
  const float* eps = EPS.data() + static_cast<std::size_t>(t) * nenv * na;
  const float* mu = MU.data() + static_cast<std::size_t>(t) * nenv * na;
  for (int e = 0; e < nenv; ++e)
    for (int k = 0; k < na; ++k)
      a(t, e)[k] = static_cast<double>(mu[e * na + k]) + std::exp(static_cast<double>(log_std[k])) * eps[e * na + k];
#pragma omp parallel for schedule(static)
  for (int e = 0; e < nenv; ++e) task.action_to_ctrl(e, episode_t(e, t), a(t, e), CTRL.data() + static_cast<std::size_t>(e) * nu);
}

void TrainerCore::record_step(int t) {
  sim->get_state(Q.data() + static_cast<std::size_t>(t + 1) * nenv * nq, V.data() + static_cast<std::size_t>(t + 1) * nenv * nv);
  status_ = sim->status();
  score_step(t, status_.data());
}

void TrainerCore::score_step(int t, const int* status) {
  double* r = R.data() + static_cast<std::size_t>(t) * nenv;
  std::vector<char>& ended = ended_;
  std::vector<char>& failed = failed_;
  std::fill(ended.begin(), ended.end(), 0);
  std::fill(failed.begin(), failed.end(), 0);
#pragma omp parallel for schedule(static)
  for (int e = 0; e < nenv; ++e) {
    r[e] = 0;
    step_tracking_[e] = std::numeric_limits<double>::quiet_NaN();
    if (!active(t, e)) continue;
    const int te = episode_t(e, t + 1);
    const bool finite = (status[e] & 1) == 0 && all_finite(q(t + 1, e), nq) && all_finite(v(t + 1, e), nv);
    if (!finite) {
      failed[e] = 2;
      ended[e] = 1;
      continue;
    }
    if (!add) {
      r[e] = task.reward(e, te, q(t + 1, e), v(t + 1, e), a(t, e));
      if (!std::isfinite(r[e])) { r[e] = 0; failed[e] = 2; ended[e] = 1; continue; }
    }
    step_tracking_[e] = task.tracking_error(e, te, q(t + 1, e), v(t + 1, e));
    if (task.terminated(e, te, q(t + 1, e), v(t + 1, e))) { failed[e] = 1; ended[e] = 1; }
    else if (te >= ep_limit[e]) ended[e] = 1;
  }
  if (add) {  // the discriminator's reward of the states reached (row t of DELTA: state t + 1)
    double* delta = DELTA.data() + static_cast<std::size_t>(t) * nenv * nd;
#pragma omp parallel for schedule(static)
    for (int e = 0; e < nenv; ++e) {
      double* row = delta + static_cast<std::size_t>(e) * nd;
      if (active(t, e) && failed[e] != 2) task.add_delta(e, episode_t(e, t + 1), q(t + 1, e), v(t + 1, e), row);
      else std::fill(row, row + nd, 0.0);
    }
    add->reward(delta, nenv, add_r_.data());
    for (int e = 0; e < nenv; ++e) {
      if (!active(t, e) || failed[e] == 2) continue;
      r[e] = add_r_[e];
      if (!std::isfinite(r[e])) { r[e] = 0; failed[e] = 2; ended[e] = 1; }
    }
  }
  if (o.action_rate_penalty > 0)
    for (int e = 0; e < nenv; ++e)
      if (active(t, e) && failed[e] != 2) r[e] -= o.action_rate_penalty * action_rate(t, e);
  for (int e = 0; e < nenv; ++e) {
    if (!active(t, e)) continue;
    iteration_rewards_.push_back(r[e]);
    if (std::isfinite(step_tracking_[e])) { tracking_sum_ += step_tracking_[e]; ++tracking_n_; }
    if (ended[e]) {
      steps_active[e] = t + 1;
      terminated_[e] = failed[e] != 0;
      if (failed[e] == 2) ++nonfinite_this_iteration;
    }
  }
}

double TrainerCore::reward_scale() const {
  return o.normalize_returns ? 1.0 / std::sqrt(ret_rms.var()[0] + 1e-5) : 1.0;
}

const double* TrainerCore::previous_action(int t, int e) const {
  if (episode_t(e, t) == 0) return nullptr;
  return t > 0 ? A.data() + (static_cast<std::size_t>(t - 1) * nenv + e) * na
               : prev_action_.data() + static_cast<std::size_t>(e) * na;
}

double TrainerCore::action_rate(int t, int e) const {
  const double* p = previous_action(t, e);
  if (!p) return 0.0;
  const double* at = A.data() + (static_cast<std::size_t>(t) * nenv + e) * na;
  double s = 0;
  for (int k = 0; k < na; ++k) s += (at[k] - p[k]) * (at[k] - p[k]);
  return s / na;
}

void TrainerCore::finish_horizon() {
  if (o.normalize_obs) obs_rms.update(OBS.data(), (H + 1) * nenv);
  disc_loss = 0;
  if (add) {  // the discriminator learns from this horizon's active steps
    const auto t0 = std::chrono::steady_clock::now();
    int n = 0;
    for (int t = 0; t < H; ++t)
      for (int e = 0; e < nenv; ++e) {
        if (!active(t, e)) continue;
        const double* row = DELTA.data() + (static_cast<std::size_t>(t) * nenv + e) * nd;
        if (!all_finite(row, nd)) continue;
        std::copy(row, row + nd, add_samples_.begin() + static_cast<std::ptrdiff_t>(n) * nd);
        ++n;
      }
    disc_loss = add->update(add_samples_.data(), n, rng);
    disc_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (int e = 0; e < nenv; ++e)
    std::copy(a(H - 1, e), a(H - 1, e) + na, prev_action_.begin() + static_cast<std::ptrdiff_t>(e) * na);
  std::vector<double> rets;
  rets.reserve(static_cast<std::size_t>(H) * nenv);
  bool any_reset = false;
  for (int e = 0; e < nenv; ++e) {
    for (int t = 0; t < steps_active[e]; ++t) {
      const double r = R[static_cast<std::size_t>(t) * nenv + e];
      ep_return[e] += r;
      ret_run[e] = o.gamma * ret_run[e] + r;
      rets.push_back(ret_run[e]);
    }
    const bool ended = steps_active[e] < H || terminated_[e] || episode_t(e, H) >= ep_limit[e];
    if (ended) {
      if (ep_counted[e] || terminated_[e]) {  // a failure counts whatever the limit was
        done_returns.push_back(ep_return[e]);
        done_lengths.push_back(episode_t(e, steps_active[e]));
      }
      while (done_returns.size() > kReturnWindow) { done_returns.pop_front(); done_lengths.pop_front(); }
      ep_limit[e] = task.max_episode_steps();
      ep_counted[e] = 1;
      ep_return[e] = 0;
      ep_step[e] = 0;
      ret_run[e] = 0;
      task.reset_env(e, rng, q(H, e), v(H, e));
      any_reset = true;
    } else {
      ep_step[e] += H;
    }
  }
  if (o.normalize_returns && !rets.empty()) ret_rms.update(rets.data(), static_cast<int>(rets.size()));
  // a new start for the environments whose episode ended; the others continue from where they
  // are (set_state restarts every environment's constraint warm start, which only changes
  // where the solver starts)
  if (any_reset) sim->set_state(Q.data() + static_cast<std::size_t>(H) * nenv * nq, V.data() + static_cast<std::size_t>(H) * nenv * nv);
}

IterationLog TrainerCore::base_log(int iteration, double wall_s) const {
  IterationLog l;
  l.iteration = iteration;
  l.env_steps = static_cast<long long>(iteration + 1) * nenv * H;
  l.wall_s = wall_s;
  if (done_returns.empty()) {
    l.mean_return = l.mean_episode_length = std::numeric_limits<double>::quiet_NaN();
  } else {
    l.mean_return = std::accumulate(done_returns.begin(), done_returns.end(), 0.0) / done_returns.size();
    l.mean_episode_length = std::accumulate(done_lengths.begin(), done_lengths.end(), 0.0) / done_lengths.size();
  }
  l.mean_step_reward = iteration_rewards_.empty()
                           ? 0.0
                           : std::accumulate(iteration_rewards_.begin(), iteration_rewards_.end(), 0.0) /
                                 iteration_rewards_.size();
  l.mean_tracking_error = tracking_n_ ? tracking_sum_ / tracking_n_ : std::numeric_limits<double>::quiet_NaN();
  l.nonfinite = nonfinite_this_iteration;
  return l;
}

void TrainerCore::apply_actor_update(Adam<float>& opt, const std::vector<float>& grad) {
  const std::size_t n = actor.num_params();
  actor_params_.resize(n + log_std.size());
  std::copy(actor.params(), actor.params() + n, actor_params_.begin());
  std::copy(log_std.begin(), log_std.end(), actor_params_.begin() + static_cast<std::ptrdiff_t>(n));
  opt.step(actor_params_.data(), grad.data());
  std::copy(actor_params_.begin(), actor_params_.begin() + static_cast<std::ptrdiff_t>(n), actor.params());
  std::copy(actor_params_.begin() + static_cast<std::ptrdiff_t>(n), actor_params_.end(), log_std.begin());
}

void TrainerCore::finish_iteration(IterationLog log, TrainResult& result,
                                   const std::function<void(const IterationLog&)>& on_iteration) {
  finish_horizon();
  const IterationLog after = base_log(log.iteration, seconds_since_start());
  log.mean_return = after.mean_return;
  log.mean_episode_length = after.mean_episode_length;
  log.wall_s = after.wall_s;
  log.mean_tracking_error = after.mean_tracking_error;
  log.disc_loss = disc_loss;
  log.network_s += disc_s;
  if (eval.task && eval.every > 0 && ((log.iteration + 1) % eval.every == 0 || log.iteration + 1 == o.iterations)) {
    const auto t0 = std::chrono::steady_clock::now();
    const EvalResult e = evaluate_in_stiffgrad(*eval.task, policy_file(), eval.episodes, eval.seed, o.backend);
    eval_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log.evaluated = true;
    log.eval_return = e.mean_return;
    log.eval_episode_length = e.mean_length;
    log.eval_tracking_error = e.tracking_error;
    log.eval_falls = e.falls;
    log.eval_episodes = e.episodes;
  }
  if (o.snapshot_every > 0 && (log.iteration + 1) % o.snapshot_every == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    save_policy(o.snapshot_dir + "/policy_it" + std::to_string(log.iteration + 1) + ".sgp", policy_file());
    eval_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  result.log.push_back(log);
  if (on_iteration) on_iteration(log);
}

PolicyFile TrainerCore::policy_file() const {
  PolicyFile p;
  p.task = task_spec;
  p.algorithm = algorithm_name(o.algorithm);
  p.task_options = task.options_words();  // `eval` runs the policy on this task
  p.actor_sizes = actor.sizes();
  p.actor_params = actor.param_vector();
  p.log_std = log_std;
  if (o.normalize_obs) {
    p.obs_mean = obs_rms.mean();
    p.obs_var = obs_rms.var();
    p.obs_count = obs_rms.count();
    p.obs_clip = obs_rms.clip();
  } else {
    // identity normalization: mean 0, var 1 - 1e-5 (normalize divides by sqrt(var + 1e-5)), no clamp
    p.obs_mean.assign(no, 0.0);
    p.obs_var.assign(no, 1.0 - 1e-5);
    p.obs_count = 1;
    p.obs_clip = 1e30;
  }
  return p;
}

TrainResult train(Task& task, const std::string& task_spec, const TrainOptions& options,
                  const std::function<void(const IterationLog&)>& on_iteration, const EvalSchedule& eval) {
  if (eval.every > 0 && (!eval.task || eval.task == &task || eval.episodes < 1))
    throw std::invalid_argument("train: an evaluation schedule needs its own task instance and episodes >= 1");
  TrainOptions o = options;
  if (o.algorithm == Algorithm::ShacBcg) o.bundles.enabled = true;
  if (o.algorithm != Algorithm::ShacBcg) o.bundles.enabled = false;
  // SHAC's policy in the loop runs where the simulator does or on the host (o.policy_loop); PPO's
  // networks, and every task's rewards and episode bookkeeping, run on the host.
  TrainerCore core(task, task_spec, o);
  core.eval = eval;
  return o.algorithm == Algorithm::Ppo ? train_ppo(core, on_iteration) : train_shac(core, on_iteration);
}

}  // namespace stiffgrad::learn
