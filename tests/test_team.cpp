// kernels/base/team.hpp: a SerialTeam's sums are the serial sum at width 1 and, at width W > 1,
// bit for bit the sum a W-lane warp reduction computes (lane partials over i ≡ l mod W, then
// p_l += p_{l+off} for off = W/2 .. 1), written out here independently as the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/base/team.hpp"

namespace {

using stiffgrad::kern::SerialTeam;

// The terms: magnitudes spread over 12 decades so that any change of order changes the rounding.
std::vector<double> spread_terms(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-6, 6);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& v : x) v = mant(rng) * std::pow(10.0, expo(rng));
  return x;
}

// A W-lane warp reduction, lane by lane (the reference the team must equal).
double warp_reduction(const std::vector<double>& x, double init, int width) {
  std::vector<double> p(static_cast<std::size_t>(width), 0.0);
  p[0] = init;
  for (int l = 0; l < width; ++l)
    for (std::size_t i = static_cast<std::size_t>(l); i < x.size(); i += static_cast<std::size_t>(width)) p[l] += x[i];
  for (int off = width / 2; off >= 1; off /= 2)
    for (int l = 0; l < off; ++l) p[l] += p[l + off];
  return p[0];
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Team, WidthOneIsTheSerialSum) {
  for (int n : {0, 1, 7, 33, 130}) {
    const std::vector<double> x = spread_terms(n, 11u + static_cast<unsigned>(n));
    double serial = 0.25;
    for (double v : x) serial += v;
    double acc[1] = {0.25};
    SerialTeam{1}.sum<1>(n, acc, [&](int i, double* t) { t[0] += x[static_cast<std::size_t>(i)]; });
    EXPECT_TRUE(same_bits(acc[0], serial)) << "n " << n << ": " << acc[0] << " vs " << serial;
  }
}

TEST(Team, EveryWidthEqualsItsWarpReductionBitwise) {
  int orders_differ = 0;
  for (int width : {2, 4, 8, 16, 32})
    for (int n : {0, 1, 5, 31, 32, 33, 64, 130, 1000}) {
      const std::vector<double> x = spread_terms(n, 97u * static_cast<unsigned>(width) + static_cast<unsigned>(n));
      const double ref = warp_reduction(x, -1.5, width);
      double acc[2] = {-1.5, 3.0};
      SerialTeam{width}.sum<2>(n, acc, [&](int i, double* t) {
        t[0] += x[static_cast<std::size_t>(i)];
        t[1] += 2.0 * x[static_cast<std::size_t>(i)];
      });
      EXPECT_TRUE(same_bits(acc[0], ref)) << "width " << width << " n " << n << ": " << acc[0] << " vs " << ref;
      // the second running sum follows the same tree (its own initial value on lane 0)
      std::vector<double> x2(x);
      for (double& v : x2) v *= 2.0;
      EXPECT_TRUE(same_bits(acc[1], warp_reduction(x2, 3.0, width))) << "width " << width << " n " << n;
      double serial = -1.5;
      for (double v : x) serial += v;
      if (!same_bits(serial, ref)) ++orders_differ;
      EXPECT_NEAR(acc[0], serial, 1e-9 * (1.0 + std::fabs(serial)));
    }
  // the test would not notice a team that summed serially unless the orders round differently
  EXPECT_GT(orders_differ, 10);
}

TEST(Team, ForEachVisitsEveryItemOnce) {
  std::vector<int> seen(50, 0);
  SerialTeam{32}.for_each(50, [&](int i) { ++seen[static_cast<std::size_t>(i)]; });
  for (int v : seen) EXPECT_EQ(v, 1);
}

}  // namespace
