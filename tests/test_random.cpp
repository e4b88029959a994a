// Counter-based random numbers (kernels/base/random.hpp, issue 9's bundle perturbations):
// Philox4x32-10 against the Random123 known-answer vectors, the open interval of the uniforms,
// the moments of the normals, and independence of the streams keyed by (seed, env, step, branch).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

#include "kernels/base/random.hpp"

namespace {

using stiffgrad::kern::Philox4;
using stiffgrad::kern::RandomStream;

// Random123 tests/kat_vectors, the three "philox4x32 10" lines: counter (4 words), key (2 words),
// expected output (4 words).
TEST(Random, Philox4x32_10KnownAnswers) {
  struct Kat {
    std::uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    const Philox4 r =
        stiffgrad::kern::philox4x32_10(Philox4{{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}}, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.v[i], k.out[i]) << "word " << i;
  }
}

TEST(Random, UniformsStayInsideTheOpenInterval) {
  using stiffgrad::kern::uniform_open01;
  EXPECT_GT(uniform_open01(0, 0), 0.0);
  EXPECT_LT(uniform_open01(0xffffffffu, 0xffffffffu), 1.0);
  EXPECT_EQ(uniform_open01(0, 0), 0.5 / 4503599627370496.0);
  EXPECT_EQ(uniform_open01(0xffffffffu, 0xffffffffu), 1.0 - 0.5 / 4503599627370496.0);
}

// 2e5 normals of one stream: mean and variance within 5 standard errors, the fourth moment
// (3 for a normal) within 5%, and a pure function of the key: drawn again, bit for bit the same.
TEST(Random, NormalsHaveStandardMoments) {
  const RandomStream s{0x1234567890abcdefull, 3, 17, 2};
  const int n = 200000;
  std::vector<double> z(n);
  s.normals(n, z.data());
  double m1 = 0, m2 = 0, m4 = 0;
  for (double x : z) {
    m1 += x;
    m2 += x * x;
    m4 += x * x * x * x;
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  std::printf("[random] %d normals: mean %.2e, variance %.4f, fourth moment %.3f\n", n, m1, m2, m4);
  EXPECT_LT(std::abs(m1), 5.0 / std::sqrt(double(n)));
  EXPECT_LT(std::abs(m2 - 1.0), 5.0 * std::sqrt(2.0 / n));
  EXPECT_NEAR(m4, 3.0, 0.15);
  std::vector<double> again(n);
  s.normals(n, again.data());
  EXPECT_TRUE(again == z);
}

// Streams that differ in any one of seed, env, step or branch give different numbers, and their
// first draws are uncorrelated (sample correlation over 4096 envs within 5 standard errors).
TEST(Random, StreamsKeyedByEnvStepBranchAreIndependent) {
  const RandomStream base{42, 5, 7, 1};
  double z0, z1;
  base.normal_pair(0, &z0, &z1);
  for (const RandomStream& other : {RandomStream{43, 5, 7, 1}, RandomStream{42, 6, 7, 1}, RandomStream{42, 5, 8, 1},
                                    RandomStream{42, 5, 7, 2}}) {
    double w0, w1;
    other.normal_pair(0, &w0, &w1);
    EXPECT_NE(w0, z0);
    EXPECT_NE(w1, z1);
  }
  const int n = 4096;
  double sxy = 0, sxx = 0, syy = 0;
  std::set<double> distinct;
  for (int e = 0; e < n; ++e) {
    double a, b, c, d;
    RandomStream{42, static_cast<std::uint32_t>(e), 7, 1}.normal_pair(0, &a, &b);
    RandomStream{42, static_cast<std::uint32_t>(e), 7, 2}.normal_pair(0, &c, &d);
    sxy += a * c;
    sxx += a * a;
    syy += c * c;
    distinct.insert(a);
  }
  const double corr = sxy / std::sqrt(sxx * syy);
  std::printf("[random] branch 1 vs branch 2 over %d envs: correlation %.3f\n", n, corr);
  EXPECT_LT(std::abs(corr), 5.0 / std::sqrt(double(n)));
  EXPECT_EQ(static_cast<int>(distinct.size()), n);
}

}  // namespace
