// The bundled control step's kernels in double (backends/cuda/bundle_step_impl.cuh).
#include "backends/cuda/bundle_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_bundled_step<double>(const kern::ModelView<double>&, const BundlePool<double>&, const kern::DataLayout&,
                                       double*, double*, double*, double*, double*, int*, double*, const int*, void*, std::size_t, int,
                                       int, int, StagedStep<double>*, cudaStream_t);
}  // namespace stiffgrad::cuda_detail
