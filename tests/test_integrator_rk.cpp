// Runge–Kutta integrators (issue 8, "Integrators"): MuJoCo's RK4 and the adaptive Tsit5,
// Dopri5, Bosh3 (kernels/integrators/integrator_rk.hpp) and their adjoint (integrator_rk_adjoint.hpp).
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
#include <cstdlib>
#include <fstream>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/diffmjx_common.hpp"
#include "kernels/integrators/integrator_rk.hpp"
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

// A Rollout of T control steps with random controls (seed) from `st` under options `o`, its
// adjoint for a random loss on the final state, and per environment the dot-product test against
// the dual-number forward mode of the same run: returns the worst relative residual. Also
// reports the replay, the final status and the dynamics evaluations of the forward steps.
struct DotTest {
  double worst = 0;
  bool bitwise = false;
  std::vector<int> status;
  double evals = 0;
  std::vector<double> gq, gv, gu;  // the adjoint's gradients (initial qpos raw, qvel, controls)
};
DotTest rollout_dot_test(const ContactStart& st, const SimulatorOptions& o, int T, unsigned seed) {
  const Model& md = *st.model;
  const int nenv = o.nenv, nq = md.nq, nv = md.nv, nu = md.nu;
  Simulator sim(st.model, o);
  sim.set_state(st.qpos.data(), st.qvel.data());
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  std::vector<double> ctrl(sz(T * nenv * nu));
  for (double& c : ctrl) c = 0.3 * n01(rng);
  Rollout ro(sim, T);
  ro.begin();
  DotTest r;
  for (int t = 0; t < T; ++t) {
    ro.step(ctrl.data() + sz(t * nenv * nu));
    const auto stats = sim.contact_stats();
    for (int e = 0; e < nenv; ++e) r.evals += stats[sz(Simulator::kStepStats * e + 5)];
  }
  r.status = sim.status();
  // a random loss row on the final state only (the adjoint of the whole rollout)
  std::vector<double> dq(sz((T + 1) * nenv * nq), 0.0), dv(sz((T + 1) * nenv * nv), 0.0);
  for (int i = 0; i < nenv * nq; ++i) dq[sz(T * nenv * nq + i)] = n01(rng);
  for (int i = 0; i < nenv * nv; ++i) dv[sz(T * nenv * nv + i)] = n01(rng);
  std::vector<double> gq(sz(nenv * nq)), gv(sz(nenv * nv)), gu(sz(T * nenv * nu));
  ro.backward_raw(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
  r.bitwise = ro.replay_bitwise();
  for (int e = 0; e < nenv; ++e) {
    std::vector<double> uq(sz(nq)), uv(sz(nv)), uc(sz(T * nu)), ce(sz(T * nu));
    for (double& x : uq) x = n01(rng);
    for (double& x : uv) x = n01(rng);
    for (double& x : uc) x = n01(rng);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < nu; ++i) ce[sz(t * nu + i)] = ctrl[sz((t * nenv + e) * nu + i)];
    const auto jvp = rollout_jvp(md, st.qpos.data() + e * nq, st.qvel.data() + e * nv, ce.data(), T, o.substeps,
                                 uq.data(), uv.data(), uc.data(), Precision::Double, o.integrator, true, o.adaptive);
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
    r.worst = std::max(r.worst, std::abs(lhs - rhs) / std::max(scale, 1e-300));
  }
  r.gq = gq;
  r.gv = gv;
  r.gu = gu;
  return r;
}

TEST(RkIntegrators, RolloutAdjointEqualsForwardModeInContact) {
  const int nenv = 2, T = 6, S = 2;
  const ContactStart st = humanoid_in_contact(nenv);
  for (const Method& me : kMethods) {
    SimulatorOptions o;
    o.nenv = nenv;
    o.substeps = S;
    o.integrator = me.integrator;
    const DotTest r = rollout_dot_test(st, o, T, 17);
    for (int s : r.status) EXPECT_EQ(s & 1, 0) << me.name << ": an environment failed";
    EXPECT_TRUE(r.bitwise) << me.name;
    EXPECT_LE(r.worst, 1e-10) << me.name;
    std::printf("[rk] %-6s Rollout T=%d S=%d in contact: dot-product rel residual %.2e (status %d %d)\n", me.name, T, S,
                r.worst, r.status[0], r.status[1]);
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

// The adaptive settings of the humanoid event tests: rtol 1e-5, atol 1e-7, <= 400 steps.
SimulatorOptions humanoid_event_options(int nenv, int substeps, Integrator integ, double event_step,
                                        bool event_gradients) {
  SimulatorOptions o;
  o.nenv = nenv;
  o.substeps = substeps;
  o.integrator = integ;
  o.adaptive.rtol = 1e-5;
  o.adaptive.atol = 1e-7;
  o.adaptive.max_steps = 400;
  o.adaptive.event_step = event_step;
  o.adaptive.event_gradients = event_gradients;
  return o;
}

// Event location (AdaptiveTolerances::event_step) changes which steps are taken, not how they
// are differentiated: the adjoint through the accepted steps still equals the dual-number
// forward mode of the same run, and the replay is bitwise.
TEST(RkIntegrators, EventLocationKeepsTheAdjointExactAndSplitsSteps) {
  const int nenv = 2, T = 4, S = 2;
  const ContactStart st = humanoid_in_contact(nenv);
  for (Integrator integ : {Integrator::Tsit5, Integrator::Bosh3}) {
    double evals[2] = {0, 0};
    for (int located = 0; located < 2; ++located) {
      const SimulatorOptions o = humanoid_event_options(nenv, S, integ, located ? 1e-6 : 0.0, false);
      const DotTest r = rollout_dot_test(st, o, T, 23);
      for (int s : r.status) EXPECT_EQ(s, 0) << integrator_name(integ) << " located " << located;
      EXPECT_TRUE(r.bitwise) << integrator_name(integ) << " located " << located;
      EXPECT_LE(r.worst, 1e-10) << integrator_name(integ) << " located " << located;
      evals[located] = r.evals;
    }
    // the humanoid lands and its rows change state: locating those events costs extra trials
    EXPECT_GT(evals[1], evals[0]) << integrator_name(integ);
    std::printf("[rk] %-6s humanoid in contact, rtol 1e-5: %.0f dynamics evaluations, %.0f with event location 1e-6 s\n",
                integrator_name(integ), evals[0], evals[1]);
  }
}

// What event location is for: two methods' step-through gradients of the toss (DiffMJX's
// reference kind, bench_diffmjx_toss) converge to the same value once no step straddles a
// contact row switching on or changing state. Without it, Tsit5 and Dopri5 at rtol 1e-12 differ
// by 2.6e-4 on the cube (the first-order error of the steps across those events, which the
// error estimate does not see); with it by 6.8e-6 (bench_diffmjx_toss, 2026-12-05).
TEST(RkIntegrators, EventLocationMakesStepThroughGradientsConverge) {
  const auto model = bench::model_with_timestep(bench::toss::xml(bench::toss::shapes()[0]), bench::toss::kH);
  const std::vector<double> vz = {-3.0, -2.0, -1.0};
  double spread[2] = {0, 0};
  for (int located = 0; located < 2; ++located) {
    const double ev = located ? bench::toss::kTruthEventStep : 0.0;
    const auto tsit5 = bench::toss::gradients(
        model, bench::integrator_options(Integrator::Tsit5, 3, 1e-12, 1e-14, 4000, ev), vz);
    const auto dopri5 = bench::toss::gradients(
        model, bench::integrator_options(Integrator::Dopri5, 3, 1e-12, 1e-14, 4000, ev), vz);
    for (int e = 0; e < 3; ++e) {
      EXPECT_EQ(tsit5.run.status[sz(e)], 0);
      EXPECT_EQ(dopri5.run.status[sz(e)], 0);
      EXPECT_TRUE(tsit5.run.bitwise && dopri5.run.bitwise);
      spread[located] = std::max(spread[located], std::abs(tsit5.dL_dvz[sz(e)] - dopri5.dL_dvz[sz(e)]) /
                                                      std::abs(tsit5.dL_dvz[sz(e)]));
    }
  }
  std::printf("[rk] toss cube, rtol 1e-12: tsit5 vs dopri5 step-through gradients %.1e apart, %.1e with event location\n",
              spread[0], spread[1]);
  EXPECT_GT(spread[0], 5e-5);  // the straddling steps' error, without location
  EXPECT_LT(spread[1], 2e-5);  // converged with it (the bench's goal is 1e-5 over 21 samples)
}

// Event-aware gradients (AdaptiveTolerances::event_gradients): the forward mode applies the same
// saltation matrices as the adjoint applies transposed, so the dot-product test still holds to
// rounding through a humanoid's landing (free joint: the quaternion's tangent map), and the
// correction did change the gradient there. Replay stays bitwise.
TEST(RkIntegrators, EventGradientsKeepTheAdjointExact) {
  const int nenv = 2, T = 4, S = 2;
  const ContactStart st = humanoid_in_contact(nenv);
  for (Integrator integ : {Integrator::Tsit5, Integrator::Bosh3}) {
    DotTest r[2];
    for (int aware = 0; aware < 2; ++aware) {
      const SimulatorOptions o = humanoid_event_options(nenv, S, integ, 1e-6, aware == 1);
      r[aware] = rollout_dot_test(st, o, T, 23);
      for (int s : r[aware].status) EXPECT_EQ(s, 0) << integrator_name(integ) << " aware " << aware;
      EXPECT_TRUE(r[aware].bitwise) << integrator_name(integ) << " aware " << aware;
      EXPECT_LE(r[aware].worst, 1e-10) << integrator_name(integ) << " aware " << aware;
    }
    double change = 0, scale = 0;
    for (std::size_t i = 0; i < r[0].gv.size(); ++i) {
      change = std::max(change, std::abs(r[1].gv[i] - r[0].gv[i]));
      scale = std::max(scale, std::abs(r[0].gv[i]));
    }
    EXPECT_GT(change, 1e-6 * scale) << integrator_name(integ) << ": no event was corrected";
    std::printf("[rk] %-6s humanoid landing, event gradients: dot-product residual %.2e (plain %.2e); the "
                "correction moved dL/dqvel0 by %.2e of its largest entry\n",
                integrator_name(integ), r[1].worst, r[0].worst, change / scale);
  }
}

// Without an event the option changes nothing: a humanoid falling from qpos0 before its first
// contact (0.1 s) gets bit for bit the plain gradients.
TEST(RkIntegrators, EventGradientsChangeNothingWithoutEvents) {
  ContactStart st;
  st.model = load_mjcf(sgtest::humanoid_xml());
  const int nq = st.model->nq, nv = st.model->nv;
  st.qpos.assign(st.model->qpos0.begin(), st.model->qpos0.end());
  st.qvel.assign(sz(nv), 0.0);
  for (int i = 0; i < nv; ++i) st.qvel[sz(i)] = 0.1 * std::sin(1.0 + i);
  ASSERT_EQ(st.qpos.size(), sz(nq));
  DotTest r[2];
  for (int aware = 0; aware < 2; ++aware) {
    const SimulatorOptions o = humanoid_event_options(1, 1, Integrator::Tsit5, 1e-6, aware == 1);
    r[aware] = rollout_dot_test(st, o, 10, 5);
    EXPECT_LE(r[aware].worst, 1e-10);
    EXPECT_TRUE(r[aware].bitwise);
  }
  EXPECT_EQ(r[0].gq, r[1].gq);
  EXPECT_EQ(r[0].gv, r[1].gv);
  EXPECT_EQ(r[0].gu, r[1].gu);
}

// The command line's --event-step: the adaptive integrators take it, the others refuse it.
TEST(RkIntegrators, CliEventStepNeedsAnAdaptiveIntegrator) {
  const std::string model = sgtest::data_dir() + "/models/dm_control/cartpole.xml";
  const std::string states = ::testing::TempDir() + "/sg_event_states.csv";
  { std::ofstream(states) << "0,0.1,0,0,0\n"; }
  const auto run = [&](const std::string& args) {
    return std::system((std::string(SG_CLI) + " rollout " + model + " --states " + states + " --steps 3 " + args +
                        " >/dev/null 2>&1").c_str());
  };
  EXPECT_EQ(run("--integrator tsit5 --event-step 1e-6"), 0);
  EXPECT_NE(run("--integrator euler --event-step 1e-6"), 0);
  EXPECT_NE(run("--integrator tsit5 --event-step 0"), 0);
  EXPECT_NE(run("--integrator tsit5 --event-step -1"), 0);
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
  o.adaptive.rtol = 1e-3;
  o.adaptive.event_step = -1e-6;
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
