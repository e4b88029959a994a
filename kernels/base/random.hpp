// Counter-based random numbers for everything stochastic in a rollout (the bundle
// perturbations of BCG, docs/architecture.md "Bundles"): Philox4x32-10 (Salmon, Moraes, Dror, Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11). A draw is a pure function of a 64-bit
// key and a 128-bit counter, so any environment, step and branch gets its numbers without a
// shared generator state: a replay of the same (seed, env, step, branch) reproduces them bit for
// bit, on either backend and in any order of evaluation.
//
// Keying convention: key = seed (64 bits); counter = (env, step, branch, draw), draw counting
// the 4-word blocks one (env, step, branch) consumes. Uniforms take 52 bits from two words;
// normals come from pairs of uniforms by Box–Muller.
#pragma once

#include <cstdint>

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

struct Philox4 {
  std::uint32_t v[4];
};

// One Philox round's multiply: the high and low 32-bit halves of a 32 x 32-bit product.
SG_HD SG_INLINE void mul_hi_lo(std::uint32_t a, std::uint32_t b, std::uint32_t* hi, std::uint32_t* lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
  *hi = static_cast<std::uint32_t>(p >> 32);
  *lo = static_cast<std::uint32_t>(p);
}

// Philox4x32 with 10 rounds: the published multipliers 0xD2511F53, 0xCD9E8D57 and Weyl key
// increments 0x9E3779B9 (golden ratio), 0xBB67AE85 (sqrt(3) - 1).
SG_HD SG_INLINE Philox4 philox4x32_10(Philox4 c, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr std::uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kM0, c.v[0], &hi0, &lo0);
    mul_hi_lo(kM1, c.v[2], &hi1, &lo1);
    c = Philox4{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
    k0 += kW0;
    k1 += kW1;
  }
  return c;
}

// A double in the open interval (0, 1) from 52 random bits (hi: 32, lo: 20 of its bits):
// (n + 0.5) / 2^52, exact in a double's 53-bit significand, so never 0 or 1 (with 53 bits the
// largest, 1 - 2^-54, would round to 1).
SG_HD SG_INLINE double uniform_open01(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t n = (static_cast<std::uint64_t>(hi) << 20) | (static_cast<std::uint64_t>(lo) >> 12);
  return (static_cast<double>(n) + 0.5) * (1.0 / 4503599627370496.0);  // 2^-52
}

// The stream of one (seed, env, step, branch): block `draw` gives two standard normals.
struct RandomStream {
  std::uint64_t seed;
  std::uint32_t env, step, branch;

  SG_HD SG_INLINE Philox4 block(std::uint32_t draw) const {
    return philox4x32_10(Philox4{{env, step, branch, draw}}, static_cast<std::uint32_t>(seed),
                         static_cast<std::uint32_t>(seed >> 32));
  }
  // Box–Muller on the block's two uniforms: z0 = r cos(2 pi u2), z1 = r sin(2 pi u2),
  // r = sqrt(-2 ln u1), u1 in (0, 1) so r is finite.
  SG_HD SG_INLINE void normal_pair(std::uint32_t draw, double* z0, double* z1) const {
    const Philox4 b = block(draw);
    const double u1 = uniform_open01(b.v[0], b.v[1]), u2 = uniform_open01(b.v[2], b.v[3]);
    const double r = sg_sqrt(-2.0 * sg_log(u1));
    const double a = 6.283185307179586476925286766559 * u2;
    *z0 = r * sg_cos(a);
    *z1 = r * sg_sin(a);
  }
  // n standard normals into z (draws 0 .. ceil(n / 2) - 1).
  SG_HD SG_INLINE void normals(int n, double* z) const {
    for (int i = 0; i < n; i += 2) {
      double a, b;
      normal_pair(static_cast<std::uint32_t>(i / 2), &a, &b);
      z[i] = a;
      if (i + 1 < n) z[i + 1] = b;
    }
  }
};

}  // namespace stiffgrad::kern
