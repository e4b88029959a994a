// Stability estimate of explicitly integrated position servos (core/servo_stability.hpp).
#include "core/servo_stability.hpp"

#include <cmath>
#include <vector>

#include "stiffgrad/dynamics.hpp"

namespace stiffgrad {

namespace {

// Diagonal of M^-1 for a symmetric positive definite M (nv x nv, row-major), by a dense
// Cholesky factor M = L L^T and one solve per column: (M^-1)_jj = |L^-1 e_j|^2.
std::vector<double> inverse_diagonal(std::vector<double> M, int n) {
  for (int j = 0; j < n; ++j) {
    for (int k = 0; k < j; ++k) M[j * n + j] -= M[j * n + k] * M[j * n + k];
    if (!(M[j * n + j] > 0)) return {};  // not positive definite: no estimate
    M[j * n + j] = std::sqrt(M[j * n + j]);
    for (int i = j + 1; i < n; ++i) {
      for (int k = 0; k < j; ++k) M[i * n + j] -= M[i * n + k] * M[j * n + k];
      M[i * n + j] /= M[j * n + j];
    }
  }
  std::vector<double> diag(static_cast<std::size_t>(n), 0.0), y(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {  // forward substitution L y = e_j
      double s = i == j ? 1.0 : 0.0;
      for (int k = 0; k < i; ++k) s -= M[i * n + k] * y[static_cast<std::size_t>(k)];
      y[static_cast<std::size_t>(i)] = s / M[i * n + i];
    }
    double norm2 = 0;
    for (int i = 0; i < n; ++i) norm2 += y[static_cast<std::size_t>(i)] * y[static_cast<std::size_t>(i)];
    diag[static_cast<std::size_t>(j)] = norm2;
  }
  return diag;
}

}  // namespace

ServoStability explicit_servo_stability(const Model& m, double h) {
  ServoStability out;
  if (m.nu == 0 || m.nv == 0) return out;
  std::vector<double> stiffness(static_cast<std::size_t>(m.nv), 0.0), damping(stiffness.size(), 0.0);
  std::vector<int> joint_of_dof(stiffness.size(), -1);
  for (int u = 0; u < m.nu; ++u) {
    if (m.actuator_biastype[static_cast<std::size_t>(u)] != BiasType::Affine) continue;
    if (m.actuator_trntype[static_cast<std::size_t>(u)] != 0) continue;  // joint servos only
    const int j = m.actuator_trnid[static_cast<std::size_t>(u)];
    const int dof = m.jnt_dofadr[static_cast<std::size_t>(j)];
    const double g = m.actuator_gear[static_cast<std::size_t>(u)];
    stiffness[static_cast<std::size_t>(dof)] += -m.actuator_biasprm[3 * static_cast<std::size_t>(u) + 1] * g * g;
    damping[static_cast<std::size_t>(dof)] += -m.actuator_biasprm[3 * static_cast<std::size_t>(u) + 2] * g * g;
    joint_of_dof[static_cast<std::size_t>(dof)] = j;
  }
  const std::vector<double> zeros_v(static_cast<std::size_t>(m.nv), 0.0), zeros_u(static_cast<std::size_t>(m.nu), 0.0);
  const SmoothDynamics sd = smooth_dynamics(m, m.qpos0.data(), zeros_v.data(), zeros_u.data());
  const std::vector<double> minv = inverse_diagonal(sd.M, m.nv);
  if (minv.empty()) return out;
  for (int dof = 0; dof < m.nv; ++dof) {
    const std::size_t i = static_cast<std::size_t>(dof);
    if (stiffness[i] == 0 && damping[i] == 0) continue;
    ++out.actuated_dofs;
    const double a = h * damping[i] * minv[i], b = h * h * stiffness[i] * minv[i];
    // outside Jury's region also when a spring or damper is negative (a pushing servo)
    const double ratio = a < 0 || b < 0 ? HUGE_VAL : (2 * a + b) / 4;
    if (ratio >= 1) ++out.unstable_dofs;
    if (ratio > out.worst_ratio) {
      out.worst_ratio = ratio;
      out.worst_joint = m.jnt_name[static_cast<std::size_t>(joint_of_dof[i])];
    }
  }
  return out;
}

}  // namespace stiffgrad
