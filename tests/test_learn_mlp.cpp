// learn::Mlp (forward, hand-written backward, initialisation, Polyak averaging) and the
// diagonal Gaussian policy head, against finite differences and closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <random>
#include <stdexcept>
#include <vector>

#include "stiffgrad/learn/gaussian.hpp"
#include "stiffgrad/learn/mlp.hpp"

namespace {

using stiffgrad::learn::Mlp;

std::vector<double> random_vector(std::size_t n, std::mt19937_64& rng, double stddev = 1.0) {
  std::normal_distribution<double> normal(0.0, stddev);
  std::vector<double> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// L(θ, x) = <w, f_θ(x)> for a fixed random weighting w of the outputs.
double weighted_output(const Mlp<double>& net, const std::vector<double>& x, int n, const std::vector<double>& w,
                       Mlp<double>::Workspace& ws) {
  std::vector<double> y(static_cast<std::size_t>(n) * net.out_dim());
  net.forward(x.data(), n, y.data(), ws);
  return dot(w, y);
}

// A network whose LayerNorm gains and biases are not the trivial 1 and 0, so their gradients
// and their effect on upstream gradients are exercised.
Mlp<double> perturbed_net(const std::vector<int>& sizes, std::uint64_t seed) {
  Mlp<double> net(sizes, seed);
  std::mt19937_64 rng(seed + 1000);
  std::normal_distribution<double> normal(0.0, 0.2);
  for (auto& p : net.param_vector()) p += normal(rng);
  return net;
}

// Smallest |z| over the recorded hidden pre-activations: ELU has a jump in its second derivative at
// z = 0, so a finite-difference stencil that straddles it has O(h) error instead of O(h²).
double min_abs_preactivation(const Mlp<double>::Workspace& ws, const std::vector<int>& sizes, int n) {
  double m = INFINITY;
  std::size_t offset = 0;
  for (std::size_t l = 1; l + 1 < sizes.size(); ++l) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(n) * sizes[l]; ++i) m = std::min(m, std::abs(ws.pre[offset + i]));
    offset += static_cast<std::size_t>(ws.max_batch) * sizes[l];
  }
  return m;
}

// Error bound for central differences with step h = 1e-6 in double: the truncation error is
// h²/6 |L'''| ≈ 2e-13 for O(1) third derivatives; the rounding error is about
// ε_mach · Σ|w_i y_i| / h ≈ 1e-16 · 10 / 1e-6 = 1e-9. Both sit far below 1e-7 of the gradient scale
// (max |∂L| is O(0.1–1) here), so 1e-7 · max|∂L| catches any real error, which would be O(∂L).
constexpr double kStep = 1e-6;
constexpr double kRelTol = 1e-7;

struct GradCase {
  std::vector<int> sizes;
  int n;
};

void PrintTo(const GradCase& c, std::ostream* os) {
  *os << "sizes {";
  for (std::size_t i = 0; i < c.sizes.size(); ++i) *os << (i ? ", " : "") << c.sizes[i];
  *os << "}, n " << c.n;
}

class MlpGradient : public ::testing::TestWithParam<GradCase> {};

TEST_P(MlpGradient, BackwardMatchesCentralDifferences) {
  const GradCase& c = GetParam();
  Mlp<double> net = perturbed_net(c.sizes, 7 + c.sizes.size());
  std::mt19937_64 rng(42);
  const int n = c.n;
  std::vector<double> x = random_vector(static_cast<std::size_t>(n) * net.in_dim(), rng);
  const std::vector<double> w = random_vector(static_cast<std::size_t>(n) * net.out_dim(), rng);
  auto ws = net.make_workspace(n + 3);  // larger than the batch: offsets use max_batch

  std::vector<double> y(w.size());
  net.forward(x.data(), n, y.data(), ws);
  ASSERT_GT(min_abs_preactivation(ws, c.sizes, n), 1e-4) << "stencil would straddle the ELU kink";
  std::vector<double> grad(net.num_params(), 0.0), dx(x.size(), 0.0);
  net.backward(w.data(), n, grad.data(), dx.data(), ws);

  // Parameter gradient, entry by entry.
  double max_grad = 0, max_err = 0;
  for (std::size_t i = 0; i < net.num_params(); ++i) {
    const double keep = net.params()[i];
    net.params()[i] = keep + kStep;
    const double plus = weighted_output(net, x, n, w, ws);
    net.params()[i] = keep - kStep;
    const double minus = weighted_output(net, x, n, w, ws);
    net.params()[i] = keep;
    const double fd = (plus - minus) / (2 * kStep);
    max_grad = std::max(max_grad, std::abs(grad[i]));
    max_err = std::max(max_err, std::abs(fd - grad[i]));
  }
  ASSERT_GT(max_grad, 1e-2);
  EXPECT_LE(max_err, kRelTol * max_grad) << "parameter gradient: max error " << max_err << ", scale " << max_grad;
  RecordProperty("param_rel_err", std::to_string(max_err / max_grad));

  // Input gradient.
  double max_dx = 0, max_dx_err = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + kStep;
    const double plus = weighted_output(net, x, n, w, ws);
    x[i] = keep - kStep;
    const double minus = weighted_output(net, x, n, w, ws);
    x[i] = keep;
    const double fd = (plus - minus) / (2 * kStep);
    max_dx = std::max(max_dx, std::abs(dx[i]));
    max_dx_err = std::max(max_dx_err, std::abs(fd - dx[i]));
  }
  ASSERT_GT(max_dx, 1e-2);
  EXPECT_LE(max_dx_err, kRelTol * max_dx) << "input gradient: max error " << max_dx_err << ", scale " << max_dx;
  RecordProperty("input_rel_err", std::to_string(max_dx_err / max_dx));
  std::printf("[ sizes %zu layers, n %d ] param rel err %.2e, input rel err %.2e\n", c.sizes.size(), n,
              max_err / max_grad, max_dx_err / max_dx);

  // Directional derivative along a random u in parameter space: d/dε <w, f_{θ+εu}(x)> = <∇θ L, u>.
  const std::vector<double> u = random_vector(net.num_params(), rng);
  const std::vector<double> theta = net.param_vector();
  for (std::size_t i = 0; i < theta.size(); ++i) net.params()[i] = theta[i] + kStep * u[i];
  const double plus = weighted_output(net, x, n, w, ws);
  for (std::size_t i = 0; i < theta.size(); ++i) net.params()[i] = theta[i] - kStep * u[i];
  const double minus = weighted_output(net, x, n, w, ws);
  net.param_vector() = theta;
  const double fd_dir = (plus - minus) / (2 * kStep);
  const double analytic_dir = dot(grad, u);
  EXPECT_NEAR(fd_dir, analytic_dir, kRelTol * std::max(1.0, std::abs(analytic_dir)));
}

INSTANTIATE_TEST_SUITE_P(Sizes, MlpGradient,
                         ::testing::Values(GradCase{{3, 2}, 4},                  // no hidden layer
                                           GradCase{{4, 8, 3}, 5},               // one hidden layer
                                           GradCase{{6, 16, 12, 10, 2}, 3},      // three hidden layers
                                           GradCase{{5, 7, 1}, 6}));             // scalar output (a critic)

TEST(Mlp, BackwardAccumulatesIntoGradParamsAndOverwritesDx) {
  Mlp<double> net = perturbed_net({4, 6, 3}, 3);
  std::mt19937_64 rng(5);
  const int n = 4;
  const std::vector<double> x = random_vector(static_cast<std::size_t>(n) * 4, rng);
  const std::vector<double> dy = random_vector(static_cast<std::size_t>(n) * 3, rng);
  auto ws = net.make_workspace(n);
  std::vector<double> y(dy.size());
  net.forward(x.data(), n, y.data(), ws);

  std::vector<double> fresh(net.num_params(), 0.0), dx_fresh(x.size(), 0.0);
  net.backward(dy.data(), n, fresh.data(), dx_fresh.data(), ws);
  // Backward must not disturb what forward recorded: a second call gives the same again.
  std::vector<double> offset = random_vector(net.num_params(), rng);
  std::vector<double> accumulated = offset;
  std::vector<double> dx(x.size(), 123.0);  // garbage: dx is overwritten, not accumulated
  net.backward(dy.data(), n, accumulated.data(), dx.data(), ws);
  for (std::size_t i = 0; i < fresh.size(); ++i) EXPECT_NEAR(accumulated[i], offset[i] + fresh[i], 1e-14);
  for (std::size_t i = 0; i < dx.size(); ++i) EXPECT_EQ(dx[i], dx_fresh[i]);
  // grad_params may be null, dx alone still comes out.
  std::vector<double> dx_only(x.size(), 0.0);
  net.backward(dy.data(), n, nullptr, dx_only.data(), ws);
  for (std::size_t i = 0; i < dx.size(); ++i) EXPECT_EQ(dx_only[i], dx_fresh[i]);
}

TEST(Mlp, FloatForwardAgreesWithDouble) {
  const std::vector<int> sizes = {17, 64, 64, 5};
  Mlp<double> net_d(sizes, 11, 0.5);
  Mlp<float> net_f(sizes, 11, 0.5);
  ASSERT_EQ(net_d.num_params(), net_f.num_params());
  // Same seed: the float network is the double one rounded.
  for (std::size_t i = 0; i < net_d.num_params(); ++i) ASSERT_EQ(net_f.params()[i], static_cast<float>(net_d.params()[i]));
  // Give LayerNorm non-trivial gains in both, from the double values.
  std::mt19937_64 rng(8);
  for (std::size_t i = 0; i < net_d.num_params(); ++i) {
    net_d.params()[i] = static_cast<float>(net_d.params()[i] + 0.1 * std::normal_distribution<double>()(rng));
    net_f.params()[i] = static_cast<float>(net_d.params()[i]);
  }
  const int n = 33;
  const std::vector<double> x = random_vector(static_cast<std::size_t>(n) * sizes[0], rng, 2.0);
  std::vector<float> xf(x.begin(), x.end());
  std::vector<double> xd(xf.begin(), xf.end());  // the float inputs exactly
  auto ws_d = net_d.make_workspace(n);
  auto ws_f = net_f.make_workspace(n);
  std::vector<double> yd(static_cast<std::size_t>(n) * sizes.back());
  std::vector<float> yf(yd.size());
  net_d.forward(xd.data(), n, yd.data(), ws_d);
  net_f.forward(xf.data(), n, yf.data(), ws_f);
  double scale = 0, err = 0;
  for (std::size_t i = 0; i < yd.size(); ++i) {
    scale = std::max(scale, std::abs(yd[i]));
    err = std::max(err, std::abs(yd[i] - static_cast<double>(yf[i])));
  }
  // Float rounding (2^-24 ≈ 6e-8 per operation) through sums of 64 terms and three layers stays
  // well under 1e-5 of the output scale.
  EXPECT_LE(err, 1e-5 * scale) << "err " << err << " scale " << scale;
  std::printf("float vs double forward: rel err %.2e\n", err / scale);
}

TEST(Mlp, ForwardRejectsBatchLargerThanWorkspace) {
  Mlp<float> net({3, 4, 2}, 1);
  auto ws = net.make_workspace(8);
  std::vector<float> x(9 * 3, 0.f), y(9 * 2);
  EXPECT_THROW(net.forward(x.data(), 9, y.data(), ws), std::invalid_argument);
  EXPECT_NO_THROW(net.forward(x.data(), 8, y.data(), ws));
  EXPECT_THROW(net.backward(y.data(), 9, nullptr, x.data(), ws), std::invalid_argument);
  EXPECT_THROW(Mlp<float>({3}, 1), std::invalid_argument);
}

TEST(Mlp, SeedDeterminesInitialisation) {
  const std::vector<int> sizes = {5, 32, 32, 3};
  Mlp<float> a(sizes, 99), b(sizes, 99), c(sizes, 100);
  EXPECT_EQ(a.param_vector(), b.param_vector());
  EXPECT_NE(a.param_vector(), c.param_vector());
  // Layout and ranges: W, b within ±1/sqrt(in) (output layer scaled), gains 1, biases 0.
  Mlp<double> d(sizes, 3, 0.01);
  std::size_t offset = 0;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const std::size_t in = sizes[l], out = sizes[l + 1];
    const bool last = l + 2 == sizes.size();
    const double bound = (last ? 0.01 : 1.0) / std::sqrt(static_cast<double>(in));
    double largest = 0;
    for (std::size_t i = 0; i < out * in + out; ++i) largest = std::max(largest, std::abs(d.params()[offset + i]));
    EXPECT_LE(largest, bound);
    EXPECT_GT(largest, 0.8 * bound);  // uniform draws fill the range
    offset += out * in + out;
    if (!last) {
      for (std::size_t j = 0; j < out; ++j) EXPECT_EQ(d.params()[offset + j], 1.0);
      for (std::size_t j = 0; j < out; ++j) EXPECT_EQ(d.params()[offset + out + j], 0.0);
      offset += 2 * out;
    }
  }
  EXPECT_EQ(offset, d.num_params());
}

TEST(Mlp, PolyakFromIsTheConvexCombination) {
  Mlp<double> target({4, 8, 2}, 1), online({4, 8, 2}, 2);
  const std::vector<double> before = target.param_vector();
  const double alpha = 0.995;
  target.polyak_from(online, alpha);
  for (std::size_t i = 0; i < before.size(); ++i)
    EXPECT_DOUBLE_EQ(target.params()[i], alpha * before[i] + (1 - alpha) * online.params()[i]);
  Mlp<double> other_shape({4, 9, 2}, 1);
  EXPECT_THROW(target.polyak_from(other_shape, alpha), std::invalid_argument);
}

// ---- Gaussian head ----

using namespace stiffgrad::learn;
constexpr double kPi = 3.14159265358979323846;

TEST(Gaussian, SampleIsMeanPlusStdTimesNoise) {
  const std::vector<double> mu = {0.5, -1.0, 2.0, 0.0}, log_std = {-0.3, 0.7}, eps = {1.0, -2.0, 0.25, 3.0};
  std::vector<double> a(4);
  gaussian_sample(mu.data(), log_std.data(), eps.data(), 2, 2, a.data());
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 2; ++j) EXPECT_DOUBLE_EQ(a[r * 2 + j], mu[r * 2 + j] + std::exp(log_std[j]) * eps[r * 2 + j]);
}

TEST(Gaussian, LogProbAndEntropyClosedForm) {
  std::mt19937_64 rng(3);
  const int n = 5, k = 3;
  const std::vector<double> mu = random_vector(n * k, rng), a = random_vector(n * k, rng),
                            log_std = random_vector(k, rng, 0.5);
  std::vector<double> lp(n);
  gaussian_log_prob(mu.data(), log_std.data(), a.data(), n, k, lp.data());
  for (int r = 0; r < n; ++r) {
    // Product of univariate densities exp(-(a-μ)²/(2σ²)) / (σ sqrt(2π)).
    double density = 1;
    for (int j = 0; j < k; ++j) {
      const double s = std::exp(log_std[j]), d = a[r * k + j] - mu[r * k + j];
      density *= std::exp(-d * d / (2 * s * s)) / (s * std::sqrt(2 * kPi));
    }
    EXPECT_NEAR(lp[r], std::log(density), 1e-12);
  }
  // Differential entropy of N(μ, σ²) is ½ log(2πe σ²) per dimension.
  double entropy = 0;
  for (int j = 0; j < k; ++j) entropy += 0.5 * std::log(2 * kPi * std::exp(1.0) * std::exp(2 * log_std[j]));
  EXPECT_NEAR(gaussian_entropy(log_std.data(), k), entropy, 1e-13);
  const std::vector<float> log_std_f(log_std.begin(), log_std.end());
  EXPECT_NEAR(gaussian_entropy(log_std_f.data(), k), entropy, 1e-5);
}

TEST(Gaussian, AdjointLogProbMatchesFiniteDifferences) {
  std::mt19937_64 rng(4);
  const int n = 4, k = 3;
  std::vector<double> mu = random_vector(n * k, rng), log_std = random_vector(k, rng, 0.5);
  const std::vector<double> a = random_vector(n * k, rng), w = random_vector(n, rng);
  auto objective = [&] {
    std::vector<double> lp(n);
    gaussian_log_prob(mu.data(), log_std.data(), a.data(), n, k, lp.data());
    return dot(w, lp);
  };
  std::vector<double> d_mu(n * k, 77.0);  // overwritten
  std::vector<double> d_log_std(k, 0.5);  // accumulated
  adj_gaussian_log_prob(mu.data(), log_std.data(), a.data(), n, k, w.data(), d_mu.data(), d_log_std.data());
  for (int i = 0; i < n * k; ++i) {
    const double keep = mu[i];
    mu[i] = keep + kStep;
    const double plus = objective();
    mu[i] = keep - kStep;
    const double minus = objective();
    mu[i] = keep;
    EXPECT_NEAR(d_mu[i], (plus - minus) / (2 * kStep), 1e-7 * std::max(1.0, std::abs(d_mu[i])));
  }
  for (int j = 0; j < k; ++j) {
    const double keep = log_std[j];
    log_std[j] = keep + kStep;
    const double plus = objective();
    log_std[j] = keep - kStep;
    const double minus = objective();
    log_std[j] = keep;
    EXPECT_NEAR(d_log_std[j] - 0.5, (plus - minus) / (2 * kStep), 1e-7 * std::max(1.0, std::abs(d_log_std[j])));
  }
}

}  // namespace
