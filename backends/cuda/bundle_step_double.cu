// The bundled control step's kernels in double (backends/cuda/bundle_step_impl.cuh).
#include "backends/cuda/bundle_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_bundled_step<double>(const kern::ModelView<double>&, const BundlePool<double>&,
                                          const kern::DataLayout&, double*, double*, double*,
                                          double*, double*, int*, double*, int, int, int,
                                          StagedStep<double>&, cudaStream_t);
template void launch_bundled_adjoint_step<double>(const kern::ModelView<double>&,
                                                  const BundlePool<double>&, StagedAdjoint<double>&,
                                                  StagedStep<double>&,
                                                  const StagedAdjointArgs<double>&, int, int,
                                                  cudaStream_t);
}  // namespace stiffgrad::cuda_detail
