// Tendon transmissions (issue 39; kernels/dynamics/actuation.hpp): actuators on fixed tendons,
// against MuJoCo 2.2.2 (which has them) and through the gradient checks.
//
// The model: a gripper base on a slide with two sibling finger slides coupled by a "split"
// tendon (Menagerie's Panda hand) under a servo, a two-hinge finger curled by a servo on a chain
// tendon (both <general> affine, as MuJoCo 2.2.2 writes a position servo with damping), a motor
// on the base, contacts with a floor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "mujoco_bridge.hpp"
#include "stiffgrad/stiffgrad.hpp"

namespace {

const char* kGripper = R"(<mujoco model="tendon actuators"><option timestep="0.002"/>
<worldbody><geom type="plane" size="2 2 0.1"/>
 <body pos="0 0 0.2"><joint name="base" type="slide" axis="0 0 1" damping="1"/>
  <geom type="box" size="0.05 0.05 0.02"/>
  <body pos="0.03 0 -0.06"><joint name="f1" type="slide" axis="1 0 0" limited="true" range="-0.02 0.03"/>
   <geom type="box" size="0.01 0.01 0.04"/></body>
  <body pos="-0.03 0 -0.06"><joint name="f2" type="slide" axis="-1 0 0" limited="true" range="-0.02 0.03"/>
   <geom type="box" size="0.01 0.01 0.04"/></body></body>
 <body pos="0.5 0 0.3"><joint name="h1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02"/>
  <body pos="0.2 0 0"><joint name="h2" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.15 0 0" size="0.02"/></body></body>
</worldbody>
<tendon><fixed name="split"><joint joint="f1" coef="0.5"/><joint joint="f2" coef="0.5"/></fixed>
 <fixed name="curl"><joint joint="h1" coef="1"/><joint joint="h2" coef="0.6"/></fixed></tendon>
<actuator><general name="grip" tendon="split" gainprm="80" biastype="affine" biasprm="0 -80 -4" ctrllimited="true" ctrlrange="-0.01 0.03"/>
 <general name="curler" tendon="curl" gainprm="10" biastype="affine" biasprm="0 -10 -0.5"/><motor joint="base" gear="3"/></actuator>
<keyframe><key name="grip" ctrl="0.02 0.4 1"/></keyframe></mujoco>)";

// The same without the split tendon's actuator: every tendon actuator on one chain of the tree.
std::string chain_only() {
  std::string xml = kGripper;
  const auto a = xml.find("<general name=\"grip\"");
  xml.erase(a, xml.find("/>", a) + 2 - a);
  const auto k = xml.find("ctrl=\"0.02 0.4 1\"");
  xml.replace(k, 17, "ctrl=\"0.4 1\"");
  return xml;
}

TEST(TendonActuators, LoadedAsTransmissions) {
  const auto m = stiffgrad::load_mjcf_string(kGripper, "gripper.xml");
  ASSERT_EQ(m->nu, 3);
  EXPECT_EQ(m->actuator_trntype, (std::vector<int>{3, 3, 0}));
  EXPECT_EQ(m->actuator_trnid[0], 0);
  EXPECT_EQ(m->actuator_trnid[1], 1);
}

TEST(TendonActuators, ForcesAndDynamicsEqualMujoco) {
  ASSERT_EQ(sgtest::mujoco_version_problem(), "");
  sgtest::BothModels both = sgtest::load_both_converged(kGripper);
  ASSERT_TRUE(both.mj) << both.error;
  const sgtest::MjModelPtr& mj = both.mj;
  const stiffgrad::Model& ours = *both.ours;
  sgtest::MjDataPtr d(mj_makeData(mj.get()));
  mj_resetDataKeyframe(mj.get(), d.get(), 0);
  double worst_force = 0, worst_qacc = 0;
  int states = 0, contacts = 0;
  for (int s = 1; s <= 600; ++s) {
    // a changing grip command, so that the servos move
    d->ctrl[0] = 0.03 * std::sin(0.01 * s);
    mj_step(mj.get(), d.get());
    if (s % 20) continue;
    mj_forward(mj.get(), d.get());
    const auto sd = stiffgrad::smooth_dynamics(ours, d->qpos, d->qvel, d->ctrl);
    const auto cd = stiffgrad::constrained_dynamics(ours, d->qpos, d->qvel, d->ctrl);
    ASSERT_EQ(cd.status, 0);
    double fscale = 1, ascale = 1;
    for (int i = 0; i < mj->nv; ++i) {
      fscale = std::max(fscale, std::abs(d->qfrc_actuator[i]));
      ascale = std::max(ascale, std::abs(d->qacc[i]));
    }
    for (int i = 0; i < mj->nv; ++i) {
      const auto k = static_cast<std::size_t>(i);
      worst_force =
          std::max(worst_force, std::abs(sd.qfrc_actuator[k] - d->qfrc_actuator[i]) / fscale);
      worst_qacc = std::max(worst_qacc, std::abs(cd.qacc[k] - d->qacc[i]) / ascale);
    }
    ++states;
    contacts += d->ncon;
  }
  std::printf(
      "[tendon actuators] %d states, %d contacts: qfrc_actuator %.2e, qacc %.2e (relative)\n",
      states, contacts, worst_force, worst_qacc);
  EXPECT_GT(contacts, 0);
  EXPECT_LE(worst_force, 1e-12);
  EXPECT_LE(worst_qacc,
            1e-8);  // the constraint pipeline's parity bound (test_constraint_parity.cpp)
}

TEST(TendonActuators, GradientsEulerAndImplicitDamping) {
  struct Run {
    std::string xml;
    stiffgrad::Integrator integrator;
  };
  for (const Run& r : {Run{kGripper, stiffgrad::Integrator::SemiImplicitEuler},
                       Run{chain_only(), stiffgrad::Integrator::ImplicitDampingEuler}}) {
    auto model =
        std::make_shared<stiffgrad::Model>(*stiffgrad::load_mjcf_string(r.xml, "gripper.xml"));
    model->opt.iterations = 50;
    stiffgrad::GradcheckOptions opt;
    opt.integrator = r.integrator;
    opt.steps = 30;
    opt.samples = 8;
    const auto rep = stiffgrad::run_gradcheck(model, opt);
    std::printf("[tendon actuators] gradcheck %s: FD %.2e (double FD %.2e), dot %.2e\n",
                stiffgrad::integrator_name(r.integrator), rep.max_rel_error,
                rep.max_rel_error_double_fd, rep.dot_residual);
    EXPECT_TRUE(rep.passed) << stiffgrad::integrator_name(r.integrator);
  }
}

// One implicit step by hand: v1 = v0 + h (M + h D)⁻¹ f, with D = diag(dof damping) + K and K the
// curl servo's kv gear² JᵀJ over its chain tendon (J = (1, 0.6) on the two hinges): the off-
// diagonal entry sits in M's tree pattern (h1 is h2's parent). Gravity off, no contact.
TEST(TendonActuators, ImplicitTendonDampingGoldenStep) {
  std::string xml = chain_only();
  xml.replace(xml.find("<option"), 7, "<option gravity=\"0 0 0\"");
  const auto m = stiffgrad::load_mjcf_string(xml, "chain.xml");
  const int nv = m->nv;
  ASSERT_EQ(nv, 5);
  std::vector<double> q = m->qpos0, v = {0.1, -0.2, 0.3, 0.7, -0.4}, u = {0.4, 1.0};
  q[3] = 0.2, q[4] = -0.3;
  const auto sd = stiffgrad::smooth_dynamics(*m, q.data(), v.data(), u.data());
  const double h = m->opt.timestep, kv = 0.5;
  std::vector<double> A = sd.M, f(static_cast<std::size_t>(nv));
  const auto z = [](int i) { return static_cast<std::size_t>(i); };
  for (int i = 0; i < nv; ++i) {
    f[z(i)] = sd.qfrc_passive[z(i)] + sd.qfrc_actuator[z(i)] - sd.qfrc_bias[z(i)];
    A[z(i * nv + i)] += h * m->dof_damping[z(i)];
  }
  const double J[2] = {1.0, 0.6};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) A[z((3 + a) * nv + 3 + b)] += h * kv * J[a] * J[b];
  // Gaussian elimination (A is SPD)
  std::vector<double> x = f;
  for (int c = 0; c < nv; ++c)
    for (int r = c + 1; r < nv; ++r) {
      const double l = A[z(r * nv + c)] / A[z(c * nv + c)];
      for (int k = c; k < nv; ++k) A[z(r * nv + k)] -= l * A[z(c * nv + k)];
      x[z(r)] -= l * x[z(c)];
    }
  for (int r = nv - 1; r >= 0; --r) {
    for (int k = r + 1; k < nv; ++k) x[z(r)] -= A[z(r * nv + k)] * x[z(k)];
    x[z(r)] /= A[z(r * nv + r)];
  }
  stiffgrad::SimulatorOptions o;
  o.integrator = stiffgrad::Integrator::ImplicitDampingEuler;
  stiffgrad::Simulator sim(m, o);
  sim.set_state(q.data(), v.data());
  sim.step(u.data());
  std::vector<double> q1(z(m->nq)), v1(z(nv));
  sim.get_state(q1.data(), v1.data());
  for (int i = 0; i < nv; ++i) EXPECT_NEAR(v1[z(i)], v[z(i)] + h * x[z(i)], 1e-12) << i;
}

// The implicit actuator damping lives in M's tree-sparse factor: a tendon coupling two branches
// (the split fingers) cannot be made implicit there, and says so.
TEST(TendonActuators, ImplicitDampingRefusesATendonAcrossBranches) {
  const auto m = stiffgrad::load_mjcf_string(kGripper, "gripper.xml");
  stiffgrad::SimulatorOptions o;
  o.integrator = stiffgrad::Integrator::ImplicitDampingEuler;
  try {
    stiffgrad::Simulator sim(m, o);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("actuator 'grip'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tendon 'split'"), std::string::npos) << e.what();
  }
  const auto c = stiffgrad::load_mjcf_string(chain_only(), "chain.xml");
  EXPECT_NO_THROW(stiffgrad::Simulator(c, o));
}

}  // namespace
