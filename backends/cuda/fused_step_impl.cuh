// The fused control step kernel (backends/cuda/step_launch.cuh), included by fused_step_float.cu
// and fused_step_double.cu only.
#pragma once

#include "backends/cuda/step_launch.cuh"
#include "kernels/step/batch.hpp"

namespace stiffgrad::cuda_detail {

// One control step of every environment: thread e advances environment e. The ModelView is a
// __grid_constant__ parameter so that the kernel body can take it by reference without a
// per-thread copy to local memory.
template <class Real>
__global__ void __launch_bounds__(kBlockSize)
control_step_kernel(const __grid_constant__ kern::ModelView<Real> m, Real* qpos, Real* qvel,
                    Real* ctrl, Real* warm, Real* workspace, const __grid_constant__ kern::DataLayout layout,
                    int nenv, int substeps, int* status, Real* contact_stats, const int* skip) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv) return;
  if (skip && skip[e]) return;  // stepped elsewhere (a bundle: backends/cuda/bundle_step_impl.cuh)
  using LS = kern::Strided;  // batched arrays: environment-minor
  using LW = kern::Strided;  // workspace: environment-minor as well
  using VS = kern::View<Real, LS>;
  const LS env_minor{nenv};
  const auto d = kern::Data<Real, LW>::bind(kern::View<Real, LW>{workspace + e, LW{nenv}}, layout);
  kern::control_step_env(m, VS{qpos + e, env_minor}, VS{qvel + e, env_minor},
                         VS{ctrl + e, env_minor}, VS{warm + e, env_minor}, d, substeps, status + e,
                         VS{contact_stats + e, env_minor});
}

template <class Real>
void launch_fused_step(const kern::ModelView<Real>& m, Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace,
                       const kern::DataLayout& layout, int nenv, int substeps, int* status, Real* contact_stats,
                       const int* skip, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((nenv + kBlockSize - 1) / kBlockSize);
  control_step_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(m, qpos, qvel, ctrl, warm, workspace, layout, nenv,
                                                               substeps, status, contact_stats, skip);
  SG_CUDA_CHECK(cudaGetLastError());  // launch-configuration errors only; does not sync
}

}  // namespace stiffgrad::cuda_detail
