// The ADD discriminator (learn/add.cpp): its loss gradient (BCE, logit decay and the
// gradient penalty, whose parameter gradient is a finite-difference Hessian-vector product)
// against central differences of the loss in double; the reward's adjoint against central
// differences in Δ; the reward's clamp; training that separates the real sample from fakes; and
// the replay ring (which rows it keeps, and that it keeps past fakes fake once the policy moves).
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

TEST(AddDiscriminator, ReplayRingKeepsTheNewestRows) {
  AddOptions o;
  o.hidden = {4};
  o.replay_capacity = 10;
  const int dim = 2, n = 4;
  AddDiscriminator d(dim, n, o, 2);
  std::mt19937_64 rng(3);
  std::vector<double> all;  // every row given, in order; row j = (j, −j)
  for (int it = 0; it < 3; ++it) {
    std::vector<double> rows;
    for (int i = 0; i < n; ++i) {
      const double j = it * n + i;
      rows.insert(rows.end(), {j, -j});
    }
    all.insert(all.end(), rows.begin(), rows.end());
    d.update(rows.data(), n, rng);
    const int held = std::min((it + 1) * n, o.replay_capacity);
    ASSERT_EQ(d.replay_size(), held);
    const int first = (it + 1) * n - held;  // the oldest row still held
    for (int i = 0; i < held; ++i)
      for (int k = 0; k < dim; ++k)
        EXPECT_EQ(d.replay_row(i)[k], all[static_cast<std::size_t>(first + i) * dim + k]) << "iteration " << it << " row " << i;
  }
  EXPECT_THROW(d.replay_row(10), std::out_of_range);
  AddOptions off = o;
  off.replay_capacity = 0;
  AddDiscriminator d0(dim, n, off, 2);
  d0.update(all.data(), n, rng);
  EXPECT_EQ(d0.replay_size(), 0);
  off.replay_capacity = -1;
  EXPECT_THROW(AddDiscriminator(dim, n, off, 2), std::invalid_argument);
}

// A discriminator given another's state() goes on as that one does, bit for bit, with its ring
// wrapped (the oldest row in a middle slot) and not yet full; sizes that do not fit are refused.
TEST(AddDiscriminator, StateCarriesOverBitwise) {
  AddOptions o;
  o.hidden = {8};
  o.lr = 1e-2;
  o.replay_capacity = 10;
  const int dim = 3, n = 4;
  for (const int before : {1, 4}) {  // 4 rows held (not full), 10 held with the ring wrapped
    AddDiscriminator a(dim, n, o, 5);
    std::mt19937_64 rng(6);
    for (int it = 0; it < before; ++it) {
      const std::vector<double> fake = normals(n * dim, 30 + it, 0.5, 0.4);
      a.update(fake.data(), n, rng);
    }
    ASSERT_EQ(a.replay_size(), std::min(before * n, o.replay_capacity));
    AddDiscriminator b(dim, n, o, 99);  // other initial weights: all of them come from the state
    b.set_state(a.state());
    std::mt19937_64 rng_b = rng;
    for (int it = 0; it < 3; ++it) {
      const std::vector<double> fake = normals(n * dim, 60 + it, 0.3, 0.5);
      std::vector<double> ra(n), rb(n);
      a.reward(fake.data(), n, ra.data());
      b.reward(fake.data(), n, rb.data());
      EXPECT_EQ(ra, rb) << before << " iterations before, step " << it;
      EXPECT_EQ(a.update(fake.data(), n, rng), b.update(fake.data(), n, rng_b)) << before << ", " << it;
    }
    EXPECT_EQ(a.net().param_vector(), b.net().param_vector());
    EXPECT_EQ(a.mean_abs(), b.mean_abs());
    ASSERT_EQ(a.replay_size(), b.replay_size());
    for (int i = 0; i < a.replay_size(); ++i)
      for (int k = 0; k < dim; ++k) EXPECT_EQ(a.replay_row(i)[k], b.replay_row(i)[k]);
    // the comparison can fail: a discriminator without the state differs
    AddDiscriminator c(dim, n, o, 99);
    std::vector<double> rc(n), ra(n);
    const std::vector<double> probe = normals(n * dim, 77, 0.3, 0.5);
    c.reward(probe.data(), n, rc.data());
    a.reward(probe.data(), n, ra.data());
    EXPECT_NE(rc, ra);
  }
  AddDiscriminator d(dim, n, o, 5);
  AddDiscriminator::State s = d.state();
  s.params.pop_back();
  EXPECT_THROW(d.set_state(s), std::invalid_argument);
  s = d.state();
  s.replay.assign(11 * dim, 0.0);  // more rows than the ring holds
  EXPECT_THROW(d.set_state(s), std::invalid_argument);
  s = d.state();
  s.adam_v.push_back(0);
  EXPECT_THROW(d.set_state(s), std::invalid_argument);
}

TEST(AddDiscriminator, ReplayKeepsPastFakesFake) {
  // The policy moves: its fakes are Δ ~ N(+1, 0.3²) for 100 iterations, then N(−1, 0.3²) for 60.
  // D's probability that a fake is real is p = sigmoid(D) = 1 − exp(−r / s). With replay the
  // discriminator still calls the old fakes fake; without it, trained on the new ones only, it
  // drifts towards calling them real. Both call the new fakes fake.
  const int dim = 4, n = 128;
  struct Verdict { double p_old, p_new; };
  auto after_the_move = [&](int capacity) {
    AddOptions o;
    o.hidden = {32, 16};
    o.lr = 1e-3;
    o.replay_capacity = capacity;
    AddDiscriminator d(dim, n, o, 11);
    std::mt19937_64 rng(12);
    for (int it = 0; it < 160; ++it) {
      const std::vector<double> fake = normals(n * dim, 200 + it, it < 100 ? 1.0 : -1.0, 0.3);
      d.update(fake.data(), n, rng);
    }
    auto p_real = [&](double mean) {
      const std::vector<double> fake = normals(n * dim, 9, mean, 0.3);
      std::vector<double> r(n);
      d.reward(fake.data(), n, r.data());
      double p = 0;
      for (double v : r) p += (1 - std::exp(-v / o.reward_scale)) / n;
      return p;
    };
    const Verdict v{p_real(1.0), p_real(-1.0)};
    std::printf("[ add ] replay %5d rows: p(real) of the old fakes %.3f, of the new ones %.3f\n", capacity, v.p_old, v.p_new);
    return v;
  };
  const Verdict with_replay = after_the_move(100 * n), without = after_the_move(0);
  EXPECT_LT(with_replay.p_old, 0.2);  // measured 0.10; without replay 0.46
  EXPECT_GT(without.p_old, with_replay.p_old + 0.2);
  EXPECT_LT(with_replay.p_new, 0.3);  // measured 0.23 (it splits its updates between old and new fakes)
  EXPECT_LT(without.p_new, 0.3);      // measured 0.11
}

TEST(AddDiscriminator, RejectsBadSizes) {
  EXPECT_THROW(AddDiscriminator(0, 4, AddOptions{}, 1), std::invalid_argument);
  AddDiscriminator d(3, 4, AddOptions{}, 1);
  std::vector<double> x(5 * 3), r(5);
  EXPECT_THROW(d.reward(x.data(), 5, r.data()), std::invalid_argument);
}

}  // namespace
