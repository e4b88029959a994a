// CUDA Rollout against the CPU Rollout (label `gpu`): same kernels (kern::adj_control_step_env),
// gradients agree to rounding amplified along the rollout. Skips without a CUDA device.
//
// Bounds: the gradient of a short rollout (T = 10, S = 4) of humanoid.xml from moderate states
// is well-conditioned; FMA contraction and device sin/cos perturb it by rounding-sized amounts,
// so double agrees to 1e-9 relative to the gradient's scale (max(1, max |cpu|)), float to 1e-2
// (float epsilon 6e-8 amplified through 40 substeps forward and back; the CPU's own float vs
// double gradients differ by ~1e-3 on this case, see tests/test_adjoint_rollout.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

struct Grad {
  std::vector<double> q0, v0, u;
  bool replay_bitwise;
};

Grad gradient(const std::shared_ptr<const Model>& model, Backend backend, Precision precision) {
  const Model& M = *model;
  const int nenv = 130, T = 10;  // 130: a partial last block of 128
  SimulatorOptions opt;
  opt.nenv = nenv;
  opt.substeps = 4;
  opt.backend = backend;
  opt.precision = precision;
  Simulator sim(model, opt);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n01;
  std::vector<double> q(nenv * M.nq), v(nenv * M.nv), u(T * nenv * M.nu);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) q[e * M.nq + i] = M.qpos0[i];
    for (int j = 0; j < M.njnt; ++j)
      if (M.jnt_type[j] == JointType::Hinge) q[e * M.nq + M.jnt_qposadr[j]] += 0.1 * n01(rng);
  }
  for (double& x : v) x = 0.1 * n01(rng);
  for (double& x : u) x = 0.1 * n01(rng);
  std::vector<double> dlq((T + 1) * nenv * M.nq), dlv((T + 1) * nenv * M.nv);
  for (double& x : dlq) x = n01(rng);
  for (double& x : dlv) x = n01(rng);
  sim.set_state(q.data(), v.data());
  Rollout ro(sim, T);
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step(u.data() + t * nenv * M.nu);
  Grad g{std::vector<double>(nenv * M.nv), std::vector<double>(nenv * M.nv),
         std::vector<double>(T * nenv * M.nu), false};
  ro.backward(dlq.data(), dlv.data(), g.q0.data(), g.v0.data(), g.u.data());
  g.replay_bitwise = ro.replay_bitwise();
  return g;
}

double rel(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

TEST(GpuRollout, GradientsAgreeWithCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA Rollout runs on a device machine (scripts/device_check.sh)";
  const auto model = load_mjcf(sgtest::humanoid_xml());
  for (Precision p : {Precision::Double, Precision::Float}) {
    const Grad cpu = gradient(model, Backend::Cpu, p), gpu = gradient(model, Backend::Cuda, p);
    const double tol = p == Precision::Double ? 1e-9 : 1e-2;
    const double eq = rel(gpu.q0, cpu.q0), ev = rel(gpu.v0, cpu.v0), eu = rel(gpu.u, cpu.u);
    std::printf("[gpu rollout] %s: dL/dqpos0 %.2e dL/dqvel0 %.2e dL/dctrl %.2e\n",
                p == Precision::Double ? "double" : "float", eq, ev, eu);
    EXPECT_LE(eq, tol);
    EXPECT_LE(ev, tol);
    EXPECT_LE(eu, tol);
    EXPECT_TRUE(gpu.replay_bitwise) << "the device replay must reproduce the device's own forward pass";
  }
}

}  // namespace
