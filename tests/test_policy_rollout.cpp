// Rollout::backward_policy: the exact gradient of a loss over a trajectory in which every
// control is a function of the state it is applied in (a policy in the loop, SHAC's setting),
// against central finite differences of the whole closed-loop rollout, in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "closed_loop.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;
using sgtest::ClosedLoop;

void check_against_fd(ClosedLoop& c, double h, double bound) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<double> theta(c.nparam());
  for (double& x : theta) x = 0.3 * n(rng);
  std::vector<double> g;
  bool replay = false;
  c.run(theta, &g, &replay);
  EXPECT_TRUE(replay);
  // every parameter's central difference, and the largest error relative to the gradient's norm
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    std::vector<double> tp = theta, tm = theta;
    tp[i] += h;
    tm[i] -= h;
    const double fd = (c.run(tp, nullptr) - c.run(tm, nullptr)) / (2 * h);
    err = std::max(err, std::abs(fd - g[i]));
    norm = std::max(norm, std::abs(fd));
  }
  ASSERT_GT(norm, 1e-6) << "the test's loss does not depend on the parameters";
  EXPECT_LT(err / norm, bound) << "max |FD - adjoint| " << err << " of max |FD| " << norm;
  std::printf("[ policy-in-loop ] %s: max |FD - adjoint| / max |FD| = %.2e (%zu parameters)\n",
              c.model->name.c_str(), err / norm, theta.size());
}

TEST(PolicyRollout, CartpoleClosedLoopGradientMatchesFiniteDifferences) {
  ClosedLoop c;
  c.model = load_mjcf(sgtest::data_dir() + "/models/dm_control/cartpole.xml");
  c.opt.nenv = 3;
  c.opt.substeps = 2;
  c.T = 25;
  for (int e = 0; e < c.opt.nenv; ++e) {
    c.q0.insert(c.q0.end(), {0.1 * e, 3.0 + 0.1 * e});
    c.v0.insert(c.v0.end(), {0.0, 0.2 * e});
  }
  c.cq = {0.3, 1.0};
  c.cv = {0.1, -0.2};
  // central differences at h = 1e-6: truncation ~h² |L'''| and rounding ~1e-16 |L| / h, both
  // below 1e-8 of the gradient here
  check_against_fd(c, 1e-6, 1e-6);
}

TEST(PolicyRollout, AntOnImpulseFloorClosedLoopGradientMatchesFiniteDifferences) {
  ClosedLoop c;
  auto m = std::make_shared<Model>(*load_mjcf(sgtest::data_dir() + "/models/gymnasium/ant.xml"));
  m->opt.timestep = 0.005;
  c.model = m;
  c.opt.nenv = 2;
  c.opt.substeps = 4;
  c.opt.contact_model = ContactModel::Impulse;
  c.opt.impulse.kappa = 100;
  c.T = 6;
  // resting on the floor: at qpos0's joint angles the legs are level with the torso, so the
  // torso sphere (radius 0.25) carries the ant; qpos0's 0.75 m is lowered until it touches
  for (int e = 0; e < c.opt.nenv; ++e) {
    std::vector<double> q(m->qpos0.begin(), m->qpos0.end());
    q[2] = 0.26 + 0.01 * e;
    c.q0.insert(c.q0.end(), q.begin(), q.end());
    for (int k = 0; k < m->nv; ++k) c.v0.push_back(0.01 * k);
  }
  c.cq.assign(m->nq, 0.0);
  c.cv.assign(m->nv, 0.0);
  c.cq[2] = 1.0;   // torso height
  c.cv[0] = 0.5;   // forward velocity
  // K over 15 + 14 state entries for 8 actuators: keep the feedback small so that the loop is
  // not dominated by the quaternion entries
  check_against_fd(c, 1e-6, 1e-5);
  // the gradient went through contacts: the ant touches the floor in every step
  std::vector<double> g;
  c.run(std::vector<double>(c.nparam(), 0.0), &g);
  EXPECT_EQ(c.contact_steps, c.T);
}

TEST(PolicyRollout, BackendHookGivesTheHostHooksGradient) {
  // backward_policy_backend (the hook on the backend's environment-minor arrays, adding into the
  // running adjoint; on CUDA the device path) against backward_policy, both on the CPU backend
  ClosedLoop c;
  auto m = std::make_shared<Model>(*load_mjcf(sgtest::data_dir() + "/models/gymnasium/ant.xml"));
  m->opt.timestep = 0.005;
  c.model = m;
  c.opt.nenv = 3;
  c.opt.substeps = 4;
  c.opt.contact_model = ContactModel::Impulse;
  c.T = 5;
  for (int e = 0; e < c.opt.nenv; ++e) {
    std::vector<double> q(m->qpos0.begin(), m->qpos0.end());
    q[2] = 0.26 + 0.01 * e;
    c.q0.insert(c.q0.end(), q.begin(), q.end());
    for (int k = 0; k < m->nv; ++k) c.v0.push_back(0.01 * k - 0.02 * e);
  }
  c.cq.assign(m->nq, 0.1);
  c.cv.assign(m->nv, -0.05);
  std::mt19937_64 rng(8);
  std::normal_distribution<double> n(0.0, 0.3);
  std::vector<double> theta(c.nparam());
  for (double& x : theta) x = n(rng);
  std::vector<double> g_host, g_backend;
  bool replay = false;
  const double L_host = c.run(theta, &g_host);
  c.hook_in_backend = true;
  const double L_backend = c.run(theta, &g_backend, &replay);
  EXPECT_TRUE(replay);
  EXPECT_EQ(L_host, L_backend);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    err = std::max(err, std::abs(g_host[i] - g_backend[i]));
    norm = std::max(norm, std::abs(g_host[i]));
  }
  std::printf("[ policy-in-loop ] backend hook vs host hook: max difference / max |gradient| = %.2e\n", err / norm);
  EXPECT_GT(norm, 1e-3);
  EXPECT_LT(err / norm, 1e-12);
}

TEST(PolicyRollout, BackendStateIsTheEnvironmentMinorState) {
  auto model = load_mjcf(sgtest::data_dir() + "/models/dm_control/cartpole.xml");
  SimulatorOptions o;
  o.nenv = 3;
  Simulator sim(model, o);
  const std::vector<double> q{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, v{-1, -2, -3, -4, -5, -6};
  sim.set_state(q.data(), v.data());
  sim.step();
  std::vector<double> q1(6), v1(6);
  sim.get_state(q1.data(), v1.data());
  const double* qb = static_cast<const double*>(sim.qpos_backend());
  const double* vb = static_cast<const double*>(sim.qvel_backend());
  for (int e = 0; e < 3; ++e)
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(qb[i * 3 + e], q1[e * 2 + i]);
      EXPECT_EQ(vb[i * 3 + e], v1[e * 2 + i]);
    }
}

TEST(PolicyRollout, EmptyHookIsRefused) {
  auto model = load_mjcf(sgtest::data_dir() + "/models/dm_control/cartpole.xml");
  SimulatorOptions o;
  Simulator sim(model, o);
  Rollout ro(sim, 2);
  ro.begin();
  ro.step();
  EXPECT_THROW(ro.backward_policy(nullptr, nullptr, ControlVjp{}), std::invalid_argument);
  EXPECT_THROW(ro.backward_policy_backend(nullptr, nullptr, BackendControlVjp{}), std::invalid_argument);
}

}  // namespace
