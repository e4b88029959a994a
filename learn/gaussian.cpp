#include "stiffgrad/learn/gaussian.hpp"

#include <cmath>
#include <cstddef>

namespace stiffgrad::learn {

namespace {
constexpr double kHalfLog2Pi = 0.91893853320467274178;   // ½ log(2π)
constexpr double kHalfLog2PiE = 1.41893853320467274178;  // ½ log(2πe) = ½ log(2π) + ½
}  // namespace

template <class S>
void gaussian_sample(const S* mu, const S* log_std, const S* eps, int n, int k, S* a) {
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < k; ++j) {
      const std::size_t i = static_cast<std::size_t>(r) * k + j;
      a[i] = mu[i] + std::exp(log_std[j]) * eps[i];
    }
}

// log N(a; μ, σ²) = Σ_j [-(a_j - μ_j)² / (2σ_j²) - log σ_j - ½ log 2π].
template <class S>
void gaussian_log_prob(const S* mu, const S* log_std, const S* a, int n, int k, S* out) {
  for (int r = 0; r < n; ++r) {
    S sum = 0;
    for (int j = 0; j < k; ++j) {
      const std::size_t i = static_cast<std::size_t>(r) * k + j;
      const S z = (a[i] - mu[i]) * std::exp(-log_std[j]);  // standardized deviation
      sum += S(-0.5) * z * z - log_std[j] - static_cast<S>(kHalfLog2Pi);
    }
    out[r] = sum;
  }
}

// ∂/∂μ = (a - μ)/σ², ∂/∂log σ = (a - μ)²/σ² - 1 (chain rule through σ = exp(log σ)).
template <class S>
void adj_gaussian_log_prob(const S* mu, const S* log_std, const S* a, int n, int k, const S* w, S* d_mu,
                           S* d_log_std) {
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < k; ++j) {
      const std::size_t i = static_cast<std::size_t>(r) * k + j;
      const S inv_var = std::exp(S(-2) * log_std[j]);
      const S diff = a[i] - mu[i];
      d_mu[i] = w[r] * diff * inv_var;
      d_log_std[j] += w[r] * (diff * diff * inv_var - S(1));
    }
}

template <class S>
S gaussian_entropy(const S* log_std, int k) {
  S sum = 0;
  for (int j = 0; j < k; ++j) sum += log_std[j] + static_cast<S>(kHalfLog2PiE);
  return sum;
}

#define STIFFGRAD_GAUSSIAN_INSTANTIATE(S)                                                                  \
  template void gaussian_sample<S>(const S*, const S*, const S*, int, int, S*);                              \
  template void gaussian_log_prob<S>(const S*, const S*, const S*, int, int, S*);                            \
  template void adj_gaussian_log_prob<S>(const S*, const S*, const S*, int, int, const S*, S*, S*);           \
  template S gaussian_entropy<S>(const S*, int);
STIFFGRAD_GAUSSIAN_INSTANTIATE(float)
STIFFGRAD_GAUSSIAN_INSTANTIATE(double)
#undef STIFFGRAD_GAUSSIAN_INSTANTIATE

}  // namespace stiffgrad::learn
