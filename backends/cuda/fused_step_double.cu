// The fused control step kernel in double (backends/cuda/fused_step_impl.cuh).
#include "backends/cuda/fused_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_fused_step<double>(const kern::ModelView<double>&, double*, double*, double*, double*, double*, const kern::DataLayout&,
                                    int, int, int*, double*, const int*, cudaStream_t);
}  // namespace stiffgrad::cuda_detail
