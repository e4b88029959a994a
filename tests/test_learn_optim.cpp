// learn::Adam, linear_decay, clip_grad_norm and RunningMeanStd against hand computations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "stiffgrad/learn/normalizer.hpp"
#include "stiffgrad/learn/optim.hpp"

namespace {

using namespace stiffgrad::learn;

// Adam's moments in closed form: m_t = (1-β1) Σ_{s≤t} β1^{t-s} g_s, v_t = (1-β2) Σ β2^{t-s} g_s²;
// θ_t = θ_{t-1} - lr (m_t / (1-β1^t)) / (sqrt(v_t / (1-β2^t)) + ε) (Kingma & Ba 2015, Alg. 1).
TEST(Adam, MatchesClosedFormSteps) {
  AdamOptions opt;
  opt.lr = 0.01;
  opt.beta1 = 0.8;
  opt.beta2 = 0.95;
  opt.eps = 1e-6;
  const std::vector<std::vector<double>> grads = {{1.0, -0.5}, {0.3, 2.0}, {-2.0, 0.1}, {0.7, -0.7}, {0.0, 1e-3}};
  std::vector<double> theta = {0.25, -1.5};
  Adam<double> adam(2, opt);
  std::vector<double> expected = theta;
  for (std::size_t t = 1; t <= grads.size(); ++t) {
    adam.step(theta.data(), grads[t - 1].data());
    for (int i = 0; i < 2; ++i) {
      double m = 0, v = 0;
      for (std::size_t s = 1; s <= t; ++s) {
        m += (1 - opt.beta1) * std::pow(opt.beta1, static_cast<double>(t - s)) * grads[s - 1][i];
        v += (1 - opt.beta2) * std::pow(opt.beta2, static_cast<double>(t - s)) * grads[s - 1][i] * grads[s - 1][i];
      }
      const double m_hat = m / (1 - std::pow(opt.beta1, static_cast<double>(t)));
      const double v_hat = v / (1 - std::pow(opt.beta2, static_cast<double>(t)));
      expected[i] -= opt.lr * m_hat / (std::sqrt(v_hat) + opt.eps);
      EXPECT_NEAR(theta[i], expected[i], 1e-14) << "step " << t << " entry " << i;
    }
  }
  EXPECT_EQ(adam.steps(), 5);
  // The first step moves every coordinate by lr·sign(g) (m̂/sqrt(v̂) = g/|g|), up to ε.
  adam.reset();
  EXPECT_EQ(adam.steps(), 0);
  std::vector<double> p = {0.0, 0.0};
  const std::vector<double> g = {3.0, -0.02};
  adam.step(p.data(), g.data());
  EXPECT_NEAR(p[0], -opt.lr, 1e-8);
  EXPECT_NEAR(p[1], opt.lr, 1e-5);
}

TEST(Adam, SetLrChangesTheStep) {
  Adam<float> adam(1, AdamOptions{});
  EXPECT_DOUBLE_EQ(adam.lr(), 1e-3);
  adam.set_lr(0.25);
  EXPECT_DOUBLE_EQ(adam.lr(), 0.25);
  float p = 1.0f;
  const float g = 4.0f;
  adam.step(&p, &g);
  EXPECT_NEAR(p, 1.0f - 0.25f, 1e-6);
}

TEST(Adam, MinimizesAQuadratic) {
  // f(θ) = ½ Σ a_i (θ_i - c_i)², ill-conditioned (a spans 1e-2 .. 1e2).
  const std::vector<double> a = {0.01, 1.0, 100.0, 3.0}, c = {1.0, -2.0, 0.5, 4.0};
  std::vector<float> theta(4, 0.0f), grad(4);
  AdamOptions opt;
  opt.lr = 0.05;
  Adam<float> adam(4, opt);
  for (int it = 0; it < 3000; ++it) {
    for (int i = 0; i < 4; ++i) grad[i] = static_cast<float>(a[i] * (theta[i] - c[i]));
    adam.set_lr(linear_decay(0.05, 1e-4, it, 3000));
    adam.step(theta.data(), grad.data());
  }
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(theta[i], c[i], 1e-2) << i;
}

TEST(LinearDecay, EndpointsAndMidpoint) {
  EXPECT_DOUBLE_EQ(linear_decay(1e-3, 1e-5, 0, 100), 1e-3);
  EXPECT_DOUBLE_EQ(linear_decay(1e-3, 1e-5, 100, 100), 1e-5);
  EXPECT_DOUBLE_EQ(linear_decay(1e-3, 1e-5, 250, 100), 1e-5);
  EXPECT_NEAR(linear_decay(1e-3, 1e-5, 50, 100), 0.5 * (1e-3 + 1e-5), 1e-18);
  EXPECT_NEAR(linear_decay(2.0, 0.0, 25, 100), 1.5, 1e-15);
}

TEST(ClipGradNorm, ScalesToMaxNormAndReturnsTheNormBefore) {
  std::vector<float> g = {3.0f, -4.0f, 0.0f, 12.0f};  // norm 13
  const std::vector<float> original = g;
  EXPECT_DOUBLE_EQ(clip_grad_norm(g.data(), g.size(), 1.0), 13.0);
  double norm = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    norm += static_cast<double>(g[i]) * g[i];
    EXPECT_NEAR(g[i], original[i] / 13.0f, 1e-7);  // direction kept
  }
  EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-6);
  // Below the bound: unchanged.
  std::vector<double> small = {0.3, 0.4};
  EXPECT_DOUBLE_EQ(clip_grad_norm(small.data(), small.size(), 1.0), 0.5);
  EXPECT_EQ(small, (std::vector<double>{0.3, 0.4}));
  // Non-finite: unchanged, the norm returned as is.
  std::vector<double> bad = {1.0, std::numeric_limits<double>::quiet_NaN(), 2.0};
  EXPECT_TRUE(std::isnan(clip_grad_norm(bad.data(), bad.size(), 1.0)));
  EXPECT_EQ(bad[0], 1.0);
  EXPECT_EQ(bad[2], 2.0);
  std::vector<float> inf = {1.0f, std::numeric_limits<float>::infinity()};
  EXPECT_TRUE(std::isinf(clip_grad_norm(inf.data(), inf.size(), 1.0)));
  EXPECT_EQ(inf[0], 1.0f);
}

// ---- RunningMeanStd ----

// The statistics after any batching are those of all samples pooled with a prior pseudo-sample of
// weight ε = 1e-4, mean 0, variance 1 (normalizer.hpp):
//   mean = Σx / (N + ε),  var = (ε (1 + mean²) + Σ (x - mean)²) / (N + ε).
TEST(RunningMeanStd, MatchesTwoPassStatisticsOfAllSamples) {
  const int dim = 3;
  RunningMeanStd rms(dim);
  EXPECT_DOUBLE_EQ(rms.count(), 1e-4);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> all;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int batch : {1, 7, 64, 3, 200}) {
    std::vector<double> x(static_cast<std::size_t>(batch) * dim);
    for (int r = 0; r < batch; ++r)
      for (int j = 0; j < dim; ++j) x[r * dim + j] = 2.0 * j - 1.0 + (0.5 + j) * normal(rng);
    all.insert(all.end(), x.begin(), x.end());
    // A poisoned row in every batch: ignored.
    x.insert(x.end(), {nan, 1.0, 2.0});
    rms.update(x.data(), batch + 1);
  }
  const double eps = 1e-4;
  const double n = static_cast<double>(all.size() / dim);
  EXPECT_NEAR(rms.count(), n + eps, 1e-9);
  for (int j = 0; j < dim; ++j) {
    double sum = 0;
    for (std::size_t r = 0; r < all.size() / dim; ++r) sum += all[r * dim + j];
    const double mean = sum / (n + eps);
    double m2 = 0;
    for (std::size_t r = 0; r < all.size() / dim; ++r) m2 += (all[r * dim + j] - mean) * (all[r * dim + j] - mean);
    const double var = (eps * (1 + mean * mean) + m2) / (n + eps);
    EXPECT_NEAR(rms.mean()[j], mean, 1e-12);
    EXPECT_NEAR(rms.var()[j], var, 1e-12 * var);
    EXPECT_NEAR(rms.scale(j), std::sqrt(var + 1e-5), 1e-12);
  }
  // A float batch updates the same way (values converted exactly).
  RunningMeanStd rf(2), rd(2);
  const std::vector<float> xf = {1.5f, -2.0f, 0.25f, 4.0f, std::numeric_limits<float>::infinity(), 0.0f};
  const std::vector<double> xd(xf.begin(), xf.end());
  rf.update(xf.data(), 3);
  rd.update(xd.data(), 3);
  EXPECT_EQ(rf.mean(), rd.mean());
  EXPECT_EQ(rf.var(), rd.var());
  EXPECT_NEAR(rf.count(), 2 + 1e-4, 1e-12);
}

TEST(RunningMeanStd, NormalizeClampsAndItsAdjointMatchesFiniteDifferences) {
  RunningMeanStd rms;
  rms.set({1.0, -2.0}, {4.0, 0.25}, 10.0, 3.0);
  EXPECT_EQ(rms.dim(), 2);
  // Row 0 inside the clip, row 1 clamped above in dim 0 and below in dim 1.
  const std::vector<double> x = {2.0, -2.3, 30.0, -10.0};
  std::vector<double> y(4);
  rms.normalize(x.data(), 2, y.data());
  EXPECT_DOUBLE_EQ(y[0], (2.0 - 1.0) / std::sqrt(4.0 + 1e-5));
  EXPECT_DOUBLE_EQ(y[1], (-2.3 + 2.0) / std::sqrt(0.25 + 1e-5));
  EXPECT_DOUBLE_EQ(y[2], 3.0);
  EXPECT_DOUBLE_EQ(y[3], -3.0);

  const std::vector<double> dy = {0.7, -1.3, 2.0, 5.0};
  std::vector<double> dx(4, 99.0);
  rms.adj_normalize(x.data(), 2, dy.data(), dx.data());
  const double h = 1e-6;
  for (int i = 0; i < 4; ++i) {
    std::vector<double> xp = x, xm = x, yp(4), ym(4);
    xp[i] += h;
    xm[i] -= h;
    rms.normalize(xp.data(), 2, yp.data());
    rms.normalize(xm.data(), 2, ym.data());
    double fd = 0;
    for (int k = 0; k < 4; ++k) fd += dy[k] * (yp[k] - ym[k]) / (2 * h);
    EXPECT_NEAR(dx[i], fd, 1e-8) << i;
  }
  EXPECT_EQ(dx[2], 0.0);
  EXPECT_EQ(dx[3], 0.0);
  EXPECT_THROW(rms.set({0.0}, {1.0, 1.0}, 1.0, 5.0), std::invalid_argument);
}

}  // namespace
