// WarpTeam (backends/cuda/warp_team.cuh) sums bit for bit as SerialTeam{32} (kernels/base/team.hpp)
// does on the host: the contract that lets a warp-per-environment kernel and its CPU emulation
// agree. Skips without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/base/team.hpp"
#include "stiffgrad/simulator.hpp"
#ifdef SG_TEST_WITH_CUDA
#include "tests/gpu/team_kernels.hpp"
#endif

namespace {

TEST(GpuTeam, WarpSumsEqualTheWidth32EmulationBitwise) {
#ifndef SG_TEST_WITH_CUDA
  GTEST_SKIP() << "built without the CUDA backend: WarpTeam is device code";
#else
  if (!stiffgrad::cuda_available()) GTEST_SKIP() << "no CUDA device: WarpTeam runs on a device machine (scripts/device_check.sh)";
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-6, 6);
  std::vector<double> x, init;
  std::vector<int> offsets{0};
  for (int n : {0, 1, 5, 31, 32, 33, 64, 130, 1000}) {
    for (int i = 0; i < n; ++i) x.push_back(mant(rng) * std::pow(10.0, expo(rng)));
    offsets.push_back(static_cast<int>(x.size()));
    init.push_back(mant(rng));
  }
  std::vector<double> out;
  ASSERT_TRUE(sgtest_gpu::warp_team_sums(x, offsets, init, out));
  for (std::size_t c = 0; c < init.size(); ++c) {
    const double* xc = x.data() + offsets[c];
    double acc[2] = {init[c], -init[c]};
    stiffgrad::kern::SerialTeam{32}.sum<2>(offsets[c + 1] - offsets[c], acc, [&](int i, double* t) {
      t[0] += xc[i];
      t[1] += 0.5 * xc[i];
    });
    EXPECT_EQ(std::memcmp(&acc[0], &out[2 * c], sizeof(double)), 0) << "case " << c << ": " << acc[0] << " vs " << out[2 * c];
    EXPECT_EQ(std::memcmp(&acc[1], &out[2 * c + 1], sizeof(double)), 0) << "case " << c;
  }
#endif
}

}  // namespace
