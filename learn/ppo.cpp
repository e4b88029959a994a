// PPO (Schulman et al. 2017) on the same tasks, networks and environment counts as SHAC, without
// simulator gradients: rollouts of H steps, GAE(γ, λ) advantages (Schulman et al. 2016, eq. 16)
// normalized per batch, the clipped surrogate (PPO eq. 7) for the actor and its log-std, an MSE
// value loss on the GAE returns for the critic, `ppo_epochs` passes of `ppo_minibatches`
// minibatches, each network with its own Adam and gradient-norm clipping.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "learn/stream_timer.hpp"
#include "learn/train_core.hpp"

namespace stiffgrad::learn {

TrainResult train_ppo(TrainerCore& c, const std::function<void(const IterationLog&)>& on_iteration) {
  const int H = c.sizes.H, N = c.sizes.nenv, na = c.sizes.na, no = c.sizes.no;
  const TrainOptions& o = c.options;
  Mlp<float>::Workspace act_ws = c.net.actor.make_workspace(N);
  Mlp<float>::Workspace value_ws = c.net.critics[0].make_workspace((H + 1) * N);
  const int max_batch = H * N;
  Mlp<float>::Workspace mb_actor_ws = c.net.actor.make_workspace(max_batch), mb_critic_ws = c.net.critics[0].make_workspace(max_batch);
  const std::size_t n_actor = c.net.actor.num_params();
  Adam<float> actor_opt(n_actor + na, AdamOptions{o.ppo_lr, 0.9, 0.999, 1e-8});
  Adam<float> critic_opt(c.net.critics[0].num_params(), AdamOptions{o.ppo_lr, 0.9, 0.999, 1e-8});
  std::vector<float> grad_actor(n_actor + na), grad_critic(c.net.critics[0].num_params());
  std::vector<float> values(static_cast<std::size_t>(H + 1) * N), logp_old(static_cast<std::size_t>(H) * N);
  std::vector<float> act_f(static_cast<std::size_t>(H) * N * na);
  std::vector<double> adv, ret;
  std::vector<float> s_x, s_a, s_logp, s_adv, s_ret;
  std::vector<float> b_x(static_cast<std::size_t>(max_batch) * no), b_a(static_cast<std::size_t>(max_batch) * na),
      b_mu(static_cast<std::size_t>(max_batch) * na), b_logp(max_batch), b_w(max_batch), b_dmu(static_cast<std::size_t>(max_batch) * na),
      b_v(max_batch), b_dv(max_batch);
  std::vector<int> order;
  TrainResult result;
  const auto now = [] { return std::chrono::steady_clock::now(); };
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  // the steps' own time (CUDA events on the simulator's stream, the host clock on the CPU); the
  // rest of the rollout phase (observations, actor, sampling, records) is the networks'
  const std::unique_ptr<StreamTimer> step_timer = make_stream_timer(c.sim->cuda_stream(), H);

  const TrainerCore::NamedOptimizers optimizers{{"adam.actor", &actor_opt}, {"adam.critic.0", &critic_opt}};
  for (int it = c.begin_run(result, optimizers, on_iteration); it < o.iterations; ++it) {
    double sim_s = 0, net_s = 0;
    actor_opt.set_lr(linear_decay(o.ppo_lr, o.lr_end, it, o.iterations));
    critic_opt.set_lr(linear_decay(o.ppo_lr, o.lr_end, it, o.iterations));
    c.start_horizon();
    const auto rollout_start = now();
    for (int t = 0; t < H; ++t) {
      c.observe(t);
      c.actor_forward(t, act_ws);
      c.sample_actions(t);
      for (int i = 0; i < N * na; ++i) act_f[static_cast<std::size_t>(t) * N * na + i] = static_cast<float>(c.buf.A[static_cast<std::size_t>(t) * N * na + i]);
      gaussian_log_prob(c.buf.MU.data() + static_cast<std::size_t>(t) * N * na, c.net.log_std.data(),
                        act_f.data() + static_cast<std::size_t>(t) * N * na, N, na, logp_old.data() + static_cast<std::size_t>(t) * N);
      step_timer->begin();
      c.sim->step(c.buf.CTRL.data());
      step_timer->end();
      c.record_step(t);
    }
    c.observe(H);  // downloads the last state: every step has run
    auto tn = now();
    sim_s = step_timer->collect();
    net_s = secs(rollout_start, tn) - sim_s;
    c.net.critics[0].forward(c.x(0), (H + 1) * N, values.data(), value_ws);
    const double scale = c.reward_scale();

    // GAE per environment over its active steps; bootstrap V(s_k) unless the episode failed
    s_x.clear(); s_a.clear(); s_logp.clear(); s_adv.clear(); s_ret.clear();
    for (int e = 0; e < N; ++e) {
      const int k = c.buf.steps_active[e];
      double gae = 0;
      adv.assign(k, 0.0);
      ret.assign(k, 0.0);
      for (int t = k - 1; t >= 0; --t) {
        const double next = (t == k - 1) ? (c.buf.terminated[e] ? 0.0 : values[static_cast<std::size_t>(t + 1) * N + e])
                                         : values[static_cast<std::size_t>(t + 1) * N + e];
        const double delta = scale * c.buf.R[static_cast<std::size_t>(t) * N + e] + o.gamma * next - values[static_cast<std::size_t>(t) * N + e];
        gae = delta + (t == k - 1 ? 0.0 : o.gamma * o.lambda * gae);
        adv[t] = gae;
        ret[t] = gae + values[static_cast<std::size_t>(t) * N + e];
      }
      for (int t = 0; t < k; ++t) {
        const float* xr = c.x(t) + static_cast<std::size_t>(e) * no;
        s_x.insert(s_x.end(), xr, xr + no);
        const float* ar = act_f.data() + (static_cast<std::size_t>(t) * N + e) * na;
        s_a.insert(s_a.end(), ar, ar + na);
        s_logp.push_back(logp_old[static_cast<std::size_t>(t) * N + e]);
        s_adv.push_back(static_cast<float>(adv[t]));
        s_ret.push_back(static_cast<float>(ret[t]));
      }
    }
    const int samples = static_cast<int>(s_adv.size());
    {
      double m = 0, s2 = 0;
      for (float a : s_adv) m += a;
      m /= std::max(1, samples);
      for (float a : s_adv) s2 += (a - m) * (a - m);
      const double sd = std::sqrt(s2 / std::max(1, samples)) + 1e-8;
      for (float& a : s_adv) a = static_cast<float>((a - m) / sd);
    }
    const int mb = std::max(1, samples / std::max(1, o.ppo_minibatches));
    order.resize(samples);
    std::iota(order.begin(), order.end(), 0);
    double surrogate = 0, value_loss = 0, grad_norm = 0;
    for (int epoch = 0; epoch < o.ppo_epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), c.rng);
      surrogate = value_loss = 0;
      int batches = 0;
      for (int b0 = 0; b0 + mb <= samples; b0 += mb) {
        for (int i = 0; i < mb; ++i) {
          const int s = order[b0 + i];
          std::copy(s_x.begin() + static_cast<std::ptrdiff_t>(s) * no, s_x.begin() + static_cast<std::ptrdiff_t>(s + 1) * no,
                    b_x.begin() + static_cast<std::ptrdiff_t>(i) * no);
          std::copy(s_a.begin() + static_cast<std::ptrdiff_t>(s) * na, s_a.begin() + static_cast<std::ptrdiff_t>(s + 1) * na,
                    b_a.begin() + static_cast<std::ptrdiff_t>(i) * na);
        }
        // actor: L = -mean(min(ρ A, clip(ρ, 1 ± ε) A)); ∂L/∂logp = -ρ A / mb where the
        // unclipped term is the minimum, else 0
        c.net.actor.forward(b_x.data(), mb, b_mu.data(), mb_actor_ws);
        gaussian_log_prob(b_mu.data(), c.net.log_std.data(), b_a.data(), mb, na, b_logp.data());
        double l = 0;
        for (int i = 0; i < mb; ++i) {
          const int s = order[b0 + i];
          const double rho = std::exp(static_cast<double>(b_logp[i]) - s_logp[s]);
          const double A = s_adv[s];
          const double clipped = std::clamp(rho, 1 - o.ppo_clip, 1 + o.ppo_clip);
          const bool unclipped_is_min = rho * A <= clipped * A;
          l -= std::min(rho * A, clipped * A) / mb;
          b_w[i] = unclipped_is_min ? static_cast<float>(-rho * A / mb) : 0.0f;
        }
        std::fill(grad_actor.begin(), grad_actor.end(), 0.0f);
        adj_gaussian_log_prob(b_mu.data(), c.net.log_std.data(), b_a.data(), mb, na, b_w.data(), b_dmu.data(),
                              grad_actor.data() + n_actor);
        // entropy bonus: -c_H Σ log σ (the entropy's gradient in log σ is 1 per dimension)
        for (int k = 0; k < na; ++k) grad_actor[n_actor + k] -= static_cast<float>(o.ppo_entropy_coef);
        c.net.actor.backward(b_dmu.data(), mb, grad_actor.data(), nullptr, mb_actor_ws);
        grad_norm = clip_grad_norm(grad_actor.data(), grad_actor.size(), o.actor_grad_clip);
        if (std::isfinite(grad_norm)) c.apply_actor_update(actor_opt, grad_actor);
        // critic: ½ c_v mean (V - R)²
        c.net.critics[0].forward(b_x.data(), mb, b_v.data(), mb_critic_ws);
        double lv = 0;
        for (int i = 0; i < mb; ++i) {
          const double r = b_v[i] - s_ret[order[b0 + i]];
          lv += 0.5 * r * r / mb;
          b_dv[i] = static_cast<float>(o.ppo_value_coef * r / mb);
        }
        std::fill(grad_critic.begin(), grad_critic.end(), 0.0f);
        c.net.critics[0].backward(b_dv.data(), mb, grad_critic.data(), nullptr, mb_critic_ws);
        if (std::isfinite(clip_grad_norm(grad_critic.data(), grad_critic.size(), o.critic_grad_clip)))
          critic_opt.step(c.net.critics[0].params(), grad_critic.data());
        surrogate += l;
        value_loss += lv;
        ++batches;
      }
      if (batches) { surrogate /= batches; value_loss /= batches; }
    }
    net_s += secs(tn, now());
    IterationLog log = c.base_log(it, c.seconds_since_start());
    log.actor_loss = surrogate;
    log.critic_loss = value_loss;
    log.actor_grad_norm = grad_norm;
    log.sim_s = sim_s;
    log.network_s = net_s;
    c.finish_iteration(log, result, on_iteration);
    c.checkpoint_after(it, result, optimizers);
  }
  result.policy = c.policy_file();
  result.final_mean_return = result.log.empty() ? 0 : result.log.back().mean_return;
  return result;
}

}  // namespace stiffgrad::learn
