// The fused control step kernel in float (backends/cuda/fused_step_impl.cuh).
#include "backends/cuda/fused_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_fused_step<float>(const kern::ModelView<float>&, float*, float*, float*, float*, float*, const kern::DataLayout&,
                                    int, int, int*, float*, const int*, cudaStream_t);
}  // namespace stiffgrad::cuda_detail
