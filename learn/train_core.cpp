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

TrainerCore::TrainerCore(Task& t, const std::string& spec, const TrainOptions& opts)
    : task(t), task_spec(spec), options(opts), model(t.model()) {
  const TrainOptions& o = options;
  if (o.nenv < 1) throw std::invalid_argument("train: nenv must be >= 1");
  if (o.horizon < 1) throw std::invalid_argument("train: horizon must be >= 1");
  SimulatorOptions so = task.sim_options();
  so.backend = o.backend;
  so.precision = Precision::Double;
  so.nenv = o.nenv;
  so.threads = o.threads;
  sim = std::make_unique<Simulator>(model, so);
  sizes.nenv = o.nenv; sizes.nq = model->nq; sizes.nv = model->nv; sizes.nu = model->nu;
  sizes.na = task.act_dim(); sizes.no = task.obs_dim(); sizes.H = o.horizon;
  const int nenv = sizes.nenv, nq = sizes.nq, nv = sizes.nv, nu = sizes.nu, na = sizes.na, no = sizes.no, H = sizes.H;
  rng.seed(o.seed);
  net.obs_rms = RunningMeanStd(no);
  net.ret_rms = RunningMeanStd(1);
  net.actor = Mlp<float>(layer_sizes(no, o.actor_hidden, na), o.seed * 7919 + 1, 0.1);
  if (o.critic_ensemble < 1) throw std::invalid_argument("train: critic_ensemble must be >= 1");
  for (int k = 0; k < o.critic_ensemble; ++k)
    net.critics.emplace_back(layer_sizes(no, o.critic_hidden, 1), o.seed * 7919 + 2 + 1000003ull * k);
  net.target_critics = net.critics;
  if (o.action_rate_penalty < 0) throw std::invalid_argument("train: action_rate_penalty must be >= 0");
  if (o.reward == RewardKind::Add) {
    sizes.nd = task.add_dim();
    if (sizes.nd < 1) throw std::invalid_argument("train: " + task.name() + " has no reference features for the ADD reward");
    net.add = std::make_unique<AddDiscriminator>(sizes.nd, H * nenv, o.add, o.seed * 7919 + 3);
    buf.DELTA.assign(static_cast<std::size_t>(H) * nenv * sizes.nd, 0);
    add_samples_.assign(buf.DELTA.size(), 0);
    add_r_.assign(nenv, 0);
  }
  prev_action_.assign(static_cast<std::size_t>(nenv) * na, 0);
  net.log_std.assign(na, static_cast<float>(o.init_log_std));
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
  buf.Q.assign(rows * nq, 0); buf.V.assign(rows * nv, 0); buf.OBS.assign(rows * no, 0); buf.X.assign(rows * no, 0); buf.XD.assign(static_cast<std::size_t>(nenv) * no, 0);
  buf.MU.assign(static_cast<std::size_t>(H) * nenv * na, 0); buf.EPS.assign(buf.MU.size(), 0); buf.A.assign(buf.MU.size(), 0);
  buf.CTRL.assign(static_cast<std::size_t>(nenv) * nu, 0);
  buf.R.assign(static_cast<std::size_t>(H) * nenv, 0);
  buf.steps_active.assign(nenv, H); buf.terminated.assign(nenv, 0); episodes.running_return.assign(nenv, 0);
  episodes.step.assign(nenv, 0); episodes.return_so_far.assign(nenv, 0);
  // The first episodes end at random lengths so that the environments' episodes do not stay in
  // phase (every environment swinging up at once, then every one balancing: a per-iteration
  // reward that says more about the phase than about the policy); those shortened episodes are
  // left out of the return statistics.
  episodes.limit.assign(nenv, task.max_episode_steps());
  episodes.counted.assign(nenv, 1);
  if (task.max_episode_steps() > H && nenv > 1) {
    std::uniform_int_distribution<int> first(H, task.max_episode_steps());
    for (int e = 0; e < nenv; ++e) {
      episodes.limit[e] = first(rng);
      episodes.counted[e] = episodes.limit[e] == task.max_episode_steps();
    }
  }
  iteration_rewards_.reserve(static_cast<std::size_t>(H) * nenv);
  step_tracking_.assign(nenv, std::numeric_limits<double>::quiet_NaN());
  ended_.assign(nenv, 0);
  failed_.assign(nenv, 0);
  task.resize(nenv);
  for (int e = 0; e < nenv; ++e) task.reset_env(e, rng, q(0, e), v(0, e));
  sim->set_state(buf.Q.data(), buf.V.data());
  start_ = std::chrono::steady_clock::now();
}

void TrainerCore::warm_start(const PolicyFile& p) {
  const auto sizes_text = [](const std::vector<int>& v) {
    std::string t;
    for (const int x : v) t += (t.empty() ? "" : ", ") + std::to_string(x);
    return "{" + t + "}";
  };
  if (p.actor_sizes != net.actor.sizes())
    throw std::invalid_argument("train: --init " + options.init_policy + ": its actor has sizes " + sizes_text(p.actor_sizes) +
                                ", this run's " + sizes_text(net.actor.sizes()) + " (observations, hidden layers, actions)");
  std::copy(p.actor_params.begin(), p.actor_params.end(), net.actor.params());  // load_policy checked the count
  if (!p.log_std.empty()) net.log_std = p.log_std;
  // The actor's inputs must mean what they meant: a run that normalizes needs the file's
  // statistics; one that does not needs a file whose statistics are the identity (what
  // policy_file writes then: mean 0, var 1 - 1e-5) or absent.
  bool identity = true;
  for (std::size_t i = 0; i < p.obs_mean.size(); ++i) identity = identity && p.obs_mean[i] == 0.0 && p.obs_var[i] == 1.0 - 1e-5;
  if (options.normalize_obs) {
    if (p.obs_mean.empty())
      throw std::invalid_argument("train: --init " + options.init_policy + " has no observation statistics; this run normalizes its observations");
    net.obs_rms.set(p.obs_mean, p.obs_var, p.obs_count, p.obs_clip);
  } else if (!identity) {
    throw std::invalid_argument("train: --init " + options.init_policy + " normalizes its observations; this run does not");
  }
}

double TrainerCore::seconds_since_start() const {
  return restored_seconds_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() - eval_seconds_;
}

void TrainerCore::start_horizon() {
  sim->get_state(buf.Q.data(), buf.V.data());
  std::fill(buf.steps_active.begin(), buf.steps_active.end(), sizes.H);
  std::fill(buf.terminated.begin(), buf.terminated.end(), 0);
  stats.nonfinite = 0;
  iteration_rewards_.clear();
  tracking_sum_ = 0;
  tracking_n_ = 0;
}

void TrainerCore::observe(int t) {
  const int nenv = sizes.nenv, no = sizes.no;
#pragma omp parallel for schedule(static) num_threads(loop_threads())
  for (int e = 0; e < nenv; ++e) task.observe(e, episode_t(e, t), q(t, e), v(t, e), obs(t, e));
  // a non-finite observation (a diverged environment) is zeroed so that no network row is NaN;
  // the environment is masked by record_step
  for (int e = 0; e < nenv; ++e)
    if (!all_finite(obs(t, e), no)) std::fill(obs(t, e), obs(t, e) + no, 0.0);
  if (options.normalize_obs) net.obs_rms.normalize(obs(t, 0), nenv, buf.XD.data());
  else std::copy(obs(t, 0), obs(t, 0) + static_cast<std::size_t>(nenv) * no, buf.XD.begin());
  for (std::size_t i = 0; i < static_cast<std::size_t>(nenv) * no; ++i) x(t)[i] = static_cast<float>(buf.XD[i]);
}

void TrainerCore::actor_forward(int t, Mlp<float>::Workspace& ws) {
  net.actor.forward(x(t), sizes.nenv, buf.MU.data() + static_cast<std::size_t>(t) * sizes.nenv * sizes.na, ws);
}

void TrainerCore::draw_noise(int t, bool deterministic) {
  const int nenv = sizes.nenv, na = sizes.na;
  float* eps = buf.EPS.data() + static_cast<std::size_t>(t) * nenv * na;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int i = 0; i < nenv * na; ++i) eps[i] = deterministic ? 0.0f : normal(rng);
}

void TrainerCore::sample_actions(int t, bool deterministic) {
  const int nenv = sizes.nenv, na = sizes.na, nu = sizes.nu;
  draw_noise(t, deterministic);
  const float* eps = buf.EPS.data() + static_cast<std::size_t>(t) * nenv * na;
  const float* mu = buf.MU.data() + static_cast<std::size_t>(t) * nenv * na;
  for (int e = 0; e < nenv; ++e)
    for (int k = 0; k < na; ++k)
      a(t, e)[k] = static_cast<double>(mu[e * na + k]) + std::exp(static_cast<double>(net.log_std[k])) * eps[e * na + k];
#pragma omp parallel for schedule(static) num_threads(loop_threads())
  for (int e = 0; e < nenv; ++e) task.action_to_ctrl(e, episode_t(e, t), a(t, e), buf.CTRL.data() + static_cast<std::size_t>(e) * nu);
}

void TrainerCore::record_step(int t) {
  sim->get_state(buf.Q.data() + static_cast<std::size_t>(t + 1) * sizes.nenv * sizes.nq,
                 buf.V.data() + static_cast<std::size_t>(t + 1) * sizes.nenv * sizes.nv);
  status_ = sim->status();
  score_step(t, status_.data());
}

void TrainerCore::score_step(int t, const int* status) {
  const int nenv = sizes.nenv, nq = sizes.nq, nv = sizes.nv, nd = sizes.nd;
  const TrainOptions& o = options;
  double* r = buf.R.data() + static_cast<std::size_t>(t) * nenv;
  std::vector<char>& ended = ended_;
  std::vector<char>& failed = failed_;
  std::fill(ended.begin(), ended.end(), 0);
  std::fill(failed.begin(), failed.end(), 0);
#pragma omp parallel for schedule(static) num_threads(loop_threads())
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
    if (!net.add) {
      r[e] = task.reward(e, te, q(t + 1, e), v(t + 1, e), a(t, e));
      if (!std::isfinite(r[e])) { r[e] = 0; failed[e] = 2; ended[e] = 1; continue; }
    }
    step_tracking_[e] = task.tracking_error(e, te, q(t + 1, e), v(t + 1, e));
    if (task.terminated(e, te, q(t + 1, e), v(t + 1, e))) { failed[e] = 1; ended[e] = 1; }
    else if (te >= episodes.limit[e]) ended[e] = 1;
  }
  if (net.add) {  // the discriminator's reward of the states reached (row t of DELTA: state t + 1)
    double* delta = buf.DELTA.data() + static_cast<std::size_t>(t) * nenv * nd;
#pragma omp parallel for schedule(static) num_threads(loop_threads())
    for (int e = 0; e < nenv; ++e) {
      double* row = delta + static_cast<std::size_t>(e) * nd;
      if (active(t, e) && failed[e] != 2) task.add_delta(e, episode_t(e, t + 1), q(t + 1, e), v(t + 1, e), row);
      else std::fill(row, row + nd, 0.0);
    }
    net.add->reward(delta, nenv, add_r_.data());
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
      buf.steps_active[e] = t + 1;
      buf.terminated[e] = failed[e] != 0;
      if (failed[e] == 2) ++stats.nonfinite;
    }
  }
}

double TrainerCore::reward_scale() const {
  return options.normalize_returns ? 1.0 / std::sqrt(net.ret_rms.var()[0] + 1e-5) : 1.0;
}

const double* TrainerCore::previous_action(int t, int e) const {
  if (episode_t(e, t) == 0) return nullptr;
  return t > 0 ? buf.A.data() + (static_cast<std::size_t>(t - 1) * sizes.nenv + e) * sizes.na
               : prev_action_.data() + static_cast<std::size_t>(e) * sizes.na;
}

double TrainerCore::action_rate(int t, int e) const {
  const int na = sizes.na;
  const double* p = previous_action(t, e);
  if (!p) return 0.0;
  const double* at = buf.A.data() + (static_cast<std::size_t>(t) * sizes.nenv + e) * na;
  double s = 0;
  for (int k = 0; k < na; ++k) s += (at[k] - p[k]) * (at[k] - p[k]);
  return s / na;
}

void TrainerCore::finish_horizon() {
  const int nenv = sizes.nenv, nq = sizes.nq, nv = sizes.nv, na = sizes.na, H = sizes.H, nd = sizes.nd;
  const TrainOptions& o = options;
  Episodes& ep = episodes;
  if (o.normalize_obs) net.obs_rms.update(buf.OBS.data(), (H + 1) * nenv);
  stats.disc_loss = 0;
  if (net.add) {  // the discriminator learns from this horizon's active steps
    const auto t0 = std::chrono::steady_clock::now();
    int n = 0;
    for (int t = 0; t < H; ++t)
      for (int e = 0; e < nenv; ++e) {
        if (!active(t, e)) continue;
        const double* row = buf.DELTA.data() + (static_cast<std::size_t>(t) * nenv + e) * nd;
        if (!all_finite(row, nd)) continue;
        std::copy(row, row + nd, add_samples_.begin() + static_cast<std::ptrdiff_t>(n) * nd);
        ++n;
      }
    stats.disc_loss = net.add->update(add_samples_.data(), n, rng);
    stats.disc_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (int e = 0; e < nenv; ++e)
    std::copy(a(H - 1, e), a(H - 1, e) + na, prev_action_.begin() + static_cast<std::ptrdiff_t>(e) * na);
  std::vector<double> rets;
  rets.reserve(static_cast<std::size_t>(H) * nenv);
  bool any_reset = false;
  for (int e = 0; e < nenv; ++e) {
    for (int t = 0; t < buf.steps_active[e]; ++t) {
      const double r = buf.R[static_cast<std::size_t>(t) * nenv + e];
      ep.return_so_far[e] += r;
      ep.running_return[e] = o.gamma * ep.running_return[e] + r;
      rets.push_back(ep.running_return[e]);
    }
    const bool ended = buf.steps_active[e] < H || buf.terminated[e] || episode_t(e, H) >= ep.limit[e];
    if (ended) {
      if (ep.counted[e] || buf.terminated[e]) {  // a failure counts whatever the limit was
        ep.done_returns.push_back(ep.return_so_far[e]);
        ep.done_lengths.push_back(episode_t(e, buf.steps_active[e]));
      }
      while (ep.done_returns.size() > kReturnWindow) { ep.done_returns.pop_front(); ep.done_lengths.pop_front(); }
      ep.limit[e] = task.max_episode_steps();
      ep.counted[e] = 1;
      ep.return_so_far[e] = 0;
      ep.step[e] = 0;
      ep.running_return[e] = 0;
      task.reset_env(e, rng, q(H, e), v(H, e));
      any_reset = true;
    } else {
      ep.step[e] += H;
    }
  }
  if (o.normalize_returns && !rets.empty()) net.ret_rms.update(rets.data(), static_cast<int>(rets.size()));
  // a new start for the environments whose episode ended; the others continue from where they
  // are (set_state restarts every environment's constraint warm start, which only changes
  // where the solver starts)
  if (any_reset) sim->set_state(buf.Q.data() + static_cast<std::size_t>(H) * nenv * nq, buf.V.data() + static_cast<std::size_t>(H) * nenv * nv);
}

IterationLog TrainerCore::base_log(int iteration, double wall_s) const {
  const std::deque<double>& done_returns = episodes.done_returns;
  const std::deque<double>& done_lengths = episodes.done_lengths;
  IterationLog l;
  l.iteration = iteration;
  l.env_steps = static_cast<long long>(iteration + 1) * sizes.nenv * sizes.H;
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
  l.nonfinite = stats.nonfinite;
  return l;
}

void TrainerCore::apply_actor_update(Adam<float>& opt, const std::vector<float>& grad) {
  Mlp<float>& actor = net.actor;
  std::vector<float>& log_std = net.log_std;
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
  const TrainOptions& o = options;
  finish_horizon();
  const IterationLog after = base_log(log.iteration, seconds_since_start());
  log.mean_return = after.mean_return;
  log.mean_episode_length = after.mean_episode_length;
  log.wall_s = after.wall_s;
  log.mean_tracking_error = after.mean_tracking_error;
  log.disc_loss = stats.disc_loss;
  log.network_s += stats.disc_s;
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
  p.algorithm = algorithm_name(options.algorithm);
  p.task_options = task.options_words();  // `eval` runs the policy on this task
  p.actor_sizes = net.actor.sizes();
  p.actor_params = net.actor.param_vector();
  p.log_std = net.log_std;
  if (options.normalize_obs) {
    p.obs_mean = net.obs_rms.mean();
    p.obs_var = net.obs_rms.var();
    p.obs_count = net.obs_rms.count();
    p.obs_clip = net.obs_rms.clip();
  } else {
    // identity normalization: mean 0, var 1 - 1e-5 (normalize divides by sqrt(var + 1e-5)), no clamp
    p.obs_mean.assign(sizes.no, 0.0);
    p.obs_var.assign(sizes.no, 1.0 - 1e-5);
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
