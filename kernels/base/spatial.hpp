// Spatial (6D) algebra in world axes about a reference point p (each kinematic tree's centre
// of mass, kernels/dynamics/kinematics.hpp), MuJoCo's ordering:
// a motion vector is [angular; linear], a force vector is [torque; force]
// (Featherstone, RBDA ch. 2; the ordering is MuJoCo's cdof/cvel convention).
#pragma once

#include "kernels/base/math3.hpp"

namespace stiffgrad::kern {

// Motion cross product r = a x m  (RBDA eq. 2.31): [w x mw; w x mv + v x mw].
template <class Real>
SG_HD SG_INLINE void cross_motion(Real r[6], const Real a[6], const Real m[6]) {
  r[0] = -a[2] * m[1] + a[1] * m[2];
  r[1] =  a[2] * m[0] - a[0] * m[2];
  r[2] = -a[1] * m[0] + a[0] * m[1];
  r[3] = -a[2] * m[4] + a[1] * m[5] - a[5] * m[1] + a[4] * m[2];
  r[4] =  a[2] * m[3] - a[0] * m[5] + a[5] * m[0] - a[3] * m[2];
  r[5] = -a[1] * m[3] + a[0] * m[4] - a[4] * m[0] + a[3] * m[1];
}

// Force cross product r = a x* f  (RBDA eq. 2.32): [w x ft + v x ff; w x ff].
template <class Real>
SG_HD SG_INLINE void cross_force(Real r[6], const Real a[6], const Real f[6]) {
  r[0] = -a[2] * f[1] + a[1] * f[2] - a[5] * f[4] + a[4] * f[5];
  r[1] =  a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5];
  r[2] = -a[1] * f[0] + a[0] * f[1] - a[4] * f[3] + a[3] * f[4];
  r[3] = -a[2] * f[4] + a[1] * f[5];
  r[4] =  a[2] * f[3] - a[0] * f[5];
  r[5] = -a[1] * f[3] + a[0] * f[4];
}

template <class Real> SG_HD SG_INLINE Real dot6(const Real a[6], const Real b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

// Spatial inertia about the reference point p, packed in 10 numbers (MuJoCo's cinert):
//   I[0..5] = rotational inertia about p (xx, yy, zz, xy, xz, yz),
//   I[6..8] = h = m c (first moment, c the COM relative to p), I[9] = m.
// Its 6x6 form is [[I_o, [h]x], [-[h]x... ]]; apply with inertia_mul.
// Build it from a body's mass, COM c relative to p and inertia about the COM in world axes
// (RBDA eq. 2.63):
// I_o = I_c + m ([c]x)^T [c]x.
template <class Real>
SG_HD SG_INLINE void inertia_from_com(Real I[10], Real mass, const Real c[3], const Real Ic[9]) {
  const Real cc = dot3(c, c);
  I[0] = Ic[0] + mass * (cc - c[0] * c[0]);
  I[1] = Ic[4] + mass * (cc - c[1] * c[1]);
  I[2] = Ic[8] + mass * (cc - c[2] * c[2]);
  I[3] = Ic[1] - mass * c[0] * c[1];
  I[4] = Ic[2] - mass * c[0] * c[2];
  I[5] = Ic[5] - mass * c[1] * c[2];
  I[6] = mass * c[0]; I[7] = mass * c[1]; I[8] = mass * c[2];
  I[9] = mass;
}

// f = I m for a motion m = [w; v] about p:
//   torque = I_o w + h x v,   force = m v - h x w.
template <class Real>
SG_HD SG_INLINE void inertia_mul(Real f[6], const Real I[10], const Real mv[6]) {
  const Real* w = mv;
  const Real* v = mv + 3;
  const Real* h = I + 6;
  f[0] = I[0] * w[0] + I[3] * w[1] + I[4] * w[2] + (h[1] * v[2] - h[2] * v[1]);
  f[1] = I[3] * w[0] + I[1] * w[1] + I[5] * w[2] + (h[2] * v[0] - h[0] * v[2]);
  f[2] = I[4] * w[0] + I[5] * w[1] + I[2] * w[2] + (h[0] * v[1] - h[1] * v[0]);
  f[3] = I[9] * v[0] - (h[1] * w[2] - h[2] * w[1]);
  f[4] = I[9] * v[1] - (h[2] * w[0] - h[0] * w[2]);
  f[5] = I[9] * v[2] - (h[0] * w[1] - h[1] * w[0]);
}

}  // namespace stiffgrad::kern
