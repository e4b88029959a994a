// The Impulse contact model and Bundled Contact Gradients on the CUDA backend (label `gpu`;
// backends/cuda/rollout_cuda.cu) against the CPU backend. The Impulse model: humanoid.xml lying on its
// floor, gradients of a T = 10 rollout agree and replay bit for bit. Bundles: the same per-environment kernels (kern::bundle_start_env, bundle_step_env,
// adj_bundle_step_env), the same Philox draws, so the trigger pattern must be identical and the
// states and gradients agree to rounding amplified along the rollout; every branch replays bit
// for bit; never triggered equals the plain CUDA rollout bit for bit. Skips without a device.
// Bound: 10 x the CPU gradient's change under a 2-ulp start perturbation, measured beside each
// comparison, at least 1e-13 (docs/testing.md, "CPU/GPU agreement").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "contact_states.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

bool cuda_available() {
  try {
    SimulatorOptions o;
    o.backend = Backend::Cuda;
    Simulator sim(load_mjcf_string("<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>",
                                   "probe.xml"),
                  o);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

constexpr const char* kDropXml = R"(<mujoco><option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" friction="0.8 0.005 0.0001"/>
    <body name="box" pos="0 0 0.25"><freejoint/><geom type="box" size="0.1 0.08 0.05" mass="10"/></body>
  </worldbody></mujoco>)";

struct Result {
  std::vector<double> qT, vT, gq, gv;
  std::vector<int> bundles;
  bool replay = false;
};

using sggpu::rel;

// After T recorded steps: the final state, the gradient of a random loss on the final velocity
// (state and controls; the control gradient appended to gv, compared together), the replay flag
// and the bundles per environment.
Result finish(Simulator& sim, Rollout& ro, int T, std::mt19937_64& rng) {
  const Model& m = sim.model();
  const int nenv = sim.nenv(), nq = m.nq, nv = m.nv, nu = m.nu;
  std::normal_distribution<double> n01;
  Result r;
  r.qT.resize(static_cast<std::size_t>(nenv) * nq);
  r.vT.resize(static_cast<std::size_t>(nenv) * nv);
  sim.get_state(r.qT.data(), r.vT.data());
  std::vector<double> dv(static_cast<std::size_t>(T + 1) * nenv * nv, 0.0);
  for (int e = 0; e < nenv; ++e)
    for (int i = 0; i < nv; ++i) dv[(static_cast<std::size_t>(T) * nenv + e) * nv + i] = n01(rng);
  r.gq.resize(static_cast<std::size_t>(nenv) * nv);
  r.gv.resize(r.gq.size());
  std::vector<double> gu(static_cast<std::size_t>(T) * nenv * nu);
  ro.backward(nullptr, dv.data(), r.gq.data(), r.gv.data(), gu.data());
  r.gv.insert(r.gv.end(), gu.begin(), gu.end());
  r.replay = ro.replay_bitwise();
  r.bundles = ro.bundles_per_env();
  return r;
}

// 130 boxes (a partial last block), tilted and falling at different speeds, T = 30 steps.
Result run(Backend backend, const BundleOptions& b, double perturb_ulps = 0) {
  const auto m = load_mjcf_string(kDropXml, "drop.xml");
  const int nenv = 130, T = 30;
  SimulatorOptions o;
  o.nenv = nenv;
  o.substeps = 4;
  o.backend = backend;
  o.contact_model = ContactModel::Impulse;
  Simulator sim(m, o);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  std::vector<double> q, v;
  for (int e = 0; e < nenv; ++e) {
    const double a = 0.3 * n01(rng);
    const double qe[7] = {0, 0, 0.2, std::cos(a / 2), std::sin(a / 2) * 0.6, std::sin(a / 2) * 0.8, 0};
    q.insert(q.end(), qe, qe + 7);
    const double ve[6] = {0.3 * n01(rng), 0.3 * n01(rng), -1.0 - std::abs(n01(rng)), 0.2 * n01(rng), 0.2 * n01(rng), 0};
    v.insert(v.end(), ve, ve + 6);
  }
  if (perturb_ulps > 0)
    for (double& x : v) x *= 1 + perturb_ulps * std::numeric_limits<double>::epsilon() * (n01(rng) > 0 ? 1 : -1);
  sim.set_state(q.data(), v.data());
  Rollout ro(sim, T, b);
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step();
  return finish(sim, ro, T, rng);
}

BundleOptions bundles(double tau) {
  BundleOptions b;
  b.enabled = true;
  b.tau = tau;
  b.branches = 6;
  b.seed = 3;
  return b;
}

// humanoid.xml settled on its floor, 130 copies with velocity and control noise, the Impulse
// model, T = 10 steps of 4 substeps: final states and gradients (state and controls).
Result impulse_humanoid(Backend backend, double perturb_ulps = 0) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  const int nenv = 130, T = 10, nu = m->nu;
  static const sggpu::Settled lying = sggpu::settle(m, "", 150, Integrator::SemiImplicitEuler);
  sggpu::Batch b = sggpu::contact_batch(lying, nenv, T, 0.05, 0.02, 5);
  std::mt19937_64 rng(13);
  std::normal_distribution<double> n01;
  if (perturb_ulps > 0)
    for (double& x : b.qvel) x *= 1 + perturb_ulps * std::numeric_limits<double>::epsilon() * (n01(rng) > 0 ? 1 : -1);
  SimulatorOptions o;
  o.nenv = nenv;
  o.substeps = 4;
  o.backend = backend;
  o.contact_model = ContactModel::Impulse;
  Simulator sim(m, o);
  sim.set_state(b.qpos.data(), b.qvel.data());
  Rollout ro(sim, T);
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step(b.ctrl.data() + static_cast<std::size_t>(t) * nenv * nu);
  return finish(sim, ro, T, rng);
}

TEST(GpuImpulse, RolloutAgreesWithCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the CUDA Rollout runs on a device machine (scripts/device_check.sh)";
  const Result cpu = impulse_humanoid(Backend::Cpu), gpu = impulse_humanoid(Backend::Cuda);
  const Result cpu2 = impulse_humanoid(Backend::Cpu, 2);
  const double bound = std::max(1e-13, 10 * std::max({rel(cpu2.gq, cpu.gq), rel(cpu2.gv, cpu.gv), rel(cpu2.qT, cpu.qT)}));
  EXPECT_TRUE(gpu.replay);
  const double d = std::max({rel(gpu.qT, cpu.qT), rel(gpu.vT, cpu.vT), rel(gpu.gq, cpu.gq), rel(gpu.gv, cpu.gv)});
  std::printf("[gpu impulse] humanoid lying, 130 envs, T 10: CUDA vs CPU states and gradients (double) %.2e (bound %.1e "
              "from the CPU 2-ulp measurement)\n", d, bound);
  EXPECT_LE(d, bound);
}

TEST(GpuBundles, AgreeWithCpu) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bundles run on a device machine (scripts/device_check.sh)";
  const Result cpu = run(Backend::Cpu, bundles(100)), gpu = run(Backend::Cuda, bundles(100));
  const Result cpu2 = run(Backend::Cpu, bundles(100), 2);
  const double bound = std::max(1e-13, 10 * std::max({rel(cpu2.gq, cpu.gq), rel(cpu2.gv, cpu.gv), rel(cpu2.qT, cpu.qT)}));
  int started = 0;
  for (int c : cpu.bundles) started += c;
  EXPECT_GT(started, 0);
  EXPECT_EQ(gpu.bundles, cpu.bundles) << "the trigger pattern differs";
  EXPECT_TRUE(gpu.replay);
  const double d = std::max({rel(gpu.qT, cpu.qT), rel(gpu.vT, cpu.vT), rel(gpu.gq, cpu.gq), rel(gpu.gv, cpu.gv)});
  std::printf("[gpu bundles] %d bundles in 130 envs: CUDA vs CPU states and gradients (double) %.2e (bound %.1e from "
              "the CPU 2-ulp measurement)\n", started, d, bound);
  EXPECT_LE(d, bound);
}

TEST(GpuBundles, NeverTriggeredEqualsThePlainCudaRollout) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bundles run on a device machine (scripts/device_check.sh)";
  const Result plain = run(Backend::Cuda, BundleOptions{}), never = run(Backend::Cuda, bundles(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(plain.qT, never.qT);
  EXPECT_EQ(plain.gq, never.gq);
  EXPECT_EQ(plain.gv, never.gv);
}

TEST(GpuBundles, SmallerPoolIsRefused) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: CUDA bundles run on a device machine (scripts/device_check.sh)";
  SimulatorOptions o;
  o.nenv = 4;
  o.backend = Backend::Cuda;
  o.contact_model = ContactModel::Impulse;
  Simulator sim(load_mjcf_string(kDropXml, "drop.xml"), o);
  BundleOptions b = bundles(1);
  b.pool = 2;
  EXPECT_THROW(Rollout(sim, 4, b), std::invalid_argument);
}

}  // namespace
