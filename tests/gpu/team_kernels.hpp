// WarpTeam's sums on the device (tests/gpu/team_kernels.cu), for GpuTeam in test_gpu_team.cpp.
// Compiled only with the CUDA backend (SG_TEST_WITH_CUDA).
#pragma once

#include <vector>

namespace sgtest_gpu {

// Case c sums x[offsets[c] .. offsets[c + 1]) from init[c] (and 0.5 x from −init[c]) with one
// warp; out = (sum, half sum) per case. False on a CUDA error.
bool warp_team_sums(const std::vector<double>& x, const std::vector<int>& offsets, const std::vector<double>& init,
                    std::vector<double>& out);

}  // namespace sgtest_gpu
