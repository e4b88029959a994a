// The CUDA StreamTimer in a build without the CUDA backend: it says so.
#ifndef STIFFGRAD_LEARN_WITH_CUDA
#include <stdexcept>

#include "learn/stream_timer.hpp"

namespace stiffgrad::learn {

std::unique_ptr<StreamTimer> make_stream_timer_cuda(void*, int) {
  throw std::runtime_error("StreamTimer: this build has no CUDA backend (STIFFGRAD_CUDA=OFF)");
}

}  // namespace stiffgrad::learn
#endif
