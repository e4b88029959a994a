// Launches of the per-environment step kernels, each instantiated once per precision in its own
// translation unit (fused_step_*.cu, adjoint_step_*.cu, bundle_step_*.cu): nvcc compiles them
// in parallel, and no kernel is compiled twice. The launchers only enqueue on `stream`; none
// synchronizes or allocates.
#pragma once

#include "backends/cuda/cuda_support.cuh"
#include "kernels/base/data.hpp"

namespace stiffgrad::cuda_detail {

// One control step of every environment not flagged in skip (nenv flags, or null), one thread
// per environment: kern::control_step_env (backends/cuda/fused_step_impl.cuh).
template <class Real>
void launch_fused_step(const kern::ModelView<Real>& m, Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace,
                       const kern::DataLayout& layout, int nenv, int substeps, int* status, Real* contact_stats,
                       const int* skip, cudaStream_t stream);

}  // namespace stiffgrad::cuda_detail
