// Running mean/std normalization of one value (stiffgrad/learn/normalizer.hpp), with its
// adjoint: u = (x − mean) / std clamped to [−clip, clip], std = sqrt(var + ε). One body for the
// host normalizer and the policy loop's kernels (kernels/learn/policy_loop.hpp).
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

SG_HD SG_INLINE double normalize_value(double x, double mean, double std_dev, double clip) {
  const double u = (x - mean) / std_dev;
  return u < -clip ? -clip : (clip < u ? clip : u);  // std::clamp(u, -clip, clip)
}

// dx for dy: the clamp passes the gradient on [−clip, clip] (as torch.clamp) and blocks it outside.
SG_HD SG_INLINE double adj_normalize_value(double x, double mean, double std_dev, double clip, double dy) {
  const double inv_std = 1.0 / std_dev;
  const double u = (x - mean) * inv_std;
  return (u >= -clip && u <= clip) ? dy * inv_std : 0.0;
}

}  // namespace stiffgrad::kern
