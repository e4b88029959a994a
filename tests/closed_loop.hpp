// A closed-loop rollout for the policy-in-the-loop tests (tests/test_policy_rollout.cpp,
// tests/gpu/test_gpu_policy.cpp): a linear-tanh state-feedback policy, its loss and its
// gradient by Rollout::backward_policy or backward_policy_backend, header-only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"

namespace sgtest {

using namespace stiffgrad;

// A closed-loop rollout: ctrl_t = tanh(K [qpos_t; qvel_t] + b) (K: nu x (nq + nv)), loss
// L = Σ_t c_q·qpos_{t+1} + c_v·qvel_{t+1} + ½ Σ_t |ctrl_t|². Returns L and, when grad is given,
// dL/d(K, b) from backward_policy.
struct ClosedLoop {
  std::shared_ptr<const Model> model;
  SimulatorOptions opt;
  int T;
  std::vector<double> q0, v0, cq, cv;  // start (nenv x ...), loss weights (nq, nv)
  mutable int contact_steps = 0;       // steps of the last run() in which some environment touched
  bool hook_in_backend = false;        // backward_policy_backend (environment-minor backend arrays)

  int nx() const { return model->nq + model->nv; }
  int nparam() const { return model->nu * (nx() + 1); }

  double run(const std::vector<double>& theta, std::vector<double>* grad, bool* replay = nullptr) const {
    const int nq = model->nq, nv = model->nv, nu = model->nu, N = opt.nenv, n = nx();
    Simulator sim(model, opt);
    sim.set_state(q0.data(), v0.data());
    Rollout ro(sim, T);
    ro.begin();
    std::vector<double> Q((T + 1) * N * nq), V((T + 1) * N * nv), U(T * N * nu), pre(T * N * nu);
    sim.get_state(Q.data(), V.data());
    double L = 0;
    contact_steps = 0;
    for (int t = 0; t < T; ++t) {
      for (int e = 0; e < N; ++e)
        for (int i = 0; i < nu; ++i) {
          double z = theta[i * (n + 1) + n];
          for (int k = 0; k < nq; ++k) z += theta[i * (n + 1) + k] * Q[(t * N + e) * nq + k];
          for (int k = 0; k < nv; ++k) z += theta[i * (n + 1) + nq + k] * V[(t * N + e) * nv + k];
          pre[(t * N + e) * nu + i] = z;
          U[(t * N + e) * nu + i] = std::tanh(z);
          L += 0.5 * U[(t * N + e) * nu + i] * U[(t * N + e) * nu + i];
        }
      ro.step(U.data() + t * N * nu);
      const std::vector<double> stats = sim.contact_stats();
      for (int e = 0; e < N; ++e)
        if (stats[e * Simulator::kStepStats] > 0) { ++contact_steps; break; }
      sim.get_state(Q.data() + (t + 1) * N * nq, V.data() + (t + 1) * N * nv);
      for (int e = 0; e < N; ++e) {
        for (int k = 0; k < nq; ++k) L += cq[k] * Q[((t + 1) * N + e) * nq + k];
        for (int k = 0; k < nv; ++k) L += cv[k] * V[((t + 1) * N + e) * nv + k];
      }
    }
    if (!grad) return L;
    std::vector<double> dq((T + 1) * N * nq, 0.0), dv((T + 1) * N * nv, 0.0);
    for (int t = 1; t <= T; ++t)
      for (int e = 0; e < N; ++e) {
        for (int k = 0; k < nq; ++k) dq[(t * N + e) * nq + k] = cq[k];
        for (int k = 0; k < nv; ++k) dv[(t * N + e) * nv + k] = cv[k];
      }
    grad->assign(theta.size(), 0.0);
    // The policy's VJP at step t into adj_qpos / adj_qvel, whose layout is environment-major
    // (the host hook) or environment-minor (the backend hook, nenv = N).
    const auto policy_vjp = [&](int t, const double* adj_ctrl, double* adj_qpos, double* adj_qvel, bool env_minor) {
      const auto at = [&](int e, int i, int width) { return env_minor ? i * N + e : e * width + i; };
      for (int e = 0; e < N; ++e)
        for (int i = 0; i < nu; ++i) {
          const double u = U[(t * N + e) * nu + i];
          // dL/du: through the dynamics (adj_ctrl) and the direct ½u² term; then through tanh
          const double dz = (adj_ctrl[at(e, i, nu)] + u) * (1 - u * u);
          (*grad)[i * (n + 1) + n] += dz;
          for (int k = 0; k < nq; ++k) {
            (*grad)[i * (n + 1) + k] += dz * Q[(t * N + e) * nq + k];
            adj_qpos[at(e, k, nq)] += dz * theta[i * (n + 1) + k];
          }
          for (int k = 0; k < nv; ++k) {
            (*grad)[i * (n + 1) + nq + k] += dz * V[(t * N + e) * nv + k];
            adj_qvel[at(e, k, nv)] += dz * theta[i * (n + 1) + nq + k];
          }
        }
    };
    if (hook_in_backend) {
      // the backend's own arrays (nu x nenv, nq x nenv, nv x nenv), added into the running adjoint
      ro.backward_policy_backend(dq.data(), dv.data(), [&](int t, const void* ac, void* aq, void* av, void* stream) {
        EXPECT_EQ(stream, nullptr);
        policy_vjp(t, static_cast<const double*>(ac), static_cast<double*>(aq), static_cast<double*>(av), true);
      });
    } else {
      ro.backward_policy(dq.data(), dv.data(), [&](int t, const double* adj_ctrl, double* adj_qpos, double* adj_qvel) {
        policy_vjp(t, adj_ctrl, adj_qpos, adj_qvel, false);
      });
    }
    if (replay) *replay = ro.replay_bitwise();
    return L;
  }
};

}  // namespace sgtest
