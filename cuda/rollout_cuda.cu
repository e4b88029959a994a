// CUDA Rollout: checkpoints and the reverse sweep on the device, launching the same
// per-environment adjoint kernel body the CPU backend loops over (kern::adj_control_step_env).
//
// Device memory (environment-minor like everything in cuda/):
//   ckpt_qpos_ / ckpt_qvel_   (T + 1) x n x nenv   states at the control boundaries
//   ckpt_warm_                (T + 1) x nv x nenv  the solve's warm start at each boundary
//   ckpt_ctrl_                T x nu x nenv        controls
//   adj_qpos_ / adj_qvel_     n x nenv             running state adjoint
//   adj_ctrl_                 T x nu x nenv        control adjoints of every step
//   dl_qpos_ / dl_qvel_       (T + 1) x n x nenv   incoming per-step loss gradients
//   adjoint_ws_               DataLayout::size x nenv   adjoint Data per environment
//   keep_ws_                  DataLayout::size x nenv   primal of the last replayed substep
//   replay_                   kern::replay_size x nenv   replay buffer
// The primal Data of the replay reuses the backend's step workspace: backward runs on the
// backend's stream, after every queued step, and no step runs during it.
//
// The replay reproduces the forward step bit for bit although it is a different __global__
// (and its last substep goes through adj_substep's recompute): cuda/ is compiled with
// -fmad=false (CMakeLists.txt, backend_cuda.cuh), so no FMA contraction can differ between
// the two inlined copies. replay_bitwise() reports the check, per environment.
//
// save() is three or four device-to-device copies on the stream (no host sync), so recording
// keeps step()'s guarantees. backward() uploads the loss gradients once, launches one kernel
// per control step, and downloads the results once.
#include "cuda/backend_cuda.cuh"
#include "kernels/batch_adjoint.hpp"

namespace stiffgrad {

namespace cuda_detail {

// Adjoint of control step t for every environment: thread e handles environment e, then adds
// the loss gradient of state t (if any) to the running adjoint.
template <class Real>
__global__ void __launch_bounds__(kBlockSize)
adjoint_step_kernel(const __grid_constant__ kern::ModelView<Real> m,
                    const __grid_constant__ kern::ModelView<Real> mg,
                    const __grid_constant__ kern::DataLayout layout, Real* q0, Real* v0, Real* u,
                    Real* w0, Real* q1, Real* v1, Real* adj_q, Real* adj_v, Real* adj_u, const Real* dl_q,
                    const Real* dl_v, Real* primal_ws, Real* keep_ws, Real* adjoint_ws,
                    Real* replay, int nenv,
                    int substeps, const int* status, int* replay_ok) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv) return;
  using L = kern::Strided;
  using V = kern::View<Real, L>;
  const L s{nenv};
  const auto d = kern::Data<Real, L>::bind(V{primal_ws + e, s}, layout);
  const auto d_keep = kern::Data<Real, L>::bind(V{keep_ws + e, s}, layout);
  const V adj_buffer{adjoint_ws + e, s};
  const auto a = kern::Data<Real, L>::bind(adj_buffer, layout);
  const bool same = kern::adj_control_step_env(
      m, mg, layout, V{q0 + e, s}, V{v0 + e, s}, V{u + e, s}, V{w0 + e, s}, V{q1 + e, s}, V{v1 + e, s},
      V{adj_q + e, s}, V{adj_v + e, s}, V{adj_u + e, s}, d, d_keep, a, adj_buffer, V{replay + e, s},
      substeps);
  if (!same && status[e] == kern::kEnvOk) replay_ok[e] = 0;
  if (dl_q)
    for (int i = 0; i < m.nq; ++i) adj_q[i * nenv + e] += dl_q[i * nenv + e];
  if (dl_v)
    for (int i = 0; i < m.nv; ++i) adj_v[i * nenv + e] += dl_v[i * nenv + e];
}

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

template <class Real>
class CudaRollout final : public RolloutImpl {
 public:
  CudaRollout(CudaBackend<Real>& be, int horizon, int substeps)
      : be_(be), substeps_(substeps), nq_(be.nq_), nv_(be.nv_), nu_(be.nu_),
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
    adjoint_ws_ = DeviceArray<Real>(static_cast<std::size_t>(be_.layout_.size) * n, "adjoint workspace");
    keep_ws_ = DeviceArray<Real>(static_cast<std::size_t>(be_.layout_.size) * n, "kept primal workspace");
    replay_ = DeviceArray<Real>(replay * n, "replay buffer");
    replay_ok_ = DeviceArray<int>(n, "replay flags");
    const std::size_t stage = std::max({(T + 1) * std::max(nq_, nv_), T * nu_, static_cast<std::size_t>(nq_ + nv_)}) * n;
    stage_ = PinnedArray<Real>(stage, "rollout staging");
    flags_host_ = PinnedArray<int>(n, "replay flags staging");
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

  void backward(int T, const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                bool tangent, double* dL_dqvel0, double* dL_dctrl) override {
    NvtxRange range("stiffgrad::cuda::backward");
    DeviceGuard guard(be_.device_);
    const std::size_t n = static_cast<std::size_t>(nenv_);
    cudaStream_t st = be_.stream_;
    upload_rows(dL_dqpos, T + 1, nq_, dl_qpos_.get());
    upload_rows(dL_dqvel, T + 1, nv_, dl_qvel_.get());
    // adjoint of the final state = its loss gradient (or zero); row 0 itself is left to
    // tangent_kernel when that converts it (see below)
    const bool direct_row0 = tangent && dL_dqpos0 != nullptr;
    if (dL_dqpos && !(T == 0 && direct_row0))
      SG_CUDA_CHECK(cudaMemcpyAsync(adj_qpos_.get(), dl_qpos_.get() + T * nq_ * n, sizeof(Real) * nq_ * n,
                                    cudaMemcpyDeviceToDevice, st));
    else
      SG_CUDA_CHECK(cudaMemsetAsync(adj_qpos_.get(), 0, sizeof(Real) * nq_ * n, st));
    if (dL_dqvel)
      SG_CUDA_CHECK(cudaMemcpyAsync(adj_qvel_.get(), dl_qvel_.get() + T * nv_ * n, sizeof(Real) * nv_ * n,
                                    cudaMemcpyDeviceToDevice, st));
    else
      SG_CUDA_CHECK(cudaMemsetAsync(adj_qvel_.get(), 0, sizeof(Real) * nv_ * n, st));
    SG_CUDA_CHECK(cudaMemsetAsync(replay_ok_.get(), 0x01, sizeof(int) * n, st));  // non-zero: ok
    const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
    for (int t = T - 1; t >= 0; --t) {
      Real* q0 = ckpt_qpos_.get() + t * nq_ * n;
      Real* v0 = ckpt_qvel_.get() + t * nv_ * n;
      adjoint_step_kernel<Real><<<blocks, kBlockSize, 0, st>>>(
          be_.view_, be_.grad_view_, be_.layout_, q0, v0, ckpt_ctrl_.get() + t * nu_ * n,
          ckpt_warm_.get() + t * nv_ * n, q0 + nq_ * n, v0 + nv_ * n,
          adj_qpos_.get(), adj_qvel_.get(), adj_ctrl_.get() + t * nu_ * n,
          // row 0 of dL_dqpos is added by tangent_kernel when the tangent gradient is asked for
          dL_dqpos && !(t == 0 && direct_row0) ? dl_qpos_.get() + t * nq_ * n : nullptr,
          dL_dqvel ? dl_qvel_.get() + t * nv_ * n : nullptr,
          be_.workspace_.get(), keep_ws_.get(), adjoint_ws_.get(), replay_.get(), nenv_, substeps_,
          be_.status_.get(),
          replay_ok_.get());
      SG_CUDA_CHECK(cudaGetLastError());
    }
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
    SG_CUDA_CHECK(cudaMemcpyAsync(flags_host_.get(), replay_ok_.get(), sizeof(int) * n, cudaMemcpyDeviceToHost, st));
    SG_CUDA_CHECK(cudaStreamSynchronize(st));
    replay_bitwise_ = std::all_of(flags_host_.get(), flags_host_.get() + nenv_, [](int f) { return f != 0; });
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
    const std::size_t total = ckpt_qpos_.bytes() + ckpt_qvel_.bytes() + ckpt_warm_.bytes() + ckpt_ctrl_.bytes() +
                              adj_qpos_.bytes() + adj_qvel_.bytes() + adj_ctrl_.bytes() +
                              tangent_.bytes() + dl_qpos_.bytes() + dl_qvel_.bytes() +
                              adjoint_ws_.bytes() + keep_ws_.bytes() + replay_.bytes() +
                              replay_ok_.bytes();
    return total / static_cast<std::size_t>(nenv_);
  }

 private:
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
  int substeps_;
  int nq_, nv_, nu_, nenv_;
  bool replay_bitwise_ = true;
  DeviceArray<Real> ckpt_qpos_, ckpt_qvel_, ckpt_warm_, ckpt_ctrl_;
  DeviceArray<Real> adj_qpos_, adj_qvel_, adj_ctrl_, tangent_;
  DeviceArray<Real> dl_qpos_, dl_qvel_;
  DeviceArray<Real> adjoint_ws_, keep_ws_, replay_;
  DeviceArray<int> replay_ok_;
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
