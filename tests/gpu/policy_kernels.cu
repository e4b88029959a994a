// Device implementation of tests/gpu/policy_kernels.hpp (one thread per environment; every
// thread owns its environment's adjoint entries and gradient row, so no atomics).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "policy_kernels.hpp"

namespace sgtest_gpu {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

__global__ void act_kernel(const double* theta, const double* q, const double* v, double* Q, double* V, double* U,
                           double* ctrl, int nq, int nv, int nu, int N) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= N) return;
  const int n = nq + nv;
  for (int k = 0; k < nq; ++k) Q[k * N + e] = q[k * N + e];
  for (int k = 0; k < nv; ++k) V[k * N + e] = v[k * N + e];
  for (int i = 0; i < nu; ++i) {
    double z = theta[i * (n + 1) + n];
    for (int k = 0; k < nq; ++k) z += theta[i * (n + 1) + k] * q[k * N + e];
    for (int k = 0; k < nv; ++k) z += theta[i * (n + 1) + nq + k] * v[k * N + e];
    const double u = tanh(z);
    U[i * N + e] = u;
    ctrl[i * N + e] = u;
  }
}

__global__ void vjp_kernel(const double* theta, const double* Q, const double* V, const double* U,
                           const double* adj_ctrl, double* adj_q, double* adj_v, double* G, int nq, int nv, int nu,
                           int N) {
  const int e = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= N) return;
  const int n = nq + nv, np = nu * (n + 1);
  double* g = G + static_cast<std::size_t>(e) * np;
  for (int i = 0; i < nu; ++i) {
    const double u = U[i * N + e];
    const double dz = (adj_ctrl[i * N + e] + u) * (1 - u * u);
    g[i * (n + 1) + n] += dz;
    for (int k = 0; k < nq; ++k) {
      g[i * (n + 1) + k] += dz * Q[k * N + e];
      adj_q[k * N + e] += dz * theta[i * (n + 1) + k];
    }
    for (int k = 0; k < nv; ++k) {
      g[i * (n + 1) + nq + k] += dz * V[k * N + e];
      adj_v[k * N + e] += dz * theta[i * (n + 1) + nq + k];
    }
  }
}

}  // namespace

struct DevicePolicy::Impl {
  int nq, nv, nu, N, T, np;
  double *theta = nullptr, *Q = nullptr, *V = nullptr, *U = nullptr, *ctrl = nullptr, *G = nullptr;
  ~Impl() {
    for (double* p : {theta, Q, V, U, ctrl, G})
      if (p) cudaFree(p);
  }
};

DevicePolicy::DevicePolicy(int nq, int nv, int nu, int nenv, int T, const std::vector<double>& theta)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.nq = nq; m.nv = nv; m.nu = nu; m.N = nenv; m.T = T; m.np = nu * (nq + nv + 1);
  if (static_cast<int>(theta.size()) != m.np) throw std::invalid_argument("DevicePolicy: theta size");
  const std::size_t N = static_cast<std::size_t>(nenv);
  check(cudaMalloc(&m.theta, sizeof(double) * m.np), "cudaMalloc");
  check(cudaMalloc(&m.Q, sizeof(double) * T * nq * N), "cudaMalloc");
  check(cudaMalloc(&m.V, sizeof(double) * T * nv * N), "cudaMalloc");
  check(cudaMalloc(&m.U, sizeof(double) * T * nu * N), "cudaMalloc");
  check(cudaMalloc(&m.ctrl, sizeof(double) * nu * N), "cudaMalloc");
  check(cudaMalloc(&m.G, sizeof(double) * m.np * N), "cudaMalloc");
  check(cudaMemcpy(m.theta, theta.data(), sizeof(double) * m.np, cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemset(m.G, 0, sizeof(double) * m.np * N), "cudaMemset");
}

DevicePolicy::~DevicePolicy() = default;

const void* DevicePolicy::ctrl() const { return impl_->ctrl; }

void DevicePolicy::act(int t, const void* qpos, const void* qvel, void* stream) {
  Impl& m = *impl_;
  const std::size_t N = static_cast<std::size_t>(m.N);
  act_kernel<<<(m.N + 127) / 128, 128, 0, static_cast<cudaStream_t>(stream)>>>(
      m.theta, static_cast<const double*>(qpos), static_cast<const double*>(qvel), m.Q + t * m.nq * N,
      m.V + t * m.nv * N, m.U + t * m.nu * N, m.ctrl, m.nq, m.nv, m.nu, m.N);
  check(cudaGetLastError(), "act_kernel");
}

void DevicePolicy::vjp(int t, const void* adj_ctrl, void* adj_qpos, void* adj_qvel, void* stream) {
  Impl& m = *impl_;
  const std::size_t N = static_cast<std::size_t>(m.N);
  vjp_kernel<<<(m.N + 127) / 128, 128, 0, static_cast<cudaStream_t>(stream)>>>(
      m.theta, m.Q + t * m.nq * N, m.V + t * m.nv * N, m.U + t * m.nu * N, static_cast<const double*>(adj_ctrl),
      static_cast<double*>(adj_qpos), static_cast<double*>(adj_qvel), m.G, m.nq, m.nv, m.nu, m.N);
  check(cudaGetLastError(), "vjp_kernel");
}

std::vector<double> DevicePolicy::gradient() const {
  const Impl& m = *impl_;
  std::vector<double> per_env(static_cast<std::size_t>(m.np) * m.N), g(static_cast<std::size_t>(m.np), 0.0);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaMemcpy(per_env.data(), m.G, sizeof(double) * per_env.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (int e = 0; e < m.N; ++e)
    for (int p = 0; p < m.np; ++p) g[static_cast<std::size_t>(p)] += per_env[static_cast<std::size_t>(e) * m.np + p];
  return g;
}

}  // namespace sgtest_gpu
