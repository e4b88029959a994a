// Device half of GpuTeam (test_gpu_team.cpp): one warp per case sums x with WarpTeam.
#include <cuda_runtime.h>

#include "backends/cuda/warp_team.cuh"
#include "tests/gpu/team_kernels.hpp"

namespace sgtest_gpu {
namespace {

__global__ void warp_sum_kernel(const double* x, const int* offsets, const double* init, double* out, int ncase) {
  const int c = static_cast<int>(blockIdx.x);
  if (c >= ncase) return;
  const stiffgrad::cuda_detail::WarpTeam team;
  const double* xc = x + offsets[c];
  const int n = offsets[c + 1] - offsets[c];
  double acc[2] = {init[c], -init[c]};
  team.sum<2>(n, acc, [&](int i, double* t) {
    t[0] += xc[i];
    t[1] += 0.5 * xc[i];
  });
  if (team.leader()) {
    out[2 * c] = acc[0];
    out[2 * c + 1] = acc[1];
  }
}

}  // namespace

bool warp_team_sums(const std::vector<double>& x, const std::vector<int>& offsets, const std::vector<double>& init,
                    std::vector<double>& out) {
  const int ncase = static_cast<int>(init.size());
  double *dx = nullptr, *dinit = nullptr, *dout = nullptr;
  int* doff = nullptr;
  bool ok = cudaMalloc(&dx, sizeof(double) * (x.size() + 1)) == cudaSuccess &&
            cudaMalloc(&doff, sizeof(int) * offsets.size()) == cudaSuccess &&
            cudaMalloc(&dinit, sizeof(double) * init.size()) == cudaSuccess &&
            cudaMalloc(&dout, sizeof(double) * 2 * init.size()) == cudaSuccess;
  ok = ok && cudaMemcpy(dx, x.data(), sizeof(double) * x.size(), cudaMemcpyHostToDevice) == cudaSuccess &&
       cudaMemcpy(doff, offsets.data(), sizeof(int) * offsets.size(), cudaMemcpyHostToDevice) == cudaSuccess &&
       cudaMemcpy(dinit, init.data(), sizeof(double) * init.size(), cudaMemcpyHostToDevice) == cudaSuccess;
  if (ok) {
    warp_sum_kernel<<<ncase, 32>>>(dx, doff, dinit, dout, ncase);
    out.assign(2 * init.size(), 0.0);
    ok = cudaGetLastError() == cudaSuccess &&
         cudaMemcpy(out.data(), dout, sizeof(double) * out.size(), cudaMemcpyDeviceToHost) == cudaSuccess;
  }
  cudaFree(dx);
  cudaFree(doff);
  cudaFree(dinit);
  cudaFree(dout);
  return ok;
}

}  // namespace sgtest_gpu
