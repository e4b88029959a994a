// CPU Rollout: checkpoints in the backend's precision and layout (environment-minor), and
// the reverse sweep as an OpenMP loop over kern::adj_control_step_env, the same function the
// CUDA backend launches. Per-thread workspace: two primal Data, adjoint Data, replay buffer.
#include <cstring>

#include "host/backend_cpu.hpp"
#include "kernels/batch_adjoint.hpp"

namespace stiffgrad {

template <class Real>
class CpuRollout final : public RolloutImpl {
 public:
  CpuRollout(CpuBackend<Real>& be, int horizon, int substeps)
      : be_(be),
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
        replay_ok_(nenv_, 1) {}

  void save(int t) override {
    std::copy(be_.qpos_.begin(), be_.qpos_.end(), ckpt_qpos_.begin() + static_cast<std::ptrdiff_t>(t) * nq_ * nenv_);
    std::copy(be_.qvel_.begin(), be_.qvel_.end(), ckpt_qvel_.begin() + static_cast<std::ptrdiff_t>(t) * nv_ * nenv_);
    std::copy(be_.warm_.begin(), be_.warm_.end(), ckpt_warm_.begin() + static_cast<std::ptrdiff_t>(t) * nv_ * nenv_);
    if (t > 0)
      std::copy(be_.ctrl_.begin(), be_.ctrl_.begin() + static_cast<std::ptrdiff_t>(nu_) * nenv_,
                ckpt_ctrl_.begin() + static_cast<std::ptrdiff_t>(t - 1) * nu_ * nenv_);
  }

  void backward(int T, const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                bool tangent, double* dL_dqvel0, double* dL_dctrl) override {
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
    return (reals / nenv_ + static_cast<std::size_t>(thread_ws_)) * sizeof(Real);
  }

 private:
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
#pragma omp for schedule(static)
      for (int e = 0; e < nenv_; ++e) {
        const bool same = kern::adj_control_step_env(
            be_.view_, be_.grad_view_, o, VS{q0 + e, env_minor}, VS{v0 + e, env_minor}, VS{u + e, env_minor},
            w0 ? VS{w0 + e, env_minor} : VS{}, VS{q1 + e, env_minor}, VS{v1 + e, env_minor}, VS{adj_qpos_.data() + e, env_minor},
            VS{adj_qvel_.data() + e, env_minor}, VS{adj_ctrl_.data() + e, env_minor}, d, d_keep, a,
            adj_buffer, replay, substeps_);
        // an environment frozen by a non-finite state is not expected to replay
        if (!same && be_.status_[e] == kern::kEnvOk) replay_ok_[e] = 0;
      }
    }
  }

  CpuBackend<Real>& be_;
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
};

template <class Real>
std::unique_ptr<RolloutImpl> CpuBackend<Real>::make_rollout(int horizon, int substeps) {
  return std::make_unique<CpuRollout<Real>>(*this, horizon, substeps);
}

template std::unique_ptr<RolloutImpl> CpuBackend<float>::make_rollout(int, int);
template std::unique_ptr<RolloutImpl> CpuBackend<double>::make_rollout(int, int);

}  // namespace stiffgrad
