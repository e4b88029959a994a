// Strided views: one kernel body serves the CPU layout (each environment contiguous) and the
// device layout (environment-minor: element i of environment e at i * nenv + e, so that
// neighbouring threads read neighbouring addresses).
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

// Element i sits at p[i]: per-thread workspace on the CPU.
struct Contiguous {
  SG_HD SG_INLINE int operator()(int i) const { return i; }
};

// Element i sits at p[i * stride]: environment-minor batched arrays.
struct Strided {
  int stride;
  SG_HD SG_INLINE int operator()(int i) const { return i * stride; }
};

template <class T, class Layout>
struct View {
  T* p = nullptr;
  Layout layout{};
  SG_HD SG_INLINE T& operator[](int i) const { return p[layout(i)]; }
  // A view of the elements starting at i (same layout).
  SG_HD SG_INLINE View at(int i) const { return View{p + layout(i), layout}; }
};

}  // namespace stiffgrad::kern
