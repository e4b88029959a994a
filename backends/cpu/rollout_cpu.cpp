// CPU Rollout: checkpoints in the backend's precision and layout (environment-minor), and
// the reverse sweep as an OpenMP loop over kern::adj_control_step_env, the same function the
// CUDA backend launches. Per-thread workspace: two primal Data, adjoint Data, replay buffer.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "backends/cpu/backend_cpu.hpp"
#include "kernels/step/batch_adjoint.hpp"
#include "kernels/bundle/bundle_step_adjoint.hpp"

namespace stiffgrad {

template <class Real>
class CpuRollout final : public RolloutImpl {
 public:
  CpuRollout(CpuBackend<Real>& be, int horizon, int substeps)
      : be_(be),
        horizon_(horizon),
        substeps_(substeps),
        nq_(be.view_.nq), nv_(be.view_.nv), nu_(be.view_.nu), nenv_(be.nenv_),
        ckpt_qpos_(static_cast<std::size_t>(horizon + 1) * nq_ * nenv_),
        ckpt_qvel_(static_cast<std::size_t>(horizon + 1) * nv_ * nenv_),
        ckpt_warm_(be.warm_.empty() ? 0 : static_cast<std::size_t>(horizon + 1) * nv_ * nenv_),
        ckpt_ctrl_(static_cast<std::size_t>(horizon) * nu_ * nenv_ + 1),
        adj_qpos_(static_cast<std::size_t>(nq_) * nenv_ + 1),
        adj_qvel_(static_cast<std::size_t>(nv_) * nenv_ + 1),
        adj_ctrl_(static_cast<std::size_t>(nu_) * nenv_ + 1),
        tangent_(static_cast<std::size_t>(nv_) * nenv_ + 1),
        stage_(static_cast<std::size_t>(std::max({nq_, nv_, nu_})) * nenv_ + 1),
        thread_ws_(3 * be.layout_.size + kern::replay_size(be.view_, substeps)),
        workspace_(static_cast<std::size_t>(thread_ws_) * be.threads_ + 1),
        replay_ok_(nenv_, 1),
        host_ctrl_(static_cast<std::size_t>(nenv_) * nu_),
        host_qpos_(static_cast<std::size_t>(nenv_) * nq_),
        host_qvel_(static_cast<std::size_t>(nenv_) * nv_) {}

  void save(int t) override {
    std::copy(be_.qpos_.begin(), be_.qpos_.end(), ckpt_qpos_.begin() + static_cast<std::ptrdiff_t>(t) * nq_ * nenv_);
    std::copy(be_.qvel_.begin(), be_.qvel_.end(), ckpt_qvel_.begin() + static_cast<std::ptrdiff_t>(t) * nv_ * nenv_);
    std::copy(be_.warm_.begin(), be_.warm_.end(), ckpt_warm_.begin() + static_cast<std::ptrdiff_t>(t) * nv_ * nenv_);
    if (t > 0)
      std::copy(be_.ctrl_.begin(), be_.ctrl_.begin() + static_cast<std::ptrdiff_t>(nu_) * nenv_,
                ckpt_ctrl_.begin() + static_cast<std::ptrdiff_t>(t - 1) * nu_ * nenv_);
  }

  // ---------------------------------------------------------------- bundles (stiffgrad/bundle.hpp)
  void enable_bundles(const BundleOptions& o) override {
    bundle_ = o;
    B_ = o.branches;
    pool_ = o.pool > 0 ? std::min(o.pool, nenv_) : nenv_;
    params_ = kern::BundleParams{B_, o.sigma_p, o.sigma_v, o.lambda, o.seed};
    const std::size_t slots = static_cast<std::size_t>(pool_) * B_;
    pool_q_.assign((horizon_ + 1) * slots * nq_, Real(0));
    pool_v_.assign((horizon_ + 1) * slots * nv_, Real(0));
    pool_w_.assign(be_.warm_.empty() ? 0 : (horizon_ + 1) * slots * nv_, Real(0));
    pool_dq_.assign(horizon_ * slots * nv_, Real(0));
    pool_dv_.assign(horizon_ * slots * nv_, Real(0));
    start_q_.assign(slots * nq_, Real(0));
    start_v_.assign(slots * nv_, Real(0));
    start_w_.assign(be_.warm_.empty() ? 0 : slots * nv_, Real(0));
    adj_qb_.assign(slots * nq_, Real(0));
    adj_vb_.assign(slots * nv_, Real(0));
    step_slot_.assign(static_cast<std::size_t>(horizon_) * nenv_, -1);
    step_first_.assign(static_cast<std::size_t>(horizon_) * nenv_, 0);
    env_slot_.assign(nenv_, -1);
    env_left_.assign(nenv_, 0);
    env_bundles_.assign(nenv_, 0);
    slot_free_.assign(pool_, 1);
    bundle_ws_ = bundle_scratch_size();
    bundle_workspace_.assign(static_cast<std::size_t>(bundle_ws_) * be_.threads_ + 1, Real(0));
  }

  void begin(std::uint64_t bundle_seed) override {
    if (!bundle_.enabled) return;
    params_.seed = bundle_seed;  // the replay of this recording draws with the same key
    std::fill(step_slot_.begin(), step_slot_.end(), -1);
    std::fill(env_slot_.begin(), env_slot_.end(), -1);
    std::fill(env_left_.begin(), env_left_.end(), 0);
    std::fill(env_bundles_.begin(), env_bundles_.end(), 0);
    std::fill(slot_free_.begin(), slot_free_.end(), 1);
    started_ = skipped_ = 0;
  }

  // The scheduler: trigger from the last control step's statistics, slots to the largest
  // trigger values first, then every environment's step (bundled or nominal) in one loop.
  bool bundled_step(int t) override {
    if (!bundle_.enabled) return false;
    const int row = bundle_.trigger_on_impulse ? kern::kStatNormalImpulse : kern::kStatMaxNormalForce;
    std::vector<int>& wanting = trigger_scratch_;
    wanting.clear();
    for (int e = 0; e < nenv_; ++e)
      if (env_left_[e] == 0 && (be_.status_[e] & kern::kEnvNonFinite) == 0 &&
          static_cast<double>(be_.contact_stats_[static_cast<std::size_t>(row) * nenv_ + e]) > bundle_.tau)
        wanting.push_back(e);
    const auto value = [&](int e) { return be_.contact_stats_[static_cast<std::size_t>(row) * nenv_ + e]; };
    std::stable_sort(wanting.begin(), wanting.end(), [&](int a, int b) { return value(a) > value(b); });
    std::fill(step_first_.begin() + static_cast<std::ptrdiff_t>(t) * nenv_,
              step_first_.begin() + static_cast<std::ptrdiff_t>(t + 1) * nenv_, 0);
    int next_free = 0;
    for (int e : wanting) {
      while (next_free < pool_ && !slot_free_[next_free]) ++next_free;
      if (next_free == pool_) { ++skipped_; continue; }
      slot_free_[next_free] = 0;
      env_slot_[e] = next_free;
      env_left_[e] = bundle_.steps;
      ++started_;
      ++env_bundles_[e];
      step_first_[static_cast<std::size_t>(t) * nenv_ + e] = 1;
    }
    for (int e = 0; e < nenv_; ++e) step_slot_[static_cast<std::size_t>(t) * nenv_ + e] = env_slot_[e];
    using LS = kern::Strided;
    using LW = kern::Contiguous;
    using VS = kern::View<Real, LS>;
    using VW = kern::View<Real, LW>;
    const LS env_minor{nenv_};
    const int substeps = substeps_;
#pragma omp parallel num_threads(be_.threads_)
    {
      const int tid = omp_get_thread_num();
      const auto d = kern::Data<Real, LW>::bind(VW{be_.workspace_.data() + static_cast<std::size_t>(be_.layout_.size) * tid, LW{}},
                                                be_.layout_);
      const BundleScratch sc = bundle_scratch(tid);
      // dynamic: a bundled environment costs B nominal ones, wherever the trigger puts it
#pragma omp for schedule(dynamic, 1)
      for (int e = 0; e < nenv_; ++e) {
        const int s = env_slot_[e];
        if (s < 0) {
          be_.step_env(e, d, substeps);
          continue;
        }
        const VS q{be_.qpos_.data() + e, env_minor}, v{be_.qvel_.data() + e, env_minor};
        const VS w = be_.warm_view(e), u{be_.ctrl_.data() + e, env_minor};
        const bool first = step_first_[static_cast<std::size_t>(t) * nenv_ + e] != 0;
        if (first)
          kern::bundle_start_env(be_.view_, params_, e, t, q, v, w, d, branch_dq(t, s), branch_dv(t, s), start_q(s),
                                 start_v(s), start_w(s), sc.perturbation);
        kern::bundle_step_env(be_.view_, params_, q, v, u, w, d, substeps, &be_.status_[e],
                              VS{be_.contact_stats_.data() + e, env_minor}, first ? start_q(s) : branch_q(t, s),
                              first ? start_v(s) : branch_v(t, s), first ? start_w(s) : branch_w(t, s),
                              branch_q(t + 1, s), branch_v(t + 1, s), branch_w(t + 1, s), sc.u, sc.stats);
      }
    }
    for (int e = 0; e < nenv_; ++e)
      if (env_slot_[e] >= 0 && --env_left_[e] == 0) {
        slot_free_[env_slot_[e]] = 1;
        env_slot_[e] = -1;
      }
    return true;
  }

  int bundles_started() const override { return started_; }
  int bundles_skipped() const override { return skipped_; }
  void bundles_per_env(int* counts) const override {
    if (bundle_.enabled) std::copy(env_bundles_.begin(), env_bundles_.end(), counts);
  }

  void backward(int T, const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                bool tangent, double* dL_dqvel0, double* dL_dctrl) override {
    std::fill(adj_qb_.begin(), adj_qb_.end(), Real(0));
    std::fill(adj_vb_.begin(), adj_vb_.end(), Real(0));
    std::fill(adj_qpos_.begin(), adj_qpos_.end(), Real(0));
    std::fill(adj_qvel_.begin(), adj_qvel_.end(), Real(0));
    std::fill(replay_ok_.begin(), replay_ok_.end(), 1);
    add_state_gradient(T, dL_dqpos, dL_dqvel, tangent);
    for (int t = T - 1; t >= 0; --t) {
      adjoint_step(t);
      if (dL_dctrl) to_env_major(dL_dctrl + static_cast<std::size_t>(t) * nenv_ * nu_, adj_ctrl_.data(), nenv_, nu_);
      add_state_gradient(t, dL_dqpos, dL_dqvel, tangent);
    }
    if (dL_dqvel0) to_env_major(dL_dqvel0, adj_qvel_.data(), nenv_, nv_);
    if (dL_dqpos0) {
      if (!tangent) {
        to_env_major(dL_dqpos0, adj_qpos_.data(), nenv_, nq_);
      } else {
        const kern::Strided env_minor{nenv_};
        for (int e = 0; e < nenv_; ++e)
          kern::qpos_adjoint_to_tangent(be_.view_, kern::View<Real, kern::Strided>{ckpt_qpos_.data() + e, env_minor},
                                        kern::View<Real, kern::Strided>{adj_qpos_.data() + e, env_minor},
                                        kern::View<Real, kern::Strided>{tangent_.data() + e, env_minor});
        to_env_major(dL_dqpos0, tangent_.data(), nenv_, nv_);
      }
    }
  }

  void backward_policy(int T, const double* dL_dqpos, const double* dL_dqvel, const ControlVjp& vjp,
                       double* dL_dqvel0, double* dL_dctrl) override {
    policy_sweep(T, dL_dqpos, dL_dqvel, [&](int t) {
      to_env_major(host_ctrl_.data(), adj_ctrl_.data(), nenv_, nu_);
      if (dL_dctrl) std::copy(host_ctrl_.begin(), host_ctrl_.end(), dL_dctrl + static_cast<std::size_t>(t) * nenv_ * nu_);
      std::fill(host_qpos_.begin(), host_qpos_.end(), 0.0);
      std::fill(host_qvel_.begin(), host_qvel_.end(), 0.0);
      vjp(t, host_ctrl_.data(), host_qpos_.data(), host_qvel_.data());
      for (int e = 0; e < nenv_; ++e) {
        for (int i = 0; i < nq_; ++i) adj_qpos_[static_cast<std::size_t>(i) * nenv_ + e] += static_cast<Real>(host_qpos_[static_cast<std::size_t>(e) * nq_ + i]);
        for (int i = 0; i < nv_; ++i) adj_qvel_[static_cast<std::size_t>(i) * nenv_ + e] += static_cast<Real>(host_qvel_[static_cast<std::size_t>(e) * nv_ + i]);
      }
    });
    if (dL_dqvel0) to_env_major(dL_dqvel0, adj_qvel_.data(), nenv_, nv_);
  }

  void backward_policy_backend(int T, const double* dL_dqpos, const double* dL_dqvel,
                               const BackendControlVjp& vjp) override {
    // backend memory is this host memory: the hook adds into the running adjoint directly
    policy_sweep(T, dL_dqpos, dL_dqvel,
                 [&](int t) { vjp(t, adj_ctrl_.data(), adj_qpos_.data(), adj_qvel_.data(), nullptr); });
  }

  bool replay_bitwise() const override {
    return std::all_of(replay_ok_.begin(), replay_ok_.end(), [](char c) { return c != 0; });
  }

  void checkpoint(int t, double* qpos, double* qvel, double* qacc_warmstart) const override {
    to_env_major(qpos, ckpt_qpos_.data() + static_cast<std::size_t>(t) * nq_ * nenv_, nenv_, nq_);
    to_env_major(qvel, ckpt_qvel_.data() + static_cast<std::size_t>(t) * nv_ * nenv_, nenv_, nv_);
    if (!qacc_warmstart) return;
    if (ckpt_warm_.empty()) std::fill(qacc_warmstart, qacc_warmstart + static_cast<std::size_t>(nenv_) * nv_, 0.0);
    else to_env_major(qacc_warmstart, ckpt_warm_.data() + static_cast<std::size_t>(t) * nv_ * nenv_, nenv_, nv_);
  }

  std::size_t bytes_per_env() const override {
    const std::size_t reals = ckpt_qpos_.size() + ckpt_qvel_.size() + ckpt_warm_.size() + ckpt_ctrl_.size() +
                              adj_qpos_.size() + adj_qvel_.size() + adj_ctrl_.size() + tangent_.size() +
                              stage_.size();
    // per-thread workspace is shared by the environments a thread serves; count it per thread
    // as if every environment had its own (the CUDA layout), the bound the issue states
    const std::size_t pool = pool_q_.size() + pool_v_.size() + pool_w_.size() + pool_dq_.size() + pool_dv_.size() +
                             start_q_.size() + start_v_.size() + start_w_.size() + adj_qb_.size() + adj_vb_.size() +
                             bundle_workspace_.size();
    return ((reals + pool) / nenv_ + static_cast<std::size_t>(thread_ws_)) * sizeof(Real);
  }

 private:
  // The reverse sweep with a state-dependent control: after step t's adjoint, policy_vjp(t)
  // adds the policy's share into the state adjoint at t, then the loss's own (raw coordinates:
  // the sweep returns no tangent gradient of state 0 here).
  template <class PolicyVjp>
  void policy_sweep(int T, const double* dL_dqpos, const double* dL_dqvel, const PolicyVjp& policy_vjp) {
    std::fill(adj_qb_.begin(), adj_qb_.end(), Real(0));
    std::fill(adj_vb_.begin(), adj_vb_.end(), Real(0));
    std::fill(adj_qpos_.begin(), adj_qpos_.end(), Real(0));
    std::fill(adj_qvel_.begin(), adj_qvel_.end(), Real(0));
    std::fill(replay_ok_.begin(), replay_ok_.end(), 1);
    add_state_gradient(T, dL_dqpos, dL_dqvel, /*tangent=*/false);
    for (int t = T - 1; t >= 0; --t) {
      adjoint_step(t);
      policy_vjp(t);
      add_state_gradient(t, dL_dqpos, dL_dqvel, /*tangent=*/false);
    }
  }

  // adj_state_t += dL/dstate_t (row t of the host arrays), through the staging buffer. For the
  // tangent gradient, row 0 (read by the loss itself, not through the dynamics) is added in the
  // form qpos_adjoint_to_tangent expects (kern::add_direct_qpos_adjoint).
  void add_state_gradient(int t, const double* dL_dqpos, const double* dL_dqvel, bool tangent) {
    if (dL_dqpos) {
      to_env_minor(stage_.data(), dL_dqpos + static_cast<std::size_t>(t) * nenv_ * nq_, nenv_, nq_);
      if (t == 0 && tangent) {
        const kern::Strided env_minor{nenv_};
        using VS = kern::View<Real, kern::Strided>;
        for (int e = 0; e < nenv_; ++e)
          kern::add_direct_qpos_adjoint(be_.view_, VS{ckpt_qpos_.data() + e, env_minor}, VS{stage_.data() + e, env_minor},
                                        VS{adj_qpos_.data() + e, env_minor});
      } else {
        for (std::size_t i = 0; i < static_cast<std::size_t>(nq_) * nenv_; ++i) adj_qpos_[i] += stage_[i];
      }
    }
    if (dL_dqvel) {
      to_env_minor(stage_.data(), dL_dqvel + static_cast<std::size_t>(t) * nenv_ * nv_, nenv_, nv_);
      for (std::size_t i = 0; i < static_cast<std::size_t>(nv_) * nenv_; ++i) adj_qvel_[i] += stage_[i];
    }
  }

  void adjoint_step(int t) {
    using LS = kern::Strided;
    using LW = kern::Contiguous;
    using VS = kern::View<Real, LS>;
    using VW = kern::View<Real, LW>;
    const LS env_minor{nenv_};
    const auto& o = be_.layout_;
    Real* q0 = ckpt_qpos_.data() + static_cast<std::size_t>(t) * nq_ * nenv_;
    Real* v0 = ckpt_qvel_.data() + static_cast<std::size_t>(t) * nv_ * nenv_;
    Real* q1 = q0 + static_cast<std::size_t>(nq_) * nenv_;
    Real* v1 = v0 + static_cast<std::size_t>(nv_) * nenv_;
    Real* u = ckpt_ctrl_.data() + static_cast<std::size_t>(t) * nu_ * nenv_;
    Real* w0 = ckpt_warm_.empty() ? nullptr : ckpt_warm_.data() + static_cast<std::size_t>(t) * nv_ * nenv_;
#pragma omp parallel num_threads(be_.threads_)
    {
      Real* ws = workspace_.data() + static_cast<std::size_t>(thread_ws_) * omp_get_thread_num();
      const auto d = kern::Data<Real, LW>::bind(VW{ws, LW{}}, o);
      const auto d_keep = kern::Data<Real, LW>::bind(VW{ws + o.size, LW{}}, o);
      const VW adj_buffer{ws + 2 * o.size, LW{}};
      const auto a = kern::Data<Real, LW>::bind(adj_buffer, o);
      const VW replay{ws + 3 * o.size, LW{}};
      const BundleScratch sc = bundle_.enabled ? bundle_scratch(omp_get_thread_num()) : BundleScratch{};
      const auto adjoint_env = [&](int e) {
        const int s = bundle_.enabled ? step_slot_[static_cast<std::size_t>(t) * nenv_ + e] : -1;
        if (s >= 0) {
          const bool first = step_first_[static_cast<std::size_t>(t) * nenv_ + e] != 0;
          const bool same = kern::adj_bundle_step_env(
              be_.view_, be_.grad_view_, o, params_, first, VS{q0 + e, env_minor}, VS{v0 + e, env_minor},
              w0 ? VS{w0 + e, env_minor} : VS{}, VS{u + e, env_minor}, first ? start_q(s) : branch_q(t, s),
              first ? start_v(s) : branch_v(t, s), first ? start_w(s) : branch_w(t, s), branch_q(t + 1, s),
              branch_v(t + 1, s), branch_dq(t, s), branch_dv(t, s),
              VS{adj_qpos_.data() + e, env_minor}, VS{adj_qvel_.data() + e, env_minor}, VS{adj_ctrl_.data() + e, env_minor},
              VW{adj_qb_.data() + static_cast<std::size_t>(s) * B_ * nq_, LW{}},
              VW{adj_vb_.data() + static_cast<std::size_t>(s) * B_ * nv_, LW{}}, d, d_keep, a, adj_buffer, replay,
              substeps_, sc.u, sc.adj_u, sc.tq, sc.tv, sc.sink);
          if (!same && be_.status_[e] == kern::kEnvOk) replay_ok_[e] = 0;
          return;
        }
        const bool same = kern::adj_control_step_env(
            be_.view_, be_.grad_view_, o, VS{q0 + e, env_minor}, VS{v0 + e, env_minor}, VS{u + e, env_minor},
            w0 ? VS{w0 + e, env_minor} : VS{}, VS{q1 + e, env_minor}, VS{v1 + e, env_minor}, VS{adj_qpos_.data() + e, env_minor},
            VS{adj_qvel_.data() + e, env_minor}, VS{adj_ctrl_.data() + e, env_minor}, d, d_keep, a,
            adj_buffer, replay, substeps_);
        // an environment frozen by a non-finite state is not expected to replay
        if (!same && be_.status_[e] == kern::kEnvOk) replay_ok_[e] = 0;
      };
      // with bundles dynamic, as in bundled_step (the results do not depend on the thread: each
      // environment's work is its own)
      if (bundle_.enabled) {
#pragma omp for schedule(dynamic, 1)
        for (int e = 0; e < nenv_; ++e) adjoint_env(e);
      } else {
#pragma omp for schedule(static)
        for (int e = 0; e < nenv_; ++e) adjoint_env(e);
      }
    }
  }

  // Views of slot s's branches at time index t (B x nq, B x nv; warm starts null without).
  using VB = kern::View<Real, kern::Contiguous>;
  std::size_t slot_index(int t, int s) const { return (static_cast<std::size_t>(t) * pool_ + s) * B_; }
  VB branch_q(int t, int s) { return VB{pool_q_.data() + slot_index(t, s) * nq_, {}}; }
  VB branch_v(int t, int s) { return VB{pool_v_.data() + slot_index(t, s) * nv_, {}}; }
  VB branch_w(int t, int s) { return pool_w_.empty() ? VB{} : VB{pool_w_.data() + slot_index(t, s) * nv_, {}}; }
  VB branch_dq(int t, int s) { return VB{pool_dq_.data() + slot_index(t, s) * nv_, {}}; }
  VB branch_dv(int t, int s) { return VB{pool_dv_.data() + slot_index(t, s) * nv_, {}}; }
  // slot s's branches at its bundle's start (x ⊕ δ): rebuilt by the adjoint, so one per slot
  VB start_q(int s) { return VB{start_q_.data() + static_cast<std::size_t>(s) * B_ * nq_, {}}; }
  VB start_v(int s) { return VB{start_v_.data() + static_cast<std::size_t>(s) * B_ * nv_, {}}; }
  VB start_w(int s) { return start_w_.empty() ? VB{} : VB{start_w_.data() + static_cast<std::size_t>(s) * B_ * nv_, {}}; }

  // Per-thread scratch of the bundle kernels.
  struct BundleScratch {
    VB perturbation, u, adj_u, tq, tv, sink, stats;
  };
  int bundle_scratch_size() const {
    return kern::bundle_perturbation_scratch_size(be_.view_) + 2 * nu_ + nq_ + 2 * nv_ + kern::kContactStats + 1;
  }
  BundleScratch bundle_scratch(int tid) {
    Real* p = bundle_workspace_.data() + static_cast<std::size_t>(bundle_ws_) * tid;
    BundleScratch sc;
    const auto take = [&](int n) { VB v{p, {}}; p += n; return v; };
    sc.perturbation = take(kern::bundle_perturbation_scratch_size(be_.view_));
    sc.u = take(nu_);
    sc.adj_u = take(nu_);
    sc.tq = take(nq_);
    sc.tv = take(nv_);
    sc.sink = take(nv_);
    sc.stats = take(kern::kContactStats);
    return sc;
  }

  CpuBackend<Real>& be_;
  int horizon_;
  int substeps_;
  int nq_, nv_, nu_, nenv_;
  std::vector<Real> ckpt_qpos_;  // (horizon + 1) x nq x nenv
  std::vector<Real> ckpt_qvel_;  // (horizon + 1) x nv x nenv
  std::vector<Real> ckpt_warm_;  // (horizon + 1) x nv x nenv  the solve's warm start (empty without constraints)
  std::vector<Real> ckpt_ctrl_;  // horizon x nu x nenv
  std::vector<Real> adj_qpos_;   // nq x nenv  running adjoint of the state
  std::vector<Real> adj_qvel_;   // nv x nenv
  std::vector<Real> adj_ctrl_;   // nu x nenv  control adjoint of the current step
  std::vector<Real> tangent_;    // nv x nenv
  std::vector<Real> stage_;      // max(nq, nv, nu) x nenv  host conversion staging
  int thread_ws_;                // Reals of workspace per thread
  std::vector<Real> workspace_;  // threads x thread_ws_
  std::vector<char> replay_ok_;  // nenv
  // backward_policy's host arrays for the ControlVjp (environment-major, double)
  std::vector<double> host_ctrl_;  // nenv x nu
  std::vector<double> host_qpos_;  // nenv x nq
  std::vector<double> host_qvel_;  // nenv x nv
  // bundles (empty unless enabled; P = pool_ slots of B branches)
  BundleOptions bundle_;
  kern::BundleParams params_{};
  int B_ = 0, pool_ = 0;  // branches per bundle (BCG's B), bundle slots P
  std::vector<Real> pool_q_;     // (horizon + 1) x P x B x nq  branch states at each time index
  std::vector<Real> pool_v_;     // (horizon + 1) x P x B x nv
  std::vector<Real> pool_w_;     // (horizon + 1) x P x B x nv  their warm starts (empty without)
  std::vector<Real> pool_dq_;    // horizon x P x B x nv  perturbations δq (at a bundle's first step)
  std::vector<Real> pool_dv_;    // horizon x P x B x nv  and δv
  std::vector<Real> start_q_;    // P x B x nq  branch states at the bundle's start (the first step's input)
  std::vector<Real> start_v_;    // P x B x nv
  std::vector<Real> start_w_;    // P x B x nv  (empty without warm starts)
  std::vector<Real> adj_qb_;     // P x B x nq  running branch adjoints
  std::vector<Real> adj_vb_;     // P x B x nv
  std::vector<int> step_slot_;   // horizon x nenv  the slot of the environment's bundle in step t, or -1
  std::vector<char> step_first_; // horizon x nenv  1 at a bundle's first step
  std::vector<int> env_slot_, env_left_, env_bundles_;  // nenv  recording state, bundles started
  std::vector<char> slot_free_;  // P
  std::vector<int> trigger_scratch_;
  int started_ = 0, skipped_ = 0;
  int bundle_ws_ = 0;
  std::vector<Real> bundle_workspace_;  // threads x bundle_scratch_size
};

template <class Real>
std::unique_ptr<RolloutImpl> CpuBackend<Real>::make_rollout(int horizon, int substeps) {
  return std::make_unique<CpuRollout<Real>>(*this, horizon, substeps);
}

template std::unique_ptr<RolloutImpl> CpuBackend<float>::make_rollout(int, int);
template std::unique_ptr<RolloutImpl> CpuBackend<double>::make_rollout(int, int);

}  // namespace stiffgrad
