// Teams: the lanes that share one environment's coupled work (issue 38: warp-per-environment
// solves). A kernel body written against a team runs unchanged
//   - on one thread (SerialTeam: the CPU backend, and every thread-per-environment CUDA kernel),
//   - on the 32 lanes of a warp (WarpTeam, backends/cuda: the lanes split the independent items
//     and the sums; the scalar parts run redundantly on every lane, on the same values).
// Every lane executes the same statements; the team's operations are collective:
//   for_each(n, f)   items 0 .. n−1, item i on lane i mod size(); f(i) must touch only item
//                    i's outputs. Results do not depend on the team: each item is computed by
//                    one lane with the same code.
//   sum<N>(n, acc, f) N running sums over items 0 .. n−1 in the team's fixed order (below);
//                    acc holds the initial values on entry and the totals on exit, on every lane.
//                    f(i, t) adds item i's terms into t[0 .. N−1] (`t[a] += ...`).
//   sync()           after writes that other lanes read (a __syncwarp on the GPU).
//   leader()         true on one lane: scalar results are written by it alone.
//   size()           the lanes (1: one thread). A body may pick its loop order by it, e.g. a
//                    gather per output on many lanes where one thread scatters, provided both
//                    add the same terms in the same order to every output (the same bits).
//
// The summation order is a function of a width W (a power of two, 1 .. 32; the solvers take it
// from the model view, ModelView::team_width, so that a replay sums as its forward did), never
// of the hardware: lane l's partial is
//   p_l = (l == 0 ? acc : 0) + Σ_{i ≡ l (mod W), ascending} f(i)
// and the partials are combined as a warp reduction does (offsets W/2, W/4, .., 1:
// p_l += p_{l+off} for l < off). With W = 1 that is the serial sum acc + f(0) + f(1) + ..., the
// order every kernel used before teams (CPU results are unchanged). A SerialTeam with W = 32
// evaluates the same tree in one thread, so a CPU emulation and a warp-per-environment kernel
// agree bit for bit (tests/test_team.cpp; tests/gpu/test_gpu_team.cpp).
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

// Largest team width: a warp.
constexpr int kMaxTeamWidth = 32;

// log2 of a power of two w <= 32.
SG_HD SG_INLINE int team_width_log2(int w) {
  int k = 0;
  while ((1 << k) < w) ++k;
  return k;
}

// The lane whose partial is the k-th leaf, left to right, of the combination tree of width
// 2^bits: the bit-reversed k (the tree's left subtree at offset off holds the lanes below off's
// multiples, as p_l += p_{l+off} pairs them).
SG_HD SG_INLINE int team_leaf_lane(int k, int bits) {
  int l = 0;
  for (int b = 0; b < bits; ++b) l |= ((k >> b) & 1) << (bits - 1 - b);
  return l;
}

// One thread. Its sums follow the width (1: serial; 32: a warp's order, evaluated
// leaf by leaf with a stack of log2(W) + 1 partials: the combination p_l += p_{l+off} is the
// binary tree whose leaves, left to right, are the lanes in bit-reversed order, and a sum's
// result does not depend on its operands' order).
struct SerialTeam {
  int width;  // W: 1 (serial) or a power of two <= 32

  SG_HD SG_INLINE int rank() const { return 0; }
  SG_HD SG_INLINE int size() const { return 1; }
  SG_HD SG_INLINE bool leader() const { return true; }
  SG_HD SG_INLINE void sync() const {}

  template <class F>
  SG_HD SG_INLINE void for_each(int n, F&& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }

  template <int N, class Real, class F>
  SG_HD SG_FORCE_INLINE void sum(int n, Real acc[N], F&& f) const {
    // one loop for every width (at W = 1: one leaf, the serial sum), so that f has a single call
    // site and the compiler inlines it, keeping the running partial p in registers
    const int w = width > 1 ? width : 1;
    const int bits = team_width_log2(w);
    Real stack[6][N];  // subtree sums awaiting their right sibling; depth <= log2(32) + 1
    int depth = 0;
    for (int k = 0; k < w; ++k) {
      const int l = team_leaf_lane(k, bits);
      Real p[N];
      for (int a = 0; a < N; ++a) p[a] = l == 0 ? acc[a] : Real(0);
      for (int i = l; i < n; i += w) f(i, p);
      for (int a = 0; a < N; ++a) stack[depth][a] = p[a];
      ++depth;
      // leaf k closes one subtree per trailing one bit of k: add each right sibling into its left
      for (int j = k; j & 1; j >>= 1, --depth)
        for (int a = 0; a < N; ++a) stack[depth - 2][a] = stack[depth - 2][a] + stack[depth - 1][a];
    }
    for (int a = 0; a < N; ++a) acc[a] = stack[0][a];
  }
};

}  // namespace stiffgrad::kern
