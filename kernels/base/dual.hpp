// Forward-mode dual numbers: Dual<T, N> carries a value and N directional derivatives.
// Instantiating the templated kernels with Dual<double> gives exact Jacobian-vector products
// of the very code the simulator runs; the adjoint tests compare them with the hand-written
// adj_ kernels (dot-product test). Comparisons look at the value only, so every branch is
// taken exactly as in the primal.
#pragma once

#include <cmath>

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

template <class T, int N = 1>
struct Dual {
  T v{};
  T d[N]{};

  SG_HD constexpr Dual() = default;
  SG_HD constexpr Dual(T value) : v(value) {}  // NOLINT: implicit from a constant

  SG_HD Dual& operator+=(const Dual& o) { v += o.v; for (int k = 0; k < N; ++k) d[k] += o.d[k]; return *this; }
  SG_HD Dual& operator-=(const Dual& o) { v -= o.v; for (int k = 0; k < N; ++k) d[k] -= o.d[k]; return *this; }
  SG_HD Dual& operator*=(const Dual& o) {
    for (int k = 0; k < N; ++k) d[k] = d[k] * o.v + v * o.d[k];
    v *= o.v;
    return *this;
  }
  // value computed as v / o.v (not v * (1 / o.v)) so that the value part is bitwise the
  // primal's and every branch of a kernel is taken identically in both
  SG_HD Dual& operator/=(const Dual& o) {
    v = v / o.v;
    for (int k = 0; k < N; ++k) d[k] = (d[k] - v * o.d[k]) / o.v;
    return *this;
  }
  SG_HD explicit operator T() const { return v; }
};

template <class T, int N> SG_HD Dual<T, N> operator-(Dual<T, N> a) {
  a.v = -a.v;
  for (int k = 0; k < N; ++k) a.d[k] = -a.d[k];
  return a;
}
template <class T, int N> SG_HD Dual<T, N> operator+(Dual<T, N> a, const Dual<T, N>& b) { return a += b; }
template <class T, int N> SG_HD Dual<T, N> operator-(Dual<T, N> a, const Dual<T, N>& b) { return a -= b; }
template <class T, int N> SG_HD Dual<T, N> operator*(Dual<T, N> a, const Dual<T, N>& b) { return a *= b; }
template <class T, int N> SG_HD Dual<T, N> operator/(Dual<T, N> a, const Dual<T, N>& b) { return a /= b; }
template <class T, int N> SG_HD Dual<T, N> operator+(Dual<T, N> a, T b) { a.v += b; return a; }
template <class T, int N> SG_HD Dual<T, N> operator+(T b, Dual<T, N> a) { a.v += b; return a; }
template <class T, int N> SG_HD Dual<T, N> operator-(Dual<T, N> a, T b) { a.v -= b; return a; }
template <class T, int N> SG_HD Dual<T, N> operator-(T b, const Dual<T, N>& a) { return Dual<T, N>(b) - a; }
template <class T, int N> SG_HD Dual<T, N> operator*(Dual<T, N> a, T b) {
  a.v *= b;
  for (int k = 0; k < N; ++k) a.d[k] *= b;
  return a;
}
template <class T, int N> SG_HD Dual<T, N> operator*(T b, Dual<T, N> a) { return a * b; }
template <class T, int N> SG_HD Dual<T, N> operator/(Dual<T, N> a, T b) {
  a.v = a.v / b;
  for (int k = 0; k < N; ++k) a.d[k] = a.d[k] / b;
  return a;
}
template <class T, int N> SG_HD Dual<T, N> operator/(T b, const Dual<T, N>& a) { return Dual<T, N>(b) / a; }

#define SG_DUAL_COMPARE(op)                                                                   \
  template <class T, int N> SG_HD bool operator op(const Dual<T, N>& a, const Dual<T, N>& b) { \
    return a.v op b.v;                                                                         \
  }                                                                                            \
  template <class T, int N> SG_HD bool operator op(const Dual<T, N>& a, T b) { return a.v op b; } \
  template <class T, int N> SG_HD bool operator op(T a, const Dual<T, N>& b) { return a op b.v; }
SG_DUAL_COMPARE(<)
SG_DUAL_COMPARE(>)
SG_DUAL_COMPARE(<=)
SG_DUAL_COMPARE(>=)
SG_DUAL_COMPARE(==)
SG_DUAL_COMPARE(!=)
#undef SG_DUAL_COMPARE

template <class T, int N> struct is_dual_number<Dual<T, N>> { static constexpr bool value = true; };

// A count or id stored in a dual-number Data field (its value part).
template <class T, int N> SG_HD SG_INLINE int sg_int(const Dual<T, N>& a) { return static_cast<int>(a.v); }
template <class T, int N> SG_HD SG_INLINE double sg_double(const Dual<T, N>& a) { return sg_double(a.v); }

// Elementary functions, found by argument-dependent lookup from sg_sqrt & co.
template <class T, int N> SG_HD Dual<T, N> sqrt(const Dual<T, N>& a) {
  using std::sqrt;
  Dual<T, N> r(sqrt(a.v));
  const T g = T(0.5) / r.v;
  for (int k = 0; k < N; ++k) r.d[k] = g * a.d[k];
  return r;
}
template <class T, int N> SG_HD Dual<T, N> exp(const Dual<T, N>& a) {
  using std::exp;
  Dual<T, N> r(exp(a.v));
  for (int k = 0; k < N; ++k) r.d[k] = r.v * a.d[k];
  return r;
}
template <class T, int N> SG_HD Dual<T, N> sin(const Dual<T, N>& a) {
  using std::cos; using std::sin;
  Dual<T, N> r(sin(a.v));
  const T g = cos(a.v);
  for (int k = 0; k < N; ++k) r.d[k] = g * a.d[k];
  return r;
}
template <class T, int N> SG_HD Dual<T, N> cos(const Dual<T, N>& a) {
  using std::cos; using std::sin;
  Dual<T, N> r(cos(a.v));
  const T g = -sin(a.v);
  for (int k = 0; k < N; ++k) r.d[k] = g * a.d[k];
  return r;
}
// a^b; d(a^b) = b a^(b-1) da + a^b ln(a) db (the second term only where a > 0: the kernels
// raise non-negative bases, and their exponents are model constants)
template <class T, int N> SG_HD Dual<T, N> pow(const Dual<T, N>& a, const Dual<T, N>& b) {
  using std::log; using std::pow;
  Dual<T, N> r(pow(a.v, b.v));
  const T ga = b.v * pow(a.v, b.v - T(1));
  const T gb = a.v > T(0) ? r.v * log(a.v) : T(0);
  for (int k = 0; k < N; ++k) r.d[k] = ga * a.d[k] + gb * b.d[k];
  return r;
}
template <class T, int N> SG_HD Dual<T, N> atan2(const Dual<T, N>& y, const Dual<T, N>& x) {
  using std::atan2;
  Dual<T, N> r(atan2(y.v, x.v));
  const T inv = T(1) / (x.v * x.v + y.v * y.v);
  for (int k = 0; k < N; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) * inv;
  return r;
}

}  // namespace stiffgrad::kern
