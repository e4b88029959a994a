// 3-vectors, 3x3 matrices (row-major) and quaternions (w x y z) on plain Real arrays.
// Conventions and edge cases follow MuJoCo's mju_* functions so that trajectories agree
// with MuJoCo to rounding (e.g. normalize leaves an almost-unit vector untouched).
#pragma once

#include "kernels/base/config.hpp"
#include "kernels/base/view.hpp"

namespace stiffgrad::kern {

template <class Real, class L> SG_HD SG_INLINE void load3(Real r[3], View<Real, L> v, int i) {
  r[0] = v[i]; r[1] = v[i + 1]; r[2] = v[i + 2];
}
template <class Real, class L> SG_HD SG_INLINE void store3(View<Real, L> v, int i, const Real a[3]) {
  v[i] = a[0]; v[i + 1] = a[1]; v[i + 2] = a[2];
}
template <class Real, class L> SG_HD SG_INLINE void load4(Real r[4], View<Real, L> v, int i) {
  r[0] = v[i]; r[1] = v[i + 1]; r[2] = v[i + 2]; r[3] = v[i + 3];
}
template <class Real, class L> SG_HD SG_INLINE void store4(View<Real, L> v, int i, const Real a[4]) {
  v[i] = a[0]; v[i + 1] = a[1]; v[i + 2] = a[2]; v[i + 3] = a[3];
}
template <class Real, class L> SG_HD SG_INLINE void load6(Real r[6], View<Real, L> v, int i) {
  for (int k = 0; k < 6; ++k) r[k] = v[i + k];
}
template <class Real, class L> SG_HD SG_INLINE void store6(View<Real, L> v, int i, const Real a[6]) {
  for (int k = 0; k < 6; ++k) v[i + k] = a[k];
}
template <class Real, class L> SG_HD SG_INLINE void load9(Real r[9], View<Real, L> v, int i) {
  for (int k = 0; k < 9; ++k) r[k] = v[i + k];
}
template <class Real, class L> SG_HD SG_INLINE void store9(View<Real, L> v, int i, const Real a[9]) {
  for (int k = 0; k < 9; ++k) v[i + k] = a[k];
}

template <class Real> SG_HD SG_INLINE void copy3(Real r[3], const Real a[3]) {
  r[0] = a[0]; r[1] = a[1]; r[2] = a[2];
}
template <class Real> SG_HD SG_INLINE void copy4(Real r[4], const Real a[4]) {
  r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; r[3] = a[3];
}
template <class Real> SG_HD SG_INLINE Real dot3(const Real a[3], const Real b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
// r = a x b (r may not alias a or b)
template <class Real> SG_HD SG_INLINE void cross3(Real r[3], const Real a[3], const Real b[3]) {
  r[0] = a[1] * b[2] - a[2] * b[1];
  r[1] = a[2] * b[0] - a[0] * b[2];
  r[2] = a[0] * b[1] - a[1] * b[0];
}
template <class Real> SG_HD SG_INLINE void add3(Real r[3], const Real a[3], const Real b[3]) {
  r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2];
}
template <class Real> SG_HD SG_INLINE void sub3(Real r[3], const Real a[3], const Real b[3]) {
  r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2];
}

// r = M a, M row-major 3x3
template <class Real> SG_HD SG_INLINE void mat_vec3(Real r[3], const Real M[9], const Real a[3]) {
  r[0] = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
  r[1] = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
  r[2] = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
}

// In-place normalization; returns the norm. Below min_norm the vector becomes (1, 0, 0).
template <class Real> SG_HD SG_INLINE Real normalize3(Real a[3]) {
  Real n = sg_sqrt(dot3(a, a));
  if (n < min_norm<Real>()) {
    a[0] = Real(1); a[1] = Real(0); a[2] = Real(0);
  } else {
    Real s = Real(1) / n;
    a[0] *= s; a[1] *= s; a[2] *= s;
  }
  return n;
}

// In-place quaternion normalization (MuJoCo semantics: a quaternion already unit to within
// min_norm is left bit-for-bit unchanged; a null quaternion becomes the identity).
template <class Real> SG_HD SG_INLINE Real normalize4(Real q[4]) {
  Real n = sg_sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n < min_norm<Real>()) {
    q[0] = Real(1); q[1] = Real(0); q[2] = Real(0); q[3] = Real(0);
  } else if (sg_abs(n - Real(1)) > min_norm<Real>()) {
    Real s = Real(1) / n;
    q[0] *= s; q[1] *= s; q[2] *= s; q[3] *= s;
  }
  return n;
}

// r = a * b (Hamilton product; r may alias a or b)
template <class Real> SG_HD SG_INLINE void quat_mul(Real r[4], const Real a[4], const Real b[4]) {
  Real t0 = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  Real t1 = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  Real t2 = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  Real t3 = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = t0; r[1] = t1; r[2] = t2; r[3] = t3;
}

// Rotation matrix (row-major) of a unit quaternion.
template <class Real> SG_HD SG_INLINE void quat_to_mat(Real R[9], const Real q[4]) {
  const Real q00 = q[0] * q[0], q01 = q[0] * q[1], q02 = q[0] * q[2], q03 = q[0] * q[3];
  const Real q11 = q[1] * q[1], q12 = q[1] * q[2], q13 = q[1] * q[3];
  const Real q22 = q[2] * q[2], q23 = q[2] * q[3], q33 = q[3] * q[3];
  R[0] = q00 + q11 - q22 - q33;
  R[4] = q00 - q11 + q22 - q33;
  R[8] = q00 - q11 - q22 + q33;
  R[1] = Real(2) * (q12 - q03);
  R[2] = Real(2) * (q13 + q02);
  R[3] = Real(2) * (q12 + q03);
  R[5] = Real(2) * (q23 - q01);
  R[6] = Real(2) * (q13 - q02);
  R[7] = Real(2) * (q23 + q01);
}

// r = rotate(a) by unit quaternion q.
template <class Real> SG_HD SG_INLINE void quat_rotate(Real r[3], const Real q[4], const Real a[3]) {
  Real R[9];
  quat_to_mat(R, q);
  mat_vec3(r, R, a);
}

// Quaternion of a rotation by `angle` about the unit `axis`. (No shortcut at angle 0: the
// general formula gives the identity there too, and stays differentiable.)
template <class Real>
SG_HD SG_INLINE void axis_angle_to_quat(Real q[4], const Real axis[3], Real angle) {
  const Real s = sg_sin(angle * Real(0.5));
  q[0] = sg_cos(angle * Real(0.5));
  q[1] = axis[0] * s; q[2] = axis[1] * s; q[3] = axis[2] * s;
}

// exp of the pure quaternion (0, r/2), r = h omega: (cos(|r|/2), sinc-scaled r). Written in
// |r|^2 with a Taylor branch near zero so that it is smooth (and dual numbers stay finite) at
// r = 0, where the axis-angle form has no derivative. Equal to MuJoCo's axis-angle form to
// rounding.
template <class Real> SG_HD SG_INLINE void rotvec_to_quat(Real q[4], const Real r[3]) {
  const Real t2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  Real c, s;  // cos(t/2), sin(t/2)/t
  if (t2 < Real(1e-8)) {
    c = Real(1) - t2 * (Real(1) / Real(8)) + t2 * t2 * (Real(1) / Real(384));
    s = Real(0.5) - t2 * (Real(1) / Real(48)) + t2 * t2 * (Real(1) / Real(3840));
  } else {
    const Real t = sg_sqrt(t2);
    c = sg_cos(t * Real(0.5));
    s = sg_sin(t * Real(0.5)) / t;
  }
  q[0] = c; q[1] = r[0] * s; q[2] = r[1] * s; q[3] = r[2] * s;
}

// Below this ratio t = |vec(q)|^2 / w^2, quat_to_vel uses its series branch: the first
// omitted term, t^3 / 7 < 1.5e-19, is below double rounding (and float's).
template <class Real> SG_HD SG_INLINE constexpr Real quat_to_vel_series_max() { return Real(1e-6); }

// Rotation vector (axis * angle, angle wrapped to (-pi, pi]) of a quaternion q = (w, v),
// divided by dt: r = 2 atan2(|v|, w) v / |v|, minus 2 pi v / |v| where the angle exceeds pi.
// For w != 0 both cases are r = 2 atan(|v| / w) / |v| * v = (2 / w) g(t) v with
// g(t) = atan(sqrt t) / sqrt t = 1 - t/3 + t^2/5 - ..., t = |v|^2 / w^2: the singularity at
// v = 0 (the rest orientation of a spring, where |v| = sqrt(0) has no derivative and dual
// numbers turn NaN) is removable. Near it the series, written in |v|^2 so that no square root
// is taken, gives value and derivative exact to rounding; elsewhere the atan2 form is MuJoCo's
// mju_quat2Vel, kept as is for bit-for-bit parity.
template <class Real> SG_HD SG_INLINE void quat_to_vel(Real r[3], const Real q[4], Real dt) {
  const Real n2 = q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  const Real w2 = q[0] * q[0];
  if (n2 < quat_to_vel_series_max<Real>() * w2) {
    const Real t = n2 / w2;
    const Real g = Real(1) - t * (Real(1) / Real(3)) + t * t * (Real(1) / Real(5));
    const Real f = Real(2) * g / q[0] / dt;
    r[0] = q[1] * f; r[1] = q[2] * f; r[2] = q[3] * f;
    return;
  }
  Real axis[3] = {q[1], q[2], q[3]};
  Real sin_half = normalize3(axis);
  Real speed = Real(2) * sg_atan2(sin_half, q[0]);
  if (speed > pi<Real>()) speed -= Real(2) * pi<Real>();
  speed = speed / dt;
  r[0] = axis[0] * speed; r[1] = axis[1] * speed; r[2] = axis[2] * speed;
}

// Rotation vector taking qb to qa, in qb's local frame: vel(qb^-1 * qa).
template <class Real> SG_HD SG_INLINE void quat_sub(Real r[3], const Real qa[4], const Real qb[4]) {
  Real qneg[4] = {qb[0], -qb[1], -qb[2], -qb[3]};
  Real qdif[4];
  quat_mul(qdif, qneg, qa);
  quat_to_vel(r, qdif, Real(1));
}

// MuJoCo's quaternion integration: q <- normalize(q) * exp(h * omega / 2), omega in the
// local frame. The result is not renormalized (as in MuJoCo).
template <class Real> SG_HD SG_INLINE void quat_integrate(Real q[4], const Real omega[3], Real h) {
  const Real r[3] = {h * omega[0], h * omega[1], h * omega[2]};
  Real qrot[4];
  rotvec_to_quat(qrot, r);
  normalize4(q);
  quat_mul(q, q, qrot);
}

}  // namespace stiffgrad::kern
