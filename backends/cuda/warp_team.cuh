// The warp as a team (kernels/base/team.hpp): the 32 lanes of a warp share one environment's
// coupled work (1-D thread blocks whose size is a multiple of 32). Its sums follow width 32 bit for bit as SerialTeam{32} does:
// lane l's partial over items i ≡ l (mod 32), then __shfl_down_sync at offsets 16 .. 1 (lane l
// adds lane l + off, exactly p_l += p_{l+off}), and lane 0's total broadcast to every lane.
// Device only; the scalar parts of a team body run redundantly on every lane.
#pragma once

#include "kernels/base/team.hpp"

namespace stiffgrad::cuda_detail {

struct WarpTeam {
  static constexpr unsigned kAllLanes = 0xffffffffu;

  __device__ __forceinline__ int rank() const { return static_cast<int>(threadIdx.x) & 31; }
  __device__ __forceinline__ int size() const { return kern::kMaxTeamWidth; }
  __device__ __forceinline__ bool leader() const { return rank() == 0; }
  __device__ __forceinline__ void sync() const { __syncwarp(kAllLanes); }

  template <class F>
  __device__ __forceinline__ void for_each(int n, F&& f) const {
    for (int i = rank(); i < n; i += kern::kMaxTeamWidth) f(i);
  }

  template <int N, class Real, class F>
  __device__ __forceinline__ void sum(int n, Real acc[N], F&& f) const {
    Real p[N];
    for (int a = 0; a < N; ++a) p[a] = rank() == 0 ? acc[a] : Real(0);
    for (int i = rank(); i < n; i += kern::kMaxTeamWidth) f(i, p);
    for (int off = kern::kMaxTeamWidth / 2; off >= 1; off /= 2)
      for (int a = 0; a < N; ++a) p[a] = p[a] + __shfl_down_sync(kAllLanes, p[a], off);
    for (int a = 0; a < N; ++a) acc[a] = __shfl_sync(kAllLanes, p[a], 0);
  }
};

}  // namespace stiffgrad::cuda_detail
