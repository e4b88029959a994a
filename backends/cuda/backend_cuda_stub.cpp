// Stand-in for backends/cuda/backend_cuda.cu in builds without the CUDA backend.
#ifndef STIFFGRAD_WITH_CUDA
#include <stdexcept>

#include "core/backend.hpp"

namespace stiffgrad {

std::unique_ptr<BackendImpl> make_cuda_backend(const Model&, const SimulatorOptions&) {
  throw std::runtime_error(
      "stiffgrad was built without the CUDA backend (configure with -DSTIFFGRAD_CUDA=ON)");
}

bool cuda_backend_available() { return false; }

}  // namespace stiffgrad
#endif
