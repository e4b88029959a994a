// A team for the host emulation of the warp-per-environment solves (tests/test_staged_step.cpp,
// tests/test_staged_adjoint.cpp).
#pragma once

#include "kernels/base/team.hpp"

namespace sgtest {

// A team whose lanes take their items as a warp's would (item i on lane i mod 32), lane 31
// first and each lane's items last to first: a stage whose items read one another's outputs
// within one pass would not equal the fused step. It reports a warp's 32 lanes, so the solves
// take the loop orders they take on a warp (gathers per dof and per row of H where one thread
// scatters row by row), which must give the fused step's bits.
struct LastLaneFirstTeam : stiffgrad::kern::SerialTeam {
  static constexpr int kLanes = stiffgrad::kern::kMaxTeamWidth;
  int size() const { return kLanes; }
  template <class F>
  void for_each(int n, F&& f) const {
    for (int l = kLanes - 1; l >= 0; --l)
      for (int i = l + kLanes * ((n - 1 - l) / kLanes); i >= l; i -= kLanes)
        if (i < n) f(i);
  }
};

}  // namespace sgtest
