// CUDA Rollout: checkpoints and the reverse sweep on the device: the staged adjoint
// (backends/cuda/staged_adjoint.cuh), whose stages run the per-environment adjoint functions the
// CPU backend's kern::adj_control_step_env is composed of.
//
// Device memory (environment-minor like everything in cuda/):
//   ckpt_qpos_ / ckpt_qvel_   (T + 1) x n x nenv   states at the control boundaries
//   ckpt_warm_                (T + 1) x nv x nenv  the solve's warm start at each boundary
//   ckpt_ctrl_                T x nu x nenv        controls
//   adj_qpos_ / adj_qvel_     n x nenv             running state adjoint
//   adj_ctrl_                 T x nu x nenv        control adjoints of every step
//   dl_qpos_ / dl_qvel_       (T + 1) x n x nenv   incoming per-step loss gradients
//   adjoint_ws_               DataLayout::size x nenv   adjoint Data per environment
//   replay_                   kern::replay_size x nenv   replay buffer
//   staged_adjoint_           the staged adjoint's tape, S x DataLayout::size x nenv
//
// The replay runs the forward step's own staged kernels from each checkpoint into the tape and
// checks the next checkpoint bit for bit; replay_bitwise() reports the check, per environment.
//
// Bundles (stiffgrad/bundle.hpp; enable_bundles): one bundle slot per environment (pool = nenv;
// a smaller pool is refused on CUDA). The forward step is backends/cuda/bundle_cuda.cuh's
// launch_bundled_step (trigger, nominal step, contact search and starts, one nominal step per
// branch over the bundled environments, no host sync); launch_bundled_adjoint_step runs the
// others' staged adjoint and one per branch over the bundled environments (sweep). Device memory
// of the pool, environment-minor: branch states (T + 1) x B(nq + 2 nv) x nenv, perturbations
// T x 2 B nv x nenv, starts and running adjoints B(nq + 2 nv) + B(nq + nv) per environment, each
// branch's statistics and status bits of the current step, scratch.
//
// save() is three or four device-to-device copies on the stream (no host sync), so recording
// keeps step()'s guarantees. backward() uploads the loss gradients once, enqueues each control
// step's staged adjoint (a graph per step), and downloads the results once.
#include "backends/cuda/backend_cuda.cuh"
#include "backends/cuda/bundle_cuda.cuh"
#include "backends/cuda/staged_adjoint.cuh"
#include "kernels/step/staged_adjoint.hpp"

namespace stiffgrad {

namespace cuda_detail {

template <class Real>
__global__ void __launch_bounds__(kBlockSize)
tangent_kernel(const __grid_constant__ kern::ModelView<Real> m, Real* qpos, Real* adj_q,
               const Real* dl_q0, Real* tangent, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv) return;
  using V = kern::View<Real, kern::Strided>;
  const kern::Strided s{nenv};
  // the loss's own gradient at qpos_0 (row 0), held back by the last adjoint step, enters in
  // the form the tangent conversion expects
  if (dl_q0)
    kern::add_direct_qpos_adjoint(m, V{qpos + e, s}, V{const_cast<Real*>(dl_q0) + e, s}, V{adj_q + e, s});
  kern::qpos_adjoint_to_tangent(m, V{qpos + e, s}, V{adj_q + e, s}, V{tangent + e, s});
}

// a[i] += b[i] for i < n (the host hook's state adjoints into the running adjoint).
template <class Real>
__global__ void __launch_bounds__(kBlockSize) add_into_kernel(Real* a, const Real* b, int n) {
  const int i = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (i < n) a[i] += b[i];
}

template <class Real>
class CudaRollout final : public RolloutImpl {
 public:
  CudaRollout(CudaBackend<Real>& be, int horizon, int substeps)
      : be_(be), horizon_(horizon), substeps_(substeps), nq_(be.nq_), nv_(be.nv_), nu_(be.nu_),
        nenv_(be.nenv_) {
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_), T = static_cast<std::size_t>(horizon);
    const std::size_t replay = static_cast<std::size_t>(kern::replay_size(be_.view_, substeps));
    if (replay * n > static_cast<std::size_t>(INT_MAX) || (T + 1) * std::max(nq_, nv_) * n > static_cast<std::size_t>(INT_MAX))
      throw std::runtime_error("CUDA Rollout: horizon x nenv too large for 32-bit indexing");
    ckpt_qpos_ = DeviceArray<Real>((T + 1) * nq_ * n, "rollout checkpoints (qpos)");
    ckpt_qvel_ = DeviceArray<Real>((T + 1) * nv_ * n, "rollout checkpoints (qvel)");
    ckpt_warm_ = DeviceArray<Real>((T + 1) * nv_ * n, "rollout checkpoints (warm start)");
    ckpt_ctrl_ = DeviceArray<Real>(T * nu_ * n, "rollout controls");
    adj_qpos_ = DeviceArray<Real>(nq_ * n, "qpos adjoint");
    adj_qvel_ = DeviceArray<Real>(nv_ * n, "qvel adjoint");
    adj_ctrl_ = DeviceArray<Real>(T * nu_ * n, "ctrl adjoints");
    tangent_ = DeviceArray<Real>(nv_ * n, "tangent adjoint");
    dl_qpos_ = DeviceArray<Real>((T + 1) * nq_ * n, "loss gradients (qpos)");
    dl_qvel_ = DeviceArray<Real>((T + 1) * nv_ * n, "loss gradients (qvel)");
    adjoint_ws_ =
        DeviceArray<Real>(static_cast<std::size_t>(be_.layout_.size) * n, "adjoint workspace");
    replay_ = DeviceArray<Real>(replay * n, "replay buffer");
    replay_ok_ = DeviceArray<int>(n, "replay flags");
    // the staged adjoint (every model since 2026-12-08; with bundles, the others' and then each
    // branch's: launch_bundled_adjoint_step)
    staged_adjoint_ = std::make_unique<StagedAdjoint<Real>>(be_.grad_view_, be_.layout_, nenv_,
                                                            substeps, be_.staged_gradient_.get());
    const std::size_t stage = std::max({(T + 1) * std::max(nq_, nv_), T * nu_, static_cast<std::size_t>(nq_ + nv_)}) * n;
    stage_ = PinnedArray<Real>(stage, "rollout staging");
    flags_host_ = PinnedArray<int>(n, "replay flags staging");
    policy_qpos_ = DeviceArray<Real>(nq_ * n, "policy qpos adjoint");
    policy_qvel_ = DeviceArray<Real>(nv_ * n, "policy qvel adjoint");
    host_ctrl_.assign(n * nu_, 0.0);
    host_qpos_.assign(n * nq_, 0.0);
    host_qvel_.assign(n * nv_, 0.0);
  }

  void save(int t) override {
    const std::size_t n = static_cast<std::size_t>(nenv_);
    SG_CUDA_CHECK(cudaMemcpyAsync(ckpt_qpos_.get() + t * nq_ * n, be_.qpos_.get(), sizeof(Real) * nq_ * n,
                                  cudaMemcpyDeviceToDevice, be_.stream_));
    SG_CUDA_CHECK(cudaMemcpyAsync(ckpt_qvel_.get() + t * nv_ * n, be_.qvel_.get(), sizeof(Real) * nv_ * n,
                                  cudaMemcpyDeviceToDevice, be_.stream_));
    SG_CUDA_CHECK(cudaMemcpyAsync(ckpt_warm_.get() + t * nv_ * n, be_.warm_.get(), sizeof(Real) * nv_ * n,
                                  cudaMemcpyDeviceToDevice, be_.stream_));
    if (t > 0 && nu_ > 0)
      SG_CUDA_CHECK(cudaMemcpyAsync(ckpt_ctrl_.get() + (t - 1) * nu_ * n, be_.ctrl_.get(),
                                    sizeof(Real) * nu_ * n, cudaMemcpyDeviceToDevice, be_.stream_));
  }

  // ---------------------------------------------------------------- bundles
  void enable_bundles(const BundleOptions& o) override {
    if (o.pool > 0 && o.pool < nenv_)
      throw std::invalid_argument("CUDA Rollout: bundles use one slot per environment (BundleOptions::pool 0 or >= nenv)");
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_), T = static_cast<std::size_t>(horizon_),
                      B = static_cast<std::size_t>(o.branches);
    if (B * std::max(nq_, nv_) * n > static_cast<std::size_t>(INT_MAX))
      throw std::runtime_error("CUDA Rollout: branches x nenv too large for 32-bit indexing");
    bundle_opt_ = o;
    pool_.params = kern::BundleParams{o.branches, o.sigma_p, o.sigma_v, o.lambda, o.seed};
    pool_.B = o.branches;
    pool_.steps = o.steps;
    pool_.tau = o.tau;
    pool_.trigger_row = o.trigger_on_impulse ? kern::kStatNormalImpulse : kern::kStatMaxNormalForce;
    const auto alloc = [](DeviceArray<Real>& a, std::size_t count, const char* name) {
      a = DeviceArray<Real>(count, name);
      return a.get();
    };
    pool_.q = alloc(pool_q_, (T + 1) * B * nq_ * n, "bundle branch states (qpos)");
    pool_.v = alloc(pool_v_, (T + 1) * B * nv_ * n, "bundle branch states (qvel)");
    pool_.w = alloc(pool_w_, (T + 1) * B * nv_ * n, "bundle branch warm starts");
    pool_.dq = alloc(pool_dq_, T * B * nv_ * n, "bundle perturbations (dq)");
    pool_.dv = alloc(pool_dv_, T * B * nv_ * n, "bundle perturbations (dv)");
    pool_.start_q = alloc(start_q_, B * nq_ * n, "bundle starts (qpos)");
    pool_.start_v = alloc(start_v_, B * nv_ * n, "bundle starts (qvel)");
    pool_.start_w = alloc(start_w_, B * nv_ * n, "bundle starts (warm)");
    pool_.adj_q = alloc(adj_qb_, B * nq_ * n, "branch adjoints (qpos)");
    pool_.adj_v = alloc(adj_vb_, B * nv_ * n, "branch adjoints (qvel)");
    pool_.scratch = alloc(bundle_scratch_, static_cast<std::size_t>(bundle_scratch_size(be_.view_)) * n, "bundle scratch");
    left_ = DeviceArray<int>(n, "bundle steps left");
    count_ = DeviceArray<int>(n, "bundles started");
    in_bundle_ = DeviceArray<int>(n, "bundle flags");
    start_skip_ = DeviceArray<int>(n, "bundle start flags");
    branch_skip_ = DeviceArray<int>(n, "bundle branch flags");
    branch_status_ = DeviceArray<int>(B * n, "bundle branch status");
    pool_.branch_stats =
        alloc(branch_stats_, B * kern::kContactStats * n, "bundle branch statistics");
    pool_.branch_adj_u = alloc(branch_adj_u_, std::max<std::size_t>(B * nu_ * n, 1),
                               "bundle branch control adjoints");
    step_in_ = DeviceArray<char>(T * n, "bundle schedule");
    step_first_ = DeviceArray<char>(T * n, "bundle starts");
    step_out_ = DeviceArray<char>(T * n, "bundle schedule (not bundled)");
    pool_.left = left_.get();
    pool_.count = count_.get();
    pool_.in_bundle = in_bundle_.get();
    pool_.start_skip = start_skip_.get();
    pool_.branch_skip = branch_skip_.get();
    pool_.branch_status = branch_status_.get();
    pool_.step_in = step_in_.get();
    pool_.step_first = step_first_.get();
    pool_.step_out = step_out_.get();
    count_host_ = PinnedArray<int>(n, "bundle counts staging");
  }

  void begin(std::uint64_t bundle_seed) override {
    if (!bundle_opt_.enabled) return;
    pool_.params.seed = bundle_seed;  // passed by value to every launch of this recording and its replay
    DeviceGuard guard(be_.device_);
    SG_CUDA_CHECK(cudaMemsetAsync(left_.get(), 0, left_.bytes(), be_.stream_));
    SG_CUDA_CHECK(cudaMemsetAsync(count_.get(), 0, count_.bytes(), be_.stream_));
    SG_CUDA_CHECK(cudaMemsetAsync(step_in_.get(), 0, step_in_.bytes(), be_.stream_));
    SG_CUDA_CHECK(cudaMemsetAsync(step_first_.get(), 0, step_first_.bytes(), be_.stream_));
    SG_CUDA_CHECK(cudaMemsetAsync(step_out_.get(), 1, step_out_.bytes(), be_.stream_));
  }

  bool bundled_step(int t) override {
    if (!bundle_opt_.enabled) return false;
    NvtxRange range("stiffgrad::cuda::bundled_step");
    DeviceGuard guard(be_.device_);
    launch_bundled_step<Real>(be_.view_, pool_, be_.layout_, be_.qpos_.get(), be_.qvel_.get(),
                              be_.ctrl_.get(), be_.warm_.get(), be_.workspace_.get(),
                              be_.status_.get(), be_.contact_stats_.get(), t, nenv_, substeps_,
                              *be_.staged_, be_.stream_);
    return true;
  }

  int bundles_started() const override {
    if (!bundle_opt_.enabled) return 0;
    std::vector<int> c(static_cast<std::size_t>(nenv_));
    bundles_per_env(c.data());
    int total = 0;
    for (int x : c) total += x;
    return total;
  }
  void bundles_per_env(int* counts) const override {
    if (!bundle_opt_.enabled) return;
    DeviceGuard guard(be_.device_);
    SG_CUDA_CHECK(cudaMemcpyAsync(count_host_.get(), count_.get(), sizeof(int) * nenv_, cudaMemcpyDeviceToHost,
                                  be_.stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(be_.stream_));
    std::copy(count_host_.get(), count_host_.get() + nenv_, counts);
  }

  void backward(int T, const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                bool tangent, double* dL_dqvel0, double* dL_dctrl) override {
    NvtxRange range("stiffgrad::cuda::backward");
    DeviceGuard guard(be_.device_);
    cudaStream_t st = be_.stream_;
    // row 0 of dL_dqpos is added by tangent_kernel when the tangent gradient is asked for
    const bool direct_row0 = tangent && dL_dqpos0 != nullptr;
    sweep(T, dL_dqpos, dL_dqvel, direct_row0, [](int, cudaStream_t) {});
    const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
    if (dL_dqpos0 && tangent) {
      tangent_kernel<Real><<<blocks, kBlockSize, 0, st>>>(be_.view_, ckpt_qpos_.get(), adj_qpos_.get(),
                                                          dL_dqpos ? dl_qpos_.get() : nullptr,
                                                          tangent_.get(), nenv_);
      SG_CUDA_CHECK(cudaGetLastError());
      download_rows(tangent_.get(), 1, nv_, dL_dqpos0);
    } else if (dL_dqpos0) {
      download_rows(adj_qpos_.get(), 1, nq_, dL_dqpos0);
    }
    if (dL_dqvel0) download_rows(adj_qvel_.get(), 1, nv_, dL_dqvel0);
    if (dL_dctrl && nu_ > 0) download_rows(adj_ctrl_.get(), T, nu_, dL_dctrl);
    finish_replay_flags();
  }

  // The host hook: per step adj_ctrl comes down, the hook's state adjoints go up and are added
  // on the stream (two synchronizations per step; backward_policy_backend has none).
  void backward_policy(int T, const double* dL_dqpos, const double* dL_dqvel, const ControlVjp& vjp,
                       double* dL_dqvel0, double* dL_dctrl) override {
    NvtxRange range("stiffgrad::cuda::backward_policy");
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_);
    sweep(T, dL_dqpos, dL_dqvel, false, [&](int t, cudaStream_t st) {
      if (nu_ > 0) download_rows(adj_ctrl_.get() + t * nu_ * n, 1, nu_, host_ctrl_.data());
      if (dL_dctrl) std::copy(host_ctrl_.begin(), host_ctrl_.end(), dL_dctrl + static_cast<std::size_t>(t) * n * nu_);
      std::fill(host_qpos_.begin(), host_qpos_.end(), 0.0);
      std::fill(host_qvel_.begin(), host_qvel_.end(), 0.0);
      vjp(t, host_ctrl_.data(), host_qpos_.data(), host_qvel_.data());
      upload_rows(host_qpos_.data(), 1, nq_, policy_qpos_.get());
      upload_rows(host_qvel_.data(), 1, nv_, policy_qvel_.get());
      const int nqe = static_cast<int>(nq_ * n), nve = static_cast<int>(nv_ * n);
      add_into_kernel<Real><<<(nqe + kBlockSize - 1) / kBlockSize, kBlockSize, 0, st>>>(adj_qpos_.get(), policy_qpos_.get(), nqe);
      SG_CUDA_CHECK(cudaGetLastError());
      add_into_kernel<Real><<<(nve + kBlockSize - 1) / kBlockSize, kBlockSize, 0, st>>>(adj_qvel_.get(), policy_qvel_.get(), nve);
      SG_CUDA_CHECK(cudaGetLastError());
    });
    if (dL_dqvel0) download_rows(adj_qvel_.get(), 1, nv_, dL_dqvel0);
    finish_replay_flags();
  }

  void backward_policy_backend(int T, const double* dL_dqpos, const double* dL_dqvel,
                               const BackendControlVjp& vjp) override {
    NvtxRange range("stiffgrad::cuda::backward_policy_backend");
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_);
    sweep(T, dL_dqpos, dL_dqvel, false, [&](int t, cudaStream_t st) {
      vjp(t, adj_ctrl_.get() + t * nu_ * n, adj_qpos_.get(), adj_qvel_.get(), static_cast<void*>(st));
    });
    finish_replay_flags();
  }

  bool replay_bitwise() const override { return replay_bitwise_; }

  void checkpoint(int t, double* qpos, double* qvel, double* qacc_warmstart) const override {
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_);
    download_rows(ckpt_qpos_.get() + t * nq_ * n, 1, nq_, qpos);
    download_rows(ckpt_qvel_.get() + t * nv_ * n, 1, nv_, qvel);
    // zeros without constraints: the kernel never writes the warm start then
    if (qacc_warmstart) download_rows(ckpt_warm_.get() + t * nv_ * n, 1, nv_, qacc_warmstart);
  }

  std::size_t bytes_per_env() const override {
    const std::size_t total =
        ckpt_qpos_.bytes() + ckpt_qvel_.bytes() + ckpt_warm_.bytes() + ckpt_ctrl_.bytes() +
        adj_qpos_.bytes() + adj_qvel_.bytes() + adj_ctrl_.bytes() + tangent_.bytes() +
        dl_qpos_.bytes() + dl_qvel_.bytes() + adjoint_ws_.bytes() + replay_.bytes() +
        staged_adjoint_->bytes() + replay_ok_.bytes() + pool_q_.bytes() + pool_v_.bytes() +
        pool_w_.bytes() + pool_dq_.bytes() + pool_dv_.bytes() + start_q_.bytes() +
        start_v_.bytes() + start_w_.bytes() + adj_qb_.bytes() + adj_vb_.bytes() +
        bundle_scratch_.bytes() + branch_stats_.bytes() + branch_status_.bytes() +
        branch_adj_u_.bytes();
    return total / static_cast<std::size_t>(nenv_);
  }

 private:
  // The reverse sweep: the loss gradients uploaded once, the running adjoint started at row T,
  // then per step the adjoint kernel of step t (which also adds the loss gradient of state t,
  // except row 0 with skip_row0: tangent_kernel adds it) and hook(t, stream), which for a
  // state-dependent control (CpuRollout::policy_sweep) adds the policy's share into
  // adj_qpos_ / adj_qvel_. Raw coordinates throughout.
  template <class Hook>
  void sweep(int T, const double* dL_dqpos, const double* dL_dqvel, bool skip_row0, const Hook& hook) {
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_);
    cudaStream_t st = be_.stream_;
    if (bundle_opt_.enabled) {
      SG_CUDA_CHECK(cudaMemsetAsync(adj_qb_.get(), 0, adj_qb_.bytes(), st));
      SG_CUDA_CHECK(cudaMemsetAsync(adj_vb_.get(), 0, adj_vb_.bytes(), st));
    }
    upload_rows(dL_dqpos, T + 1, nq_, dl_qpos_.get());
    upload_rows(dL_dqvel, T + 1, nv_, dl_qvel_.get());
    if (dL_dqpos && !(T == 0 && skip_row0))
      SG_CUDA_CHECK(cudaMemcpyAsync(adj_qpos_.get(), dl_qpos_.get() + T * nq_ * n, sizeof(Real) * nq_ * n,
                                    cudaMemcpyDeviceToDevice, st));
    else
      SG_CUDA_CHECK(cudaMemsetAsync(adj_qpos_.get(), 0, sizeof(Real) * nq_ * n, st));
    if (dL_dqvel)
      SG_CUDA_CHECK(cudaMemcpyAsync(adj_qvel_.get(), dl_qvel_.get() + T * nv_ * n, sizeof(Real) * nv_ * n,
                                    cudaMemcpyDeviceToDevice, st));
    else
      SG_CUDA_CHECK(cudaMemsetAsync(adj_qvel_.get(), 0, sizeof(Real) * nv_ * n, st));
    SG_CUDA_CHECK(cudaMemsetAsync(replay_ok_.get(), 0x01, sizeof(int) * n, st));
    for (int t = T - 1; t >= 0; --t) {
      Real* q0 = ckpt_qpos_.get() + t * nq_ * n;
      Real* v0 = ckpt_qvel_.get() + t * nv_ * n;
      const Real* dl_q = dL_dqpos && !(t == 0 && skip_row0) ? dl_qpos_.get() + t * nq_ * n : nullptr;
      const Real* dl_v = dL_dqvel ? dl_qvel_.get() + t * nv_ * n : nullptr;
      // The staged adjoint (with bundles: the others' staged adjoint, then each branch's,
      // launch_bundled_adjoint_step).
      const char* bundled = bundle_opt_.enabled ? step_in_.get() + t * n : nullptr;
      StagedAdjointArgs<Real> a{};
      a.q0 = q0;
      a.v0 = v0;
      a.u = ckpt_ctrl_.get() + t * nu_ * n;
      a.w0 = ckpt_warm_.get() + t * nv_ * n;
      a.q1 = q0 + nq_ * n;
      a.v1 = v0 + nv_ * n;
      a.adj_q = adj_qpos_.get();
      a.adj_v = adj_qvel_.get();
      a.adj_u = adj_ctrl_.get() + t * nu_ * n;
      a.dl_q = dl_q;
      a.dl_v = dl_v;
      a.adjoint_ws = adjoint_ws_.get();
      a.replay = replay_.get();
      a.status = be_.status_.get();
      a.replay_ok = replay_ok_.get();
      a.skip = bundled;
      if (bundled)
        launch_bundled_adjoint_step<Real>(be_.view_, pool_, *staged_adjoint_, *be_.staged_, a, t,
                                          nenv_, st);
      else
        staged_adjoint_->launch(st, *be_.staged_, a);
      hook(t, st);
    }
  }

  // replay_bitwise_ from the sweep's flags (the one synchronization at the end)
  void finish_replay_flags() {
    const std::size_t n = static_cast<std::size_t>(nenv_);
    SG_CUDA_CHECK(cudaMemcpyAsync(flags_host_.get(), replay_ok_.get(), sizeof(int) * n, cudaMemcpyDeviceToHost,
                                  be_.stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(be_.stream_));
    replay_bitwise_ = std::all_of(flags_host_.get(), flags_host_.get() + nenv_, [](int f) { return f != 0; });
  }

  // rows x (nenv x width) environment-major doubles -> device, environment-minor, one copy;
  // nothing to do for a null source
  void upload_rows(const double* src, int rows, int width, Real* dst) {
    if (!src || width == 0) return;
    const std::size_t n = static_cast<std::size_t>(nenv_), block = n * width;
    SG_CUDA_CHECK(cudaStreamSynchronize(be_.stream_));  // the staging buffer may be in use
    for (int r = 0; r < rows; ++r) to_env_minor(stage_.get() + r * block, src + r * block, nenv_, width);
    SG_CUDA_CHECK(cudaMemcpyAsync(dst, stage_.get(), sizeof(Real) * block * rows, cudaMemcpyHostToDevice,
                                  be_.stream_));
  }

  // device rows -> host, environment-major doubles (synchronizes)
  void download_rows(const Real* src, int rows, int width, double* dst) const {
    const std::size_t n = static_cast<std::size_t>(nenv_), block = n * width;
    SG_CUDA_CHECK(cudaMemcpyAsync(stage_.get(), src, sizeof(Real) * block * rows, cudaMemcpyDeviceToHost,
                                  be_.stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(be_.stream_));
    for (int r = 0; r < rows; ++r) to_env_major(dst + r * block, stage_.get() + r * block, nenv_, width);
  }

  CudaBackend<Real>& be_;
  int horizon_;
  int substeps_;
  int nq_, nv_, nu_, nenv_;
  BundleOptions bundle_opt_;
  BundlePool<Real> pool_;  // all null unless bundles are enabled
  DeviceArray<Real> pool_q_, pool_v_, pool_w_, pool_dq_, pool_dv_, start_q_, start_v_, start_w_,
      adj_qb_, adj_vb_, bundle_scratch_, branch_stats_, branch_adj_u_;
  DeviceArray<int> left_, count_, in_bundle_, start_skip_, branch_skip_, branch_status_;
  DeviceArray<char> step_in_, step_first_, step_out_;
  PinnedArray<int> count_host_;
  bool replay_bitwise_ = true;
  DeviceArray<Real> ckpt_qpos_, ckpt_qvel_, ckpt_warm_, ckpt_ctrl_;
  DeviceArray<Real> adj_qpos_, adj_qvel_, adj_ctrl_, tangent_;
  DeviceArray<Real> dl_qpos_, dl_qvel_;
  DeviceArray<Real> adjoint_ws_, replay_;
  std::unique_ptr<StagedAdjoint<Real>> staged_adjoint_;
  DeviceArray<int> replay_ok_;
  DeviceArray<Real> policy_qpos_, policy_qvel_;  // backward_policy: the host hook's state adjoints
  std::vector<double> host_ctrl_, host_qpos_, host_qvel_;  // its host arrays, environment-major
  PinnedArray<Real> stage_;
  PinnedArray<int> flags_host_;
};

template <class Real>
std::unique_ptr<RolloutImpl> CudaBackend<Real>::make_rollout(int horizon, int substeps) {
  return std::make_unique<CudaRollout<Real>>(*this, horizon, substeps);
}

template std::unique_ptr<RolloutImpl> CudaBackend<float>::make_rollout(int, int);
template std::unique_ptr<RolloutImpl> CudaBackend<double>::make_rollout(int, int);

}  // namespace cuda_detail

}  // namespace stiffgrad
