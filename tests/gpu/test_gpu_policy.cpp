// A policy in the loop on the CUDA backend: Rollout::backward_policy (host hook, a copy each
// way per step) and backward_policy_backend (the hook's kernels on the simulator's stream, no
// host copies per step) give the CPU backend's gradient of the closed-loop linear-tanh policy of
// tests/closed_loop.hpp, on the cartpole and on the ant resting on the Impulse floor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "closed_loop.hpp"
#include "test_support.hpp"
#ifdef SG_TEST_WITH_CUDA
#include "policy_kernels.hpp"
#endif

namespace {

using namespace stiffgrad;
using sgtest::ClosedLoop;

ClosedLoop cartpole() {
  ClosedLoop c;
  c.model = load_mjcf(sgtest::data_dir() + "/models/dm_control/cartpole.xml");
  c.opt.nenv = 64;
  c.opt.substeps = 2;
  c.T = 20;
  for (int e = 0; e < c.opt.nenv; ++e) {
    c.q0.insert(c.q0.end(), {0.01 * e, 3.0 + 0.005 * e});
    c.v0.insert(c.v0.end(), {0.0, 0.01 * e});
  }
  c.cq = {0.3, 1.0};
  c.cv = {0.1, -0.2};
  return c;
}

ClosedLoop ant() {
  ClosedLoop c;
  auto m = std::make_shared<Model>(*load_mjcf(sgtest::data_dir() + "/models/gymnasium/ant.xml"));
  m->opt.timestep = 0.005;
  c.model = m;
  c.opt.nenv = 32;
  c.opt.substeps = 4;
  c.opt.contact_model = ContactModel::Impulse;
  c.T = 6;
  for (int e = 0; e < c.opt.nenv; ++e) {
    std::vector<double> q(m->qpos0.begin(), m->qpos0.end());
    q[2] = 0.26 + 0.001 * e;
    c.q0.insert(c.q0.end(), q.begin(), q.end());
    for (int k = 0; k < m->nv; ++k) c.v0.push_back(0.01 * k);
  }
  c.cq.assign(m->nq, 0.1);
  c.cv.assign(m->nv, -0.05);
  return c;
}

std::vector<double> random_theta(const ClosedLoop& c) {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> n(0.0, 0.3);
  std::vector<double> theta(c.nparam());
  for (double& x : theta) x = n(rng);
  return theta;
}

double rel(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0, norm = 1e-300;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(a[i] - b[i]));
    norm = std::max(norm, std::abs(b[i]));
  }
  return err / norm;
}

#ifdef SG_TEST_WITH_CUDA
// The closed loop with the policy on the device: act() from the backend state, step_backend_ctrl,
// then backward_policy_backend with DevicePolicy::vjp as the hook.
std::vector<double> device_gradient(const ClosedLoop& c, const std::vector<double>& theta, bool* replay) {
  const int nq = c.model->nq, nv = c.model->nv, N = c.opt.nenv, T = c.T;
  SimulatorOptions o = c.opt;
  o.backend = Backend::Cuda;
  Simulator sim(c.model, o);
  sim.set_state(c.q0.data(), c.v0.data());
  Rollout ro(sim, T);
  sgtest_gpu::DevicePolicy pol(nq, nv, c.model->nu, N, T, theta);
  ro.begin();
  for (int t = 0; t < T; ++t) {
    pol.act(t, sim.qpos_backend(), sim.qvel_backend(), sim.cuda_stream());
    ro.step_backend_ctrl(pol.ctrl());
  }
  std::vector<double> dq((T + 1) * N * nq, 0.0), dv((T + 1) * N * nv, 0.0);
  for (int t = 1; t <= T; ++t)
    for (int e = 0; e < N; ++e) {
      for (int k = 0; k < nq; ++k) dq[(t * N + e) * nq + k] = c.cq[k];
      for (int k = 0; k < nv; ++k) dv[(t * N + e) * nv + k] = c.cv[k];
    }
  ro.backward_policy_backend(dq.data(), dv.data(), [&](int t, const void* ac, void* aq, void* av, void* stream) {
    pol.vjp(t, ac, aq, av, stream);
  });
  *replay = ro.replay_bitwise();
  return pol.gradient();
}
#endif

void check_model(ClosedLoop c, double bound) {
  const std::vector<double> theta = random_theta(c);
  std::vector<double> g_cpu, g_cuda_host;
  c.run(theta, &g_cpu);
  c.opt.backend = Backend::Cuda;
  bool replay = false;
  c.run(theta, &g_cuda_host, &replay);
  EXPECT_TRUE(replay);
  const double e_host = rel(g_cuda_host, g_cpu);
  EXPECT_LT(e_host, bound) << c.model->name << ": host hook on CUDA";
#ifdef SG_TEST_WITH_CUDA
  bool replay_dev = false;
  const std::vector<double> g_dev = device_gradient(c, theta, &replay_dev);
  EXPECT_TRUE(replay_dev);
  const double e_dev = rel(g_dev, g_cpu);
  EXPECT_LT(e_dev, bound) << c.model->name << ": device hook";
  std::printf("[ gpu policy-in-loop ] %s (%d envs, T %d): CUDA vs CPU gradient, host hook %.2e, device hook %.2e\n",
              c.model->name.c_str(), c.opt.nenv, c.T, e_host, e_dev);
#else
  ADD_FAILURE() << "a CUDA device is present but this test binary was built without the device hook";
#endif
}

TEST(GpuPolicyRollout, CartpoleGradientMatchesTheCpuBackend) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA Rollout runs on a device machine (scripts/device_check.sh)";
  check_model(cartpole(), 1e-9);
}

TEST(GpuPolicyRollout, AntOnImpulseFloorGradientMatchesTheCpuBackend) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA Rollout runs on a device machine (scripts/device_check.sh)";
  check_model(ant(), 1e-8);
}

}  // namespace
