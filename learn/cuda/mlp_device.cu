// MlpDevice (stiffgrad/learn/mlp_device.hpp): Mlp<float> on a CUDA device. Batches are
// row-major n x dim, which cuBLAS (column-major) sees as dim x n matrices; a row-major weight
// W (out x in) is the column-major in x out matrix Wc = Wᵀ. Hence, per Linear layer,
//   forward   Z = W X        gemm(T, N, out, n, in;  Wc, X)
//   input     dX = Wᵀ dZ     gemm(N, N, in, n, out;  Wc, dZ)
//   weight    dWc += X dZᵀ   gemm(N, T, in, out, n;  X, dZ), beta 1
// and the ELU + LayerNorm stage runs kernels/learn/elu_layer_norm.hpp, one thread per row. The
// gain, shift and bias gradients are column sums, one thread per column (deterministic: no
// atomics).
#include "learn/cuda/cublas_loader.hpp"

#include <stdexcept>
#include <string>

#include "backends/cuda/cuda_support.cuh"
#include "kernels/learn/elu_layer_norm.hpp"
#include "stiffgrad/learn/mlp_device.hpp"

namespace stiffgrad::learn {

namespace {

using cuda_detail::DeviceArray;
using cuda_detail::DeviceGuard;
constexpr int kThreads = 128;

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS error ") + std::to_string(static_cast<int>(s)) + " in " + what);
}

unsigned blocks_for(int n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// z (n x out) += bias; hidden layers then ELU + LayerNorm into norm (x̂), next and rstd.
__global__ void bias_stage_kernel(float* z, const float* bias, const float* gain, const float* shift, float* norm,
                                  float* next, float* rstd, int n, int out, int hidden) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= n) return;
  float* zr = z + static_cast<std::size_t>(r) * out;
  for (int j = 0; j < out; ++j) zr[j] += bias[j];
  if (!hidden) return;
  float* xr = norm + static_cast<std::size_t>(r) * out;
  for (int j = 0; j < out; ++j) xr[j] = expf(zr[j]);
  rstd[r] = kern::elu_layer_norm_row(zr, xr, gain, shift, next + static_cast<std::size_t>(r) * out, out);
}

// d_gain[j] += Σ_r g[r, j] x̂[r, j], d_shift[j] += Σ_r g[r, j].
__global__ void layer_norm_param_grad_kernel(const float* g, const float* norm, float* d_gain, float* d_shift, int n,
                                             int out) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= out) return;
  float a = 0, b = 0;
  for (int r = 0; r < n; ++r) {
    const float gr = g[static_cast<std::size_t>(r) * out + j];
    a += gr * norm[static_cast<std::size_t>(r) * out + j];
    b += gr;
  }
  d_gain[j] += a;
  d_shift[j] += b;
}

// g (n x out): ∂L/∂next → ∂L/∂z in place; exp_z scratch (n x out).
__global__ void layer_norm_adjoint_kernel(float* g, const float* norm, const float* z, float* exp_z,
                                          const float* gain, const float* rstd, int n, int out) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= n) return;
  const std::size_t at = static_cast<std::size_t>(r) * out;
  for (int j = 0; j < out; ++j) exp_z[at + j] = expf(z[at + j]);
  kern::adj_elu_layer_norm_row(g + at, norm + at, z + at, exp_z + at, gain, rstd[r], out);
}

// d_bias[j] += Σ_r dz[r, j].
__global__ void column_sum_kernel(const float* dz, float* d_bias, int n, int out) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= out) return;
  float s = 0;
  for (int r = 0; r < n; ++r) s += dz[static_cast<std::size_t>(r) * out + j];
  d_bias[j] += s;
}

}  // namespace

struct MlpDevice::State {
  int device = 0;
  cublasHandle_t handle = nullptr;
  DeviceArray<float> params;
  ~State() {
    if (handle) cublas_api().destroy(handle);
  }
};

struct MlpDevice::Workspace::Impl {
  int max_batch = 0;
  std::vector<int> sizes;
  DeviceArray<float> act, pre, norm, rstd, grad_a, grad_b;  // as Mlp<float>::Workspace
};

MlpDevice::Workspace::Workspace() = default;
MlpDevice::Workspace::~Workspace() = default;
MlpDevice::Workspace::Workspace(Workspace&&) noexcept = default;
MlpDevice::Workspace& MlpDevice::Workspace::operator=(Workspace&&) noexcept = default;
int MlpDevice::Workspace::max_batch() const { return impl ? impl->max_batch : 0; }

bool mlp_device_available() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

DeviceFloats::DeviceFloats(std::size_t n, int device) : n_(n), device_(device) {
  if (!mlp_device_available()) throw std::runtime_error("DeviceFloats: no CUDA device");
  DeviceGuard guard(device);
  SG_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), sizeof(float) * std::max<std::size_t>(n, 1)));
}

DeviceFloats::~DeviceFloats() {
  if (p_) cudaFree(p_);
}

void DeviceFloats::upload(const std::vector<float>& host) {
  if (host.size() != n_) throw std::invalid_argument("DeviceFloats::upload: size differs");
  DeviceGuard guard(device_);
  SG_CUDA_CHECK(cudaMemcpy(p_, host.data(), sizeof(float) * n_, cudaMemcpyHostToDevice));
}

std::vector<float> DeviceFloats::download() const {
  std::vector<float> host(n_);
  DeviceGuard guard(device_);
  SG_CUDA_CHECK(cudaDeviceSynchronize());
  SG_CUDA_CHECK(cudaMemcpy(host.data(), p_, sizeof(float) * n_, cudaMemcpyDeviceToHost));
  return host;
}

void DeviceFloats::zero() {
  DeviceGuard guard(device_);
  SG_CUDA_CHECK(cudaMemset(p_, 0, sizeof(float) * std::max<std::size_t>(n_, 1)));
}

MlpDevice::MlpDevice(const Mlp<float>& net, int device)
    : sizes_(net.sizes()), num_params_(net.num_params()), state_(std::make_unique<State>()) {
  if (!mlp_device_available()) throw std::runtime_error("MlpDevice: no CUDA device");
  state_->device = device;
  DeviceGuard guard(device);
  check_cublas(cublas_api().create(&state_->handle), "cublasCreate");
  state_->params = DeviceArray<float>(num_params_, "MlpDevice parameters");
  upload(net);
}

MlpDevice::~MlpDevice() = default;

float* MlpDevice::params() { return state_->params.get(); }
const float* MlpDevice::params() const { return state_->params.get(); }

void MlpDevice::upload(const Mlp<float>& net) {
  if (net.sizes() != sizes_) throw std::invalid_argument("MlpDevice::upload: networks differ in sizes");
  DeviceGuard guard(state_->device);
  SG_CUDA_CHECK(cudaMemcpy(state_->params.get(), net.params(), sizeof(float) * num_params_, cudaMemcpyHostToDevice));
}

void MlpDevice::download(Mlp<float>& net) const {
  if (net.sizes() != sizes_) throw std::invalid_argument("MlpDevice::download: networks differ in sizes");
  DeviceGuard guard(state_->device);
  SG_CUDA_CHECK(cudaMemcpy(net.params(), state_->params.get(), sizeof(float) * num_params_, cudaMemcpyDeviceToHost));
}

MlpDevice::Workspace MlpDevice::make_workspace(int max_batch) const {
  if (max_batch < 1) throw std::invalid_argument("MlpDevice::make_workspace: max_batch must be >= 1");
  DeviceGuard guard(state_->device);
  const std::size_t rows = static_cast<std::size_t>(max_batch);
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  std::size_t act = 0, hidden = 0, widest = 0;
  for (int l = 0; l < num_layers; ++l) act += static_cast<std::size_t>(sizes_[l]);
  for (int l = 1; l < num_layers; ++l) hidden += static_cast<std::size_t>(sizes_[l]);
  for (int w : sizes_) widest = std::max(widest, static_cast<std::size_t>(w));
  Workspace ws;
  ws.impl = std::make_unique<Workspace::Impl>();
  Workspace::Impl& w = *ws.impl;
  w.max_batch = max_batch;
  w.sizes = sizes_;
  w.act = DeviceArray<float>(rows * act, "MlpDevice workspace");
  w.pre = DeviceArray<float>(rows * hidden, "MlpDevice workspace");
  w.norm = DeviceArray<float>(rows * hidden, "MlpDevice workspace");
  w.rstd = DeviceArray<float>(rows * static_cast<std::size_t>(std::max(1, num_layers - 1)), "MlpDevice workspace");
  w.grad_a = DeviceArray<float>(rows * widest, "MlpDevice workspace");
  w.grad_b = DeviceArray<float>(rows * widest, "MlpDevice workspace");
  return ws;
}

namespace {
void check_ws(const std::vector<int>& sizes, int n, const MlpDevice::Workspace& ws, const char* who) {
  if (!ws.impl || ws.impl->sizes != sizes) throw std::invalid_argument(std::string(who) + ": workspace of another network");
  if (n < 0 || n > ws.impl->max_batch)
    throw std::invalid_argument(std::string(who) + ": batch of " + std::to_string(n) + " rows exceeds the workspace's " +
                                std::to_string(ws.impl->max_batch));
}
}  // namespace

void MlpDevice::forward(const float* x, int n, float* y, Workspace& ws, void* stream) const {
  check_ws(sizes_, n, ws, "MlpDevice::forward");
  if (n == 0) return;
  DeviceGuard guard(state_->device);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  check_cublas(cublas_api().set_stream(state_->handle, st), "cublasSetStream");
  Workspace::Impl& w = *ws.impl;
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  const std::size_t rows = static_cast<std::size_t>(w.max_batch);
  SG_CUDA_CHECK(cudaMemcpyAsync(w.act.get(), x, sizeof(float) * n * sizes_[0], cudaMemcpyDeviceToDevice, st));
  const float one = 1.0f, zero = 0.0f;
  const float* p = state_->params.get();
  std::size_t act_offset = 0, hidden_offset = 0;
  for (int l = 0; l < num_layers; ++l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    const MlpLayerOffsets o = mlp_layer_offsets(sizes_, l);
    const bool hidden = l < num_layers - 1;
    float* z = hidden ? w.pre.get() + hidden_offset : y;
    check_cublas(cublas_api().sgemm(state_->handle, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &one,
                                    p + o.weight, in, w.act.get() + act_offset, in, &zero, z, out),
                 "MlpDevice::forward gemm");
    float* next = hidden ? w.act.get() + act_offset + rows * static_cast<std::size_t>(in) : nullptr;
    bias_stage_kernel<<<blocks_for(n), kThreads, 0, st>>>(
        z, p + o.bias, hidden ? p + o.gain : nullptr, hidden ? p + o.shift : nullptr,
        hidden ? w.norm.get() + hidden_offset : nullptr, next, hidden ? w.rstd.get() + static_cast<std::size_t>(l) * rows : nullptr,
        n, out, hidden ? 1 : 0);
    SG_CUDA_CHECK(cudaGetLastError());
    if (!hidden) break;
    act_offset += rows * static_cast<std::size_t>(in);
    hidden_offset += rows * static_cast<std::size_t>(out);
  }
}

void MlpDevice::backward(const float* dy, int n, float* grad_params, float* dx, Workspace& ws, void* stream) const {
  check_ws(sizes_, n, ws, "MlpDevice::backward");
  if (n == 0) return;
  DeviceGuard guard(state_->device);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  check_cublas(cublas_api().set_stream(state_->handle, st), "cublasSetStream");
  Workspace::Impl& w = *ws.impl;
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  const std::size_t rows = static_cast<std::size_t>(w.max_batch);
  const float one = 1.0f, zero = 0.0f;
  const float* p = state_->params.get();
  std::size_t act_offset = 0, hidden_offset = 0;
  for (int l = 0; l < num_layers - 1; ++l) act_offset += rows * static_cast<std::size_t>(sizes_[l]);
  for (int l = 1; l < num_layers - 1; ++l) hidden_offset += rows * static_cast<std::size_t>(sizes_[l]);
  const float* g_in = dy;
  float* g = nullptr;
  float* other = w.grad_a.get();
  for (int l = num_layers - 1; l >= 0; --l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    const MlpLayerOffsets o = mlp_layer_offsets(sizes_, l);
    if (l < num_layers - 1) {
      const float* norm = w.norm.get() + hidden_offset;
      if (grad_params) {
        layer_norm_param_grad_kernel<<<blocks_for(out), kThreads, 0, st>>>(g, norm, grad_params + o.gain,
                                                                          grad_params + o.shift, n, out);
        SG_CUDA_CHECK(cudaGetLastError());
      }
      layer_norm_adjoint_kernel<<<blocks_for(n), kThreads, 0, st>>>(g, norm, w.pre.get() + hidden_offset, other,
                                                                    p + o.gain, w.rstd.get() + static_cast<std::size_t>(l) * rows,
                                                                    n, out);
      SG_CUDA_CHECK(cudaGetLastError());
    }
    const float* dz = l < num_layers - 1 ? g : g_in;
    if (grad_params) {
      check_cublas(cublas_api().sgemm(state_->handle, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, &one,
                                      w.act.get() + act_offset, in, dz, out, &one,
                                      grad_params + o.weight, in),
                   "MlpDevice::backward weight gemm");
      column_sum_kernel<<<blocks_for(out), kThreads, 0, st>>>(dz, grad_params + o.bias, n, out);
      SG_CUDA_CHECK(cudaGetLastError());
    }
    if (l == 0) {
      if (dx)
        check_cublas(cublas_api().sgemm(state_->handle, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one,
                                        p + o.weight, in, dz, out, &zero, dx, in),
                     "MlpDevice::backward input gemm");
      break;
    }
    check_cublas(cublas_api().sgemm(state_->handle, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &one,
                                    p + o.weight, in, dz, out, &zero, other, in),
                 "MlpDevice::backward input gemm");
    float* next_other = other == w.grad_a.get() ? w.grad_b.get() : w.grad_a.get();
    g = other;
    other = next_other;
    act_offset -= rows * static_cast<std::size_t>(sizes_[l - 1]);
    if (l < num_layers - 1) hidden_offset -= rows * static_cast<std::size_t>(sizes_[l]);
  }
}

}  // namespace stiffgrad::learn
