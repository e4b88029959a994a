#include "stiffgrad/sampling.hpp"

#include <algorithm>
#include <cmath>

namespace stiffgrad {

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
        double n = 0.0;
        for (int k = 0; k < 4; ++k) {
          quat[k] += 0.5 * pos_scale * u(rng);
          n += quat[k] * quat[k];
        }
        n = std::sqrt(n);
        for (int k = 0; k < 4; ++k) quat[k] /= n;
      }
    }
    double* v = qvel->data() + static_cast<std::size_t>(e) * m.nv;
    for (int i = 0; i < m.nv; ++i) v[i] = vel_scale * u(rng);
  }
}

}  // namespace stiffgrad
