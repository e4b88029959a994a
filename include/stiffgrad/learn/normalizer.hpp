// stiffgrad — running mean / standard deviation normalization (observations, returns).
#pragma once

#include <cstdint>
#include <vector>

namespace stiffgrad::learn {

// Running per-dimension mean and variance over every sample seen (Chan et al.'s parallel
// update of batch moments), as rl_games' / DiffRL's RunningMeanStd: count starts at eps = 1e-4
// with mean 0 and var 1. normalize: y = clamp((x - mean) / sqrt(var + 1e-5), -clip, clip).
// The statistics are constants for gradients: the adjoint of normalize is dy / sqrt(var + 1e-5)
// (zero where the clamp is active).
//
// Precisely, after N finite samples x_1..x_N (any batching), with ε = 1e-4:
//   count = N + ε,  mean = Σ x_i / count,
//   var   = (ε (1 + mean²) + Σ (x_i - mean)²) / count,
// i.e. the population variance of the samples pooled with a prior pseudo-sample of weight ε,
// mean 0 and variance 1 (batch moments use the population variance, as DiffRL does).
class RunningMeanStd {
 public:
  RunningMeanStd() = default;
  explicit RunningMeanStd(int dim, double clip = 5.0);

  int dim() const { return static_cast<int>(mean_.size()); }
  // Adds the n x dim samples x (row-major); non-finite rows are ignored.
  template <class S>
  void update(const S* x, int n);
  template <class S>
  void normalize(const S* x, int n, S* y) const;
  // dx (n x dim) = ∂normalize/∂x ᵀ dy at x (overwritten).
  template <class S>
  void adj_normalize(const S* x, int n, const S* dy, S* dx) const;
  // Only the scale, for returns (no centring, no clamp): scale(i) = sqrt(var_i + 1e-5), so the
  // scaled value is y = x / scale(i) and its inverse x = y · scale(i).
  double scale(int i) const;

  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& var() const { return var_; }
  double count() const { return count_; }
  double clip() const { return clip_; }
  // For loading a saved policy (std::invalid_argument when mean and var differ in size).
  void set(std::vector<double> mean, std::vector<double> var, double count, double clip);

 private:
  std::vector<double> mean_, var_;  // dim  running mean and variance
  double count_ = 1e-4;             // samples seen (the small start avoids a division by zero)
  double clip_ = 5.0;
};

}  // namespace stiffgrad::learn
