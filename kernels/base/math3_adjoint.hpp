// Adjoints of kernels/base/math3.hpp: adj_f(primal inputs..., adjoint inputs (+=), adjoint output).
#pragma once

#include "kernels/base/math3.hpp"

namespace stiffgrad::kern {

// r = a x b
template <class Real>
SG_HD SG_INLINE void adj_cross3(const Real a[3], const Real b[3], Real adj_a[3], Real adj_b[3],
                                const Real adj_r[3]) {
  Real t[3];
  cross3(t, b, adj_r);  // d(a x b)/da^T r = b x r
  adj_a[0] += t[0]; adj_a[1] += t[1]; adj_a[2] += t[2];
  cross3(t, adj_r, a);  // d(a x b)/db^T r = r x a
  adj_b[0] += t[0]; adj_b[1] += t[1]; adj_b[2] += t[2];
}

// r = M a (M row-major 3x3)
template <class Real>
SG_HD SG_INLINE void adj_mat_vec3(const Real M[9], const Real a[3], Real adj_M[9], Real adj_a[3],
                                  const Real adj_r[3]) {
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      adj_M[3 * i + k] += adj_r[i] * a[k];
      adj_a[k] += M[3 * i + k] * adj_r[i];
    }
}

// In-place normalize4: q_in -> q_out; the same three branches as the primal.
template <class Real>
SG_HD SG_INLINE void adj_normalize4(const Real q_in[4], Real adj_q_in[4], const Real adj_q_out[4]) {
  const Real n = sg_sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
  if (n < min_norm<Real>()) return;  // constant identity quaternion
  if (sg_abs(n - Real(1)) > min_norm<Real>()) {
    const Real inv = Real(1) / n;
    Real u[4], dot = Real(0);
    for (int k = 0; k < 4; ++k) { u[k] = q_in[k] * inv; dot += u[k] * adj_q_out[k]; }
    for (int k = 0; k < 4; ++k) adj_q_in[k] += (adj_q_out[k] - u[k] * dot) * inv;
  } else {
    for (int k = 0; k < 4; ++k) adj_q_in[k] += adj_q_out[k];
  }
}

// r = a * b: a_bar += r_bar * conj(b), b_bar += conj(a) * r_bar
template <class Real>
SG_HD SG_INLINE void adj_quat_mul(const Real a[4], const Real b[4], Real adj_a[4], Real adj_b[4],
                                  const Real adj_r[4]) {
  const Real bc[4] = {b[0], -b[1], -b[2], -b[3]};
  const Real ac[4] = {a[0], -a[1], -a[2], -a[3]};
  Real t[4];
  quat_mul(t, adj_r, bc);
  for (int k = 0; k < 4; ++k) adj_a[k] += t[k];
  quat_mul(t, ac, adj_r);
  for (int k = 0; k < 4; ++k) adj_b[k] += t[k];
}

// R = quat_to_mat(q) (the polynomial formula, valid for any q)
template <class Real>
SG_HD SG_INLINE void adj_quat_to_mat(const Real q[4], Real adj_q[4], const Real R_[9]) {
  const Real two = Real(2);
  adj_q[0] += two * q[0] * (R_[0] + R_[4] + R_[8]) +
              two * (-q[3] * R_[1] + q[2] * R_[2] + q[3] * R_[3] - q[1] * R_[5] - q[2] * R_[6] + q[1] * R_[7]);
  adj_q[1] += two * q[1] * (R_[0] - R_[4] - R_[8]) +
              two * (q[2] * R_[1] + q[3] * R_[2] + q[2] * R_[3] - q[0] * R_[5] + q[3] * R_[6] + q[0] * R_[7]);
  adj_q[2] += two * q[2] * (-R_[0] + R_[4] - R_[8]) +
              two * (q[1] * R_[1] + q[0] * R_[2] + q[1] * R_[3] + q[3] * R_[5] - q[0] * R_[6] + q[3] * R_[7]);
  adj_q[3] += two * q[3] * (-R_[0] - R_[4] + R_[8]) +
              two * (-q[0] * R_[1] + q[1] * R_[2] + q[0] * R_[3] + q[2] * R_[5] + q[1] * R_[6] + q[2] * R_[7]);
}

// r = rotate(a) by q (through quat_to_mat)
template <class Real>
SG_HD SG_INLINE void adj_quat_rotate(const Real q[4], const Real a[3], Real adj_q[4], Real adj_a[3],
                                     const Real adj_r[3]) {
  Real R[9], adj_R[9] = {};
  quat_to_mat(R, q);
  adj_mat_vec3(R, a, adj_R, adj_a, adj_r);
  adj_quat_to_mat(q, adj_q, adj_R);
}

// q = axis_angle_to_quat(axis, angle), axis constant
template <class Real>
SG_HD SG_INLINE Real adj_axis_angle_to_quat(const Real axis[3], Real angle, const Real adj_q[4]) {
  const Real s = sg_sin(angle * Real(0.5)), c = sg_cos(angle * Real(0.5));
  return Real(0.5) * (-s * adj_q[0] + c * (axis[0] * adj_q[1] + axis[1] * adj_q[2] + axis[2] * adj_q[3]));
}

// q = rotvec_to_quat(r)
template <class Real>
SG_HD SG_INLINE void adj_rotvec_to_quat(const Real r[3], Real adj_r[3], const Real adj_q[4]) {
  const Real t2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  Real s, dc, ds;  // sin(t/2)/t and the derivatives of c, s with respect to t^2
  if (t2 < Real(1e-8)) {
    s = Real(0.5) - t2 * (Real(1) / Real(48)) + t2 * t2 * (Real(1) / Real(3840));
    dc = -Real(1) / Real(8) + t2 * (Real(1) / Real(192));
    ds = -Real(1) / Real(48) + t2 * (Real(1) / Real(1920));
  } else {
    const Real t = sg_sqrt(t2);
    const Real sh = sg_sin(t * Real(0.5)), ch = sg_cos(t * Real(0.5));
    s = sh / t;
    dc = -sh / (Real(4) * t);
    ds = (Real(0.5) * ch * t - sh) / (t2 * Real(2) * t);
  }
  const Real rq = r[0] * adj_q[1] + r[1] * adj_q[2] + r[2] * adj_q[3];
  const Real g = Real(2) * (dc * adj_q[0] + ds * rq);
  for (int k = 0; k < 3; ++k) adj_r[k] += s * adj_q[k + 1] + g * r[k];
}

// q_out = quat_integrate(q_in, omega, h), h constant
template <class Real>
SG_HD SG_INLINE void adj_quat_integrate(const Real q_in[4], const Real omega[3], Real h,
                                        Real adj_q_in[4], Real adj_omega[3], const Real adj_q_out[4]) {
  const Real r[3] = {h * omega[0], h * omega[1], h * omega[2]};
  Real qrot[4], qn[4] = {q_in[0], q_in[1], q_in[2], q_in[3]};
  rotvec_to_quat(qrot, r);
  normalize4(qn);
  Real adj_qn[4] = {}, adj_qrot[4] = {}, adj_rv[3] = {};
  adj_quat_mul(qn, qrot, adj_qn, adj_qrot, adj_q_out);
  adj_normalize4(q_in, adj_q_in, adj_qn);
  adj_rotvec_to_quat(r, adj_rv, adj_qrot);
  for (int k = 0; k < 3; ++k) adj_omega[k] += h * adj_rv[k];
}

// r = quat_to_vel(q, 1) = axis * angle of q, angle wrapped to (-pi, pi]; the same two
// branches as the primal.
template <class Real>
SG_HD SG_INLINE void adj_quat_to_vel(const Real q[4], Real adj_q[4], const Real adj_r[3]) {
  const Real n2 = q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  const Real w2 = q[0] * q[0];
  const Real rv = q[1] * adj_r[0] + q[2] * adj_r[1] + q[3] * adj_r[2];  // vec . r_bar
  if (n2 < quat_to_vel_series_max<Real>() * w2) {
    // r = a g(t) v, a = 2 / w, t = |v|^2 / w^2, g = 1 - t/3 + t^2/5:
    // dr = a g dv + v (g da + a g' dt), da = -a dw / w, dt = 2 (v . dv) / w^2 - 2 t dw / w
    const Real t = n2 / w2;
    const Real a = Real(2) / q[0];
    const Real g = Real(1) - t * (Real(1) / Real(3)) + t * t * (Real(1) / Real(5));
    const Real dg = -Real(1) / Real(3) + t * (Real(2) / Real(5));
    const Real cv = Real(2) * rv * a * dg / w2;
    for (int k = 0; k < 3; ++k) adj_q[k + 1] += a * g * adj_r[k] + cv * q[k + 1];
    adj_q[0] -= rv * a * (g + Real(2) * t * dg) / q[0];
    return;
  }
  const Real n = sg_sqrt(n2);
  if (n < min_norm<Real>()) return;  // null quaternion (w = 0 too): no derivative
  Real speed = Real(2) * sg_atan2(n, q[0]);
  if (speed > pi<Real>()) speed -= Real(2) * pi<Real>();
  // r = vec * (speed / n)
  const Real f = speed / n;
  // d speed = 2 (w dn - n dw) / (w^2 + n^2); dn = vec . dvec / n
  const Real den = w2 + n * n;
  const Real dspeed_dn = Real(2) * q[0] / den, dspeed_dw = -Real(2) * n / den;
  const Real df_dn = (dspeed_dn * n - speed) / (n * n);
  for (int k = 0; k < 3; ++k) adj_q[k + 1] += f * adj_r[k] + rv * df_dn * q[k + 1] / n;
  adj_q[0] += rv / n * dspeed_dw;
}

// r = quat_sub(qa, qb) = quat_to_vel(conj(qb) * qa), qb constant
template <class Real>
SG_HD SG_INLINE void adj_quat_sub(const Real qa[4], const Real qb[4], Real adj_qa[4], const Real adj_r[3]) {
  const Real qneg[4] = {qb[0], -qb[1], -qb[2], -qb[3]};
  Real qdif[4], adj_qdif[4] = {}, adj_qneg[4] = {};
  quat_mul(qdif, qneg, qa);
  adj_quat_to_vel(qdif, adj_qdif, adj_r);
  adj_quat_mul(qneg, qa, adj_qneg, adj_qa, adj_qdif);
}

}  // namespace stiffgrad::kern
