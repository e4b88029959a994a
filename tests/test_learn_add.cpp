// The ADD discriminator (host/learn/add.cpp): its loss gradient (BCE, logit decay and the
// gradient penalty, whose parameter gradient is a finite-difference Hessian-vector product)
// against central differences of the loss in double; the reward's adjoint against central
// differences in Δ; the reward's clamp; and training that separates the real sample from fakes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "stiffgrad/learn/add.hpp"

namespace {

using stiffgrad::learn::AddDiscriminator;
using stiffgrad::learn::AddOptions;

std::vector<double> normals(int n, std::uint64_t seed, double mean = 0.0, double sigma = 1.0) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> N(mean, sigma);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = N(g);
  return v;
}

TEST(AddDiscriminator, LossGradientMatchesCentralDifferences) {
  for (const std::vector<int>& hidden : {std::vector<int>{}, std::vector<int>{16}, std::vector<int>{16, 8}}) {
    AddOptions o;
    o.hidden = hidden;
    const int dim = 7, n = 9;
    AddDiscriminator d(dim, n, o, 3);
    const std::vector<double> x = normals(n * dim, 5, 0.3, 1.5);
    std::vector<double> g(d.net().num_params());
    const double L = d.loss(x.data(), n, g.data());
    ASSERT_TRUE(std::isfinite(L));
    // the penalty's share of the loss is not negligible (else the test would not see its gradient)
    AddOptions no_penalty = o;
    no_penalty.grad_penalty = 0;
    AddDiscriminator d0(dim, n, no_penalty, 3);
    const double L0 = d0.loss(x.data(), n, nullptr);
    EXPECT_GT(L - L0, 0.05 * L) << "penalty share too small to test";
    double worst = 0, gmax = 0;
    for (double v : g) gmax = std::max(gmax, std::fabs(v));
    std::vector<double>& p = d.net().param_vector();
    const double h = 1e-5;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double p0 = p[i];
      p[i] = p0 + h;
      const double Lp = d.loss(x.data(), n, nullptr);
      p[i] = p0 - h;
      const double Lm = d.loss(x.data(), n, nullptr);
      p[i] = p0;
      const double fd = (Lp - Lm) / (2 * h);
      worst = std::max(worst, std::fabs(fd - g[i]) / gmax);
    }
    std::printf("[ add ] hidden %zu layers: loss %.4f (%.4f without the penalty), %zu parameters, worst |FD - grad| / "
                "max|grad| = %.2e\n", hidden.size(), L, L0, p.size(), worst);
    EXPECT_LT(worst, 1e-6) << hidden.size() << " hidden layers";
  }
}

TEST(AddDiscriminator, RewardAdjointMatchesCentralDifferences) {
  AddOptions o;
  o.hidden = {16, 8};
  const int dim = 6, n = 5;
  AddDiscriminator d(dim, n, o, 4);
  const std::vector<double> delta = normals(n * dim, 8, 0.0, 0.2);
  std::vector<double> r(n), adj_r = normals(n, 9), adj_delta(static_cast<std::size_t>(n) * dim);
  d.reward(delta.data(), n, r.data());  // first call: the statistics start from these rows
  for (double v : r) {
    EXPECT_GT(v, 0.0);
    EXPECT_LT(v, 2.0 * -std::log(1e-4) + 1e-12);
  }
  d.adj_reward(delta.data(), n, adj_r.data(), adj_delta.data());
  double worst = 0, gmax = 0;
  for (double v : adj_delta) gmax = std::max(gmax, std::fabs(v));
  ASSERT_GT(gmax, 0.0);
  const double h = 1e-6;
  for (int i = 0; i < n * dim; ++i) {
    std::vector<double> dp = delta, dm = delta, rp(n), rm(n);
    dp[static_cast<std::size_t>(i)] += h;
    dm[static_cast<std::size_t>(i)] -= h;
    d.reward(dp.data(), n, rp.data());
    d.reward(dm.data(), n, rm.data());
    const int row = i / dim;
    const double fd = adj_r[static_cast<std::size_t>(row)] * (rp[static_cast<std::size_t>(row)] - rm[static_cast<std::size_t>(row)]) / (2 * h);
    worst = std::max(worst, std::fabs(fd - adj_delta[static_cast<std::size_t>(i)]) / gmax);
  }
  std::printf("[ add ] reward adjoint: worst |FD - adjoint| / max = %.2e\n", worst);
  EXPECT_LT(worst, 1e-7);
}

TEST(AddDiscriminator, TrainingSeparatesTheReferenceFromFakes) {
  // fakes: Δ ~ N(1, 0.5²) per component; after training D(0) says real and the fakes' reward
  // (large when D says real) falls below the reward of Δ = 0
  AddOptions o;
  o.hidden = {32, 16};
  o.lr = 1e-3;
  const int dim = 5, n = 256;
  AddDiscriminator d(dim, n, o, 6);
  std::mt19937_64 rng(1);
  std::vector<double> r(n), zero(static_cast<std::size_t>(dim), 0.0), r0(1);
  double first = 0, last = 0;
  for (int it = 0; it < 200; ++it) {
    const std::vector<double> fake = normals(n * dim, 100 + it, 1.0, 0.5);
    const double l = d.update(fake.data(), n, rng);
    if (it == 0) first = l;
    last = l;
  }
  const std::vector<double> fake = normals(n * dim, 7, 1.0, 0.5);
  d.reward(fake.data(), n, r.data());
  d.reward(zero.data(), 1, r0.data());
  double mean_fake = 0;
  for (double v : r) mean_fake += v / n;
  std::printf("[ add ] loss %.4f -> %.4f; reward of the reference %.3f, of fakes %.3f; mean|delta| %.3f\n", first, last,
              r0[0], mean_fake, d.mean_abs()[0]);
  EXPECT_LT(last, first);
  EXPECT_GT(r0[0], mean_fake + 1.0);
  EXPECT_NEAR(d.mean_abs()[0], 1.0, 0.05);  // E|N(1, 0.25)| ≈ 1.0
}

TEST(AddDiscriminator, RejectsBadSizes) {
  EXPECT_THROW(AddDiscriminator(0, 4, AddOptions{}, 1), std::invalid_argument);
  AddDiscriminator d(3, 4, AddOptions{}, 1);
  std::vector<double> x(5 * 3), r(5);
  EXPECT_THROW(d.reward(x.data(), 5, r.data()), std::invalid_argument);
}

}  // namespace
