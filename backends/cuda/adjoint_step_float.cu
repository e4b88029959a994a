// The adjoint step kernel in float (backends/cuda/adjoint_step_impl.cuh).
#include "backends/cuda/adjoint_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_adjoint_step<float>(const kern::ModelView<float>&,
                                         const kern::ModelView<float>&, const kern::DataLayout&,
                                         float*, float*, float*, float*, float*, float*, float*,
                                         float*, float*, const float*, const float*, float*, float*,
                                         float*, float*, int, int, const int*, int*,
                                         const BundlePool<float>&, int, cudaStream_t);
}  // namespace stiffgrad::cuda_detail
