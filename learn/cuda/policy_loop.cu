// The policy loop on the CUDA backend (learn/policy_loop.hpp): one thread per environment
// runs the bodies of kernels/learn/policy_loop.hpp on the simulator's device state
// (environment-minor), the actor is an MlpDevice, and everything is enqueued on the simulator's
// stream. Transfers: begin_horizon uploads the horizon's inputs and the actor's parameters,
// download() and finish_backward() bring the records and the gradient up (each one sync).
// Nothing is copied or synchronized inside the step loop or the backward sweep.
//
// The log σ terms and the non-finite flags are kept per (step, environment) and summed on the
// host in the host trainer's order (deterministic, no atomics). The actor's gradients come from
// cuBLAS: they agree with the CPU loop to float rounding, not bit for bit.
#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "backends/cuda/cuda_support.cuh"
#include "learn/policy_loop.hpp"
#include "learn/policy_loop_setup.hpp"
#include "kernels/learn/policy_loop.hpp"
#include "stiffgrad/learn/mlp_device.hpp"

namespace stiffgrad::learn {

namespace {

using cuda_detail::DeviceArray;
using LS = kern::Strided;
using VS = kern::View<double, LS>;
using VSc = kern::View<const double, LS>;
constexpr int kThreads = 128;

__host__ __device__ inline std::size_t sz(long a) { return static_cast<std::size_t>(a); }
unsigned blocks_for(int n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// What every kernel reads, by value (device pointers). A __grid_constant__ parameter of each
// kernel: a Data reads its offsets from &layout without a per-thread copy to local memory.
struct LoopArgs {
  kern::tasks::TaskKernel k;  // the task's kernel: sizes (nq, nv, nu, na, no, ref_dim), kind, device arrays
  kern::ModelView<double> m;  // the model's kernel arrays (device)
  kern::ObsNormalization n;   // this horizon's observation normalization (device mean and std)
  kern::DataLayout layout;    // one Data's layout (size: its doubles)
  int N;                      // environments (nenv)
  double* data;     // 2 Data per environment, interleaved: Data w of e at data + w size N + e, stride N
  double* scratch;  // N x scratch_dim, environment-major
  int scratch_dim;
  const double* ref;  // (H + 1) x N x ref_dim
};

__device__ kern::Data<double, LS> bind_data(const LoopArgs& a, int e, int which) {
  return kern::Data<double, LS>::bind(
      kern::View<double, LS>{a.data + sz(which) * a.layout.size * a.N + e, LS{a.N}}, a.layout);
}

__device__ const double* ref_row(const LoopArgs& a, int t, int e) {
  return a.k.ref_dim > 0 ? a.ref + (sz(t) * a.N + e) * a.k.ref_dim : nullptr;
}

__global__ void observe_kernel(const __grid_constant__ LoopArgs a, int t, const double* qpos,
                               const double* qvel, double* Q, double* V, double* obs, float* x) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= a.N) return;
  const LS em{a.N};
  kern::policy_observe_env(a.k, a.m, a.n, VSc{qpos + e, em}, VSc{qvel + e, em},
                           VS{Q + sz(t) * a.k.nq * a.N + e, em}, VS{V + sz(t) * a.k.nv * a.N + e, em},
                           ref_row(a, t, e), bind_data(a, e, 0), obs + (sz(t) * a.N + e) * a.k.no,
                           x + (sz(t) * a.N + e) * a.k.no);
}

__global__ void act_kernel(const __grid_constant__ LoopArgs a, int t, const float* mu,
                           const float* log_std, const float* eps, double* act, double* ctrl) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= a.N) return;
  const std::size_t row = (sz(t) * a.N + e) * a.k.na;
  kern::policy_act_env(a.k, mu + row, log_std, eps + row, ref_row(a, t, e), act + row, VS{ctrl + e, LS{a.N}});
}

__global__ void adj_act_kernel(const __grid_constant__ LoopArgs a, int t, const int* steps_active,
                               const double* act, const double* dA, const double* adj_ctrl,
                               const float* log_std, const float* eps, float* d_mu, float* terms,
                               int* nonfinite) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= a.N) return;
  const std::size_t row = (sz(t) * a.N + e) * a.k.na;
  const bool ok = kern::policy_adj_act_env(a.k, t < steps_active[e], act + row, dA + row, ref_row(a, t, e),
                                           VSc{adj_ctrl + e, LS{a.N}}, log_std, eps + row, a.scratch + sz(e) * a.scratch_dim,
                                           d_mu + sz(e) * a.k.na, terms + row);
  nonfinite[sz(t) * a.N + e] = ok ? 0 : 1;
}

// Bounded to 128 registers (cuda_detail::blocks_at_128_registers): it took 164 without the
// bound, and fits 128 with no spills and the same 816 B of stack (sm_90, CUDA 13).
__global__ void __launch_bounds__(kThreads, cuda_detail::blocks_at_128_registers(kThreads))
    adj_observe_kernel(const __grid_constant__ LoopArgs a, int t, const int* steps_active,
                       const double* Q, const double* V, const double* obs, const float* dx,
                       double* adj_qpos, double* adj_qvel) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= a.N) return;
  const LS em{a.N};
  double* s = a.scratch + sz(e) * a.scratch_dim;
  const int na = a.k.na, no = a.k.no;
  kern::policy_adj_observe_env(a.k, a.m, a.n, t < steps_active[e], VSc{Q + sz(t) * a.k.nq * a.N + e, em},
                               VSc{V + sz(t) * a.k.nv * a.N + e, em}, ref_row(a, t, e),
                               obs + (sz(t) * a.N + e) * no, dx + sz(e) * no, bind_data(a, e, 0), bind_data(a, e, 1),
                               s + na, s + na + no, s + na + no + a.k.nq, VS{adj_qpos + e, em}, VS{adj_qvel + e, em});
}

template <class T>
void upload(DeviceArray<T>& dst, const T* src, std::size_t n, cudaStream_t s) {
  SG_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src, n * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <class T>
void download_to(T* dst, const DeviceArray<T>& src, std::size_t n, cudaStream_t s) {
  SG_CUDA_CHECK(cudaMemcpyAsync(dst, src.get(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
}

class PolicyLoopCuda final : public PolicyLoop {
 public:
  PolicyLoopCuda(const Task& task, Simulator& sim, const Mlp<float>& actor, int H, bool normalize)
      : sim_(sim), actor_(actor), setup_(task, sim, H, normalize), H_(H), N_(sim.nenv()),
        stream_(static_cast<cudaStream_t>(sim.cuda_stream())), device_([] {
          int d = 0;
          SG_CUDA_CHECK(cudaGetDevice(&d));
          return d;
        }()),
        net_(actor, device_) {
    const kern::tasks::TaskKernel& k = setup_.kernel;
    const int nq = k.nq, nv = k.nv, no = k.no, na = k.na, nu = k.nu, N = N_;
    const auto dev = [](auto& arr, const auto& host, const char* name) {
      using T = typename std::decay_t<decltype(host)>::value_type;
      arr = DeviceArray<T>(host.size(), name);
      SG_CUDA_CHECK(cudaMemcpy(arr.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    };
    dev(ctrl_limited_, setup_.ctrl_limited, "policy loop: ctrl_limited");
    dev(ctrl_range_, setup_.ctrl_range, "policy loop: ctrl_range");
    dev(ctrl_offset_, setup_.ctrl_offset, "policy loop: ctrl_offset");
    dev(ctrl_ref_index_, setup_.ctrl_ref_index, "policy loop: ctrl_ref_index");
    dev(key_body_, setup_.key_body, "policy loop: key bodies");
    dev(model_reals_, setup_.model_kernels->reals(), "policy loop: model reals");
    dev(model_ints_, setup_.model_kernels->ints(), "policy loop: model ints");
    args_.k = k;
    args_.k.ctrl_limited = ctrl_limited_.get();
    args_.k.ctrl_range = ctrl_range_.get();
    args_.k.ctrl_offset = ctrl_offset_.get();
    args_.k.ctrl_ref_index = ctrl_ref_index_.get();
    args_.k.imitation.key_body = key_body_.get();
    args_.m = setup_.model_kernels->bind(model_reals_.get(), model_ints_.get());
    args_.layout = setup_.layout;
    args_.N = N;
    args_.scratch_dim = na + no + nq + nv;
    data_ = DeviceArray<double>(sz(2) * setup_.layout.size * N, "policy loop: Data scratch");
    scratch_ = DeviceArray<double>(sz(N) * args_.scratch_dim, "policy loop: scratch");
    args_.data = data_.get();
    args_.scratch = scratch_.get();
    mean_ = DeviceArray<double>(sz(no), "policy loop: mean");
    std_ = DeviceArray<double>(sz(no), "policy loop: std");
    Q_ = DeviceArray<double>(sz(H + 1) * nq * N, "policy loop: qpos rows");
    V_ = DeviceArray<double>(sz(H + 1) * nv * N, "policy loop: qvel rows");
    OBS_ = DeviceArray<double>(sz(H + 1) * N * no, "policy loop: observations");
    X_ = DeviceArray<float>(sz(H + 1) * N * no, "policy loop: normalized observations");
    MU_ = DeviceArray<float>(sz(H) * N * na, "policy loop: means");
    EPS_ = DeviceArray<float>(sz(H) * N * na, "policy loop: noise");
    A_ = DeviceArray<double>(sz(H) * N * na, "policy loop: actions");
    dA_ = DeviceArray<double>(sz(H) * N * na, "policy loop: action gradients");
    REF_ = DeviceArray<double>(sz(H + 1) * N * std::max(1, k.ref_dim), "policy loop: references");
    args_.ref = REF_.get();
    STATUS_ = DeviceArray<int>(sz(H) * N, "policy loop: status");
    CTRL_ = DeviceArray<double>(sz(nu) * N, "policy loop: controls");
    steps_active_ = DeviceArray<int>(sz(N), "policy loop: active steps");
    log_std_ = DeviceArray<float>(sz(na), "policy loop: log std");
    d_mu_ = DeviceArray<float>(sz(N) * na, "policy loop: mean adjoints");
    dx_ = DeviceArray<float>(sz(N) * no, "policy loop: input adjoints");
    terms_ = DeviceArray<float>(sz(H) * N * na, "policy loop: log std terms");
    nonfinite_ = DeviceArray<int>(sz(H) * N, "policy loop: non-finite flags");
    grad_ = DeviceArray<float>(net_.num_params(), "policy loop: actor gradient");
    for (int t = 0; t < H; ++t) ws_.push_back(net_.make_workspace(N));
    host_q_.assign(Q_.size(), 0);
    host_v_.assign(V_.size(), 0);
    host_terms_.assign(terms_.size(), 0);
    host_nonfinite_.assign(nonfinite_.size(), 0);
    host_grad_.assign(grad_.size(), 0);
  }

  void begin_horizon(const std::vector<float>& log_std, const RunningMeanStd& obs_rms, const float* eps,
                     const double* ref) override {
    const cuda_detail::DeviceGuard guard(device_);
    net_.upload(actor_);  // synchronous: the actor changed on the host since the last horizon
    setup_.set_normalization(obs_rms);
    upload(mean_, setup_.mean.data(), setup_.mean.size(), stream_);
    upload(std_, setup_.std_dev.data(), setup_.std_dev.size(), stream_);
    args_.n = setup_.normalization(mean_.get(), std_.get());
    upload(log_std_, log_std.data(), log_std.size(), stream_);
    upload(EPS_, eps, EPS_.size(), stream_);
    if (setup_.kernel.ref_dim > 0) upload(REF_, ref, REF_.size(), stream_);
    // the host's arrays must stay valid until the copies ran: wait for them here, once
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void observe(int t) override {
    observe_kernel<<<blocks_for(N_), kThreads, 0, stream_>>>(
        args_, t, static_cast<const double*>(sim_.qpos_backend()), static_cast<const double*>(sim_.qvel_backend()),
        Q_.get(), V_.get(), OBS_.get(), X_.get());
    SG_CUDA_CHECK(cudaGetLastError());
  }

  const void* act(int t) override {
    const int na = setup_.kernel.na, no = setup_.kernel.no;
    net_.forward(X_.get() + sz(t) * N_ * no, N_, MU_.get() + sz(t) * N_ * na, ws_[sz(t)], stream_);
    act_kernel<<<blocks_for(N_), kThreads, 0, stream_>>>(args_, t, MU_.get(), log_std_.get(), EPS_.get(), A_.get(),
                                                         CTRL_.get());
    SG_CUDA_CHECK(cudaGetLastError());
    return CTRL_.get();
  }

  void record_status(int t) override {
    SG_CUDA_CHECK(cudaMemcpyAsync(STATUS_.get() + sz(t) * N_, sim_.status_backend(), sz(N_) * sizeof(int),
                                  cudaMemcpyDeviceToDevice, stream_));
  }

  void download(double* qpos, double* qvel, double* obs, float* x, float* mu, double* a, int* status) override {
    download_to(host_q_.data(), Q_, Q_.size(), stream_);
    download_to(host_v_.data(), V_, V_.size(), stream_);
    download_to(obs, OBS_, OBS_.size(), stream_);
    download_to(x, X_, X_.size(), stream_);
    download_to(mu, MU_, MU_.size(), stream_);
    download_to(a, A_, A_.size(), stream_);
    download_to(status, STATUS_, STATUS_.size(), stream_);
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const int nq = setup_.kernel.nq, nv = setup_.kernel.nv;
    for (int t = 0; t <= H_; ++t)
      for (int e = 0; e < N_; ++e) {
        for (int i = 0; i < nq; ++i) qpos[(sz(t) * N_ + e) * nq + i] = host_q_[(sz(t) * nq + i) * N_ + e];
        for (int i = 0; i < nv; ++i) qvel[(sz(t) * N_ + e) * nv + i] = host_v_[(sz(t) * nv + i) * N_ + e];
      }
  }

  void begin_backward(const double* dA, const int* steps_active) override {
    upload(dA_, dA, dA_.size(), stream_);
    upload(steps_active_, steps_active, sz(N_), stream_);
    SG_CUDA_CHECK(cudaMemsetAsync(grad_.get(), 0, grad_.bytes(), stream_));
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host arrays may change after this call
  }

  void vjp(int t, const void* adj_ctrl, void* adj_qpos, void* adj_qvel, void* stream) override {
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    adj_act_kernel<<<blocks_for(N_), kThreads, 0, s>>>(args_, t, steps_active_.get(), A_.get(), dA_.get(),
                                                       static_cast<const double*>(adj_ctrl), log_std_.get(),
                                                       EPS_.get(), d_mu_.get(), terms_.get(), nonfinite_.get());
    SG_CUDA_CHECK(cudaGetLastError());
    net_.backward(d_mu_.get(), N_, grad_.get(), dx_.get(), ws_[sz(t)], s);
    if (t == 0) return;  // state 0's adjoint is not needed
    adj_observe_kernel<<<blocks_for(N_), kThreads, 0, s>>>(args_, t, steps_active_.get(), Q_.get(), V_.get(),
                                                           OBS_.get(), dx_.get(), static_cast<double*>(adj_qpos),
                                                           static_cast<double*>(adj_qvel));
    SG_CUDA_CHECK(cudaGetLastError());
  }

  int finish_backward(float* grad) override {
    download_to(host_grad_.data(), grad_, grad_.size(), stream_);
    download_to(host_terms_.data(), terms_, terms_.size(), stream_);
    download_to(host_nonfinite_.data(), nonfinite_, nonfinite_.size(), stream_);
    SG_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const std::size_t np = host_grad_.size();
    const int na = setup_.kernel.na;
    for (std::size_t i = 0; i < np; ++i) grad[i] += host_grad_[i];
    int nonfinite = 0;
    for (int t = H_ - 1; t >= 0; --t)
      for (int e = 0; e < N_; ++e) {
        nonfinite += host_nonfinite_[sz(t) * N_ + e];
        for (int j = 0; j < na; ++j) grad[np + sz(j)] += host_terms_[(sz(t) * N_ + e) * na + j];
      }
    return nonfinite;
  }

 private:
  // Shapes: H the horizon, N = N_ environments, and nq, nv, nu, na, no, ref_dim of the task's
  // kernel; device arrays are laid out as PolicyLoopCpu's host arrays.
  Simulator& sim_;
  const Mlp<float>& actor_;  // the trainer's actor (uploaded at every begin_horizon)
  PolicyLoopSetup setup_;
  int H_, N_;                // control steps per horizon, environments (nenv)
  cudaStream_t stream_;      // the simulator's stream: everything here is enqueued on it
  int device_;               // the CUDA device current at construction
  MlpDevice net_;            // the actor's device copy
  std::vector<MlpDevice::Workspace> ws_;  // H  the actor's pass of each step (kept for vjp)
  LoopArgs args_{};          // what every kernel reads
  // the task kernel's arrays (nu: ctrl_limited, ctrl_ref_index; nkey: key_body) and the model's
  // kernel arrays (TaskKernelModel::ints); STATUS_: H x N; steps_active_: N  k_e; nonfinite_: H x N
  // 1 where the action adjoint was non-finite
  DeviceArray<int> ctrl_limited_, ctrl_ref_index_, key_body_, model_ints_, STATUS_, steps_active_, nonfinite_;
  // 2 nu ctrl_range, nu ctrl_offset, ModelArrays::reals; data_: 2 x Data size x N (LoopArgs::data);
  // scratch_: N x scratch_dim; mean_, std_: no  the observation statistics
  DeviceArray<double> ctrl_range_, ctrl_offset_, model_reals_, data_, scratch_, mean_, std_;
  // Q_, V_: (H + 1) x nq x N, (H + 1) x nv x N (environment-minor rows); OBS_: (H + 1) x N x no;
  // A_, dA_: H x N x na  actions, the loss's direct ∂L/∂a; REF_: (H + 1) x N x ref_dim; CTRL_: nu x N
  DeviceArray<double> Q_, V_, OBS_, A_, dA_, REF_, CTRL_;
  // X_: (H + 1) x N x no; MU_, EPS_: H x N x na; log_std_: na; d_mu_, dx_: N x na, N x no  one
  // step's ∂L/∂μ and the actor's VJP into x; terms_: H x N x na  log σ terms; grad_: actor parameters
  DeviceArray<float> X_, MU_, EPS_, log_std_, d_mu_, dx_, terms_, grad_;
  std::vector<double> host_q_, host_v_;        // as Q_, V_: download's staging
  std::vector<float> host_terms_, host_grad_;  // as terms_, grad_: finish_backward's staging
  std::vector<int> host_nonfinite_;            // as nonfinite_
};

}  // namespace

std::unique_ptr<PolicyLoop> make_policy_loop_cuda(const Task& task, Simulator& sim, const Mlp<float>& actor,
                                                  int horizon, bool normalize_obs) {
  return std::make_unique<PolicyLoopCuda>(task, sim, actor, horizon, normalize_obs);
}

}  // namespace stiffgrad::learn
