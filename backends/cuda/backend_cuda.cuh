// CUDA backend (class declaration; the launches live in backend_cuda.cu and rollout_cuda.cu): the
// same per-environment kernel as the CPU backend (kern::control_step_env), launched with one thread
// per environment. No physics lives here; this file only owns device memory, the stream, the launch
// and the host<->device transfers.
//
// Memory layout (all device arrays environment-minor: element i of environment e sits at
// i * nenv + e, so that the 32 threads of a warp, which handle 32 consecutive environments,
// touch 32 consecutive addresses on every access and each load is one coalesced transaction):
//
//   model_reals_   ModelArrays<Real>::reals()   shared, read-only (copied once at creation)
//   model_ints_    ModelArrays<Real>::ints()    shared, read-only
//   qpos_          nq x nenv                    batched state
//   qvel_          nv x nenv
//   warm_          nv x nenv                    the constraint solve's warm start
//   (kernels/step/batch.hpp) ctrl_          nu x nenv                    held over the substeps of
//   a control step status_        nenv                         kEnvOk / kEnvNonFinite per
//   environment workspace_     DataLayout::size x nenv      one kern::Data per environment,
//   interleaved:
//                                               environment e's Data is bound at
//                                               workspace_ + e with kern::Strided{nenv}, so
//                                               field offset o, element i is at
//                                               (o + i) * nenv + e.
//
// The CPU backend gives each OpenMP thread one contiguous Data (kern::Contiguous); the device
// gives each environment its own interleaved Data. Both call the same templated kernel body,
// which never sees the difference (kernels/base/view.hpp).
//
// Host transfers go through pinned staging buffers allocated once at creation: the host API is
// double, environment-major (nenv x n); the device is Real, environment-minor. The
// transposition and the precision conversion happen on the host (to_env_minor/to_env_major),
// followed by one cudaMemcpyAsync per array on the backend's stream.
//
// step() enqueues one control step on the backend's stream: the staged pipeline's kernels
// (backends/cuda/staged_step.cuh; every model, integrator and contact model) as one CUDA graph,
// captured at creation for SimulatorOptions::substeps (another substep count or a bundled step is
// captured once, at its first use). It copies nothing to or from the host and never synchronizes.
// Errors of an enqueued kernel surface at the next synchronizing call (synchronize(), get_*). The
// stream is the user's (options) or a blocking one created here; its ordering contract is stated in
// stiffgrad/simulator.hpp.
//
// Bitwise replay: the adjoint's replay (backends/cuda/staged_adjoint.cuh) runs the forward step's
// own staged kernels over its tape, and the host emulation and the CPU backend (the same
// kernels/ code compiled by the host compiler) reproduce them bit for bit because every .cu file
// is compiled with -fmad=false (CMakeLists.txt says why): no a*b+c is fused into an FMA, so
// rounding depends on the source alone, not on what nvcc inlined where. The check in
// cuda_support.cuh refuses a build that lost those flags.
#pragma once

#include "backends/cuda/cuda_support.cuh"
#include "backends/cuda/staged_step.cuh"
#include "core/backend.hpp"
#include "core/model_arrays.hpp"
#include "kernels/step/batch.hpp"

namespace stiffgrad {

namespace cuda_detail {

template <class Real>
class CudaBackend final : public BackendImpl {
 public:
  CudaBackend(const Model& model, const SimulatorOptions& opt)
      : nenv_(opt.nenv), nq_(model.nq), nv_(model.nv), nu_(std::max(model.nu, 0)) {
    if (nenv_ < 1) throw std::invalid_argument("CUDA backend: nenv must be >= 1");
    SG_CUDA_CHECK(cudaGetDevice(&device_));

    // the Impulse contact model steps a copy with widened margins (lives while `arrays` does)
    const std::unique_ptr<Model> impulse_model = impulse_model_for(model, opt.contact_model, opt.impulse);
    const ModelArrays<Real> arrays(impulse_model ? *impulse_model : model, constraint_capacity(model, opt));
    // contacts from distance: the second contact model the adjoint differentiates (same sizes)
    const std::unique_ptr<Model> cfd_model =
        opt.cfd.enabled ? std::make_unique<Model>(contacts_from_distance_model(model, opt.cfd)) : nullptr;
    const std::unique_ptr<ModelArrays<Real>> cfd_arrays =
        cfd_model ? std::make_unique<ModelArrays<Real>>(*cfd_model, constraint_capacity(model, opt)) : nullptr;
    const kern::ModelView<Real> host_view = simulation_view(arrays.host_view(), opt);
    layout_ = kern::DataLayout::make(host_view);

    // kern::Strided indexes with int (i * nenv): every batched index must fit in an int.
    const std::size_t n = static_cast<std::size_t>(nenv_);
    const std::size_t rows = std::max<std::size_t>(
        {static_cast<std::size_t>(layout_.size), static_cast<std::size_t>(nq_),
         static_cast<std::size_t>(nv_), static_cast<std::size_t>(nu_)});
    if (rows * n > static_cast<std::size_t>(INT_MAX))
      throw std::runtime_error(
          "CUDA backend: nenv = " + std::to_string(nenv_) + " is too large for this model: the " +
          "environment-minor workspace (" + std::to_string(layout_.size) + " x nenv elements) " +
          "exceeds the 32-bit index range of the kernels; use at most " +
          std::to_string(static_cast<std::size_t>(INT_MAX) / rows) + " environments");

    // Refuse clearly, before allocating anything, when the device lacks the memory.
    const std::size_t need =
        sizeof(Real) * (arrays.reals().size() + n * (static_cast<std::size_t>(nq_) + nv_ + nu_) +
                        n * static_cast<std::size_t>(layout_.size)) +
        sizeof(int) * (arrays.ints().size() + n);
    std::size_t free_bytes = 0, total_bytes = 0;
    SG_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (need > free_bytes) {
      cudaDeviceProp prop{};
      cudaGetDeviceProperties(&prop, device_);
      throw std::runtime_error(
          "CUDA backend: not enough device memory on device " + std::to_string(device_) + " (" +
          prop.name + "): nenv = " + std::to_string(nenv_) + " in " +
          (sizeof(Real) == 4 ? "float" : "double") + " needs " + mib(need) + " but only " +
          mib(free_bytes) + " of " + mib(total_bytes) + " are free; reduce nenv");
    }

    try {
      // A blocking stream (not cudaStreamNonBlocking): the legacy default stream synchronizes
      // with it both ways, so a user's plain <<<>>> launch that writes controls is ordered
      // before the step_backend_ctrl that reads them with no event to remember (the contract
      // in stiffgrad/simulator.hpp). The price, serializing with other libraries' legacy
      // default-stream work, is the safe one; a user who wants concurrency passes a stream.
      if (opt.cuda_stream) {
        stream_ = static_cast<cudaStream_t>(opt.cuda_stream);
        owns_stream_ = false;
      } else {
        SG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault));
        owns_stream_ = true;
      }
      SG_CUDA_CHECK(cudaEventCreateWithFlags(&upload_done_, cudaEventDisableTiming));
      SG_CUDA_CHECK(cudaEventCreateWithFlags(&order_, cudaEventDisableTiming));
      model_reals_ = DeviceArray<Real>(arrays.reals().size(), "the model (reals)");
      model_ints_ = DeviceArray<int>(arrays.ints().size(), "the model (ints)");
      qpos_ = DeviceArray<Real>(n * nq_, "qpos");
      qvel_ = DeviceArray<Real>(n * nv_, "qvel");
      warm_ = DeviceArray<Real>(n * nv_, "the solver's warm start");
      ctrl_ = DeviceArray<Real>(n * nu_, "ctrl");
      status_ = DeviceArray<int>(n, "status");
      contact_stats_ = DeviceArray<Real>(n * kern::kContactStats, "contact statistics");
      workspace_ = DeviceArray<Real>(n * layout_.size, "the workspace");
      const std::size_t staging =
          n * std::max<std::size_t>({static_cast<std::size_t>(nq_) + nv_, static_cast<std::size_t>(nu_),
                                     static_cast<std::size_t>(kern::kContactStats)});
      upload_ = PinnedArray<Real>(staging, "upload staging");
      download_ = PinnedArray<Real>(staging, "download staging");
      status_host_ = PinnedArray<int>(n, "status staging");

      // The model goes to the device once; the host copies die with `arrays`, hence the sync.
      SG_CUDA_CHECK(cudaMemcpyAsync(model_reals_.get(), arrays.reals().data(),
                                    sizeof(Real) * arrays.reals().size(), cudaMemcpyHostToDevice,
                                    stream_));
      SG_CUDA_CHECK(cudaMemcpyAsync(model_ints_.get(), arrays.ints().data(),
                                    sizeof(int) * arrays.ints().size(), cudaMemcpyHostToDevice,
                                    stream_));
      // Defined contents until the Simulator sets them (it does, in reset()).
      SG_CUDA_CHECK(cudaMemsetAsync(qpos_.get(), 0, qpos_.bytes(), stream_));
      SG_CUDA_CHECK(cudaMemsetAsync(qvel_.get(), 0, qvel_.bytes(), stream_));
      SG_CUDA_CHECK(cudaMemsetAsync(warm_.get(), 0, warm_.bytes(), stream_));
      SG_CUDA_CHECK(cudaMemsetAsync(ctrl_.get(), 0, ctrl_.bytes(), stream_));
      SG_CUDA_CHECK(cudaMemsetAsync(status_.get(), 0, status_.bytes(), stream_));
      SG_CUDA_CHECK(cudaMemsetAsync(contact_stats_.get(), 0, contact_stats_.bytes(), stream_));
      SG_CUDA_CHECK(cudaMemsetAsync(workspace_.get(), 0, workspace_.bytes(), stream_));
      SG_CUDA_CHECK(cudaEventRecord(upload_done_, stream_));
      SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
      // every kernel sums as a warp does (the staged Impulse solve runs a warp per environment)
      view_ = with_team_width(simulation_view(arrays.bind(model_reals_.get(), model_ints_.get()), opt),
                              kern::kMaxTeamWidth);
      has_constraints_ = kern::has_warmstart(view_);
      grad_view_ = view_;
      staged_ = std::make_unique<StagedStep<Real>>(impulse_model ? *impulse_model : model, view_,
                                                   layout_, nenv_, opt.cuda_solve_shared_bytes);
      staged_->prepare(stream_, qpos_.get(), qvel_.get(), ctrl_.get(), warm_.get(),
                       workspace_.get(), contact_stats_.get(), status_.get(), nullptr,
                       std::max(opt.substeps, 1));
      if (cfd_arrays) {
        cfd_reals_ = DeviceArray<Real>(cfd_arrays->reals().size(), "the contacts-from-distance model (reals)");
        cfd_ints_ = DeviceArray<int>(cfd_arrays->ints().size(), "the contacts-from-distance model (ints)");
        SG_CUDA_CHECK(cudaMemcpyAsync(cfd_reals_.get(), cfd_arrays->reals().data(),
                                      sizeof(Real) * cfd_arrays->reals().size(), cudaMemcpyHostToDevice, stream_));
        SG_CUDA_CHECK(cudaMemcpyAsync(cfd_ints_.get(), cfd_arrays->ints().data(),
                                      sizeof(int) * cfd_arrays->ints().size(), cudaMemcpyHostToDevice, stream_));
        SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
        grad_view_ = with_team_width(gradient_view(cfd_arrays->bind(cfd_reals_.get(), cfd_ints_.get()), opt),
                                     kern::kMaxTeamWidth);
        staged_gradient_ =
            std::make_unique<StagedStep<Real>>(*cfd_model, grad_view_, layout_, nenv_);
      }
    } catch (...) {
      release_stream();
      throw;
    }
  }

  ~CudaBackend() override {
    // Wait for queued work before the buffers it uses are freed; never throw from here.
    if (stream_) cudaStreamSynchronize(stream_);
    release_stream();
  }

  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  void set_state(const double* qpos, const double* qvel) override {
    DeviceGuard guard(device_);
    Real* staging = acquire_upload();
    Real* s_qpos = staging;
    Real* s_qvel = staging + static_cast<std::size_t>(nq_) * nenv_;
    to_env_minor(s_qpos, qpos, nenv_, nq_);
    to_env_minor(s_qvel, qvel, nenv_, nv_);
    SG_CUDA_CHECK(cudaMemcpyAsync(qpos_.get(), s_qpos, sizeof(Real) * nq_ * nenv_,
                                  cudaMemcpyHostToDevice, stream_));
    SG_CUDA_CHECK(cudaMemcpyAsync(qvel_.get(), s_qvel, sizeof(Real) * nv_ * nenv_,
                                  cudaMemcpyHostToDevice, stream_));
    // a new state starts the solve afresh: zero warm start, as after MuJoCo's mj_resetData
    SG_CUDA_CHECK(cudaMemsetAsync(warm_.get(), 0, warm_.bytes(), stream_));
    release_upload();
  }

  void get_state(double* qpos, double* qvel) const override {
    DeviceGuard guard(device_);
    Real* s_qpos = download_.get();
    Real* s_qvel = download_.get() + static_cast<std::size_t>(nq_) * nenv_;
    SG_CUDA_CHECK(cudaMemcpyAsync(s_qpos, qpos_.get(), sizeof(Real) * nq_ * nenv_,
                                  cudaMemcpyDeviceToHost, stream_));
    SG_CUDA_CHECK(cudaMemcpyAsync(s_qvel, qvel_.get(), sizeof(Real) * nv_ * nenv_,
                                  cudaMemcpyDeviceToHost, stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    to_env_major(qpos, s_qpos, nenv_, nq_);
    to_env_major(qvel, s_qvel, nenv_, nv_);
  }

  // The kernel reads and writes warm_ only with constraints (kern::has_warmstart); without,
  // it stays zero and the setter leaves it so.
  void set_warmstart(const double* warm) override {
    if (!has_constraints_) return;
    DeviceGuard guard(device_);
    Real* staging = acquire_upload();
    to_env_minor(staging, warm, nenv_, nv_);
    SG_CUDA_CHECK(cudaMemcpyAsync(warm_.get(), staging, sizeof(Real) * nv_ * nenv_, cudaMemcpyHostToDevice, stream_));
    release_upload();
  }
  void get_warmstart(double* warm) const override {
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaMemcpyAsync(download_.get(), warm_.get(), sizeof(Real) * nv_ * nenv_, cudaMemcpyDeviceToHost,
                                  stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    to_env_major(warm, download_.get(), nenv_, nv_);
  }

  void set_ctrl(const double* ctrl) override {
    if (nu_ == 0) return;
    DeviceGuard guard(device_);
    Real* staging = acquire_upload();
    to_env_minor(staging, ctrl, nenv_, nu_);
    SG_CUDA_CHECK(cudaMemcpyAsync(ctrl_.get(), staging, sizeof(Real) * nu_ * nenv_,
                                  cudaMemcpyHostToDevice, stream_));
    release_upload();
  }

  void get_ctrl(double* ctrl) const override {
    if (nu_ == 0) return;
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaMemcpyAsync(download_.get(), ctrl_.get(), sizeof(Real) * nu_ * nenv_,
                                  cudaMemcpyDeviceToHost, stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    to_env_major(ctrl, download_.get(), nenv_, nu_);
  }

  // Device-to-device on the stream: no host involvement.
  void set_ctrl_backend(const void* ctrl) override {
    if (nu_ == 0) return;
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaMemcpyAsync(ctrl_.get(), ctrl, sizeof(Real) * nu_ * nenv_,
                                  cudaMemcpyDeviceToDevice, stream_));
  }

  void clear_status() override {
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaMemsetAsync(status_.get(), 0, sizeof(int) * nenv_, stream_));
  }

  void get_status(int* status) const override {
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaMemcpyAsync(status_host_.get(), status_.get(), sizeof(int) * nenv_,
                                  cudaMemcpyDeviceToHost, stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::copy(status_host_.get(), status_host_.get() + nenv_, status);
  }

  // One launch, one thread per environment; asynchronous with respect to the host.
  std::unique_ptr<RolloutImpl> make_rollout(int horizon, int substeps) override;

  void step(int substeps) override {
    NvtxRange range("stiffgrad::cuda::step");
    DeviceGuard guard(device_);
    launch_control_step(nullptr, substeps);
  }

  // One control step of every environment not flagged in `skip` (nenv flags on the device, or
  // null): the staged pipeline (backends/cuda/staged_step.cuh). Launch-configuration errors only
  // are checked; nothing synchronizes.
  void launch_control_step(const int* skip, int substeps) {
    staged_->launch(stream_, qpos_.get(), qvel_.get(), ctrl_.get(), warm_.get(), workspace_.get(),
                    contact_stats_.get(), status_.get(), skip, substeps);
  }

  void synchronize() override {
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void get_contact_stats(double* stats) const override {
    DeviceGuard guard(device_);
    const std::size_t n = static_cast<std::size_t>(nenv_) * kern::kContactStats;
    SG_CUDA_CHECK(cudaMemcpyAsync(download_.get(), contact_stats_.get(), sizeof(Real) * n,
                                  cudaMemcpyDeviceToHost, stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    to_env_major(stats, download_.get(), nenv_, kern::kContactStats);
  }
  void set_contact_stats(const double* stats) override {
    DeviceGuard guard(device_);
    Real* staging = acquire_upload();
    to_env_minor(staging, stats, nenv_, kern::kContactStats);
    SG_CUDA_CHECK(cudaMemcpyAsync(contact_stats_.get(), staging, sizeof(Real) * kern::kContactStats * nenv_,
                                  cudaMemcpyHostToDevice, stream_));
    release_upload();
  }
  const void* contact_stats_backend() const override { return contact_stats_.get(); }
  const void* qpos_backend() const override { return qpos_.get(); }
  const int* status_backend() const override { return status_.get(); }
  const void* qvel_backend() const override { return qvel_.get(); }

  void* stream() const override { return static_cast<void*>(stream_); }

  // Cross-stream ordering with one event created at construction: cudaStreamWaitEvent binds
  // to the record made just before it, so re-recording the same event later is safe and the
  // step loop allocates nothing and never waits on the host.
  void wait_for_stream(void* stream) override {
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaEventRecord(order_, static_cast<cudaStream_t>(stream)));
    SG_CUDA_CHECK(cudaStreamWaitEvent(stream_, order_, 0));
  }
  void make_stream_wait(void* stream) override {
    DeviceGuard guard(device_);
    SG_CUDA_CHECK(cudaEventRecord(order_, stream_));
    SG_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), order_, 0));
  }

  std::size_t bytes() const override {
    return model_reals_.bytes() + model_ints_.bytes() + qpos_.bytes() + qvel_.bytes() +
           warm_.bytes() + ctrl_.bytes() + status_.bytes() + contact_stats_.bytes() +
           workspace_.bytes() + staged_->bytes() +
           (staged_gradient_ ? staged_gradient_->bytes() : 0);
  }

 private:
  template <class R> friend class CudaRollout;
  static std::string mib(std::size_t b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
    return buf;
  }

  // The upload staging buffer may still be read by the previous asynchronous upload: wait for
  // that copy only (not for the kernels queued after it), then hand the buffer out.
  Real* acquire_upload() {
    SG_CUDA_CHECK(cudaEventSynchronize(upload_done_));
    return upload_.get();
  }
  void release_upload() { SG_CUDA_CHECK(cudaEventRecord(upload_done_, stream_)); }

  void release_stream() noexcept {
    if (order_) cudaEventDestroy(order_);
    if (upload_done_) cudaEventDestroy(upload_done_);
    if (stream_ && owns_stream_) cudaStreamDestroy(stream_);
    order_ = nullptr;
    upload_done_ = nullptr;
    stream_ = nullptr;
  }

  int nenv_, nq_, nv_, nu_;
  int device_ = 0;
  bool has_constraints_ = false;  // contacts or rows: the kernels keep a warm start in warm_
  kern::DataLayout layout_{};
  kern::ModelView<Real> view_{};  // pointers into model_reals_ / model_ints_ (device)
  kern::ModelView<Real> grad_view_{};  // the model the adjoint differentiates: view_, or the
                                       // contacts-from-distance model in cfd_reals_ / cfd_ints_
  cudaStream_t stream_ = nullptr;      // all work of this backend and its rollouts
  bool owns_stream_ = false;           // created here (else SimulatorOptions::cuda_stream)
  cudaEvent_t upload_done_ = nullptr;  // recorded after the last copy out of upload_
  cudaEvent_t order_ = nullptr;        // wait_for_stream / make_stream_wait

  DeviceArray<Real> model_reals_;  // ModelArrays::reals()
  DeviceArray<int> model_ints_;    // ModelArrays::ints()
  DeviceArray<Real> cfd_reals_;    // the contacts-from-distance model (empty when off)
  DeviceArray<int> cfd_ints_;
  DeviceArray<Real> qpos_;         // joint positions (nq x nenv)
  DeviceArray<Real> qvel_;         // joint velocities (nv x nenv)
  DeviceArray<Real> warm_;         // the solve's warm start (nv x nenv)
  DeviceArray<Real> ctrl_;         // controls (nu x nenv)
  DeviceArray<int> status_;        // kEnvOk / kEnvNonFinite / kEnvConstraintOverflow bits (nenv)
  DeviceArray<Real> contact_stats_;  // kContactStats x nenv (kernels/collision/contact_stats.hpp)
  DeviceArray<Real> workspace_;    // per-environment Data (DataLayout::size x nenv)
  std::unique_ptr<StagedStep<Real>> staged_;  // the control step's kernels
  // with the staged adjoint and contacts from distance: the staged step in grad_view_, whose
  // substeps the staged adjoint runs over its tape (StagedAdjoint's gradient_step); else null
  std::unique_ptr<StagedStep<Real>> staged_gradient_;

  PinnedArray<Real> upload_;       // (nq + nv) x nenv or nu x nenv, environment-minor
  PinnedArray<Real> download_;     // same size; get_* synchronize before reading it
  PinnedArray<int> status_host_;   // nenv
};

}  // namespace cuda_detail

}  // namespace stiffgrad
