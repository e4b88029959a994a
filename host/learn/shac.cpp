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

#include "host/learn/train_core.hpp"
#include "stiffgrad/rollout.hpp"

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

TrainResult train_shac(TrainerCore& c, const std::function<void(const IterationLog&)>& on_iteration) {
  const int H = c.H, N = c.nenv, na = c.na, no = c.no, nq = c.nq, nv = c.nv, nu = c.nu;
  const TrainOptions& o = c.o;
  Rollout rollout(*c.sim, H, o.bundles);
  std::vector<Mlp<float>::Workspace> actor_ws;
  for (int t = 0; t < H; ++t) actor_ws.push_back(c.actor.make_workspace(N));
  Mlp<float>::Workspace critic_ws = c.target_critic.make_workspace(H * N);
  Mlp<float>::Workspace train_ws = c.critic.make_workspace(H * N);

  const std::size_t n_actor = c.actor.num_params();
  Adam<float> actor_opt(n_actor + na, AdamOptions{o.actor_lr, o.beta1, o.beta2, 1e-8});
  Adam<float> critic_opt(c.critic.num_params(), AdamOptions{o.critic_lr, o.beta1, o.beta2, 1e-8});
  std::vector<float> grad_actor(n_actor + na), grad_critic(c.critic.num_params());
  std::vector<float> params_actor(n_actor + na);

  std::vector<double> dq(static_cast<std::size_t>(H + 1) * N * nq), dv(static_cast<std::size_t>(H + 1) * N * nv);
  std::vector<double> dA(static_cast<std::size_t>(H) * N * na);
  std::vector<float> next_value(static_cast<std::size_t>(H) * N);  // V'(s_{t+1}), rows t x N
  std::vector<float> dvalue(static_cast<std::size_t>(H) * N), dx_value(static_cast<std::size_t>(H) * N * no);
  std::vector<double> dx_obs(static_cast<std::size_t>(H) * N * no), dobs(static_cast<std::size_t>(H + 1) * N * no);
  std::vector<float> d_mu(static_cast<std::size_t>(N) * na), dx_actor(static_cast<std::size_t>(N) * no);
  std::vector<double> dx_actor_d(static_cast<std::size_t>(N) * no), dobs_t(static_cast<std::size_t>(N) * no);
  std::vector<double> rs(static_cast<std::size_t>(H)), nx(static_cast<std::size_t>(H)), G(static_cast<std::size_t>(H));
  std::vector<float> targets, inputs;
  targets.reserve(static_cast<std::size_t>(H) * N);
  inputs.reserve(static_cast<std::size_t>(H) * N * no);
  std::vector<int> order;
  std::vector<double> adj_a(static_cast<std::size_t>(na));
  std::vector<float> batch_x(static_cast<std::size_t>(H) * N * no), batch_y(static_cast<std::size_t>(H) * N),
      batch_dy(static_cast<std::size_t>(H) * N);

  TrainResult result;
  for (int it = 0; it < o.iterations; ++it) {
    double sim_s = 0, adj_s = 0, net_s = 0;
    const auto now = [] { return std::chrono::steady_clock::now(); };
    const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    actor_opt.set_lr(linear_decay(o.actor_lr, o.lr_end, it, o.iterations));
    critic_opt.set_lr(linear_decay(o.critic_lr, o.lr_end, it, o.iterations));

    // ---- forward: H control steps with the policy in the loop
    c.start_horizon();
    rollout.begin();
    for (int t = 0; t < H; ++t) {
      auto t0 = now();
      c.observe(t);
      c.actor_forward(t, actor_ws[t]);
      c.sample_actions(t);
      auto t1 = now();
      rollout.step(c.CTRL.data());
      auto t2 = now();
      c.record_step(t);
      net_s += secs(t0, t1);
      sim_s += secs(t1, t2);
    }
    c.observe(H);

    // ---- target critic at s_1 .. s_H (bootstrap values of the loss and the TD(λ) targets)
    auto tn0 = now();
    c.target_critic.forward(c.x(1), H * N, next_value.data(), critic_ws);
    const double scale = c.reward_scale();
    const double w = 1.0 / (static_cast<double>(H) * N);

    // ---- the loss's direct partial derivatives: rewards into states t+1 and actions t, the
    // bootstrap value into state k_e (through the target critic and the observation)
    std::fill(dq.begin(), dq.end(), 0.0);
    std::fill(dv.begin(), dv.end(), 0.0);
    std::fill(dA.begin(), dA.end(), 0.0);
    std::fill(dvalue.begin(), dvalue.end(), 0.0f);
    double loss = 0;
    for (int e = 0; e < N; ++e) {
      const int k = c.steps_active[e];
      for (int t = 0; t < k; ++t) loss -= w * std::pow(o.gamma, t) * scale * c.R[static_cast<std::size_t>(t) * N + e];
      if (!c.terminated_[e]) {
        const float val = next_value[static_cast<std::size_t>(k - 1) * N + e];
        loss -= w * std::pow(o.gamma, k) * val;
        dvalue[static_cast<std::size_t>(k - 1) * N + e] = static_cast<float>(-w * std::pow(o.gamma, k));
      }
    }
#pragma omp parallel for schedule(static)
    for (int e = 0; e < N; ++e) {
      const int k = c.steps_active[e];
      for (int t = 0; t < k; ++t) {
        const double adj_r = -w * std::pow(o.gamma, t) * scale;
        const std::size_t row = static_cast<std::size_t>(t + 1) * N + e;
        c.task.adj_reward(e, c.episode_t(e, t + 1), c.q(t + 1, e), c.v(t + 1, e), c.a(t, e), adj_r,
                          dq.data() + row * nq, dv.data() + row * nv,
                          dA.data() + (static_cast<std::size_t>(t) * N + e) * na);
      }
    }
    // bootstrap: V'(x(s_k)) with x = normalize(obs(s_k)); rows of next_value are s_1 .. s_H
    c.target_critic.backward(dvalue.data(), H * N, nullptr, dx_value.data(), critic_ws);
    for (std::size_t i = 0; i < dx_value.size(); ++i) dx_obs[i] = dx_value[i];
    if (o.normalize_obs) c.obs_rms.adj_normalize(c.obs(1, 0), H * N, dx_obs.data(), dobs.data() + static_cast<std::size_t>(N) * no);
    else std::copy(dx_obs.begin(), dx_obs.end(), dobs.begin() + static_cast<std::ptrdiff_t>(N) * no);
#pragma omp parallel for schedule(static)
    for (int e = 0; e < N; ++e) {
      if (c.terminated_[e]) continue;
      const int k = c.steps_active[e];
      const std::size_t row = static_cast<std::size_t>(k) * N + e;
      c.task.adj_observe(e, c.episode_t(e, k), c.q(k, e), c.v(k, e), dobs.data() + row * no, dq.data() + row * nq,
                         dv.data() + row * nv);
    }
    net_s += secs(tn0, now());

    // ---- backward through the simulator with the policy's VJP at every step
    std::fill(grad_actor.begin(), grad_actor.end(), 0.0f);
    double hook_s = 0;
    int nonfinite_grad = 0;
    const ControlVjp policy_vjp = [&](int t, const double* adj_ctrl, double* adj_qpos, double* adj_qvel) {
      auto h0 = now();
      for (int e = 0; e < N; ++e) {
        float* dm = d_mu.data() + static_cast<std::size_t>(e) * na;
        std::fill(dm, dm + na, 0.0f);
        if (!c.active(t, e)) continue;
        const double* dA_t = dA.data() + (static_cast<std::size_t>(t) * N + e) * na;
        std::copy(dA_t, dA_t + na, adj_a.begin());
        c.task.adj_action_to_ctrl(e, c.episode_t(e, t), c.a(t, e), adj_ctrl + static_cast<std::size_t>(e) * nu, adj_a.data());
        bool finite = true;
        for (double g : adj_a) finite = finite && std::isfinite(g);
        if (!finite) { ++nonfinite_grad; continue; }  // contained: this environment adds nothing
        const float* eps = c.EPS.data() + (static_cast<std::size_t>(t) * N + e) * na;
        for (int k = 0; k < na; ++k) {
          dm[k] = static_cast<float>(adj_a[k]);
          // a = μ + exp(log σ) ε  ⇒  ∂a/∂log σ = σ ε
          grad_actor[n_actor + k] += static_cast<float>(adj_a[k] * std::exp(static_cast<double>(c.log_std[k])) * eps[k]);
        }
      }
      c.actor.backward(d_mu.data(), N, grad_actor.data(), dx_actor.data(), actor_ws[t]);
      if (t > 0) {  // state 0's adjoint is not needed
        for (std::size_t i = 0; i < dx_actor.size(); ++i) dx_actor_d[i] = dx_actor[i];
        if (o.normalize_obs) c.obs_rms.adj_normalize(c.obs(t, 0), N, dx_actor_d.data(), dobs_t.data());
        else dobs_t = dx_actor_d;
#pragma omp parallel for schedule(static)
        for (int e = 0; e < N; ++e)
          if (c.active(t, e))
            c.task.adj_observe(e, c.episode_t(e, t), c.q(t, e), c.v(t, e), dobs_t.data() + static_cast<std::size_t>(e) * no,
                               adj_qpos + static_cast<std::size_t>(e) * nq, adj_qvel + static_cast<std::size_t>(e) * nv);
      }
      hook_s += secs(h0, now());
    };
    auto tb0 = now();
    rollout.backward_policy(dq.data(), dv.data(), policy_vjp);
    const double backward_s = secs(tb0, now());
    adj_s += backward_s - hook_s;
    net_s += hook_s;

    // ---- actor update
    auto tu0 = now();
    const double grad_norm = clip_grad_norm(grad_actor.data(), grad_actor.size(), o.actor_grad_clip);
    if (std::isfinite(grad_norm)) {
      std::copy(c.actor.params(), c.actor.params() + n_actor, params_actor.begin());
      std::copy(c.log_std.begin(), c.log_std.end(), params_actor.begin() + static_cast<std::ptrdiff_t>(n_actor));
      actor_opt.step(params_actor.data(), grad_actor.data());
      std::copy(params_actor.begin(), params_actor.begin() + static_cast<std::ptrdiff_t>(n_actor), c.actor.params());
      std::copy(params_actor.begin() + static_cast<std::ptrdiff_t>(n_actor), params_actor.end(), c.log_std.begin());
    }

    // ---- critic: TD(λ) targets from the target critic, MSE regression in minibatches
    targets.clear();
    inputs.clear();
    for (int e = 0; e < N; ++e) {
      const int k = c.steps_active[e];
      for (int t = 0; t < k; ++t) {
        rs[t] = scale * c.R[static_cast<std::size_t>(t) * N + e];
        nx[t] = next_value[static_cast<std::size_t>(t) * N + e];
      }
      if (c.terminated_[e]) nx[k - 1] = 0;
      td_lambda(k, o.gamma, o.lambda, rs.data(), nx.data(), G.data());
      for (int t = 0; t < k; ++t) {
        targets.push_back(static_cast<float>(G[t]));
        const float* xr = c.x(t) + static_cast<std::size_t>(e) * no;
        inputs.insert(inputs.end(), xr, xr + no);
      }
    }
    const int samples = static_cast<int>(targets.size());
    double critic_loss = 0;
    const int mb = std::max(1, samples / std::max(1, o.critic_minibatches));
    order.resize(samples);
    std::iota(order.begin(), order.end(), 0);
    for (int epoch = 0; epoch < o.critic_iterations; ++epoch) {
      std::shuffle(order.begin(), order.end(), c.rng);
      critic_loss = 0;
      int batches = 0;
      for (int b0 = 0; b0 + mb <= samples; b0 += mb) {
        for (int i = 0; i < mb; ++i)
          std::copy(inputs.begin() + static_cast<std::ptrdiff_t>(order[b0 + i]) * no,
                    inputs.begin() + static_cast<std::ptrdiff_t>(order[b0 + i] + 1) * no,
                    batch_x.begin() + static_cast<std::ptrdiff_t>(i) * no);
        c.critic.forward(batch_x.data(), mb, batch_y.data(), train_ws);
        double l = 0;
        for (int i = 0; i < mb; ++i) {
          const double r = batch_y[i] - targets[order[b0 + i]];
          l += r * r / mb;
          batch_dy[i] = static_cast<float>(2 * r / mb);
        }
        std::fill(grad_critic.begin(), grad_critic.end(), 0.0f);
        c.critic.backward(batch_dy.data(), mb, grad_critic.data(), nullptr, train_ws);
        if (std::isfinite(clip_grad_norm(grad_critic.data(), grad_critic.size(), o.critic_grad_clip)))
          critic_opt.step(c.critic.params(), grad_critic.data());
        critic_loss += l;
        ++batches;
      }
      if (batches) critic_loss /= batches;
    }
    c.target_critic.polyak_from(c.critic, o.target_alpha);
    net_s += secs(tu0, now());

    IterationLog log = c.base_log(it, c.seconds_since_start());
    log.actor_loss = loss;
    log.critic_loss = critic_loss;
    log.actor_grad_norm = grad_norm;
    log.bundle_rate = static_cast<double>(rollout.bundles_started()) / (static_cast<double>(N) * H);
    log.nonfinite += nonfinite_grad;
    log.sim_s = sim_s;
    log.adjoint_s = adj_s;
    log.network_s = net_s;
    c.finish_horizon();
    {
      IterationLog after = c.base_log(it, c.seconds_since_start());
      log.mean_return = after.mean_return;
      log.mean_episode_length = after.mean_episode_length;
    }
    result.log.push_back(log);
    if (on_iteration) on_iteration(log);
  }
  result.policy = c.policy_file();
  result.final_mean_return = result.log.empty() ? 0 : result.log.back().mean_return;
  return result;
}

}  // namespace stiffgrad::learn
