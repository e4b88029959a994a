// The CUDA policy loop in a build without the CUDA backend: it says so.
#ifndef STIFFGRAD_LEARN_WITH_CUDA
#include <stdexcept>

#include "learn/policy_loop.hpp"

namespace stiffgrad::learn {

std::unique_ptr<PolicyLoop> make_policy_loop_cuda(const Task&, Simulator&, const Mlp<float>&, int, bool) {
  throw std::runtime_error("policy loop: this build has no CUDA backend (STIFFGRAD_CUDA=OFF)");
}

}  // namespace stiffgrad::learn
#endif
