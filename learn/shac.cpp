// SHAC (Xu et al. 2022, "Accelerated Policy Learning with Parallel Differentiable Simulation"):
// per iteration, a short horizon of H control steps with the stochastic policy in the loop, the
// actor loss
//   L = -1/(H N) Σ_e [ Σ_{t < k_e} γ^t r̃_t + γ^{k_e} V'(s_{k_e}) ]        (SHAC eq. 5)
// (r̃ = normalized reward, k_e the steps before environment e's episode ended or H, V' the target
// critic, 0 after a failure), its exact gradient through the simulator by Rollout::backward_policy
// (the policy's and the observation's VJPs added to the state adjoint at every step), then the
// critic regressed on TD(λ) targets and the target critic moved towards it. With bundles
// (SHAC+BCG) the Rollout runs the bundle scheduler: a bundled environment's state is its branches'
// mean, which is what the policy sees and what the gradient flows through.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "learn/shac.hpp"

#include <stdexcept>

namespace stiffgrad::learn {

namespace {

// TD(λ) targets of one environment (scaled rewards rs, target-critic values next[t] = V'(s_{t+1})
// for t < k, the last of them replaced by 0 after a failure):
//   G_{k-1} = rs_{k-1} + γ next_{k-1},  G_t = rs_t + γ((1 - λ) next_t + λ G_{t+1}).
void td_lambda(int k, double gamma, double lambda, const double* rs, const double* next, double* G) {
  for (int t = k - 1; t >= 0; --t)
    G[t] = t == k - 1 ? rs[t] + gamma * next[t] : rs[t] + gamma * ((1 - lambda) * next[t] + lambda * G[t + 1]);
}

}  // namespace

namespace {
std::size_t sz(long a) { return static_cast<std::size_t>(a); }
}  // namespace

Shac::Shac(TrainerCore& c)
    : c_(c),
      rollout_(*c.sim, c.sizes.H, c.options.bundles),
      train_ws_(c.net.critics[0].make_workspace(c.sizes.H * c.sizes.nenv)),
      n_actor_(c.net.actor.num_params()),
      actor_opt_(n_actor_ + c.sizes.na, AdamOptions{c.options.actor_lr, c.options.beta1, c.options.beta2, 1e-8}),
      grad_actor_(n_actor_ + c.sizes.na),
      grad_critic_(c.net.critics[0].num_params()),
      step_timer_(make_stream_timer(c.sim->cuda_stream(), c.sizes.H)) {
  const int H = c.sizes.H, N = c.sizes.nenv;
  for (std::size_t k = 0; k < c.net.critics.size(); ++k) {
    critic_ws_.push_back(c.net.target_critics[k].make_workspace(H * N));
    critic_opt_.emplace_back(c.net.critics[k].num_params(), AdamOptions{c.options.critic_lr, c.options.beta1, c.options.beta2, 1e-8});
  }
  member_value_.assign(sz(H) * N, 0);
  member_dx_.assign(sz(H) * N * c.sizes.no, 0);
  if (c.net.add) {
    adj_r_add_.assign(N, 0);
    adj_delta_.assign(sz(N) * c.sizes.nd, 0);
  }
  const bool backend_loop =
      c.options.policy_loop == PolicyLoopKind::Backend ||
      (c.options.policy_loop == PolicyLoopKind::Auto && c.options.backend == Backend::Cuda && has_policy_loop(c.task));
  if (backend_loop) {
    loop_ = make_policy_loop(c.task, *c.sim, c.net.actor, H, c.options.normalize_obs);
    ref_dim_ = c.task.kernel_desc().ref_dim;
    ref_.assign(sz(H + 1) * N * std::max(1, ref_dim_), 0);
    status_rows_.assign(sz(H) * N, 0);
  } else {
    for (int t = 0; t < H; ++t) actor_ws_.push_back(c.net.actor.make_workspace(N));
  }
  dq_.assign(sz(H + 1) * N * c.sizes.nq, 0); dv_.assign(sz(H + 1) * N * c.sizes.nv, 0); dA_.assign(sz(H) * N * c.sizes.na, 0);
  next_value_.assign(sz(H) * N, 0); dvalue_.assign(sz(H) * N, 0); dx_value_.assign(sz(H) * N * c.sizes.no, 0);
  dx_obs_.assign(sz(H) * N * c.sizes.no, 0); dobs_.assign(sz(H + 1) * N * c.sizes.no, 0);
  d_mu_.assign(sz(N) * c.sizes.na, 0); dx_actor_.assign(sz(N) * c.sizes.no, 0);
  dx_actor_d_.assign(sz(N) * c.sizes.no, 0); dobs_t_.assign(sz(N) * c.sizes.no, 0);
  adj_a_.assign(c.sizes.na, 0); rs_.assign(H, 0); nx_.assign(H, 0); G_.assign(H, 0);
  targets_.reserve(sz(H) * N); inputs_.reserve(sz(H) * N * c.sizes.no);
  batch_x_.assign(sz(H) * N * c.sizes.no, 0); batch_y_.assign(sz(H) * N, 0); batch_dy_.assign(sz(H) * N, 0);
}

double Shac::actor_pass(bool gradient) {
  TrainerCore& c = c_;
  const int H = c.sizes.H, N = c.sizes.nenv, na = c.sizes.na, no = c.sizes.no, nq = c.sizes.nq, nv = c.sizes.nv, nu = c.sizes.nu;
  const TrainOptions& o = c.options;
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  sim_s_ = adj_s_ = net_s_ = 0;
  nonfinite_grad_ = 0;

  // ---- forward: H control steps with the policy in the loop
  c.start_horizon();
  if (loop_) {
    forward_backend();
  } else {
    const auto t0 = now();
    rollout_.begin(bundle_seed());
    for (int t = 0; t < H; ++t) {
      c.observe(t);
      c.actor_forward(t, actor_ws_[t]);
      c.sample_actions(t);
      step_timer_->begin();
      rollout_.step(c.buf.CTRL.data());
      step_timer_->end();
      c.record_step(t);
    }
    c.observe(H);  // downloads the last state: every step has run
    const double steps_s = step_timer_->collect();
    sim_s_ += steps_s;
    net_s_ += secs(t0, now()) - steps_s;
  }

  // ---- target critic at s_1 .. s_H (bootstrap values of the loss and the TD(λ) targets)
  auto tn0 = now();
  // V' = mean of the ensemble's target critics
  std::fill(next_value_.begin(), next_value_.end(), 0.0f);
  const std::size_t K = c.net.target_critics.size();
  for (std::size_t m = 0; m < K; ++m) {
    c.net.target_critics[m].forward(c.x(1), H * N, member_value_.data(), critic_ws_[m]);
    for (std::size_t i = 0; i < next_value_.size(); ++i) next_value_[i] += member_value_[i] / static_cast<float>(K);
  }
  const double scale = c.reward_scale();
  const double w = 1.0 / (static_cast<double>(H) * N);
  double loss = 0;
  for (int e = 0; e < N; ++e) {
    const int k = c.buf.steps_active[e];
    for (int t = 0; t < k; ++t) loss -= w * std::pow(o.gamma, t) * scale * c.buf.R[sz(t) * N + e];
    if (!c.buf.terminated[e]) loss -= w * std::pow(o.gamma, k) * next_value_[sz(k - 1) * N + e];
  }
  net_s_ += secs(tn0, now());
  if (!gradient) return loss;

  // ---- the loss's direct partial derivatives: rewards into states t+1 and actions t, the
  // bootstrap value into state k_e (through the target critic and the observation)
  tn0 = now();
  std::fill(dq_.begin(), dq_.end(), 0.0);
  std::fill(dv_.begin(), dv_.end(), 0.0);
  std::fill(dA_.begin(), dA_.end(), 0.0);
  std::fill(dvalue_.begin(), dvalue_.end(), 0.0f);
  for (int e = 0; e < N; ++e) {
    const int k = c.buf.steps_active[e];
    if (!c.buf.terminated[e]) dvalue_[sz(k - 1) * N + e] = static_cast<float>(-w * std::pow(o.gamma, k));
  }
#pragma omp parallel for schedule(static) num_threads(c.loop_threads())
  for (int e = 0; e < N; ++e) {
    const int k = c.buf.steps_active[e];
    for (int t = 0; t < k; ++t) {
      const double adj_r = -w * std::pow(o.gamma, t) * scale;
      const std::size_t row = sz(t + 1) * N + e;
      if (!c.net.add)
        c.task.adj_reward(e, c.episode_t(e, t + 1), c.q(t + 1, e), c.v(t + 1, e), c.a(t, e), adj_r,
                          dq_.data() + row * nq, dv_.data() + row * nv, dA_.data() + (sz(t) * N + e) * na);
      // r_t −= p mean_k (a_t − a_{t−1})²: into action t and, inside the horizon, action t − 1
      const double* prev = c.previous_action(t, e);
      if (o.action_rate_penalty > 0 && prev) {
        const double* at = c.a(t, e);
        double* dAt = dA_.data() + (sz(t) * N + e) * na;
        double* dAp = t > 0 ? dA_.data() + (sz(t - 1) * N + e) * na : nullptr;
        const double g = -adj_r * o.action_rate_penalty * 2.0 / na;
        for (int k = 0; k < na; ++k) {
          dAt[k] += g * (at[k] - prev[k]);
          if (dAp) dAp[k] -= g * (at[k] - prev[k]);
        }
      }
    }
  }
  if (c.net.add) {  // the ADD reward of state t + 1: discriminator VJP, then the features' adjoint
    for (int t = 0; t < H; ++t) {
      for (int e = 0; e < N; ++e) adj_r_add_[e] = c.active(t, e) ? -w * std::pow(o.gamma, t) * scale : 0.0;
      c.net.add->adj_reward(c.buf.DELTA.data() + sz(t) * N * c.sizes.nd, N, adj_r_add_.data(), adj_delta_.data());
#pragma omp parallel for schedule(static) num_threads(c.loop_threads())
      for (int e = 0; e < N; ++e) {
        if (!c.active(t, e)) continue;
        const std::size_t row = sz(t + 1) * N + e;
        c.task.adj_add_delta(e, c.episode_t(e, t + 1), c.q(t + 1, e), c.v(t + 1, e), adj_delta_.data() + sz(e) * c.sizes.nd,
                             dq_.data() + row * nq, dv_.data() + row * nv);
      }
    }
  }
  // bootstrap: V'(x(s_k)) with x = normalize(obs(s_k)); rows of next_value are s_1 .. s_H
  std::fill(dx_value_.begin(), dx_value_.end(), 0.0f);
  for (std::size_t i = 0; i < dvalue_.size(); ++i) dvalue_[i] /= static_cast<float>(K);
  for (std::size_t m = 0; m < K; ++m) {
    c.net.target_critics[m].backward(dvalue_.data(), H * N, nullptr, member_dx_.data(), critic_ws_[m]);
    for (std::size_t i = 0; i < dx_value_.size(); ++i) dx_value_[i] += member_dx_[i];
  }
  for (std::size_t i = 0; i < dx_value_.size(); ++i) dx_obs_[i] = dx_value_[i];
  if (o.normalize_obs) c.net.obs_rms.adj_normalize(c.obs(1, 0), H * N, dx_obs_.data(), dobs_.data() + sz(N) * no);
  else std::copy(dx_obs_.begin(), dx_obs_.end(), dobs_.begin() + static_cast<std::ptrdiff_t>(N) * no);
#pragma omp parallel for schedule(static) num_threads(c.loop_threads())
  for (int e = 0; e < N; ++e) {
    if (c.buf.terminated[e]) continue;
    const int k = c.buf.steps_active[e];
    const std::size_t row = sz(k) * N + e;
    c.task.adj_observe(e, c.episode_t(e, k), c.q(k, e), c.v(k, e), dobs_.data() + row * no, dq_.data() + row * nq,
                       dv_.data() + row * nv);
  }
  net_s_ += secs(tn0, now());

  // ---- backward through the simulator with the policy's VJP at every step
  std::fill(grad_actor_.begin(), grad_actor_.end(), 0.0f);
  if (loop_) {
    backward_backend();
    return loss;
  }
  double hook_s = 0;
  const ControlVjp policy_vjp = [&](int t, const double* adj_ctrl, double* adj_qpos, double* adj_qvel) {
    auto h0 = now();
    for (int e = 0; e < N; ++e) {
      float* dm = d_mu_.data() + sz(e) * na;
      std::fill(dm, dm + na, 0.0f);
      if (!c.active(t, e)) continue;
      const double* dA_t = dA_.data() + (sz(t) * N + e) * na;
      std::copy(dA_t, dA_t + na, adj_a_.begin());
      c.task.adj_action_to_ctrl(e, c.episode_t(e, t), c.a(t, e), adj_ctrl + sz(e) * nu, adj_a_.data());
      bool finite = true;
      for (double g : adj_a_) finite = finite && std::isfinite(g);
      if (!finite) { ++nonfinite_grad_; continue; }  // contained: this environment adds nothing
      const float* eps = c.buf.EPS.data() + (sz(t) * N + e) * na;
      for (int k = 0; k < na; ++k) {
        dm[k] = static_cast<float>(adj_a_[k]);
        // a = μ + exp(log σ) ε  ⇒  ∂a/∂log σ = σ ε
        grad_actor_[n_actor_ + k] += static_cast<float>(adj_a_[k] * std::exp(static_cast<double>(c.net.log_std[k])) * eps[k]);
      }
    }
    c.net.actor.backward(d_mu_.data(), N, grad_actor_.data(), dx_actor_.data(), actor_ws_[t]);
    if (t > 0) {  // state 0's adjoint is not needed
      for (std::size_t i = 0; i < dx_actor_.size(); ++i) dx_actor_d_[i] = dx_actor_[i];
      if (o.normalize_obs) c.net.obs_rms.adj_normalize(c.obs(t, 0), N, dx_actor_d_.data(), dobs_t_.data());
      else dobs_t_ = dx_actor_d_;
#pragma omp parallel for schedule(static) num_threads(c.loop_threads())
      for (int e = 0; e < N; ++e)
        if (c.active(t, e))
          c.task.adj_observe(e, c.episode_t(e, t), c.q(t, e), c.v(t, e), dobs_t_.data() + sz(e) * no,
                             adj_qpos + sz(e) * nq, adj_qvel + sz(e) * nv);
    }
    hook_s += secs(h0, now());
  };
  auto tb0 = now();
  rollout_.backward_policy(dq_.data(), dv_.data(), policy_vjp);
  adj_s_ += secs(tb0, now()) - hook_s;
  net_s_ += hook_s;
  return loss;
}

void Shac::forward_backend() {
  TrainerCore& c = c_;
  const int H = c.sizes.H, N = c.sizes.nenv;
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  auto t0 = now();
  // the horizon's inputs, once: the noise (the host trainer's draws, in its order) and the
  // observation references of rows 0 .. H
  for (int t = 0; t < H; ++t) c.draw_noise(t);
  if (ref_dim_ > 0) {
#pragma omp parallel for schedule(static) num_threads(c.loop_threads())
    for (int e = 0; e < N; ++e)
      for (int t = 0; t <= H; ++t)
        c.task.observation_reference(e, c.episode_t(e, t), ref_.data() + (sz(t) * N + e) * ref_dim_);
  }
  loop_->begin_horizon(c.net.log_std, c.net.obs_rms, c.buf.EPS.data(), ref_.data());
  rollout_.begin(bundle_seed());
  for (int t = 0; t < H; ++t) {
    loop_->observe(t);
    const void* ctrl = loop_->act(t);
    step_timer_->begin();
    rollout_.step_backend_ctrl(ctrl);
    step_timer_->end();
    loop_->record_status(t);
  }
  loop_->observe(H);
  // the horizon's records, once (this waits for the stream: every step has run), then the
  // host's rewards and episode ends step by step
  loop_->download(c.buf.Q.data(), c.buf.V.data(), c.buf.OBS.data(), c.buf.X.data(), c.buf.MU.data(), c.buf.A.data(), status_rows_.data());
  const double steps_s = step_timer_->collect();
  for (int t = 0; t < H; ++t) c.score_step(t, status_rows_.data() + sz(t) * N);
  // the steps' device time is the simulation's; the rest of the phase (the policy's kernels,
  // the transfers, the host's scoring) the networks'
  sim_s_ += steps_s;
  net_s_ += secs(t0, now()) - steps_s;
}

void Shac::backward_backend() {
  const auto t0 = std::chrono::steady_clock::now();
  loop_->begin_backward(dA_.data(), c_.buf.steps_active.data());
  rollout_.backward_policy_backend(dq_.data(), dv_.data(),
                                   [&](int t, const void* adj_ctrl, void* adj_qpos, void* adj_qvel, void* stream) {
                                     loop_->vjp(t, adj_ctrl, adj_qpos, adj_qvel, stream);
                                   });
  nonfinite_grad_ += loop_->finish_backward(grad_actor_.data());
  // the hook's work is enqueued with the adjoint's on one stream: counted as adjoint time
  adj_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Shac::update_actor() {
  const double norm = clip_grad_norm(grad_actor_.data(), grad_actor_.size(), c_.options.actor_grad_clip);
  if (std::isfinite(norm)) c_.apply_actor_update(actor_opt_, grad_actor_);
  return norm;
}

double Shac::fit_critic() {
  TrainerCore& c = c_;
  const int N = c.sizes.nenv, no = c.sizes.no;
  const TrainOptions& o = c.options;
  const double scale = c.reward_scale();
  targets_.clear();
  inputs_.clear();
  for (int e = 0; e < N; ++e) {
    const int k = c.buf.steps_active[e];
    for (int t = 0; t < k; ++t) {
      rs_[t] = scale * c.buf.R[sz(t) * N + e];
      nx_[t] = next_value_[sz(t) * N + e];
    }
    if (c.buf.terminated[e]) nx_[k - 1] = 0;
    td_lambda(k, o.gamma, o.lambda, rs_.data(), nx_.data(), G_.data());
    for (int t = 0; t < k; ++t) {
      targets_.push_back(static_cast<float>(G_[t]));
      const float* xr = c.x(t) + sz(e) * no;
      inputs_.insert(inputs_.end(), xr, xr + no);
    }
  }
  const int samples = static_cast<int>(targets_.size());
  const int mb = std::max(1, samples / std::max(1, o.critic_minibatches));
  order_.resize(samples);
  std::iota(order_.begin(), order_.end(), 0);
  double ensemble_loss = 0;
  for (std::size_t m = 0; m < c.net.critics.size(); ++m) {  // every member on the same targets, its own batches
    ensemble_loss += regress(c.net.critics[m], critic_opt_[m], samples, mb) / static_cast<double>(c.net.critics.size());
    c.net.target_critics[m].polyak_from(c.net.critics[m], o.target_alpha);
  }
  return ensemble_loss;
}

double Shac::regress(Mlp<float>& critic, Adam<float>& opt, int samples, int mb) {
  TrainerCore& c = c_;
  const int no = c.sizes.no;
  const TrainOptions& o = c.options;
  double critic_loss = 0;
  for (int epoch = 0; epoch < o.critic_iterations; ++epoch) {
    std::shuffle(order_.begin(), order_.end(), c.rng);
    critic_loss = 0;
    int batches = 0;
    for (int b0 = 0; b0 + mb <= samples; b0 += mb) {
      for (int i = 0; i < mb; ++i)
        std::copy(inputs_.begin() + static_cast<std::ptrdiff_t>(order_[b0 + i]) * no,
                  inputs_.begin() + static_cast<std::ptrdiff_t>(order_[b0 + i] + 1) * no,
                  batch_x_.begin() + static_cast<std::ptrdiff_t>(i) * no);
      critic.forward(batch_x_.data(), mb, batch_y_.data(), train_ws_);
      double l = 0;
      for (int i = 0; i < mb; ++i) {
        const double r = batch_y_[i] - targets_[order_[b0 + i]];
        l += r * r / mb;
        batch_dy_[i] = static_cast<float>(2 * r / mb);
      }
      std::fill(grad_critic_.begin(), grad_critic_.end(), 0.0f);
      critic.backward(batch_dy_.data(), mb, grad_critic_.data(), nullptr, train_ws_);
      if (std::isfinite(clip_grad_norm(grad_critic_.data(), grad_critic_.size(), o.critic_grad_clip)))
        opt.step(critic.params(), grad_critic_.data());
      critic_loss += l;
      ++batches;
    }
    if (batches) critic_loss /= batches;
  }
  return critic_loss;
}

std::uint64_t Shac::bundle_seed() const {
  // splitmix64's finalizer over (BundleOptions::seed, run seed, iteration): a new key for
  // every iteration's recording, the same for a rerun with the same seeds
  const auto mix = [](std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  return mix(c_.options.bundles.seed ^ mix(c_.options.seed ^ mix(static_cast<std::uint64_t>(iteration_))));
}

IterationLog Shac::iterate(int it) {
  const TrainOptions& o = c_.options;
  iteration_ = it;
  actor_opt_.set_lr(linear_decay(o.actor_lr, o.lr_end, it, o.iterations));
  for (auto& opt : critic_opt_) opt.set_lr(linear_decay(o.critic_lr, o.lr_end, it, o.iterations));
  const double loss = actor_pass(true);
  const auto t0 = std::chrono::steady_clock::now();
  const double grad_norm = update_actor();
  const double critic_loss = fit_critic();
  net_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  IterationLog log = c_.base_log(it, c_.seconds_since_start());
  log.actor_loss = loss;
  log.critic_loss = critic_loss;
  log.actor_grad_norm = grad_norm;
  log.bundle_rate = static_cast<double>(rollout_.bundles_started()) / (static_cast<double>(c_.sizes.nenv) * c_.sizes.H);
  log.nonfinite += nonfinite_grad_;
  log.sim_s = sim_s_;
  log.adjoint_s = adj_s_;
  log.network_s = net_s_;
  return log;
}

TrainerCore::NamedOptimizers Shac::optimizers() {
  TrainerCore::NamedOptimizers named{{"adam.actor", &actor_opt_}};
  for (std::size_t k = 0; k < critic_opt_.size(); ++k) named.emplace_back("adam.critic." + std::to_string(k), &critic_opt_[k]);
  return named;
}

TrainResult train_shac(TrainerCore& c, const std::function<void(const IterationLog&)>& on_iteration) {
  Shac shac(c);
  TrainResult result;
  const TrainerCore::NamedOptimizers optimizers = shac.optimizers();
  for (int it = c.begin_run(result, optimizers, on_iteration); it < c.options.iterations; ++it) {
    c.finish_iteration(shac.iterate(it), result, on_iteration);
    c.checkpoint_after(it, result, optimizers);
  }
  result.policy = c.policy_file();
  result.final_mean_return = result.log.empty() ? 0 : result.log.back().mean_return;
  return result;
}

}  // namespace stiffgrad::learn
