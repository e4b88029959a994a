// Runge–Kutta integrators (issue 8, "Integrators"): MuJoCo's RK4 and the adaptive Tsit5,
// Dopri5, Bosh3 (kernels/integrator_rk.hpp) and their adjoint (integrator_rk_adjoint.hpp).
//   - the tableaus satisfy the quadrature order conditions (b to the method's order, the
//     embedded b̂ = b − e to one less) and the FSAL property;
//   - fixed steps converge at the method's order on a smooth model (double pendulum);
//   - adaptive steps meet the tolerance against a fine reference;
//   - the adjoint through the accepted steps equals the dual-number forward mode (dot-product
//     test through the public Rollout, with contact), replay is bitwise;
//   - finite differences agree where the dynamics are smooth, to the measured effect of the
//     step-size selection that neither mode differentiates;
//   - an environment that reaches max_steps is flagged (status bit 4).
// RK4 against libmujoco's RK4 is in test_constraint_rollout.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/integrator_rk.hpp"
#include "stiffgrad/gradcheck.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;
namespace kern = stiffgrad::kern;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

struct Method {
  Integrator integrator;
  int kern_id;
  int order;
  const char* name;
};
const Method kMethods[] = {{Integrator::RK4, kern::kIntRK4, 4, "rk4"},
                           {Integrator::Tsit5, kern::kIntTsit5, 5, "tsit5"},
                           {Integrator::Dopri5, kern::kIntDopri5, 5, "dopri5"},
                           {Integrator::Bosh3, kern::kIntBosh3, 3, "bosh3"}};

// A double pendulum with joint damping and a motor: smooth, no contact.
constexpr const char* kPendulumXml = R"(<mujoco><option timestep="0.01"/>
  <worldbody><body pos="0 0 1"><joint name="j0" type="hinge" axis="0 1 0" damping="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
    <body pos="0.3 0 0"><joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body></body></worldbody>
  <actuator><motor joint="j1" gear="1"/></actuator></mujoco>)";

std::shared_ptr<const Model> pendulum(double timestep) {
  auto m = std::make_shared<Model>(*load_mjcf_string(kPendulumXml, "pendulum.xml"));
  m->opt.timestep = timestep;
  return m;
}

// Final state of one environment after `steps` control steps of one substep.
std::vector<double> simulate(const std::shared_ptr<const Model>& model, Integrator integ, const AdaptiveTolerances& tol,
                             const std::vector<double>& qpos, const std::vector<double>& qvel, double ctrl, int steps,
                             int* status = nullptr) {
  SimulatorOptions o;
  o.integrator = integ;
  o.adaptive = tol;
  Simulator sim(model, o);
  sim.set_state(qpos.data(), qvel.data());
  std::vector<double> u(sz(model->nu), ctrl);
  for (int t = 0; t < steps; ++t) sim.step(u.data());
  std::vector<double> q(sz(model->nq)), v(sz(model->nv));
  sim.get_state(q.data(), v.data());
  if (status) *status = sim.status()[0];
  q.insert(q.end(), v.begin(), v.end());
  return q;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

// One trial step per timestep, accepted: a fixed-step run of the same kernels (max_steps 1
// forces the full timestep; the huge tolerances keep the step-cap flag off).
AdaptiveTolerances fixed_steps() {
  AdaptiveTolerances t;
  t.rtol = 1e30;
  t.atol = 1e30;
  t.max_steps = 1;
  return t;
}

TEST(RkTableau, OrderConditionsAndFsal) {
  for (const Method& me : kMethods) {
    const kern::RkTableau t = kern::rk_tableau(me.kern_id);
    ASSERT_EQ(t.order, me.order) << me.name;
    double c[kern::kRkMaxStages] = {};
    for (int i = 0; i < t.stages; ++i)
      for (int j = 0; j < i; ++j) c[i] += t.a[i][j];
    // quadrature conditions Σ b_i c_i^(k-1) = 1/k, k = 1..order (b̂: k = 1..order-1)
    for (int k = 1; k <= t.order; ++k) {
      double sb = 0, sh = 0;
      for (int i = 0; i < t.stages; ++i) {
        sb += t.b[i] * std::pow(c[i], k - 1);
        sh += (t.b[i] - t.e[i]) * std::pow(c[i], k - 1);
      }
      // Tsit5's coefficients are published to 16 digits, some near 12: sums hold to ~1e-14
      EXPECT_NEAR(sb, 1.0 / k, 5e-14) << me.name << " b, k = " << k;
      if (t.adaptive && k < t.order) EXPECT_NEAR(sh, 1.0 / k, 5e-14) << me.name << " b-hat, k = " << k;
    }
    // Σ b_i a_ij c_j = 1/6 (the order-3 tree every method here satisfies)
    double s3 = 0;
    for (int i = 0; i < t.stages; ++i)
      for (int j = 0; j < i; ++j) s3 += t.b[i] * t.a[i][j] * c[j];
    EXPECT_NEAR(s3, 1.0 / 6.0, 5e-14) << me.name;
    if (t.adaptive) {
      // FSAL: the last stage is the result (its row of a equals b, b_s = 0)
      for (int j = 0; j < t.stages; ++j) EXPECT_EQ(t.a[t.stages - 1][j], t.b[j]) << me.name;
      EXPECT_NEAR(c[t.stages - 1], 1.0, 1e-15) << me.name;
    }
  }
}

TEST(RkIntegrators, FixedStepsConvergeAtTheMethodsOrder) {
  const std::vector<double> q0 = {0.9, -0.7}, v0 = {1.5, -2.0};
  const double T = 0.4;
  for (const Method& me : kMethods) {
    auto run = [&](double h) {
      const int n = static_cast<int>(std::lround(T / h));
      return simulate(pendulum(h), me.integrator, fixed_steps(), q0, v0, 0.3, n);
    };
    // the order from a least-squares fit of log e over four halvings of h (single ratios
    // wander with the error's sign changes along the trajectory)
    const auto ref = run(T / 4096);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::string errors;
    for (int k = 0; k < 4; ++k) {
      const double x = -k * std::log(2.0), y = std::log(max_abs_diff(run(T / (16 << k)), ref));
      sx += x; sy += y; sxx += x * x; sxy += x * y;
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.2e", std::exp(y));
      errors += buf;
    }
    const double observed = (4 * sxy - sx * sy) / (4 * sxx - sx * sx);
    std::printf("[rk] %-6s fixed steps h = T/16 .. T/128: errors%s, fitted order %.2f (method %d)\n", me.name,
                errors.c_str(), observed, me.order);
    EXPECT_GT(observed, me.order - 0.35) << me.name;
    // Tsit5's coefficients minimise the leading error term: pre-asymptotically it converges
    // faster than its order (measured 6.45 here)
    EXPECT_LT(observed, me.order + 2.0) << me.name;
  }
}

TEST(RkIntegrators, AdaptiveStepsMeetTheTolerance) {
  const std::vector<double> q0 = {0.9, -0.7}, v0 = {1.5, -2.0};
  // timestep 0.1: too coarse for the tolerance, so the controller must subdivide
  const auto coarse = pendulum(0.1);
  const auto ref = simulate(pendulum(0.1 / 64), Integrator::RK4, fixed_steps(), q0, v0, 0.3, 64 * 5);
  for (const Method& me : kMethods) {
    if (me.integrator == Integrator::RK4) continue;
    for (double rtol : {1e-4, 1e-7}) {
      AdaptiveTolerances tol;
      tol.rtol = rtol;
      tol.atol = rtol * 1e-2;
      tol.max_steps = 400;  // Bosh3 at 1e-7 needs ~100 steps per timestep
      int status = 0;
      const auto x = simulate(coarse, me.integrator, tol, q0, v0, 0.3, 5, &status);
      const auto fixed = simulate(coarse, me.integrator, fixed_steps(), q0, v0, 0.3, 5);
      const double e = max_abs_diff(x, ref) / (1.0 + *std::max_element(ref.begin(), ref.end())),
                   ef = max_abs_diff(fixed, ref) / (1.0 + *std::max_element(ref.begin(), ref.end()));
      std::printf("[rk] %-6s rtol %.0e over 5 timesteps of 0.1 s: error %.2e (one step per timestep: %.2e)\n",
                  me.name, rtol, e, ef);
      EXPECT_EQ(status, 0) << me.name;
      // local error per step ~ rtol; 5 timesteps of several steps each
      EXPECT_LE(e, 50 * rtol) << me.name << " rtol " << rtol;
      EXPECT_LT(e, ef) << me.name << ": adaptive stepping did not improve on one step per timestep";
    }
  }
}

// humanoid.xml dropped from qpos0 (its floor contact begins after ~0.3 s), moved `settle`
// steps with Euler so that the rollouts below start in contact.
struct ContactStart {
  std::shared_ptr<const Model> model;
  std::vector<double> qpos, qvel;
};
ContactStart humanoid_in_contact(int nenv) {
  ContactStart s;
  s.model = load_mjcf(sgtest::humanoid_xml());
  const int nq = s.model->nq, nv = s.model->nv;
  SimulatorOptions o;
  Simulator sim(s.model, o);
  for (int t = 0; t < 180; ++t) sim.step();
  std::vector<double> q(sz(nq)), v(sz(nv));
  sim.get_state(q.data(), v.data());
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n01;
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < nq; ++i) s.qpos.push_back(q[sz(i)]);
    for (int i = 0; i < nv; ++i) s.qvel.push_back(v[sz(i)] + 0.2 * n01(rng));
  }
  return s;
}

TEST(RkIntegrators, RolloutAdjointEqualsForwardModeInContact) {
  const int nenv = 2, T = 6, S = 2;
  const ContactStart st = humanoid_in_contact(nenv);
  const Model& md = *st.model;
  const int nq = md.nq, nv = md.nv, nu = md.nu;
  for (const Method& me : kMethods) {
    SimulatorOptions o;
    o.nenv = nenv;
    o.substeps = S;
    o.integrator = me.integrator;
    Simulator sim(st.model, o);
    sim.set_state(st.qpos.data(), st.qvel.data());
    std::mt19937_64 rng(17);
    std::normal_distribution<double> n01;
    std::vector<double> ctrl(sz(T * nenv * nu));
    for (double& c : ctrl) c = 0.3 * n01(rng);
    Rollout ro(sim, T);
    ro.begin();
    for (int t = 0; t < T; ++t) ro.step(ctrl.data() + sz(t * nenv * nu));
    EXPECT_EQ(sim.num_failed(), 0) << me.name;
    const auto st_now = sim.status();
    // a random loss row on the final state only (the adjoint of the whole rollout)
    std::vector<double> dq(sz((T + 1) * nenv * nq), 0.0), dv(sz((T + 1) * nenv * nv), 0.0);
    for (int i = 0; i < nenv * nq; ++i) dq[sz(T * nenv * nq + i)] = n01(rng);
    for (int i = 0; i < nenv * nv; ++i) dv[sz(T * nenv * nv + i)] = n01(rng);
    std::vector<double> gq(sz(nenv * nq)), gv(sz(nenv * nv)), gu(sz(T * nenv * nu));
    ro.backward_raw(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
    EXPECT_TRUE(ro.replay_bitwise()) << me.name;
    double worst = 0;
    for (int e = 0; e < nenv; ++e) {
      std::vector<double> uq(sz(nq)), uv(sz(nv)), uc(sz(T * nu)), ce(sz(T * nu));
      for (double& x : uq) x = n01(rng);
      for (double& x : uv) x = n01(rng);
      for (double& x : uc) x = n01(rng);
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < nu; ++i) ce[sz(t * nu + i)] = ctrl[sz((t * nenv + e) * nu + i)];
      const auto jvp = rollout_jvp(md, st.qpos.data() + e * nq, st.qvel.data() + e * nv, ce.data(), T, S, uq.data(),
                                   uv.data(), uc.data(), Precision::Double, me.integrator, true);
      double lhs = 0, rhs = 0, scale = 0;
      for (int i = 0; i < nq; ++i) { lhs += dq[sz(T * nenv * nq + e * nq + i)] * jvp[sz(i)]; }
      for (int i = 0; i < nv; ++i) { lhs += dv[sz(T * nenv * nv + e * nv + i)] * jvp[sz(nq + i)]; }
      for (int i = 0; i < nq; ++i) { rhs += gq[sz(e * nq + i)] * uq[sz(i)]; scale += std::abs(gq[sz(e * nq + i)] * uq[sz(i)]); }
      for (int i = 0; i < nv; ++i) { rhs += gv[sz(e * nv + i)] * uv[sz(i)]; scale += std::abs(gv[sz(e * nv + i)] * uv[sz(i)]); }
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < nu; ++i) {
          const double g = gu[sz((t * nenv + e) * nu + i)];
          rhs += g * uc[sz(t * nu + i)];
          scale += std::abs(g * uc[sz(t * nu + i)]);
        }
      const double rel = std::abs(lhs - rhs) / std::max(scale, 1e-300);
      worst = std::max(worst, rel);
      EXPECT_LE(rel, 1e-10) << me.name << " env " << e << ": forward " << lhs << " reverse " << rhs;
    }
    std::printf("[rk] %-6s Rollout T=%d S=%d in contact: dot-product rel residual %.2e (status %d %d)\n", me.name, T, S,
                worst, st_now[0], st_now[1]);
  }
}

TEST(RkIntegrators, GradientMatchesFiniteDifferencesWhereSmooth) {
  const auto model = pendulum(0.05);
  const std::vector<double> q0 = {0.9, -0.7}, v0 = {1.5, -2.0};
  const int T = 8;
  const std::vector<double> w = {0.3, -1.1, 0.7, 0.4};  // L = w . (qpos_T, qvel_T)
  for (const Method& me : kMethods) {
    AdaptiveTolerances tol;
    tol.rtol = me.order >= 5 ? 1e-10 : 1e-9;
    tol.atol = tol.rtol * 1e-2;
    tol.max_steps = 2000;
    auto loss = [&](const std::vector<double>& q, const std::vector<double>& v) {
      int status = 0;
      const auto x = simulate(model, me.integrator, tol, q, v, 0.3, T, &status);
      EXPECT_EQ(status, 0) << me.name << ": the step cap was reached";
      double L = 0;
      for (std::size_t i = 0; i < x.size(); ++i) L += w[i] * x[i];
      return L;
    };
    SimulatorOptions o;
    o.integrator = me.integrator;
    o.adaptive = tol;
    Simulator sim(model, o);
    sim.set_state(q0.data(), v0.data());
    Rollout ro(sim, T);
    ro.begin();
    const double u = 0.3;
    for (int t = 0; t < T; ++t) ro.step(&u);
    std::vector<double> dq(sz((T + 1) * 2), 0.0), dv(sz((T + 1) * 2), 0.0);
    dq[sz(2 * T)] = w[0]; dq[sz(2 * T + 1)] = w[1]; dv[sz(2 * T)] = w[2]; dv[sz(2 * T + 1)] = w[3];
    std::vector<double> gq(2), gv(2), gu(sz(T));
    ro.backward_raw(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
    double worst = 0;
    const double eps = 1e-6;
    for (int i = 0; i < 4; ++i) {
      std::vector<double> qp = q0, qm = q0, vp = v0, vm = v0;
      (i < 2 ? qp[sz(i)] : vp[sz(i - 2)]) += eps;
      (i < 2 ? qm[sz(i)] : vm[sz(i - 2)]) -= eps;
      const double fd = (loss(qp, vp) - loss(qm, vm)) / (2 * eps);
      const double g = i < 2 ? gq[sz(i)] : gv[sz(i - 2)];
      const double rel = std::abs(g - fd) / std::max(1.0, std::abs(fd));
      worst = std::max(worst, rel);
      EXPECT_LE(rel, 1e-6) << me.name << " input " << i << ": adjoint " << g << " fd " << fd;
    }
    std::printf("[rk] %-6s pendulum T=%d rtol %.0e: adjoint vs central FD worst rel %.2e\n", me.name, T, tol.rtol, worst);
  }
}

TEST(RkIntegrators, ReachingMaxStepsIsFlagged) {
  const std::vector<double> q0 = {0.9, -0.7}, v0 = {1.5, -2.0};
  AdaptiveTolerances tight;
  tight.rtol = 1e-12;
  tight.atol = 1e-14;
  tight.max_steps = 2;
  int status = -1;
  simulate(pendulum(0.1), Integrator::Tsit5, tight, q0, v0, 0.3, 3, &status);
  EXPECT_EQ(status & kern::kEnvStepCap, kern::kEnvStepCap) << "two steps of 0.05 s cannot meet rtol 1e-12";
  AdaptiveTolerances loose = tight;
  loose.rtol = 1e-3;
  loose.atol = 1e-6;
  loose.max_steps = 16;
  simulate(pendulum(0.1), Integrator::Tsit5, loose, q0, v0, 0.3, 3, &status);
  EXPECT_EQ(status, 0);
}

TEST(RkIntegrators, BadTolerancesAreRefused) {
  SimulatorOptions o;
  o.integrator = Integrator::Tsit5;
  o.adaptive.max_steps = 0;
  EXPECT_THROW(Simulator(pendulum(0.01), o), std::invalid_argument);
  o.adaptive.max_steps = 16;
  o.adaptive.rtol = -1;
  EXPECT_THROW(Simulator(pendulum(0.01), o), std::invalid_argument);
}

TEST(RkIntegrators, NamesRoundTrip) {
  for (const Method& me : kMethods) {
    Integrator parsed{};
    ASSERT_TRUE(parse_integrator(integrator_name(me.integrator), &parsed));
    EXPECT_EQ(parsed, me.integrator);
  }
  Integrator unused{};
  EXPECT_FALSE(parse_integrator("rk45", &unused));
}

}  // namespace
