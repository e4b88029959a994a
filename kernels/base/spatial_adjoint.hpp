// Adjoints of kernels/base/spatial.hpp. With crm(a) = (a x .) and crf(a) = (a x* .):
// crm(a)^T = -crf(a), and crm(a) m = -crm(m) a.
#pragma once

#include "kernels/base/spatial.hpp"

namespace stiffgrad::kern {

// r = a x m (motion)
template <class Real>
SG_HD SG_INLINE void adj_cross_motion(const Real a[6], const Real m[6], Real adj_a[6], Real adj_m[6],
                                      const Real adj_r[6]) {
  Real t[6];
  cross_force(t, a, adj_r);  // crm(a)^T r = -crf(a) r
  for (int k = 0; k < 6; ++k) adj_m[k] -= t[k];
  cross_force(t, m, adj_r);  // d/da: -crm(m) => (-crm(m))^T r = crf(m) r
  for (int k = 0; k < 6; ++k) adj_a[k] += t[k];
}

// r = a x* f (force)
template <class Real>
SG_HD SG_INLINE void adj_cross_force(const Real a[6], const Real f[6], Real adj_a[6], Real adj_f[6],
                                     const Real adj_r[6]) {
  Real t[6];
  cross_motion(t, a, adj_r);  // crf(a)^T r = -crm(a) r
  for (int k = 0; k < 6; ++k) adj_f[k] -= t[k];
  cross_force(t, adj_r, f);   // r . (da x* f) = -da . (r x* f)
  for (int k = 0; k < 6; ++k) adj_a[k] -= t[k];
}

// f = I m, I packed as in inertia_mul
template <class Real>
SG_HD SG_INLINE void adj_inertia_mul(const Real I[10], const Real mv[6], Real adj_I[10], Real adj_m[6],
                                     const Real adj_f[6]) {
  // the 6x6 spatial inertia is symmetric: m_bar = I f_bar
  Real t[6];
  inertia_mul(t, I, adj_f);
  for (int k = 0; k < 6; ++k) adj_m[k] += t[k];
  const Real* w = mv;
  const Real* v = mv + 3;
  const Real* fa = adj_f;
  const Real* fl = adj_f + 3;
  adj_I[0] += fa[0] * w[0];
  adj_I[1] += fa[1] * w[1];
  adj_I[2] += fa[2] * w[2];
  adj_I[3] += fa[0] * w[1] + fa[1] * w[0];
  adj_I[4] += fa[0] * w[2] + fa[2] * w[0];
  adj_I[5] += fa[1] * w[2] + fa[2] * w[1];
  // torque += h x v  => h_bar += v x fa ;  force -= h x w  => h_bar += fl x w
  Real c1[3], c2[3];
  cross3(c1, v, fa);
  cross3(c2, fl, w);
  for (int k = 0; k < 3; ++k) adj_I[6 + k] += c1[k] + c2[k];
  adj_I[9] += fl[0] * v[0] + fl[1] * v[1] + fl[2] * v[2];
}

// I = inertia_from_com(mass, c, Ic): adjoints for c and Ic (mass is a model constant).
// Only the six entries of Ic the primal reads (0, 4, 8, 1, 2, 5) receive adjoints.
template <class Real>
SG_HD SG_INLINE void adj_inertia_from_com(Real mass, const Real c[3], Real adj_c[3], Real adj_Ic[9],
                                          const Real adj_I[10]) {
  const Real* a = adj_I;
  adj_Ic[0] += a[0]; adj_Ic[4] += a[1]; adj_Ic[8] += a[2];
  adj_Ic[1] += a[3]; adj_Ic[2] += a[4]; adj_Ic[5] += a[5];
  const Real two_m = Real(2) * mass;
  adj_c[0] += two_m * c[0] * (a[1] + a[2]) - mass * (c[1] * a[3] + c[2] * a[4] - a[6]);
  adj_c[1] += two_m * c[1] * (a[0] + a[2]) - mass * (c[0] * a[3] + c[2] * a[5] - a[7]);
  adj_c[2] += two_m * c[2] * (a[0] + a[1]) - mass * (c[0] * a[4] + c[1] * a[5] - a[8]);
}

}  // namespace stiffgrad::kern
