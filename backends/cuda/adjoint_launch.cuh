// The adjoint step kernel's launch (backends/cuda/adjoint_step_impl.cuh), instantiated once per
// precision in adjoint_step_float.cu and adjoint_step_double.cu.
#pragma once

#include "backends/cuda/bundle_cuda.cuh"

namespace stiffgrad::cuda_detail {

// Adjoint of control step t of every environment (thread e: environment e), then the loss
// gradient of state t into the running adjoint; enqueued on `stream`, no sync. Where the staged
// adjoint applies it differentiates every environment, bundled ones included
// (launch_bundled_adjoint_step), and this kernel is not launched.
template <class Real>
void launch_adjoint_step(const kern::ModelView<Real>& m, const kern::ModelView<Real>& mg,
                         const kern::DataLayout& layout, Real* q0, Real* v0, Real* u, Real* w0,
                         Real* q1, Real* v1, Real* adj_q, Real* adj_v, Real* adj_u,
                         const Real* dl_q, const Real* dl_v, Real* primal_ws, Real* keep_ws,
                         Real* adjoint_ws, Real* replay, int nenv, int substeps, const int* status,
                         int* replay_ok, const BundlePool<Real>& p, int t, cudaStream_t stream);

}  // namespace stiffgrad::cuda_detail
