// The hidden stage of stiffgrad's MLP (stiffgrad/learn/mlp.hpp) for one row (one sample):
// ELU, then LayerNorm over the row's features with a learned gain and shift (population
// variance, ε = 1e-5 as in PyTorch's nn.LayerNorm). One body for the CPU network (learn/
// mlp.cpp) and the CUDA one (learn/cuda/mlp_device.cu). The callers compute exp(z) of the row
// beforehand (the CPU vectorizes it over a whole block), so these functions take it as input.
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

inline constexpr double kLayerNormEps = 1e-5;

// z: the Linear output (width); xr: on entry exp(z), on return x̂ = (e − mean) · rstd with
// e = ELU(z); next = gain ⊙ x̂ + shift. Returns rstd = 1 / sqrt(var(e) + ε).
template <class S>
SG_HD SG_INLINE S elu_layer_norm_row(const S* z, S* xr, const S* gain, const S* shift, S* next, int width) {
  S sum = 0;
  for (int j = 0; j < width; ++j) {
    const S e = z[j] > S(0) ? z[j] : xr[j] - S(1);
    xr[j] = e;
    sum += e;
  }
  const S mean = sum / static_cast<S>(width);
  S sq = 0;
  for (int j = 0; j < width; ++j) {
    const S d = xr[j] - mean;
    sq += d * d;
  }
  const S inv = S(1) / sg_sqrt(sq / static_cast<S>(width) + static_cast<S>(kLayerNormEps));
  for (int j = 0; j < width; ++j) {
    xr[j] = (xr[j] - mean) * inv;
    next[j] = gain[j] * xr[j] + shift[j];
  }
  return inv;
}

// Adjoint of elu_layer_norm_row with respect to z: g on entry ∂L/∂next, on return ∂L/∂z.
//   dx̂ = gain ⊙ g,  de = rstd (dx̂ − mean(dx̂) − x̂ mean(dx̂ ⊙ x̂)),  dz = de (z > 0), de·exp(z) otherwise.
// (The gain's and shift's gradients, Σ_rows g ⊙ x̂ and Σ_rows g, are the caller's: they sum
// over rows.)
template <class S>
SG_HD SG_INLINE void adj_elu_layer_norm_row(S* g, const S* xr, const S* z, const S* exp_z, const S* gain, S rstd,
                                            int width) {
  S sum = 0, sum_x = 0;
  for (int j = 0; j < width; ++j) {
    g[j] *= gain[j];
    sum += g[j];
    sum_x += g[j] * xr[j];
  }
  const S inv_width = S(1) / static_cast<S>(width);
  const S mean_d = sum * inv_width, mean_dx = sum_x * inv_width;
  for (int j = 0; j < width; ++j) {
    const S de = rstd * (g[j] - mean_d - xr[j] * mean_dx);
    g[j] = z[j] > S(0) ? de : de * exp_z[j];
  }
}

}  // namespace stiffgrad::kern
