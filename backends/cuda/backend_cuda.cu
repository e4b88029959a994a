// CUDA backend: the forward launch and the factory. Layout and ownership: backend_cuda.cuh.
#include "backends/cuda/backend_cuda.cuh"

namespace stiffgrad {

namespace cuda_detail {

template class CudaBackend<float>;
template class CudaBackend<double>;

}  // namespace cuda_detail

bool cuda_backend_available() {
  // Cached: the first call initializes the driver (slow); the answer cannot change afterwards
  // in a way this library handles.
  static const bool available = [] {
    try {
      int count = 0;
      const cudaError_t err = cudaGetDeviceCount(&count);
      if (err != cudaSuccess) {
        cudaGetLastError();
        return false;
      }
      return count > 0;
    } catch (...) {
      return false;
    }
  }();
  return available;
}

std::unique_ptr<BackendImpl> make_cuda_backend(const Model& model, const SimulatorOptions& opt) {
  if (!cuda_backend_available())
    throw std::runtime_error(
        "CUDA backend requested but no CUDA device is available (cudaGetDeviceCount found none "
        "or the driver is missing)");
  if (opt.precision == Precision::Float) return std::make_unique<cuda_detail::CudaBackend<float>>(model, opt);
  return std::make_unique<cuda_detail::CudaBackend<double>>(model, opt);
}

}  // namespace stiffgrad
