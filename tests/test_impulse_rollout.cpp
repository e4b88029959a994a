// Whole rollouts with the Impulse contact model through the public API (Simulator, Rollout,
// run_gradcheck): the Rollout adjoint against central finite differences of the same kernels in
// extended precision and against the dual-number forward mode, and the checkpointed replay bit
// for bit, from states in sustained contact. The Impulse model is piecewise smooth (the cone
// projections switch); these starts are at smooth points: the finite differences agree to the
// run_gradcheck bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

SimulatorOptions impulse_options(int substeps) {
  SimulatorOptions o;
  o.substeps = substeps;
  o.contact_model = ContactModel::Impulse;
  return o;
}

struct Start {
  std::vector<double> qpos, qvel;
  double most_contacts = 0;  // over the settling run's last control steps
};

// `settle` control steps of the Impulse simulator from qpos0 (zero control): the state reached and
// the most contacts seen in its last 20 steps.
Start settled(const std::shared_ptr<const Model>& m, int settle, int substeps) {
  Simulator sim(m, impulse_options(substeps));
  Start s;
  for (int t = 0; t < settle; ++t) {
    sim.step();
    if (t >= settle - 20) s.most_contacts = std::max(s.most_contacts, sim.contact_stats()[0]);
  }
  EXPECT_EQ(sim.num_failed(), 0);
  s.qpos.resize(sz(m->nq));
  s.qvel.resize(sz(m->nv));
  sim.get_state(s.qpos.data(), s.qvel.data());
  return s;
}

TEST(ImpulseRollout, GradientMatchesFiniteDifferencesAndForwardModeInContact) {
  const std::string g1 = sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml";
  const std::string ant = sgtest::data_dir() + "/models/brax/ant.xml";
  struct Case {
    std::string path;
    int settle, steps;
  };
  for (const Case& c : {Case{sgtest::humanoid_xml(), 150, 30}, Case{g1, 50, 20}, Case{ant, 100, 30}}) {
    const auto model = load_mjcf(c.path);
    const int S = 4;
    const Start st = settled(model, c.settle, S);
    EXPECT_GT(st.most_contacts, 0) << c.path << ": the start must be in contact";
    GradcheckOptions opt;
    opt.steps = c.steps;
    opt.substeps = S;
    opt.samples = 8;
    opt.contact_model = ContactModel::Impulse;
    opt.qpos = st.qpos;
    opt.qvel = st.qvel;
    const auto rep = run_gradcheck(model, opt);
    std::printf("[impulse rollout] %-60s %2.0f contacts, T=%d S=%d: FD(extended) %.2e  dot %.2e  replay %s\n",
                c.path.c_str(), st.most_contacts, c.steps, S, rep.max_rel_error, rep.dot_residual,
                rep.replay_bitwise ? "bitwise" : "NO");
    EXPECT_LE(rep.max_rel_error, 1e-6) << c.path;
    EXPECT_LE(rep.dot_residual, 1e-10) << c.path;
    EXPECT_TRUE(rep.replay_bitwise) << c.path;
    EXPECT_TRUE(rep.passed) << c.path;
    // no Newton solve with the Impulse model
    EXPECT_EQ(rep.constraint_solves, 0) << c.path;
  }
}

// Moreau midpoint with the actuators' velocity gains implicit (Integrator::ImplicitDampingEuler,
// M̃ = M + h (D + K_act)): the G1 of g1-imitate (its kv = 2 servos, h = 5 ms) standing in
// contact, the adjoint against central differences and the dual-number forward mode.
TEST(ImpulseRollout, ImplicitActuatorDampingGradientMatchesInContact) {
  auto model = std::make_shared<Model>(*load_mjcf(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"));
  model->opt.timestep = 0.005;
  const int S = 4;
  SimulatorOptions o = impulse_options(S);
  o.integrator = Integrator::ImplicitDampingEuler;
  Simulator sim(model, o);
  const Keyframe& home = model->keyframes[sz(model->keyframe_id("home"))];
  std::vector<double> v(sz(model->nv), 0.0);
  sim.set_state(home.qpos.data(), v.data());
  sim.set_ctrl(home.ctrl.data());
  double contacts = 0;
  for (int t = 0; t < 40; ++t) {
    sim.step();
    contacts = std::max(contacts, sim.contact_stats()[0]);
  }
  ASSERT_EQ(sim.num_failed(), 0);
  EXPECT_GT(contacts, 0) << "the start must be in contact";
  GradcheckOptions opt;
  opt.steps = 20;
  opt.substeps = S;
  opt.samples = 8;
  opt.integrator = Integrator::ImplicitDampingEuler;
  opt.contact_model = ContactModel::Impulse;
  opt.qpos.resize(sz(model->nq));
  opt.qvel.resize(sz(model->nv));
  sim.get_state(opt.qpos.data(), opt.qvel.data());
  opt.ctrl = home.ctrl;
  const auto rep = run_gradcheck(model, opt);
  std::printf("[impulse rollout] G1 h = 5 ms, implicit actuator damping, %2.0f contacts, T=%d S=%d: FD(extended) %.2e  "
              "dot %.2e  replay %s\n", contacts, opt.steps, S, rep.max_rel_error, rep.dot_residual,
              rep.replay_bitwise ? "bitwise" : "NO");
  EXPECT_LE(rep.max_rel_error, 1e-6);
  EXPECT_LE(rep.dot_residual, 1e-10);
  EXPECT_TRUE(rep.replay_bitwise);
  EXPECT_TRUE(rep.passed);
}

}  // namespace

namespace {

// Identical environments get bit-for-bit identical states and gradients, whichever thread (and
// so whichever reused workspace) serves them: nothing read from scratch carries over from the
// environment stepped before.
TEST(ImpulseRollout, IdenticalEnvironmentsGetIdenticalGradients) {
  auto model = std::make_shared<Model>(*load_mjcf(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"));
  model->opt.timestep = 0.005;
  const Keyframe& home = model->keyframes[sz(model->keyframe_id("home"))];
  const int nenv = 5, T = 12, nq = model->nq, nv = model->nv, nu = model->nu;
  for (ContactModel cm : {ContactModel::Impulse, ContactModel::Soft}) {
    SimulatorOptions o = impulse_options(4);
    o.contact_model = cm;
    o.nenv = nenv;
    o.threads = 2;
    o.impulse.kappa = 100;
    Simulator sim(model, o);
    std::vector<double> q, v(sz(nenv * nv), 0.0), u;
    for (int e = 0; e < nenv; ++e) {
      q.insert(q.end(), home.qpos.begin(), home.qpos.end());
      q[sz(e * nq + 2)] += 0.1;
      u.insert(u.end(), home.ctrl.begin(), home.ctrl.end());
    }
    sim.set_state(q.data(), v.data());
    sim.set_ctrl(u.data());
    Rollout ro(sim, T);
    ro.begin();
    for (int t = 0; t < T; ++t) ro.step();
    std::vector<double> dv(sz((T + 1) * nenv * nv), 0.0);
    for (int e = 0; e < nenv; ++e) dv[sz((T * nenv + e) * nv + 2)] = 1.0;
    std::vector<double> gq(sz(nenv * nv)), gv(gq.size()), gu(sz(T * nenv * nu));
    ro.backward(nullptr, dv.data(), gq.data(), gv.data(), gu.data());
    sim.get_state(q.data(), v.data());
    for (int e = 1; e < nenv; ++e) {
      EXPECT_TRUE(std::equal(q.begin(), q.begin() + nq, q.begin() + e * nq)) << contact_model_name(cm) << " env " << e;
      EXPECT_TRUE(std::equal(gq.begin(), gq.begin() + nv, gq.begin() + e * nv)) << contact_model_name(cm) << " env " << e;
      EXPECT_TRUE(std::equal(gv.begin(), gv.begin() + nv, gv.begin() + e * nv)) << contact_model_name(cm) << " env " << e;
      for (int t = 0; t < T; ++t)
        EXPECT_TRUE(std::equal(gu.begin() + t * nenv * nu, gu.begin() + t * nenv * nu + nu, gu.begin() + (t * nenv + e) * nu))
            << contact_model_name(cm) << " env " << e << " step " << t;
    }
  }
}

}  // namespace
