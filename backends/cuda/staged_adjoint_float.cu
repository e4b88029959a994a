// The staged adjoint's kernels in float (backends/cuda/staged_adjoint.cuh; the other precision
// compiles in its own translation unit, in parallel).
#include "backends/cuda/staged_adjoint_impl.cuh"

namespace stiffgrad::cuda_detail {
template class StagedAdjoint<float>;
}  // namespace stiffgrad::cuda_detail
