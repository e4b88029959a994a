// The adjoint step kernel in double (backends/cuda/adjoint_step_impl.cuh).
#include "backends/cuda/adjoint_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template void launch_adjoint_step<double>(const kern::ModelView<double>&,
                                          const kern::ModelView<double>&, const kern::DataLayout&,
                                          double*, double*, double*, double*, double*, double*,
                                          double*, double*, double*, const double*, const double*,
                                          double*, double*, double*, double*, int, int, const int*,
                                          int*, const BundlePool<double>&, int, cudaStream_t);
}  // namespace stiffgrad::cuda_detail
