// CUDA backend against the CPU backend (label `gpu`; run on a device machine by
// scripts/device_check.sh). Every test skips with a message where no CUDA device is present.
// Same kernel (kern::control_step_env), same IEEE operations; only the device libm differs, so
// states agree to calibrated rounding, not bitwise (docs/testing.md, "CPU/GPU agreement").
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "contact_states.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/simulator.hpp"
#include "test_support.hpp"

namespace {

using stiffgrad::Backend;
using stiffgrad::Model;
using stiffgrad::Precision;
using stiffgrad::Simulator;
using stiffgrad::SimulatorOptions;

#define SG_REQUIRE_CUDA()                                                                  \
  do {                                                                                     \
    if (!stiffgrad::cuda_available())                                                      \
      GTEST_SKIP() << "no CUDA device: this build "                                        \
                   << "has no CUDA backend or cudaGetDeviceCount found no device; the GPU " \
                   << "agreement tests run on a device machine (scripts/device_check.sh)";  \
  } while (0)

constexpr int kNenv = 256;
constexpr int kSteps = 50;
constexpr int kSubsteps = 4;
constexpr double kVelSigma = 0.5;  // initial joint velocities ~ N(0, 0.5^2)

// Tolerances: per environment max_i |a_i - b_i| / max(1, max |reference|) (scale over the batch),
// qpos and qvel; bounds on p50, p90, max = kSafety x GpuToleranceCalibration's CPU figures, rounded
// up to a 1-2-5 step. The G1 runs ImplicitDampingEuler. docs/testing.md, "CPU/GPU agreement".
struct Tolerance {
  double p50, p90, max;
};
constexpr double kSafety = 10;
constexpr Tolerance kHumanoidDouble{5e-13, 1e-12, 2e-11};
constexpr Tolerance kHumanoidFloat{2e-4, 1e-3, 1e-1};
constexpr Tolerance kG1Double{5e-14, 5e-14, 1e-13};
constexpr Tolerance kG1Float{2e-5, 2e-5, 1e-3};
// contact cases: kSafety x the CPU calibration (cold and warm-started solver), rounded up as above
// (docs/testing.md, "CPU/GPU agreement")
constexpr Tolerance kHumanoidContactDouble{5e-13, 1e-12, 2e-12};
constexpr Tolerance kHumanoidContactFloat{5e-4, 1e-3, 1e-1};
constexpr Tolerance kG1ContactDouble{5e-13, 5e-13, 2e-12};
constexpr Tolerance kG1ContactFloat{2e-4, 5e-4, 1e-1};
// RK4 and Tsit5 on the humanoid lying: Tsit5's double p90 and max bound a step-decision flip
// (seen on the H200), not rounding; the median stays at rounding (docs/testing.md, "CPU/GPU agreement").
constexpr Tolerance kHumanoidContactRk4Double = kHumanoidContactDouble;
constexpr Tolerance kHumanoidContactRk4Float{5e-4, 1e-3, 5e-1};
constexpr Tolerance kHumanoidContactTsit5Double{2e-12, 2e-5, 2e-5};
constexpr Tolerance kHumanoidContactTsit5Float{2e-3, 1e-1, 1};
// Contact cases (constraints on: contacts, limits, friction loss): kContactSteps control steps
// from a state in persistent contact (contact_states.hpp: humanoid.xml lying on its floor, the
// G1 settled at `home`), velocities + N(0, 0.05^2), controls + N(0, 0.02^2). Contact onsets
// and lift-offs amplify a rounding difference by orders of magnitude (chaotic events, not a
// backend defect): hence the short horizon and the settled start. Bounds from the same CPU
// calibration (GpuToleranceCalibration; figures in docs/testing.md, "CPU/GPU agreement").
constexpr int kContactSteps = 10;
constexpr int kStepCapBit = 4;  // Simulator::status(): an adaptive substep reached max_steps
struct ModelCase {
  const char* name;
  std::string path;
  Tolerance tol_double, tol_float;
  stiffgrad::Integrator integrator;
  bool contact = false;      // constraints on, settled start (see above); else the smooth step
  const char* key = "";      // contact: keyframe to settle from ("" : qpos0)
  int settle_steps = 0;      // contact: control steps of 4 substeps to settle
  bool cold = false;         // the solve started cold (the model's warmstart flag off; see above)
};

// gtest prints a parameter in test names and ctest listings: the model's name.
void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

constexpr auto kExplicit = stiffgrad::Integrator::SemiImplicitEuler;
constexpr auto kImplicit = stiffgrad::Integrator::ImplicitDampingEuler;

std::vector<ModelCase> model_cases() {
  const std::string g1 = sgtest::data_dir() + "/models/unitree_g1/";
  return {
      {"humanoid", sgtest::humanoid_xml(), kHumanoidDouble, kHumanoidFloat, kExplicit},
      {"g1_mujoco222", g1 + "g1_mjx_mujoco222.xml", kG1Double, kG1Float, kImplicit},
      {"g1_scene", g1 + "scene_mjx.xml", kG1Double, kG1Float, kImplicit},
      {"humanoid_contact", sgtest::humanoid_xml(), kHumanoidContactDouble, kHumanoidContactFloat, kExplicit, true,
       "", 150},
      {"g1_contact", g1 + "g1_mjx_mujoco222.xml", kG1ContactDouble, kG1ContactFloat, kImplicit, true, "home", 100},
      {"g1_contact_cold", g1 + "g1_mjx_mujoco222.xml", kG1ContactDouble, kG1ContactFloat, kImplicit, true, "home",
       100, /*cold=*/true},
      {"humanoid_contact_rk4", sgtest::humanoid_xml(), kHumanoidContactRk4Double, kHumanoidContactRk4Float,
       stiffgrad::Integrator::RK4, true, "", 150},
      {"humanoid_contact_tsit5", sgtest::humanoid_xml(), kHumanoidContactTsit5Double, kHumanoidContactTsit5Float,
       stiffgrad::Integrator::Tsit5, true, "", 150},
  };
}

// Initial states and per-step controls, environment-major, shared by every run of a test.
struct Inputs {
  std::vector<double> qpos;  // nenv x nq
  std::vector<double> qvel;  // nenv x nv
  std::vector<double> ctrl;  // steps x nenv x nu
};

// Hinge/slide joints uniformly within their range when limited (unlimited hinges in
// [-pi, pi], unlimited slides qpos0 +- 0.1), free-joint positions qpos0 +- 0.1 and random
// unit quaternions for free and ball joints; velocities N(0, kVelSigma^2). Controls are drawn
// afresh for every control step, within ctrlrange ([-1, 1] where unlimited):
//  - motors (no bias): uniform over ctrlrange;
//  - position servos (affine bias with a -kp * length term, e.g. the G1's): the target is the
//    initial joint position +- 10% of ctrlrange (clamped to it). Uniform targets over the
//    whole range saturate the G1's light wrists, whose explicit actuator damping then sits at
//    the semi-implicit Euler stability limit (h kv / I ~ 1.9 at h = 4 ms, kv = 2,
//    I ~ armature 0.00425); a few percent of such rollouts diverge on the CPU in double as
//    well, which would test the integrator's stability, not backend agreement.
Inputs random_inputs(const Model& m, int nenv, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  const double pi = 3.14159265358979323846;
  Inputs in;
  in.qpos.resize(static_cast<std::size_t>(nenv) * m.nq);
  in.qvel.resize(static_cast<std::size_t>(nenv) * m.nv);
  in.ctrl.resize(static_cast<std::size_t>(steps) * nenv * m.nu);
  auto random_quat = [&](double* q) {
    double n = 0;
    do {
      for (int k = 0; k < 4; ++k) q[k] = gauss(rng);
      n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    } while (n < 1e-6);
    for (int k = 0; k < 4; ++k) q[k] /= n;
  };
  for (int e = 0; e < nenv; ++e) {
    double* qpos = in.qpos.data() + static_cast<std::size_t>(e) * m.nq;
    std::copy(m.qpos0.begin(), m.qpos0.end(), qpos);
    for (int j = 0; j < m.njnt; ++j) {
      const int a = m.jnt_qposadr[j];
      const bool limited = m.jnt_limited[j] != 0;
      const double lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
      auto in_range = [&] { return lo + (hi - lo) * 0.5 * (unit(rng) + 1.0); };
      switch (m.jnt_type[j]) {
        case stiffgrad::JointType::Free:
          for (int c = 0; c < 3; ++c) qpos[a + c] += 0.1 * unit(rng);
          random_quat(qpos + a + 3);
          break;
        case stiffgrad::JointType::Ball:
          random_quat(qpos + a);
          break;
        case stiffgrad::JointType::Hinge:
          qpos[a] = limited ? in_range() : pi * unit(rng);
          break;
        case stiffgrad::JointType::Slide:
          qpos[a] = limited ? in_range() : qpos[a] + 0.1 * unit(rng);
          break;
      }
    }
    for (int i = 0; i < m.nv; ++i) in.qvel[static_cast<std::size_t>(e) * m.nv + i] = kVelSigma * gauss(rng);
  }
  for (int s = 0; s < steps; ++s)
    for (int e = 0; e < nenv; ++e)
      for (int u = 0; u < m.nu; ++u) {
        const bool limited = m.actuator_ctrllimited[u] != 0;
        const double lo = limited ? m.actuator_ctrlrange[2 * u] : -1.0;
        const double hi = limited ? m.actuator_ctrlrange[2 * u + 1] : 1.0;
        const double r = unit(rng);
        const bool servo = m.actuator_biastype[u] == stiffgrad::BiasType::Affine &&
                           m.actuator_biasprm[3 * u + 1] < 0.0;
        double c = lo + (hi - lo) * 0.5 * (r + 1.0);
        if (servo) {
          const double q = in.qpos[static_cast<std::size_t>(e) * m.nq +
                                   m.jnt_qposadr[m.actuator_trnid[u]]];
          c = std::clamp(q + 0.1 * (hi - lo) * r, lo, hi);
        }
        in.ctrl[(static_cast<std::size_t>(s) * nenv + e) * m.nu + u] = c;
      }
  return in;
}

// The inputs of a case: random_inputs for the smooth cases, the settled contact batch else.
int case_steps(const ModelCase& c) { return c.contact ? kContactSteps : kSteps; }
Inputs case_inputs(const ModelCase& c, const std::shared_ptr<const Model>& model, int steps, std::uint64_t seed) {
  if (!c.contact) return random_inputs(*model, kNenv, steps, seed);
  const sggpu::Settled st = sggpu::settle(model, c.key, c.settle_steps, c.integrator);
  const sggpu::Batch b = sggpu::contact_batch(st, kNenv, steps, 0.05, 0.02, seed);
  return Inputs{b.qpos, b.qvel, b.ctrl};
}

struct Result {
  std::vector<double> qpos, qvel;
  std::vector<int> status;
};

// `perturb_ulps` > 0 (calibration only): after every control step, every state component is
// multiplied by 1 +- perturb_ulps x epsilon of the precision, with a random sign.
Result run(const std::shared_ptr<const Model>& model, Backend backend, Precision precision,
           const Inputs& in, int nenv, int steps,
           stiffgrad::Integrator integrator = kExplicit, double perturb_ulps = 0, bool constraints = false) {
  SimulatorOptions opt;
  opt.backend = backend;
  opt.precision = precision;
  opt.nenv = nenv;
  opt.substeps = kSubsteps;
  opt.integrator = integrator;
  opt.constraints = constraints;
  Simulator sim(model, opt);
  sim.set_state(in.qpos.data(), in.qvel.data());
  const std::size_t per_step = static_cast<std::size_t>(nenv) * model->nu;
  Result r;
  r.qpos.resize(static_cast<std::size_t>(nenv) * model->nq);
  r.qvel.resize(static_cast<std::size_t>(nenv) * model->nv);
  const double eps = precision == Precision::Float ? std::numeric_limits<float>::epsilon()
                                                   : std::numeric_limits<double>::epsilon();
  std::mt19937_64 rng(3), rng_warm(4);
  const bool adaptive = integrator == stiffgrad::Integrator::Tsit5 || integrator == stiffgrad::Integrator::Dopri5 ||
                        integrator == stiffgrad::Integrator::Bosh3;
  for (int s = 0; s < steps; ++s) {
    sim.step(in.ctrl.data() + s * per_step);
    if (adaptive) {
      // each substep records at most max_steps accepted steps (the workspace holds that many): a
      // count beyond it is the warp-shared counter ptxas once made of rk_substep<float>'s
      const std::vector<double> stats = sim.contact_stats();
      int over = 0, first = -1;
      for (int e = 0; e < nenv; ++e)
        if (stats[static_cast<std::size_t>(e) * Simulator::kStepStats + 4] > double(kSubsteps) * opt.adaptive.max_steps) {
          ++over;
          if (first < 0) first = e;
        }
      EXPECT_EQ(over, 0) << over << " environments (the first: " << first << ") took more accepted integrator steps in "
                         << "step " << s << " than the workspace records";
    }
    if (perturb_ulps > 0) {
      // the whole state a step depends on: qpos, qvel and the solver's warm start (which
      // set_state zeroes: set it back, perturbed like the rest)
      std::vector<double> warm(r.qvel.size());
      sim.get_state(r.qpos.data(), r.qvel.data());
      sim.get_warmstart(warm.data());
      for (auto* v : {&r.qpos, &r.qvel})
        for (double& x : *v) x *= 1.0 + ((rng() & 1) ? perturb_ulps : -perturb_ulps) * eps;
      for (double& x : warm) x *= 1.0 + ((rng_warm() & 1) ? perturb_ulps : -perturb_ulps) * eps;
      const std::vector<int> status = sim.status();  // set_state clears it: keep failures
      sim.set_state(r.qpos.data(), r.qvel.data());
      sim.set_warmstart(warm.data());
      EXPECT_EQ(std::count_if(status.begin(), status.end(), [](int st) { return (st & ~kStepCapBit) == 0; }), nenv)
          << "perturbed run failed";
    }
  }
  sim.synchronize();
  sim.get_state(r.qpos.data(), r.qvel.data());
  r.status = sim.status();
  return r;
}

// Per-environment relative differences (see Tolerances) and their summary, with the worst
// entry for the failure message. `skip_env` is left out of scale and statistics.
struct Diff {
  double p50 = 0, p90 = 0, max = 0;
  int env = -1, index = -1;  // worst entry
  double a = 0, b = 0;
};

Diff rel_diff(const std::vector<double>& a, const std::vector<double>& b,
              const std::vector<double>& ref, int n, int skip_env = -1) {
  const int nenv = static_cast<int>(ref.size()) / n;
  double scale = 1.0;
  for (std::size_t k = 0; k < ref.size(); ++k)
    if (static_cast<int>(k) / n != skip_env) scale = std::max(scale, std::abs(ref[k]));
  Diff d;
  std::vector<double> per_env;
  double worst = -1;
  for (int e = 0; e < nenv; ++e) {
    if (e == skip_env) continue;
    double env_worst = 0;
    for (int i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(e) * n + i;
      const double diff = std::abs(a[k] - b[k]);
      const double err = std::isnan(diff) ? std::numeric_limits<double>::infinity() : diff;
      env_worst = std::max(env_worst, err);
      if (err > worst) {
        worst = err;
        d.env = e;
        d.index = i;
        d.a = a[k];
        d.b = b[k];
      }
    }
    per_env.push_back(env_worst / scale);
  }
  std::sort(per_env.begin(), per_env.end());
  const auto quantile = [&](double q) {
    return per_env[static_cast<std::size_t>(q * static_cast<double>(per_env.size() - 1) + 0.5)];
  };
  d.p50 = quantile(0.5);
  d.p90 = quantile(0.9);
  d.max = per_env.back();
  return d;
}

std::string describe(const char* what, const Diff& d) {
  std::ostringstream os;
  os.precision(3);
  os << what << " p50 " << d.p50 << " p90 " << d.p90 << " max " << d.max;
  os.precision(17);
  os << " (worst at env " << d.env << " index " << d.index << ": " << d.a << " vs " << d.b << ")";
  return os.str();
}

void expect_within(const Diff& d, const Tolerance& tol, const std::string& label, const char* what) {
  EXPECT_LE(d.p50, tol.p50) << label << ": " << describe(what, d);
  EXPECT_LE(d.p90, tol.p90) << label << ": " << describe(what, d);
  EXPECT_LE(d.max, tol.max) << label << ": " << describe(what, d);
}

void expect_close(const Model& m, const Result& a, const Result& b, const Result& ref,
                  const Tolerance& tol, const std::string& label, int skip_env = -1) {
  const Diff dq = rel_diff(a.qpos, b.qpos, ref.qpos, m.nq, skip_env);
  const Diff dv = rel_diff(a.qvel, b.qvel, ref.qvel, m.nv, skip_env);
  expect_within(dq, tol, label, "qpos");
  expect_within(dv, tol, label, "qvel");
  int non_finite = 0;
  for (std::size_t k = 0; k < a.qpos.size(); ++k)
    non_finite += static_cast<int>(k) / m.nq != skip_env && !std::isfinite(a.qpos[k]);
  for (std::size_t k = 0; k < a.qvel.size(); ++k)
    non_finite += static_cast<int>(k) / m.nv != skip_env && !std::isfinite(a.qvel[k]);
  EXPECT_EQ(non_finite, 0) << label << ": non-finite entries";
  std::cout << "[ info     ] " << label << ": " << describe("qpos", dq) << "; "
            << describe("qvel", dv) << "\n";
}

// Non-finite states or overflowed capacities fail; an adaptive integrator's step-cap flag
// (status bit 4) is a report about accuracy, the same on both backends, not a failure.
void expect_all_ok(const Result& r, const std::string& label) {
  const int failed = static_cast<int>(std::count_if(r.status.begin(), r.status.end(),
                                                    [](int s) { return (s & ~kStepCapBit) != 0; }));
  EXPECT_EQ(failed, 0) << label << ": " << failed << " environments have non-zero status";
}

std::shared_ptr<const Model> load_or_null(const std::string& path) {
  if (!sgtest::file_exists(path)) return nullptr;
  return stiffgrad::load_mjcf(path);
}

// The case's model: its file, with the warmstart flag cleared for a cold case.
std::shared_ptr<const Model> load_case(const ModelCase& c) {
  auto model = load_or_null(c.path);
  if (!model || !c.cold) return model;
  auto cold = std::make_shared<Model>(*model);
  cold->opt.warmstart_enabled = false;
  return cold;
}

class GpuAgreement : public ::testing::TestWithParam<ModelCase> {};

TEST_P(GpuAgreement, DoubleMatchesCpu) {
  SG_REQUIRE_CUDA();
  const auto model = load_case(GetParam());
  ASSERT_TRUE(model) << "model file not found: " << GetParam().path;
  const int steps = case_steps(GetParam());
  const bool con = GetParam().contact;
  const Inputs in = case_inputs(GetParam(), model, steps, 20240611);
  const auto integ = GetParam().integrator;
  const Result cpu = run(model, Backend::Cpu, Precision::Double, in, kNenv, steps, integ, 0, con);
  const Result gpu = run(model, Backend::Cuda, Precision::Double, in, kNenv, steps, integ, 0, con);
  expect_all_ok(cpu, "cpu double");
  expect_all_ok(gpu, "cuda double");
  expect_close(*model, gpu, cpu, cpu, GetParam().tol_double, "cuda double vs cpu double");
}

TEST_P(GpuAgreement, FloatMatchesCpu) {
  SG_REQUIRE_CUDA();
  const auto model = load_case(GetParam());
  ASSERT_TRUE(model) << "model file not found: " << GetParam().path;
  const int steps = case_steps(GetParam());
  const bool con = GetParam().contact;
  const Inputs in = case_inputs(GetParam(), model, steps, 20240612);
  const auto integ = GetParam().integrator;
  const Result cpu_d = run(model, Backend::Cpu, Precision::Double, in, kNenv, steps, integ, 0, con);
  const Result cpu_f = run(model, Backend::Cpu, Precision::Float, in, kNenv, steps, integ, 0, con);
  const Result gpu_f = run(model, Backend::Cuda, Precision::Float, in, kNenv, steps, integ, 0, con);
  expect_all_ok(cpu_d, "cpu double");
  expect_all_ok(cpu_f, "cpu float");
  expect_all_ok(gpu_f, "cuda float");
  expect_close(*model, gpu_f, cpu_f, cpu_f, GetParam().tol_float, "cuda float vs cpu float");
  expect_close(*model, gpu_f, cpu_d, cpu_d, GetParam().tol_float, "cuda float vs cpu double");
  expect_close(*model, cpu_f, cpu_d, cpu_d, GetParam().tol_float, "cpu float vs cpu double");
}

// Replay needs bit-for-bit reproducibility: two identical CUDA runs agree exactly.
TEST_P(GpuAgreement, CudaIsDeterministic) {
  SG_REQUIRE_CUDA();
  const auto model = load_case(GetParam());
  ASSERT_TRUE(model) << "model file not found: " << GetParam().path;
  const Inputs in = case_inputs(GetParam(), model, 10, 7);
  for (Precision p : {Precision::Float, Precision::Double}) {
    const Result a = run(model, Backend::Cuda, p, in, kNenv, 10, GetParam().integrator, 0, GetParam().contact);
    const Result b = run(model, Backend::Cuda, p, in, kNenv, 10, GetParam().integrator, 0, GetParam().contact);
    EXPECT_TRUE(a.qpos == b.qpos && a.qvel == b.qvel && a.status == b.status)
        << "two identical CUDA runs differ (" << (p == Precision::Float ? "float" : "double") << ")";
  }
}

// The CPU measurement behind the bounds (see Tolerances), run on every machine: it needs no
// device, and it fails when a kernel change makes the dynamics amplify rounding more than
// the bounds were calibrated for (then re-measure and update the constants).
class GpuToleranceCalibration : public ::testing::TestWithParam<ModelCase> {};

TEST_P(GpuToleranceCalibration, BoundsCoverTenTimesCpuMeasurement) {
  const auto model = load_case(GetParam());
  ASSERT_TRUE(model) << "model file not found: " << GetParam().path;
  const auto integ = GetParam().integrator;
  const Model& m = *model;
  auto covers = [&](const Result& a, const Result& ref, const Tolerance& tol, const std::string& what) {
    for (auto [x, y, n, field] : {std::tuple{&a.qpos, &ref.qpos, m.nq, "qpos"},
                                  std::tuple{&a.qvel, &ref.qvel, m.nv, "qvel"}}) {
      const Diff d = rel_diff(*x, *y, *y, n);
      std::printf("[ calib    ] %s %s %s: p50 %.2e p90 %.2e max %.2e\n", GetParam().name,
                  what.c_str(), field, d.p50, d.p90, d.max);
      EXPECT_LE(kSafety * d.p50, tol.p50) << what << " " << field;
      EXPECT_LE(kSafety * d.p90, tol.p90) << what << " " << field;
      EXPECT_LE(kSafety * d.max, tol.max) << what << " " << field;
    }
  };
  // the inputs of DoubleMatchesCpu and FloatMatchesCpu
  const int steps = case_steps(GetParam());
  const bool con = GetParam().contact;
  const Inputs in_d = case_inputs(GetParam(), model, steps, 20240611);
  const Result d = run(model, Backend::Cpu, Precision::Double, in_d, kNenv, steps, integ, 0, con);
  const Result d_pert = run(model, Backend::Cpu, Precision::Double, in_d, kNenv, steps, integ, 2, con);
  covers(d_pert, d, GetParam().tol_double, "double, 2-ulp perturbed");
  const Inputs in_f = case_inputs(GetParam(), model, steps, 20240612);
  const Result fd = run(model, Backend::Cpu, Precision::Double, in_f, kNenv, steps, integ, 0, con);
  const Result f = run(model, Backend::Cpu, Precision::Float, in_f, kNenv, steps, integ, 0, con);
  const Result f_pert = run(model, Backend::Cpu, Precision::Float, in_f, kNenv, steps, integ, 2, con);
  covers(f, fd, GetParam().tol_float, "float vs double");
  covers(f_pert, f, GetParam().tol_float, "float, 2-ulp perturbed");
}

INSTANTIATE_TEST_SUITE_P(Models, GpuToleranceCalibration, ::testing::ValuesIn(model_cases()),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(Models, GpuAgreement, ::testing::ValuesIn(model_cases()),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           return std::string(info.param.name);
                         });

// One environment set to NaN gets status 1 and stays frozen; every other environment is
// bit-for-bit what it is without the NaN environment (no cross-talk through the interleaved
// workspace) and agrees with the CPU (where the NaN environment also gets status 1).
// Exact equality with the CPU is not expected: see the header comment (device libm).
struct PrecisionCase {
  const char* name;
  Precision precision;
};
void PrintTo(const PrecisionCase& c, std::ostream* os) { *os << c.name; }

class GpuContainment : public ::testing::TestWithParam<PrecisionCase> {};

TEST_P(GpuContainment, NanEnvironmentIsContained) {
  SG_REQUIRE_CUDA();
  const auto model = load_or_null(sgtest::humanoid_xml());
  ASSERT_TRUE(model) << "model file not found: " << sgtest::humanoid_xml();
  const Precision p = GetParam().precision;
  const Tolerance tol = p == Precision::Float ? kHumanoidFloat : kHumanoidDouble;
  const int steps = 20;
  const int bad = 77;
  const Inputs clean = random_inputs(*model, kNenv, steps, 99);
  Inputs poisoned = clean;
  poisoned.qpos[static_cast<std::size_t>(bad) * model->nq + 0] =
      std::numeric_limits<double>::quiet_NaN();

  const Result gpu_clean = run(model, Backend::Cuda, p, clean, kNenv, steps);
  const Result gpu = run(model, Backend::Cuda, p, poisoned, kNenv, steps);
  const Result cpu = run(model, Backend::Cpu, p, poisoned, kNenv, steps);

  for (int e = 0; e < kNenv; ++e) {
    EXPECT_EQ(gpu.status[e], e == bad ? 1 : 0) << "cuda env " << e;
    EXPECT_EQ(cpu.status[e], e == bad ? 1 : 0) << "cpu env " << e;
  }
  // frozen at its (non-finite) initial state: qvel exactly as set, rounded to the precision
  for (int i = 0; i < model->nv; ++i) {
    const double set = poisoned.qvel[static_cast<std::size_t>(bad) * model->nv + i];
    const double expect = p == Precision::Float ? static_cast<double>(static_cast<float>(set)) : set;
    EXPECT_EQ(gpu.qvel[static_cast<std::size_t>(bad) * model->nv + i], expect) << "qvel " << i;
  }
  EXPECT_TRUE(std::isnan(gpu.qpos[static_cast<std::size_t>(bad) * model->nq]));
  // the others: exactly as without the NaN environment
  int differing = 0;
  for (int e = 0; e < kNenv; ++e) {
    if (e == bad) continue;
    for (int i = 0; i < model->nq; ++i) {
      const std::size_t k = static_cast<std::size_t>(e) * model->nq + i;
      differing += gpu.qpos[k] != gpu_clean.qpos[k];
    }
    for (int i = 0; i < model->nv; ++i) {
      const std::size_t k = static_cast<std::size_t>(e) * model->nv + i;
      differing += gpu.qvel[k] != gpu_clean.qvel[k];
    }
  }
  EXPECT_EQ(differing, 0) << "entries of healthy environments changed by the NaN environment";
  expect_close(*model, gpu, cpu, cpu, tol, "cuda vs cpu, NaN environment excluded", bad);
}

INSTANTIATE_TEST_SUITE_P(Precisions, GpuContainment,
                         ::testing::Values(PrecisionCase{"Float", Precision::Float},
                                           PrecisionCase{"Double", Precision::Double}),
                         [](const ::testing::TestParamInfo<PrecisionCase>& info) {
                           return std::string(info.param.name);
                         });

// set/get round trips through the staging buffers and the transposition, with a batch that
// is not a multiple of the block size; bytes() covers at least the batched arrays.
TEST(GpuBackend, StateAndControlRoundTrip) {
  SG_REQUIRE_CUDA();
  const auto model = load_or_null(sgtest::humanoid_xml());
  ASSERT_TRUE(model) << "model file not found: " << sgtest::humanoid_xml();
  const int nenv = 300;
  const Inputs in = random_inputs(*model, nenv, 1, 5);
  for (Precision p : {Precision::Float, Precision::Double}) {
    SimulatorOptions opt;
    opt.backend = Backend::Cuda;
    opt.precision = p;
    opt.nenv = nenv;
    Simulator sim(model, opt);
    sim.set_state(in.qpos.data(), in.qvel.data());
    sim.set_ctrl(in.ctrl.data());
    std::vector<double> qpos(in.qpos.size()), qvel(in.qvel.size()), ctrl(in.ctrl.size());
    sim.get_state(qpos.data(), qvel.data());
    sim.get_ctrl(ctrl.data());
    auto rounded = [p](double x) {
      return p == Precision::Float ? static_cast<double>(static_cast<float>(x)) : x;
    };
    for (std::size_t k = 0; k < qpos.size(); ++k) ASSERT_EQ(qpos[k], rounded(in.qpos[k])) << k;
    for (std::size_t k = 0; k < qvel.size(); ++k) ASSERT_EQ(qvel[k], rounded(in.qvel[k])) << k;
    for (std::size_t k = 0; k < ctrl.size(); ++k) ASSERT_EQ(ctrl[k], rounded(in.ctrl[k])) << k;
    const std::size_t real = p == Precision::Float ? sizeof(float) : sizeof(double);
    EXPECT_GE(sim.bytes(), real * nenv * (model->nq + model->nv + model->nu));
    const std::vector<int> status = sim.status();
    EXPECT_EQ(std::count(status.begin(), status.end(), 0), nenv);
  }
}

// A batch that is not a multiple of the block size: the last, partial block agrees too.
TEST(GpuBackend, PartialBlockMatchesCpu) {
  SG_REQUIRE_CUDA();
  const auto model = load_or_null(sgtest::humanoid_xml());
  ASSERT_TRUE(model) << "model file not found: " << sgtest::humanoid_xml();
  const int nenv = 130;
  const Inputs in = random_inputs(*model, nenv, 10, 11);
  const Result cpu = run(model, Backend::Cpu, Precision::Double, in, nenv, 10);
  const Result gpu = run(model, Backend::Cuda, Precision::Double, in, nenv, 10);
  expect_all_ok(gpu, "cuda double");
  expect_close(*model, gpu, cpu, cpu, kHumanoidDouble, "cuda vs cpu, nenv = 130");
}

// A batch beyond the kernels' 32-bit index range is refused with a clear error before any
// device memory is touched.
TEST(GpuBackend, RefusesOversizedBatch) {
  SG_REQUIRE_CUDA();
  const auto model = load_or_null(sgtest::humanoid_xml());
  ASSERT_TRUE(model) << "model file not found: " << sgtest::humanoid_xml();
  SimulatorOptions opt;
  opt.backend = Backend::Cuda;
  opt.precision = Precision::Float;
  opt.nenv = INT_MAX / 8;
  try {
    Simulator sim(model, opt);
    FAIL() << "expected std::runtime_error for nenv = " << opt.nenv;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("nenv"), std::string::npos) << e.what();
  }
}

}  // namespace
