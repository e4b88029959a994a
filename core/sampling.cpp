#include "stiffgrad/sampling.hpp"

#include <algorithm>
#include <cmath>

namespace stiffgrad {

namespace {

constexpr double kPi = 3.14159265358979323846;

void normalize_quat(double* q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int k = 0; k < 4; ++k) q[k] /= n;
}

// Four normal deviates normalized are uniform on the unit 3-sphere, i.e. uniform on SO(3).
void uniform_quat(std::mt19937_64& rng, double* q) {
  std::normal_distribution<double> n01(0.0, 1.0);
  double n2 = 0.0;
  do {
    n2 = 0.0;
    for (int k = 0; k < 4; ++k) {
      q[k] = n01(rng);
      n2 += q[k] * q[k];
    }
  } while (n2 < 1e-12);
  normalize_quat(q);
}

// A rotation by an angle U(0, max_angle) about a uniformly random axis.
void bounded_quat(std::mt19937_64& rng, double max_angle, double* q) {
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  double axis[4];
  uniform_quat(rng, axis);  // its vector part gives a uniform direction once normalized
  double n = std::sqrt(axis[1] * axis[1] + axis[2] * axis[2] + axis[3] * axis[3]);
  if (n < 1e-12) axis[1] = n = 1.0;
  const double half = 0.5 * std::min(max_angle, kPi) * u01(rng);
  q[0] = std::cos(half);
  for (int k = 1; k < 4; ++k) q[k] = std::sin(half) * axis[k] / n;
}

// One joint's qpos coordinates (at q, starting from qpos0) spread over its range.
void sample_joint(const Model& m, int j, std::mt19937_64& rng, double* q) {
  std::uniform_real_distribution<double> near(-0.1, 0.1);
  const bool limited = m.jnt_limited[j] != 0;
  const double lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
  switch (m.jnt_type[j]) {
    case JointType::Hinge:
    case JointType::Slide:
      q[0] = limited ? std::uniform_real_distribution<double>(lo, hi)(rng) : q[0] + near(rng);
      break;
    case JointType::Ball:
      if (limited) bounded_quat(rng, hi, q);
      else uniform_quat(rng, q);
      break;
    case JointType::Free:
      for (int k = 0; k < 3; ++k) q[k] += near(rng);
      uniform_quat(rng, q + 3);
      break;
  }
}

}  // namespace

void sample_states_near_qpos0(const Model& m, int nenv, std::mt19937_64& rng, double pos_scale,
                              double vel_scale, std::vector<double>* qpos, std::vector<double>* qvel) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  qpos->assign(static_cast<std::size_t>(nenv) * m.nq, 0.0);
  qvel->assign(static_cast<std::size_t>(nenv) * m.nv, 0.0);
  for (int e = 0; e < nenv; ++e) {
    double* q = qpos->data() + static_cast<std::size_t>(e) * m.nq;
    std::copy(m.qpos0.begin(), m.qpos0.end(), q);
    for (int j = 0; j < m.njnt; ++j) {
      double* qj = q + m.jnt_qposadr[j];
      double* quat = nullptr;
      switch (m.jnt_type[j]) {
        case JointType::Hinge:
        case JointType::Slide:
          qj[0] += pos_scale * u(rng);
          break;
        case JointType::Ball:
          quat = qj;
          break;
        case JointType::Free:
          for (int k = 0; k < 3; ++k) qj[k] += 0.5 * pos_scale * u(rng);
          quat = qj + 3;
          break;
      }
      if (quat) {
        for (int k = 0; k < 4; ++k) quat[k] += 0.5 * pos_scale * u(rng);
        normalize_quat(quat);
      }
    }
    double* v = qvel->data() + static_cast<std::size_t>(e) * m.nv;
    for (int i = 0; i < m.nv; ++i) v[i] = vel_scale * u(rng);
  }
}

void sample_controls(const Model& m, int nenv, std::mt19937_64& rng, double* ctrl) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int e = 0; e < nenv; ++e)
    for (int a = 0; a < m.nu; ++a) {
      double lo = -1.0, hi = 1.0;
      if (m.actuator_ctrllimited[a]) {
        lo = m.actuator_ctrlrange[2 * a];
        hi = m.actuator_ctrlrange[2 * a + 1];
      }
      ctrl[static_cast<std::size_t>(e) * m.nu + a] = lo + (hi - lo) * u(rng);
    }
}

std::vector<StateRow> sample_states_in_range(const Model& m, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> small(-0.1, 0.1);
  std::vector<StateRow> out(static_cast<std::size_t>(std::max(count, 0)));
  for (StateRow& s : out) {
    s.qpos = m.qpos0;
    for (int j = 0; j < m.njnt; ++j) sample_joint(m, j, rng, s.qpos.data() + m.jnt_qposadr[j]);
    s.qvel.resize(m.nv);
    for (double& v : s.qvel) v = small(rng);
    s.ctrl.resize(m.nu);
    sample_controls(m, 1, rng, s.ctrl.data());
  }
  return out;
}

}  // namespace stiffgrad
