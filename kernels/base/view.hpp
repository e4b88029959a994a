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

// The device layout's view packed to 12 bytes (4-byte aligned) instead of 16: a view passed by
// reference to an outlined device function, or held in a struct of views (the solver and Impulse
// workspaces), lives in local memory. Measured when kern::Data still held 73 of them (sm_90,
// double): the staged adjoint's finish stage 2440 -> 1776 B of stack and 68 -> 0 B of spills
// (docs/gpu.md). The pointer is then read as two 4-byte words where a view lives in memory.
template <class T>
struct __attribute__((packed, aligned(4))) View<T, Strided> {
  T* p = nullptr;
  Strided layout{};
  SG_HD SG_INLINE T& operator[](int i) const { return p[layout(i)]; }
  SG_HD SG_INLINE View at(int i) const { return View{p + layout(i), layout}; }
};
static_assert(sizeof(View<double, Strided>) == 12, "a packed device-layout view");

}  // namespace stiffgrad::kern
