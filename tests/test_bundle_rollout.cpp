// Bundled Contact Gradients through Rollout (stiffgrad/bundle.hpp; CPU backend): the
// identities the issue names (never triggered: the plain rollout and gradient bit for bit; no
// bundle without contact; σ → 0: the plain gradient), the bundled gradient against central
// finite differences of the bundled forward pass (the same draws: the perturbations are keyed
// by (seed, env, step, branch)), the replay of every branch bit for bit, and the pool's policy
// (the largest forces first, the rest counted as skipped). Gradients with respect to qpos0 are
// compared in the tangent convention (Rollout::backward): a raw quaternion component's gradient
// carries a radial part that depends on where a path normalizes, not on the dynamics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"

namespace {

using namespace stiffgrad;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// A 10 kg box dropped onto a plane.
constexpr const char* kDropXml = R"(<mujoco><option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1" friction="0.8 0.005 0.0001"/>
    <body name="box" pos="0 0 0.25"><freejoint/><geom type="box" size="0.1 0.08 0.05" mass="10"/></body>
  </worldbody></mujoco>)";

std::shared_ptr<const Model> drop_model() { return load_mjcf_string(kDropXml, "drop.xml"); }

struct BundleRun {
  std::vector<double> qT, vT;          // final state, nenv x nq / nv
  std::vector<double> gq, gv;          // dL/dqpos0 (tangent: nv per environment), dL/dqvel0
  int started = 0, skipped = 0;
  std::vector<int> per_env;
  bool replay = false;
};

// T control steps from (q0, v0) in a fresh simulator (no statistics before the first step), loss
// L = w . [qpos_T; qvel_T] (w: nenv x (nq + nv)).
// key: the recording's bundle key (Rollout::begin(key)); 0: begin() (BundleOptions::seed).
BundleRun run(const std::shared_ptr<const Model>& m, const SimulatorOptions& o, const BundleOptions& bo, const std::vector<double>& q0,
        const std::vector<double>& v0, int T, const std::vector<double>& w, bool gradient = true, std::uint64_t key = 0) {
  Simulator sim(m, o);
  sim.set_state(q0.data(), v0.data());
  Rollout ro(sim, T, bo);
  if (key) ro.begin(key);
  else ro.begin();
  for (int t = 0; t < T; ++t) ro.step();
  const int nenv = o.nenv, nq = m->nq, nv = m->nv;
  BundleRun r;
  r.qT.resize(sz(nenv * nq));
  r.vT.resize(sz(nenv * nv));
  sim.get_state(r.qT.data(), r.vT.data());
  r.started = ro.bundles_started();
  r.skipped = ro.bundles_skipped();
  r.per_env = ro.bundles_per_env();
  EXPECT_EQ(sim.num_failed(), 0);
  if (!gradient) return r;
  std::vector<double> dq(sz((T + 1) * nenv * nq), 0.0), dv(sz((T + 1) * nenv * nv), 0.0);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < nq; ++i) dq[sz((T * nenv + e) * nq + i)] = w[sz(e * (nq + nv) + i)];
    for (int i = 0; i < nv; ++i) dv[sz((T * nenv + e) * nv + i)] = w[sz(e * (nq + nv) + nq + i)];
  }
  r.gq.resize(sz(nenv * nv));
  r.gv.resize(sz(nenv * nv));
  ro.backward(dq.data(), dv.data(), r.gq.data(), r.gv.data(), nullptr);
  r.replay = ro.replay_bitwise();
  return r;
}

double loss(const Model& m, const BundleRun& r, const std::vector<double>& w, int e) {
  double L = 0;
  for (int i = 0; i < m.nq; ++i) L += w[sz(e * (m.nq + m.nv) + i)] * r.qT[sz(e * m.nq + i)];
  for (int i = 0; i < m.nv; ++i) L += w[sz(e * (m.nq + m.nv) + m.nq + i)] * r.vT[sz(e * m.nv + i)];
  return L;
}

struct DropScene {
  std::shared_ptr<const Model> m = drop_model();
  SimulatorOptions o;
  std::vector<double> q0, v0, w;
  explicit DropScene(int nenv, ContactModel cm = ContactModel::Impulse) {
    o.nenv = nenv;
    o.substeps = 4;
    o.contact_model = cm;
    std::mt19937_64 rng(5);
    std::normal_distribution<double> n01;
    for (int e = 0; e < nenv; ++e) {
      // tilted boxes, falling at different speeds
      const double a = 0.1 + 0.05 * e;
      const double quat[4] = {std::cos(a / 2), std::sin(a / 2) * 0.6, std::sin(a / 2) * 0.8, 0};
      const double q[7] = {0.01 * e, 0, 0.2, quat[0], quat[1], quat[2], quat[3]};
      q0.insert(q0.end(), q, q + 7);
      const double v[6] = {0.3, -0.1 * e, -1.0 - 0.5 * e, 0.2, -0.1, 0.3};
      v0.insert(v0.end(), v, v + 6);
      for (int i = 0; i < m->nq + m->nv; ++i) w.push_back(n01(rng));
    }
  }
};

BundleOptions bundles(double tau, int B = 6, int H = 2) {
  BundleOptions b;
  b.enabled = true;
  b.tau = tau;
  b.branches = B;
  b.steps = H;
  b.seed = 7;
  return b;
}

TEST(BundleRollout, NeverTriggeredEqualsThePlainRolloutBitForBit) {
  for (ContactModel cm : {ContactModel::Impulse, ContactModel::Soft}) {
    DropScene s(3, cm);
    const int T = 40;
    const BundleRun plain = run(s.m, s.o, BundleOptions{}, s.q0, s.v0, T, s.w);
    const BundleRun never = run(s.m, s.o, bundles(std::numeric_limits<double>::infinity()), s.q0, s.v0, T, s.w);
    EXPECT_EQ(never.started, 0);
    EXPECT_EQ(plain.qT, never.qT);
    EXPECT_EQ(plain.vT, never.vT);
    EXPECT_EQ(plain.gq, never.gq);
    EXPECT_EQ(plain.gv, never.gv);
    // the same settings with a finite threshold do bundle (the boxes land hard)
    const BundleRun some = run(s.m, s.o, bundles(100), s.q0, s.v0, T, s.w);
    EXPECT_GT(some.started, 0) << contact_model_name(cm);
    EXPECT_NE(plain.gv, some.gv);
    EXPECT_TRUE(some.replay);
    std::printf("[bundle] %s: tau inf: 0 bundles, bitwise equal; tau 100 N: %d bundles in 3 envs x %d steps\n",
                contact_model_name(cm), some.started, T);
  }
}

// The scheduler hands environments to threads dynamically: states and gradients must not depend
// on which thread (and reused scratch) served an environment, or on how many threads there are.
TEST(BundleRollout, ResultsDoNotDependOnTheThreads) {
  DropScene s(5);
  BundleRun r[2];
  for (int k = 0; k < 2; ++k) {
    s.o.threads = k + 1;
    r[k] = run(s.m, s.o, bundles(100), s.q0, s.v0, 30, s.w);
  }
  EXPECT_GT(r[0].started, 0);
  EXPECT_EQ(r[0].per_env, r[1].per_env);
  EXPECT_EQ(r[0].qT, r[1].qT);
  EXPECT_EQ(r[0].gq, r[1].gq);
  EXPECT_EQ(r[0].gv, r[1].gv);
}

// Rollout::begin(key): the key replaces BundleOptions::seed for one recording and its replay
// (a trainer passes a new key per iteration). begin() is begin(BundleOptions::seed) bit for
// bit; another key draws other perturbations (other states, other gradients) and still replays
// bit for bit.
TEST(BundleRollout, RecordingKeyDrawsNewPerturbationsAndReplays) {
  DropScene s(3);
  const int T = 30;
  const BundleOptions b = bundles(100);  // seed 7
  const BundleRun plain_key = run(s.m, s.o, b, s.q0, s.v0, T, s.w);
  const BundleRun same_key = run(s.m, s.o, b, s.q0, s.v0, T, s.w, true, 7);
  ASSERT_GT(plain_key.started, 0);
  EXPECT_EQ(plain_key.qT, same_key.qT);
  EXPECT_EQ(plain_key.gq, same_key.gq);
  EXPECT_EQ(plain_key.gv, same_key.gv);
  const BundleRun other_key = run(s.m, s.o, b, s.q0, s.v0, T, s.w, true, 0x5eedull << 33 | 3);
  ASSERT_GT(other_key.started, 0);
  EXPECT_NE(plain_key.qT, other_key.qT);
  EXPECT_NE(plain_key.gv, other_key.gv);
  EXPECT_TRUE(other_key.replay);
  // one Rollout, recordings with keys 11, 12, 11: the third repeats the first
  Simulator sim(s.m, s.o);
  Rollout ro(sim, T, b);
  std::vector<double> q(s.q0.size()), v(s.v0.size()), q_first;
  for (const std::uint64_t key : {11ull, 12ull, 11ull}) {
    sim.set_state(s.q0.data(), s.v0.data());
    ro.begin(key);
    for (int t = 0; t < T; ++t) ro.step();
    sim.get_state(q.data(), v.data());
    if (key == 11 && q_first.empty()) q_first = q;
    else if (key == 12) EXPECT_NE(q, q_first);
    else EXPECT_EQ(q, q_first);
  }
}

TEST(BundleRollout, NoBundleWithoutContact) {
  DropScene s(2);
  for (int e = 0; e < 2; ++e) s.q0[sz(e * 7 + 2)] = 50;  // 50 m up: no contact in 0.8 s
  const BundleRun r = run(s.m, s.o, bundles(0), s.q0, s.v0, 40, s.w);
  EXPECT_EQ(r.started, 0);
}

TEST(BundleRollout, VanishingNoiseGivesThePlainGradient) {
  DropScene s(2);
  const int T = 40;
  const BundleRun plain = run(s.m, s.o, BundleOptions{}, s.q0, s.v0, T, s.w);
  double previous = std::numeric_limits<double>::infinity();
  for (double scale : {1.0, 1e-2, 1e-4, 1e-6, 1e-8, 0.0}) {
    BundleOptions b = bundles(100);
    b.sigma_p *= scale;
    b.sigma_v *= scale;
    const BundleRun r = run(s.m, s.o, b, s.q0, s.v0, T, s.w);
    EXPECT_GT(r.started, 0);
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < plain.gv.size(); ++i) {
      diff = std::max(diff, std::abs(r.gv[i] - plain.gv[i]));
      norm = std::max(norm, std::abs(plain.gv[i]));
    }
    for (std::size_t i = 0; i < plain.gq.size(); ++i) {
      diff = std::max(diff, std::abs(r.gq[i] - plain.gq[i]));
      norm = std::max(norm, std::abs(plain.gq[i]));
    }
    std::printf("[bundle] noise x %.0e: %d bundles, |bundled - plain| / |plain| = %.2e\n", scale, r.started, diff / norm);
    if (scale == 0) EXPECT_LE(diff, 1e-12 * norm);
    else EXPECT_LT(diff, previous);
    previous = diff;
  }
}

// The bundled gradient is the gradient of the bundled forward pass with its draws held: central
// finite differences of that pass (the boxes' perturbation maps are constant: a free body's
// origin Jacobian does not depend on the state). The trigger pattern must not change under the
// small steps: checked.
TEST(BundleRollout, GradientMatchesFiniteDifferencesOfTheBundledPass) {
  DropScene s(2);
  const int T = 30;
  const BundleOptions b = bundles(100);
  const BundleRun r = run(s.m, s.o, b, s.q0, s.v0, T, s.w);
  ASSERT_GT(r.started, 0);
  EXPECT_TRUE(r.replay);
  const int nq = s.m->nq, nv = s.m->nv;
  const double h = 1e-6;
  double worst = 0;
  // d/dx of env e's loss by central differences of x (a component of qpos0 or qvel0) against `adj`
  const auto check = [&](int e, std::vector<double>* x, int i, double adj, const char* what) {
    const double x0 = (*x)[sz(i)];
    (*x)[sz(i)] = x0 + h;
    const BundleRun a = run(s.m, s.o, b, s.q0, s.v0, T, s.w, false);
    (*x)[sz(i)] = x0 - h;
    const BundleRun c = run(s.m, s.o, b, s.q0, s.v0, T, s.w, false);
    (*x)[sz(i)] = x0;
    ASSERT_EQ(a.per_env, r.per_env) << "the trigger pattern moved";
    ASSERT_EQ(c.per_env, r.per_env) << "the trigger pattern moved";
    const double fd = (loss(*s.m, a, s.w, e) - loss(*s.m, c, s.w, e)) / (2 * h);
    const double rel = std::abs(adj - fd) / std::max(std::abs(fd), 1e-3);
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-4) << "env " << e << " " << what << ": adjoint " << adj << " fd " << fd;
  };
  for (int e = 0; e < 2; ++e) {
    for (int i = 0; i < nv; ++i) check(e, &s.v0, e * nv + i, r.gv[sz(e * nv + i)], "qvel0");
    // translations: raw coordinates equal to the tangent ones
    for (int i : {0, 1, 2}) check(e, &s.q0, e * nq + i, r.gq[sz(e * nv + i)], "qpos0");
  }
  std::printf("[bundle] %d bundles (B 6, H 2): gradient vs central FD of the bundled pass: worst rel %.2e; replay %s\n",
              r.started, worst, r.replay ? "bitwise" : "NO");
}

TEST(BundleRollout, FullPoolServesTheLargestForcesFirstAndCountsTheRest) {
  // two boxes 1 cm above the floor, level, one falling at 1 m/s and one at 3 m/s: both land hard
  // in step 0, so both trigger at step 1; with one slot the faster (larger force) gets it
  DropScene s(2);
  for (int e = 0; e < 2; ++e) {
    const double q[7] = {0.5 * e, 0, 0.06, 1, 0, 0, 0}, v[6] = {0, 0, e == 0 ? -1.0 : -3.0, 0, 0, 0};
    std::copy(q, q + 7, s.q0.begin() + 7 * e);
    std::copy(v, v + 6, s.v0.begin() + 6 * e);
  }
  BundleOptions b = bundles(100, 4, 2);
  b.pool = 1;
  const BundleRun first = run(s.m, s.o, b, s.q0, s.v0, 2, s.w, false);
  EXPECT_EQ(first.per_env, (std::vector<int>{0, 1}));
  EXPECT_EQ(first.skipped, 1);
  // the slow box has settled below tau (25 N a corner) when the slot frees; with a slot per
  // environment both are served and nothing is skipped
  const BundleRun r = run(s.m, s.o, b, s.q0, s.v0, 40, s.w);
  const BundleRun all = run(s.m, s.o, bundles(100, 4, 2), s.q0, s.v0, 40, s.w);
  EXPECT_EQ(all.skipped, 0);
  EXPECT_GT(all.per_env[0], 0);
  EXPECT_TRUE(r.replay);
  std::printf("[bundle] pool 1: after 2 steps bundles per env %d %d, %d skipped; after 40: %d %d, %d skipped; "
              "pool 2: %d %d\n", first.per_env[0], first.per_env[1], first.skipped, r.per_env[0], r.per_env[1], r.skipped,
              all.per_env[0], all.per_env[1]);
}

TEST(BundleRollout, InvalidOptionsAndBackendsAreRefused) {
  DropScene s(1);
  Simulator sim(s.m, s.o);
  for (auto bad : {[] { auto b = bundles(1); b.branches = 0; return b; }(),
                   [] { auto b = bundles(1); b.steps = 0; return b; }(),
                   [] { auto b = bundles(1); b.lambda = 0; return b; }(),
                   [] { auto b = bundles(1); b.sigma_p = -1; return b; }(),
                   [] { auto b = bundles(std::nan("")); return b; }()})
    EXPECT_THROW(Rollout(sim, 4, bad), std::invalid_argument);
}

// Rollout::step_backend_ctrl runs the bundle scheduler as step() does (the backend policy loop
// of SHAC+BCG): the same states, bundles and gradients, bit for bit.
TEST(BundleRollout, StepBackendCtrlRunsTheScheduler) {
  DropScene s(2);
  Simulator a(s.m, s.o), b(s.m, s.o);
  const int T = 12, N = 2, nq = s.m->nq, nv = s.m->nv;
  std::vector<double> ctrl(static_cast<std::size_t>(s.m->nu) * N, 0.0);  // the drop has no actuators
  a.set_state(s.q0.data(), s.v0.data());
  b.set_state(s.q0.data(), s.v0.data());
  Rollout ra(a, T, bundles(1)), rb(b, T, bundles(1));
  ra.begin();
  rb.begin();
  for (int t = 0; t < T; ++t) {
    ra.step(ctrl.data());
    rb.step_backend_ctrl(ctrl.data());
  }
  EXPECT_GT(ra.bundles_started(), 0);
  EXPECT_EQ(ra.bundles_started(), rb.bundles_started());
  std::vector<double> qa(static_cast<std::size_t>(N) * nq), va(static_cast<std::size_t>(N) * nv), qb(qa), vb(va);
  a.get_state(qa.data(), va.data());
  b.get_state(qb.data(), vb.data());
  EXPECT_EQ(qa, qb);
  EXPECT_EQ(va, vb);
  std::vector<double> dv(static_cast<std::size_t>(T + 1) * N * nv, 0.0);
  for (int e = 0; e < N; ++e) dv[(static_cast<std::size_t>(T) * N + e) * nv + 2] = 1.0;
  std::vector<double> ga(static_cast<std::size_t>(N) * nv), gb(ga), ua(ga), ub(ga);
  ra.backward(nullptr, dv.data(), ga.data(), ua.data(), nullptr);
  rb.backward(nullptr, dv.data(), gb.data(), ub.data(), nullptr);
  EXPECT_EQ(ga, gb);
  EXPECT_EQ(ua, ub);
}

}  // namespace

#include "cli_support.hpp"

namespace {

// `grad --bundle B,H,TAU[,SIGMA_P,SIGMA_V] [--seed S]`: every line gets "bundles", the gradient
// is the bundled one (it differs from the plain one and depends on the seed), bad values are
// usage errors (exit 2).
TEST(BundleRollout, CommandLine) {
  const auto model = temp_file("bundle_drop.xml", kDropXml);
  const auto states = temp_file("bundle_s.csv", "0,0,0.2,1,0,0,0,0.3,0,-2,0,0,0\n0,0,5,1,0,0,0,0,0,0,0,0,0\n");
  const auto weights = temp_file("bundle_w.csv", "0,0,0,0,0,0,0,0,0,1,0,0,0\n0,0,0,0,0,0,0,0,0,1,0,0,0\n");
  const std::string grad = "grad " + model + " --states " + states + " --weights " + weights + " --steps 40 --contact impulse";
  const auto plain = run_cli(grad), a = run_cli(grad + " --bundle 10,2,100"), b = run_cli(grad + " --bundle 10,2,100 --seed 9");
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(plain.out.find("\"bundles\""), std::string::npos);
  // the first state lands hard, the second stays 5 m up
  EXPECT_NE(a.out.find("\"dL_dctrl\": [], \"bundles\": 2}\n{"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("\"dL_dctrl\": [], \"bundles\": 0}\n"), std::string::npos) << a.out;
  EXPECT_NE(a.out, plain.out);
  EXPECT_NE(a.out, b.out);
  EXPECT_EQ(a.out, run_cli(grad + " --bundle 10,2,100,0.01,0.02 --seed 1").out);  // the defaults spelled out
  EXPECT_NE(a.err.find("trigger: the largest contact normal force > 100 N"), std::string::npos) << a.err;
  // the impulse trigger: the landing step's impulse is about m |dv| = 20 N s, above 5 N s
  const auto imp = run_cli(grad + " --bundle 10,2,5 --bundle-trigger impulse");
  ASSERT_EQ(imp.status, 0) << imp.err;
  EXPECT_NE(imp.err.find("trigger: the step's contact normal impulse > 5 N s"), std::string::npos) << imp.err;
  EXPECT_NE(imp.out.find("\"bundles\": 0}"), std::string::npos) << imp.out;  // the state 5 m up
  EXPECT_EQ(imp.out.find("\"bundles\": 0}\n{"), std::string::npos) << imp.out;  // the landing one bundles
  for (const std::string& bad : {std::string(" --bundle 10,2"), std::string(" --bundle 0,2,100"), std::string(" --bundle 10,2.5,100"),
                                 std::string(" --bundle 10,2,x"), std::string(" --bundle 10,2,100,-1,0"), std::string(" --seed 3"),
                                 std::string(" --bundle-trigger impulse"), std::string(" --bundle 10,2,100 --bundle-trigger torque")}) {
    const auto r = run_cli(grad + bad);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
  }
}

}  // namespace
