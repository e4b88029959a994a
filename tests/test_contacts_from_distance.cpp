// Contacts from distance (issue 8; stiffgrad/contacts_from_distance.hpp):
//   - forward values are the physical model's, bit for bit, and replay stays bitwise;
//   - without CFD the gradient of a pre-contact loss is exactly zero; with CFD it is non-zero
//     and points the way that brings the bodies together;
//   - the CFD adjoint of one substep equals the dual-number forward mode of the CFD model's
//     substep at the same state (dot-product test), for Euler and an adaptive integrator;
//   - bad parameters are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "stiffgrad/contacts_from_distance.hpp"
#include "stiffgrad/gradcheck.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// Two balls in zero gravity on the x axis, 3 cm apart (surface to surface), ball 1 drifting
// slowly toward ball 2 but never reaching it within the rollout.
constexpr const char* kTwoBallsXml = R"(<mujoco><option timestep="0.01" gravity="0 0 0"/>
  <worldbody>
    <body name="b1" pos="0 0 0"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
    <body name="b2" pos="0.23 0 0"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody></mujoco>)";

struct TwoBalls {
  std::shared_ptr<const Model> model = load_mjcf_string(kTwoBallsXml, "two_balls.xml");
  std::vector<double> qpos = model->qpos0, qvel = std::vector<double>(sz(model->nv), 0.0);
  TwoBalls() { qvel[0] = 0.05; }  // 5 mm/s toward ball 2: 1 mm over the 20 steps
};

// dL/d(x of ball 1 at t = 0) for L = x of ball 2 at T, and the final states (for the
// forward-unchanged check).
struct PreContact {
  double grad_x1 = 0;
  std::vector<double> qpos_T, qvel_T;
  bool replay = false;
};

PreContact pre_contact_gradient(bool cfd_on) {
  const TwoBalls tb;
  const Model& m = *tb.model;
  const int T = 20;
  SimulatorOptions o;
  o.cfd.enabled = cfd_on;
  Simulator sim(tb.model, o);
  sim.set_state(tb.qpos.data(), tb.qvel.data());
  Rollout ro(sim, T);
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step();
  PreContact r;
  r.qpos_T.resize(sz(m.nq));
  r.qvel_T.resize(sz(m.nv));
  sim.get_state(r.qpos_T.data(), r.qvel_T.data());
  std::vector<double> dq(sz((T + 1) * m.nq), 0.0), dv(sz((T + 1) * m.nv), 0.0);
  dq[sz(T * m.nq + 7)] = 1.0;  // x of ball 2 (its free joint's qpos starts at 7)
  std::vector<double> gq(sz(m.nv)), gv(sz(m.nv));
  ro.backward(dq.data(), dv.data(), gq.data(), gv.data(), nullptr);
  r.grad_x1 = gq[0];
  r.replay = ro.replay_bitwise();
  const auto stats = sim.contact_stats();
  EXPECT_EQ(stats[0], 0.0) << "the balls were meant not to touch";
  return r;
}

TEST(ContactsFromDistance, PreContactGradientIsZeroWithoutAndPointsTogetherWith) {
  const PreContact off = pre_contact_gradient(false), on = pre_contact_gradient(true);
  EXPECT_EQ(off.grad_x1, 0.0) << "without CFD nothing couples the balls before they touch";
  // moving ball 1 toward ball 2 (+x) pushes ball 2 further along +x in the CFD model
  EXPECT_GT(on.grad_x1, 1e-6) << "with CFD the gradient must point the way that brings the balls together";
  EXPECT_EQ(off.qpos_T, on.qpos_T) << "CFD must not change forward values";
  EXPECT_EQ(off.qvel_T, on.qvel_T);
  EXPECT_TRUE(off.replay);
  EXPECT_TRUE(on.replay);
  std::printf("[cfd] two balls 3 cm apart, T=20: dL/dx1 without CFD %.3g, with CFD %.3g\n", off.grad_x1, on.grad_x1);
}

// One control step of one substep: the CFD Rollout's gradient is the adjoint of the CFD
// model's substep at the recorded state, so it must equal forward mode on that model.
void one_step_dot_test(Integrator integrator) {
  auto base = load_mjcf(sgtest::humanoid_xml());
  // settle onto the floor with Euler: some contacts touch, others are within the CFD width
  SimulatorOptions settle;
  Simulator s0(base, settle);
  for (int t = 0; t < 200; ++t) s0.step();
  const int nq = base->nq, nv = base->nv, nu = base->nu;
  std::vector<double> q(sz(nq)), v(sz(nv)), u(sz(nu), 0.1);
  s0.get_state(q.data(), v.data());

  SimulatorOptions o;
  o.integrator = integrator;
  o.cfd.enabled = true;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n01;
  std::vector<double> dq(sz(2 * nq), 0.0), dv(sz(2 * nv), 0.0);
  for (int i = 0; i < nq; ++i) dq[sz(nq + i)] = n01(rng);
  for (int i = 0; i < nv; ++i) dv[sz(nv + i)] = n01(rng);
  // the gradient of the loss row on the state after one control step from (q, v, u)
  const auto gradient = [&](const SimulatorOptions& opts, std::vector<double>& gq, std::vector<double>& gv,
                            std::vector<double>& gu) {
    Simulator sim(base, opts);
    sim.set_state(q.data(), v.data());
    Rollout ro(sim, 1);
    ro.begin();
    ro.step(u.data());
    ro.backward_raw(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
    EXPECT_TRUE(ro.replay_bitwise());
  };
  std::vector<double> gq(sz(nq)), gv(sz(nv)), gu(sz(nu));
  gradient(o, gq, gv, gu);

  const Model cfd = contacts_from_distance_model(*base, o.cfd);
  std::vector<double> uq(sz(nq)), uv(sz(nv)), uc(sz(nu));
  for (double& x : uq) x = n01(rng);
  for (double& x : uv) x = n01(rng);
  for (double& x : uc) x = n01(rng);
  const auto jvp = rollout_jvp(cfd, q.data(), v.data(), u.data(), 1, 1, uq.data(), uv.data(), uc.data(),
                               Precision::Double, integrator, true, o.adaptive);
  double lhs = 0, rhs = 0, scale = 0;
  for (int i = 0; i < nq; ++i) lhs += dq[sz(nq + i)] * jvp[sz(i)];
  for (int i = 0; i < nv; ++i) lhs += dv[sz(nv + i)] * jvp[sz(nq + i)];
  auto add = [&](double g, double w) { rhs += g * w; scale += std::abs(g * w); };
  for (int i = 0; i < nq; ++i) add(gq[sz(i)], uq[sz(i)]);
  for (int i = 0; i < nv; ++i) add(gv[sz(i)], uv[sz(i)]);
  for (int i = 0; i < nu; ++i) add(gu[sz(i)], uc[sz(i)]);
  const double rel = std::abs(lhs - rhs) / scale;
  EXPECT_LE(rel, 1e-10) << integrator_name(integrator) << ": forward " << lhs << " reverse " << rhs;

  // and the CFD gradient is not the physical one (contacts within the width contribute)
  SimulatorOptions phys = o;
  phys.cfd.enabled = false;
  std::vector<double> pq(sz(nq)), pv(sz(nv)), pu(sz(nu));
  gradient(phys, pq, pv, pu);
  double diff = 0;
  for (int i = 0; i < nv; ++i) diff = std::max(diff, std::abs(pv[sz(i)] - gv[sz(i)]));
  EXPECT_GT(diff, 1e-6) << "the CFD model changed nothing on a humanoid lying on its floor";
  std::printf("[cfd] humanoid on the floor, %s: one-substep dot-product rel residual %.2e; "
              "largest change of dL/dqvel0 from the physical gradient %.2e\n",
              integrator_name(integrator), rel, diff);
}

TEST(ContactsFromDistance, AdjointIsForwardModeOfTheCfdModelEuler) { one_step_dot_test(Integrator::SemiImplicitEuler); }
TEST(ContactsFromDistance, AdjointIsForwardModeOfTheCfdModelTsit5) { one_step_dot_test(Integrator::Tsit5); }

TEST(ContactsFromDistance, ParametersAreChecked) {
  EXPECT_THROW(parse_contacts_from_distance("0,0.01,0.05,1"), std::invalid_argument);
  EXPECT_THROW(parse_contacts_from_distance("0,0.01,-0.05,1,2"), std::invalid_argument);
  EXPECT_THROW(parse_contacts_from_distance("0,0.01,0.05,1,0.5"), std::invalid_argument);
  EXPECT_THROW(parse_contacts_from_distance("0,x,0.05,1,2"), std::invalid_argument);
  const ContactsFromDistance c = parse_contacts_from_distance("0,0.01,0.05,1,2");
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.width, 0.05);
  const TwoBalls tb;
  const Model cfd = contacts_from_distance_model(*tb.model, c);
  ASSERT_GT(cfd.ncpair, 0);
  EXPECT_EQ(cfd.cpair_margin[0], 0.05);
  EXPECT_EQ(cfd.cpair_solimp[2], 0.05);
  SimulatorOptions o;
  o.cfd = c;
  o.constraints = false;
  EXPECT_THROW(Simulator(tb.model, o), std::invalid_argument);
}

}  // namespace
