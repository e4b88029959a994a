#include "stiffgrad/learn/normalizer.hpp"

#include "kernels/learn/normalize.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace stiffgrad::learn {

namespace {
constexpr double kVarEps = 1e-5;     // added to var under the square root (rl_games)
constexpr double kPriorCount = 1e-4;  // initial count: a pseudo-sample of mean 0, var 1
}  // namespace

RunningMeanStd::RunningMeanStd(int dim, double clip) : mean_(dim, 0.0), var_(dim, 1.0), count_(kPriorCount), clip_(clip) {
  if (dim < 0) throw std::invalid_argument("RunningMeanStd: negative dimension");
}

template <class S>
void RunningMeanStd::update(const S* x, int n) {
  const int d = dim();
  auto row_finite = [&](int r) {
    const S* xr = x + static_cast<std::size_t>(r) * d;
    for (int j = 0; j < d; ++j)
      if (!std::isfinite(static_cast<double>(xr[j]))) return false;
    return true;
  };
  // Two passes over the batch for its mean and population variance, in double.
  int batch_count = 0;
  for (int r = 0; r < n; ++r) batch_count += row_finite(r) ? 1 : 0;
  if (batch_count == 0) return;
  std::vector<double> batch_mean(d, 0.0), batch_m2(d, 0.0);
  for (int r = 0; r < n; ++r) {
    if (!row_finite(r)) continue;
    for (int j = 0; j < d; ++j) batch_mean[j] += static_cast<double>(x[static_cast<std::size_t>(r) * d + j]);
  }
  for (int j = 0; j < d; ++j) batch_mean[j] /= batch_count;
  for (int r = 0; r < n; ++r) {
    if (!row_finite(r)) continue;
    for (int j = 0; j < d; ++j) {
      const double dev = static_cast<double>(x[static_cast<std::size_t>(r) * d + j]) - batch_mean[j];
      batch_m2[j] += dev * dev;
    }
  }
  // Chan, Golub & LeVeque (1979) pairwise combination of (count, mean, M2).
  const double nb = static_cast<double>(batch_count);
  const double total = count_ + nb;
  for (int j = 0; j < d; ++j) {
    const double delta = batch_mean[j] - mean_[j];
    const double m2 = var_[j] * count_ + batch_m2[j] + delta * delta * count_ * nb / total;
    mean_[j] += delta * nb / total;
    var_[j] = m2 / total;
  }
  count_ = total;
}

template <class S>
void RunningMeanStd::normalize(const S* x, int n, S* y) const {
  const int d = dim();
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < d; ++j) {
      const std::size_t i = static_cast<std::size_t>(r) * d + j;
      y[i] = static_cast<S>(kern::normalize_value(static_cast<double>(x[i]), mean_[j], std::sqrt(var_[j] + kVarEps), clip_));
    }
}

// The clamp passes the gradient on [-clip, clip] (as torch.clamp) and blocks it outside.
template <class S>
void RunningMeanStd::adj_normalize(const S* x, int n, const S* dy, S* dx) const {
  const int d = dim();
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < d; ++j) {
      const std::size_t i = static_cast<std::size_t>(r) * d + j;
      dx[i] = static_cast<S>(kern::adj_normalize_value(static_cast<double>(x[i]), mean_[j], std::sqrt(var_[j] + kVarEps),
                                                        clip_, static_cast<double>(dy[i])));
    }
}

double RunningMeanStd::scale(int i) const { return std::sqrt(var_.at(static_cast<std::size_t>(i)) + kVarEps); }

void RunningMeanStd::set(std::vector<double> mean, std::vector<double> var, double count, double clip) {
  if (mean.size() != var.size())
    throw std::invalid_argument("RunningMeanStd::set: mean has " + std::to_string(mean.size()) + " entries, var " +
                                std::to_string(var.size()));
  mean_ = std::move(mean);
  var_ = std::move(var);
  count_ = count;
  clip_ = clip;
}

template void RunningMeanStd::update<float>(const float*, int);
template void RunningMeanStd::update<double>(const double*, int);
template void RunningMeanStd::normalize<float>(const float*, int, float*) const;
template void RunningMeanStd::normalize<double>(const double*, int, double*) const;
template void RunningMeanStd::adj_normalize<float>(const float*, int, const float*, float*) const;
template void RunningMeanStd::adj_normalize<double>(const double*, int, const double*, double*) const;

}  // namespace stiffgrad::learn
