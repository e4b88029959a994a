// CPU backend: an OpenMP loop over environments calling the same per-environment kernel the
// CUDA backend launches (kern::control_step_env). Each thread owns one contiguous Data
// buffer, sized at construction; an environment's result depends only on its own inputs, so
// results are bitwise independent of the thread count and schedule.
#pragma once

#include <omp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/model_arrays.hpp"
#include "kernels/step/batch.hpp"

namespace stiffgrad {

template <class Real>
class CpuBackend final : public BackendImpl {
 public:
  CpuBackend(const Model& model, const SimulatorOptions& opt)
      : impulse_model_(impulse_model_for(model, opt.contact_model, opt.impulse)),
        arrays_(impulse_model_ ? *impulse_model_ : model, constraint_capacity(model, opt)),
        view_(simulation_view(arrays_.host_view(), opt)),
        layout_(kern::DataLayout::make(view_)),
        cfd_model_(opt.cfd.enabled ? std::make_unique<Model>(contacts_from_distance_model(model, opt.cfd)) : nullptr),
        cfd_arrays_(cfd_model_ ? std::make_unique<ModelArrays<Real>>(*cfd_model_, constraint_capacity(model, opt))
                               : nullptr),
        grad_view_(cfd_arrays_ ? gradient_view(cfd_arrays_->host_view(), opt) : view_),
        nenv_(opt.nenv),
        // never more threads than environments: idle threads only add fork/join cost
        threads_(std::max(1, std::min(opt.nenv, opt.threads > 0 ? opt.threads : omp_get_max_threads()))),
        qpos_(static_cast<std::size_t>(model.nq) * nenv_),
        qvel_(static_cast<std::size_t>(model.nv) * nenv_),
        warm_(kern::has_warmstart(view_) ? static_cast<std::size_t>(model.nv) * nenv_ : 0, Real(0)),
        ctrl_(static_cast<std::size_t>(std::max(model.nu, 0)) * nenv_ + 1),
        status_(nenv_, 0),
        contact_stats_(static_cast<std::size_t>(kern::kContactStats) * nenv_, Real(0)),
        workspace_(static_cast<std::size_t>(layout_.size) * threads_ + 1) {}

  // A new state starts the solve afresh: zero warm start, as after MuJoCo's mj_resetData.
  void set_state(const double* qpos, const double* qvel) override {
    to_env_minor(qpos_.data(), qpos, nenv_, view_.nq);
    to_env_minor(qvel_.data(), qvel, nenv_, view_.nv);
    std::fill(warm_.begin(), warm_.end(), Real(0));
  }
  void get_state(double* qpos, double* qvel) const override {
    to_env_major(qpos, qpos_.data(), nenv_, view_.nq);
    to_env_major(qvel, qvel_.data(), nenv_, view_.nv);
  }
  void set_warmstart(const double* warm) override {
    if (!warm_.empty()) to_env_minor(warm_.data(), warm, nenv_, view_.nv);
  }
  void get_warmstart(double* warm) const override {
    if (warm_.empty()) std::fill(warm, warm + static_cast<std::size_t>(nenv_) * view_.nv, 0.0);
    else to_env_major(warm, warm_.data(), nenv_, view_.nv);
  }
  void set_ctrl(const double* ctrl) override { to_env_minor(ctrl_.data(), ctrl, nenv_, view_.nu); }
  void get_ctrl(double* ctrl) const override { to_env_major(ctrl, ctrl_.data(), nenv_, view_.nu); }
  void set_ctrl_backend(const void* ctrl) override {
    const Real* src = static_cast<const Real*>(ctrl);
    std::copy(src, src + static_cast<std::size_t>(view_.nu) * nenv_, ctrl_.begin());
  }
  void clear_status() override { std::fill(status_.begin(), status_.end(), 0); }
  void get_status(int* status) const override { std::copy(status_.begin(), status_.end(), status); }

  void step(int substeps) override {
    using LW = kern::Contiguous;
#pragma omp parallel num_threads(threads_)
    {
      const int tid = omp_get_thread_num();
      const kern::View<Real, LW> buffer{workspace_.data() + static_cast<std::size_t>(layout_.size) * tid, LW{}};
      const auto d = kern::Data<Real, LW>::bind(buffer, layout_);
#pragma omp for schedule(static)
      for (int e = 0; e < nenv_; ++e) step_env(e, d, substeps);
    }
  }

  // One control step of environment e in Data d (a thread's workspace).
  void step_env(int e, const kern::Data<Real, kern::Contiguous>& d, int substeps) {
    using VS = kern::View<Real, kern::Strided>;
    const kern::Strided env_minor{nenv_};
    kern::control_step_env(view_, VS{qpos_.data() + e, env_minor}, VS{qvel_.data() + e, env_minor},
                           VS{ctrl_.data() + e, env_minor}, warm_view(e), d, substeps, &status_[e],
                           VS{contact_stats_.data() + e, env_minor});
  }

  void synchronize() override {}
  void get_contact_stats(double* stats) const override {
    to_env_major(stats, contact_stats_.data(), nenv_, kern::kContactStats);
  }
  void set_contact_stats(const double* stats) override {
    to_env_minor(contact_stats_.data(), stats, nenv_, kern::kContactStats);
  }
  const void* contact_stats_backend() const override { return contact_stats_.data(); }
  const void* qpos_backend() const override { return qpos_.data(); }
  const int* status_backend() const override { return status_.data(); }
  const void* qvel_backend() const override { return qvel_.data(); }

  std::unique_ptr<RolloutImpl> make_rollout(int horizon, int substeps) override;

  std::size_t bytes() const override {
    return sizeof(Real) * (qpos_.size() + qvel_.size() + warm_.size() + ctrl_.size() + workspace_.size() +
                           arrays_.reals().size()) +
           sizeof(Real) * contact_stats_.size() + sizeof(int) * (status_.size() + arrays_.ints().size());
  }

 private:
  template <class R> friend class CpuRollout;
  // Environment e's warm start (null without constraints: none is kept).
  kern::View<Real, kern::Strided> warm_view(int e) {
    return warm_.empty() ? kern::View<Real, kern::Strided>{} : kern::View<Real, kern::Strided>{warm_.data() + e, kern::Strided{nenv_}};
  }
  std::unique_ptr<Model> impulse_model_;  // the Impulse contact model's Model (else null; before arrays_)
  ModelArrays<Real> arrays_;                // of impulse_model_ if set, else of the Simulator's Model
  kern::ModelView<Real> view_;
  kern::DataLayout layout_;
  std::unique_ptr<Model> cfd_model_;               // contacts from distance (else null)
  std::unique_ptr<ModelArrays<Real>> cfd_arrays_;  // its arrays (else null)
  kern::ModelView<Real> grad_view_;                // the model the adjoint differentiates
  int nenv_;
  int threads_;
  std::vector<Real> qpos_;       // nq x nenv  (environment-minor)
  std::vector<Real> qvel_;       // nv x nenv
  std::vector<Real> warm_;       // nv x nenv  the solve's warm start (empty without constraints)
  std::vector<Real> ctrl_;       // nu x nenv
  std::vector<int> status_;      // nenv
  std::vector<Real> contact_stats_;  // kContactStats x nenv (kernels/collision/contact_stats.hpp)
  std::vector<Real> workspace_;  // threads x DataLayout::size
};

extern template class CpuBackend<float>;
extern template class CpuBackend<double>;

}  // namespace stiffgrad
