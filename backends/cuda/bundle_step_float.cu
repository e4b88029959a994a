// The bundled control step's kernels in float (backends/cuda/bundle_step_impl.cuh).
#include "backends/cuda/bundle_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_bundled_step<float>(const kern::ModelView<float>&, const BundlePool<float>&,
                                         const kern::DataLayout&, float*, float*, float*, float*,
                                         float*, int*, float*, int, int, int, StagedStep<float>&,
                                         cudaStream_t);
template void launch_bundled_adjoint_step<float>(const kern::ModelView<float>&,
                                                 const BundlePool<float>&, StagedAdjoint<float>&,
                                                 StagedStep<float>&,
                                                 const StagedAdjointArgs<float>&, int, int,
                                                 cudaStream_t);
}  // namespace stiffgrad::cuda_detail
