// The staged control step's kernels in float (backends/cuda/staged_step.cuh; the other precision
// compiles in its own translation unit, in parallel).
#include "backends/cuda/staged_step_impl.cuh"

namespace stiffgrad::cuda_detail {
template class StagedStep<float>;
}  // namespace stiffgrad::cuda_detail
