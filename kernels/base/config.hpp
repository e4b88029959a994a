// Compilation switches shared by every kernel header: one source for host and device.
#pragma once

#include <cmath>

// SG_OUTLINE: a function nvcc must keep as its own device function (not inlined). For the big,
// rarely co-resident pieces of a kernel (one narrow-phase routine, its dual-number pass) and the
// pipeline stages a kernel calls from several sites (the adjoint replays `substep` at three and
// recomputes primals inside each substep's adjoint): the caller's stack then holds the largest
// callee's frame instead of the sum of every inlined one, there is one copy of the code per
// kernel, and ptxas allocates registers per function (its time and memory grow faster than
// linearly with a function's size). Not for a stage that only one site calls (constraint_solve:
// outlined, the staged constraint kernel's stack grew from 384 B to 1584 B). With -fmad=false an
// inlining decision cannot change a result. Host compilers inline as they see fit.
// SG_FORCE_INLINE: inlined by the host compiler too; for the teams' collective operations, whose
// callers' arguments (a solver's flags) must reach the inlined body as constants.
#if defined(__CUDACC__)
#define SG_HD __host__ __device__
#define SG_INLINE __forceinline__
#define SG_FORCE_INLINE __forceinline__
#define SG_OUTLINE __noinline__
#else
#define SG_HD
#define SG_INLINE inline
#define SG_FORCE_INLINE inline __attribute__((always_inline))
#define SG_OUTLINE
#endif

namespace stiffgrad::kern {

// Scalar functions found by argument-dependent lookup, so that a dual-number Real
// (tests, adjoint issue) supplies its own overloads next to its type.
template <class Real> SG_HD SG_INLINE Real sg_sqrt(Real x) { using std::sqrt; return sqrt(x); }
template <class Real> SG_HD SG_INLINE Real sg_sin(Real x) { using std::sin; return sin(x); }
template <class Real> SG_HD SG_INLINE Real sg_cos(Real x) { using std::cos; return cos(x); }
template <class Real> SG_HD SG_INLINE Real sg_atan2(Real y, Real x) { using std::atan2; return atan2(y, x); }
template <class Real> SG_HD SG_INLINE Real sg_pow(Real x, Real y) { using std::pow; return pow(x, y); }
template <class Real> SG_HD SG_INLINE Real sg_log(Real x) { using std::log; return log(x); }
template <class Real> SG_HD SG_INLINE Real sg_exp(Real x) { using std::exp; return exp(x); }
template <class Real> SG_HD SG_INLINE Real sg_tanh(Real x) { using std::tanh; return tanh(x); }
// x is neither infinite nor NaN (x − x is NaN for both).
template <class Real> SG_HD SG_INLINE bool sg_isfinite(Real x) { return (x - x) == (x - x); }
// A count or id stored as a Real in Data (exact below 2^24), back to int; kernels/base/dual.hpp
// overloads it for dual numbers (their value part).
template <class Real> SG_HD SG_INLINE int sg_int(Real x) { return static_cast<int>(x); }
// The value as a double, without derivative parts (step-size control, which is not differentiated).
template <class Real> SG_HD SG_INLINE double sg_double(Real x) { return static_cast<double>(x); }
// A float stored as its bit pattern in an int array (mesh vertices in the model's int block).
SG_HD SG_INLINE float sg_float_from_bits(int bits) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(bits);
#else
  float x;
  __builtin_memcpy(&x, &bits, sizeof x);
  return x;
#endif
}
template <class Real> SG_HD SG_INLINE Real sg_abs(Real x) { return x < Real(0) ? -x : x; }
template <class Real> SG_HD SG_INLINE Real sg_clamp(Real x, Real lo, Real hi) {
  return x < lo ? lo : (hi < x ? hi : x);
}

// True for the dual-number scalar (kernels/base/dual.hpp specializes it): lets a kernel give forward
// mode an exact tangent where the primal iterates (the constraint solve).
template <class Real> struct is_dual_number { static constexpr bool value = false; };

// MuJoCo's mjMINVAL: below it a norm is treated as zero.
template <class Real> SG_HD SG_INLINE constexpr Real min_norm() { return Real(1e-15); }
template <class Real> SG_HD SG_INLINE constexpr Real pi() { return Real(3.14159265358979323846); }

}  // namespace stiffgrad::kern
