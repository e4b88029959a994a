// Bundled Contact Gradients on the CUDA backend, the parts without physics: CUB's temporary
// storage for the compaction and the environment ids it compacts. The trigger and bundle kernels
// and the bundled step's launch: backends/cuda/bundle_step_impl.cuh.
#include <cub/device/device_select.cuh>

#include "backends/cuda/bundle_cuda.cuh"

namespace stiffgrad {
namespace cuda_detail {

namespace {

__global__ void __launch_bounds__(kBlockSize) iota_kernel(int* out, int n) {
  const int i = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (i < n) out[i] = i;
}

}  // namespace

std::size_t bundle_select_temp_bytes(int nenv, cudaStream_t stream) {
  std::size_t bytes = 0;
  SG_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const int*>(nullptr), static_cast<const int*>(nullptr),
                                           static_cast<int*>(nullptr), static_cast<int*>(nullptr), nenv, stream));
  return bytes;
}

void select_flagged_ids(void* temp, std::size_t temp_bytes, const int* ids, const int* flags, int* out,
                        int* num_selected, int n, cudaStream_t stream) {
  SG_CUDA_CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, ids, flags, out, num_selected, n, stream));
}

void fill_env_ids(int* env_ids, int nenv, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((nenv + kBlockSize - 1) / kBlockSize);
  iota_kernel<<<blocks, kBlockSize, 0, stream>>>(env_ids, nenv);
  SG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cuda_detail
}  // namespace stiffgrad
