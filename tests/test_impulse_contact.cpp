// The Impulse contact model's host side (stiffgrad/impulse_contact.hpp, SimulatorOptions::
// contact_model): its names, the Model it steps (margins widened to the activation's reach),
// the options and models a Simulator refuses with it, its constraint capacities, the views the
// backends build, and the command line's --contact, --kappa and --sweeps. Nothing here steps
// the impulse model (tests/test_impulse_step.cpp does).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/model_arrays.hpp"
#include "stiffgrad/impulse_contact.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/simulator.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// A ball on a plane and an arm with a limited hinge (friction loss), a limited slide and an
// unlimited hinge (friction loss); the hinge's geom carries a margin wider than the activation's
// reach at κ = 300 (ln(1e6)/300 = 0.046 m).
constexpr const char* kArmXml = R"(<mujoco><option timestep="0.005"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ball" pos="0 0 0.5"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body name="arm" pos="1 0 0.5">
      <joint name="shoulder" type="hinge" axis="0 1 0" limited="true" range="-45 45" frictionloss="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04" margin="0.1"/>
      <body pos="0.3 0 0">
        <joint name="extend" type="slide" axis="1 0 0" limited="true" range="-0.05 0.05"/>
        <geom type="sphere" size="0.05"/>
        <body pos="0.1 0 0">
          <joint name="wrist" type="hinge" axis="0 0 1" frictionloss="0.1"/>
          <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.02"/>
        </body>
      </body>
    </body>
  </worldbody></mujoco>)";

std::shared_ptr<const Model> arm() { return load_mjcf_string(kArmXml, "arm.xml"); }

SimulatorOptions impulse_options() {
  SimulatorOptions o;
  o.contact_model = ContactModel::Impulse;
  return o;
}

// Simulator creation throws std::invalid_argument whose message contains every one of `parts`.
void expect_refused(const std::shared_ptr<const Model>& model, const SimulatorOptions& o,
                    std::initializer_list<const char*> parts) {
  try {
    Simulator sim(model, o);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* p : parts) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
}

TEST(ImpulseContact, Names) {
  for (ContactModel c : {ContactModel::Soft, ContactModel::Impulse}) {
    ContactModel parsed = c == ContactModel::Soft ? ContactModel::Impulse : ContactModel::Soft;
    ASSERT_TRUE(parse_contact_model(contact_model_name(c), &parsed)) << contact_model_name(c);
    EXPECT_EQ(parsed, c);
  }
  EXPECT_STREQ(contact_model_name(ContactModel::Soft), "soft");
  EXPECT_STREQ(contact_model_name(ContactModel::Impulse), "impulse");
  ContactModel unchanged = ContactModel::Soft;
  EXPECT_FALSE(parse_contact_model("Impulse", &unchanged));
  EXPECT_FALSE(parse_contact_model("rigid", &unchanged));
  EXPECT_FALSE(parse_contact_model("", &unchanged));
  EXPECT_EQ(unchanged, ContactModel::Soft);
  EXPECT_EQ(SimulatorOptions{}.contact_model, ContactModel::Soft);
  EXPECT_EQ(SimulatorOptions{}.impulse.kappa, 300);
  EXPECT_EQ(SimulatorOptions{}.impulse.sweeps, 10);
}

// Every candidate pair's margin becomes max(margin, ln(1e6)/κ); nothing else changes.
TEST(ImpulseContact, ModelWidensMargins) {
  const auto base = arm();
  ASSERT_GT(base->ncpair, 1);
  for (double kappa : {300.0, 50.0, 1e4}) {
    const double capture = std::log(1e6) / kappa;
    EXPECT_DOUBLE_EQ(impulse_capture_distance(kappa), capture);
    const Model m = impulse_contact_model(*base, {kappa, 10});
    ASSERT_EQ(m.cpair_margin.size(), base->cpair_margin.size());
    bool wider_kept = false;
    for (int p = 0; p < base->ncpair; ++p) {
      EXPECT_EQ(m.cpair_margin[sz(p)], std::max(base->cpair_margin[sz(p)], capture)) << "pair " << p;
      wider_kept = wider_kept || base->cpair_margin[sz(p)] > capture;
    }
    if (kappa == 300.0) EXPECT_TRUE(wider_kept) << "the arm's 0.1 m margin exceeds ln(1e6)/300";
    EXPECT_EQ(m.cpair_solimp, base->cpair_solimp);
    EXPECT_EQ(m.cpair_solref, base->cpair_solref);
    EXPECT_EQ(m.cpair_gap, base->cpair_gap);
    EXPECT_EQ(m.cpair_maxcon, base->cpair_maxcon);
    EXPECT_EQ(m.geom_margin, base->geom_margin);
  }
}

TEST(ImpulseContact, ModelValidatesParameters) {
  const auto base = arm();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double kappa : {0.0, -1.0, inf, nan}) {
    try {
      impulse_contact_model(*base, {kappa, 10});
      ADD_FAILURE() << "kappa " << kappa << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("kappa"), std::string::npos) << e.what();
    }
  }
  for (int sweeps : {0, -3, 1001}) {
    try {
      impulse_contact_model(*base, {300, sweeps});
      ADD_FAILURE() << "sweeps " << sweeps << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("sweeps"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(impulse_contact_model(*base, {1e-3, 1}));
  EXPECT_NO_THROW(impulse_contact_model(*base, {1e6, 1000}));
}

TEST(ImpulseContact, SimulatorRefusesIncompatibleOptions) {
  const auto m = arm();
  SimulatorOptions o = impulse_options();
  o.integrator = Integrator::RK4;
  expect_refused(m, o, {"impulse", "SemiImplicitEuler", "rk4"});
  o.integrator = Integrator::Tsit5;
  expect_refused(m, o, {"impulse", "SemiImplicitEuler", "ImplicitDampingEuler", "tsit5"});
  o.integrator = Integrator::ImplicitDampingEuler;  // Moreau midpoint with implicit actuator damping
  EXPECT_NO_THROW(Simulator(m, o));
  o = impulse_options();
  o.cfd.enabled = true;
  expect_refused(m, o, {"impulse", "contacts from distance"});
  o = impulse_options();
  o.constraints = false;
  expect_refused(m, o, {"impulse", "constraints"});
  o = impulse_options();
  o.impulse.kappa = 0;
  expect_refused(m, o, {"kappa"});
  o = impulse_options();
  o.impulse.sweeps = 0;
  expect_refused(m, o, {"sweeps"});
  auto off = std::make_shared<Model>(*m);
  off->opt.constraint_enabled = false;
  expect_refused(off, impulse_options(), {"impulse", "constraint", "disable"});
}

// Limited ball joints, limited tendons and tendon friction loss are not part of the model.
TEST(ImpulseContact, SimulatorRefusesUnsupportedModels) {
  const auto ball = load_mjcf_string(R"(<mujoco><worldbody><body pos="0 0 1">
      <joint name="neck" type="ball" limited="true" range="0 30"/><geom type="sphere" size="0.1"/>
    </body></worldbody></mujoco>)", "ball.xml");
  expect_refused(ball, impulse_options(), {"ball joint 'neck'", "limit"});
  // with the limit flag off the ball's limit is no constraint at all
  auto no_limits = std::make_shared<Model>(*ball);
  no_limits->opt.limit_enabled = false;
  EXPECT_NO_THROW(Simulator(no_limits, impulse_options()));

  const char* tendon_xml = R"(<mujoco><worldbody><body pos="0 0 1">
      <joint name="j" type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
    </body></worldbody>
    <tendon><fixed name="cable" %s><joint joint="j" coef="1"/></fixed></tendon></mujoco>)";
  char xml[1024];
  std::snprintf(xml, sizeof xml, tendon_xml, R"(limited="true" range="-0.2 0.3")");
  expect_refused(load_mjcf_string(xml, "tendon_limit.xml"), impulse_options(), {"tendon 'cable'", "limit"});
  std::snprintf(xml, sizeof xml, tendon_xml, R"(frictionloss="0.1")");
  const auto friction = load_mjcf_string(xml, "tendon_friction.xml");
  expect_refused(friction, impulse_options(), {"tendon 'cable'", "friction"});
  auto no_friction = std::make_shared<Model>(*friction);
  no_friction->opt.frictionloss_enabled = false;
  EXPECT_NO_THROW(Simulator(no_friction, impulse_options()));

  // unnamed: by index
  expect_refused(load_mjcf_string(sgtest::kLimitedChainXml, "chain.xml"), impulse_options(), {"ball joint 3"});
  // the soft model takes all of them
  EXPECT_NO_THROW(Simulator(ball, SimulatorOptions{}));
  EXPECT_NO_THROW(Simulator(friction, SimulatorOptions{}));
}

// rows = 3 x (contacts + dofs with friction loss + 2 per limited hinge or slide), each term
// under its flag; a user's row capacity is rounded down to whole blocks of 3.
TEST(ImpulseContact, Capacity) {
  const auto m = arm();
  int contacts = 0;
  for (int n : m->cpair_maxcon) contacts += n;
  ASSERT_GT(contacts, 0);
  const int friction = 2, limit_sides = 4;  // shoulder, wrist; shoulder and extend
  const SimulatorOptions o = impulse_options();
  ConstraintCapacity cap = constraint_capacity(*m, o);
  EXPECT_EQ(cap.contacts, contacts);
  EXPECT_EQ(cap.rows, 3 * (contacts + friction + limit_sides));
  EXPECT_EQ(Simulator(m, o).capacity().rows, cap.rows);
  // the soft model's count differs: pyramidal condim-3 contacts take 4 rows, friction loss and
  // limit sides one each
  EXPECT_EQ(constraint_capacity(*m, SimulatorOptions{}).rows, 4 * contacts + friction + limit_sides);

  auto flags = std::make_shared<Model>(*m);
  flags->opt.frictionloss_enabled = false;
  EXPECT_EQ(constraint_capacity(*flags, o).rows, 3 * (contacts + limit_sides));
  flags->opt.limit_enabled = false;
  EXPECT_EQ(constraint_capacity(*flags, o).rows, 3 * contacts);
  flags->opt.contact_enabled = false;
  cap = constraint_capacity(*flags, o);
  EXPECT_EQ(cap.rows, 0);
  EXPECT_EQ(cap.contacts, 0);

  SimulatorOptions user = o;
  user.max_constraint_rows = 10;
  user.max_contacts = 1;
  cap = constraint_capacity(*m, user);
  EXPECT_EQ(cap.rows, 9);
  EXPECT_EQ(cap.contacts, 1);
  user.max_constraint_rows = 12;
  EXPECT_EQ(constraint_capacity(*m, user).rows, 12);
  user.max_constraint_rows = 2;  // less than one block: nothing fits
  cap = constraint_capacity(*m, user);
  EXPECT_EQ(cap.rows, 0);
  EXPECT_EQ(cap.contacts, 0);
  user.max_constraint_rows = 100000;
  EXPECT_EQ(constraint_capacity(*m, user).rows, 3 * (contacts + friction + limit_sides));
  user = o;
  user.constraints = false;
  EXPECT_EQ(constraint_capacity(*m, user).rows, 0);
}

// The views the backends build carry the contact model and its parameters.
TEST(ImpulseContact, Views) {
  const auto m = arm();
  const ModelArrays<double> arrays(*m);
  SimulatorOptions o = impulse_options();
  o.impulse = {150, 7};
  const auto v = simulation_view(arrays.host_view(), o);
  EXPECT_EQ(v.contact_model, kern::kContactImpulse);
  EXPECT_EQ(v.impulse_kappa, 150.0);
  EXPECT_EQ(v.impulse_sweeps, 7);
  EXPECT_EQ(v.rk_integrator, kern::kIntEuler);
  const auto soft = simulation_view(arrays.host_view(), SimulatorOptions{});
  EXPECT_EQ(soft.contact_model, kern::kContactSoft);

  const auto owned = impulse_model_for(*m, ContactModel::Impulse, o.impulse);
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(owned->cpair_margin, impulse_contact_model(*m, o.impulse).cpair_margin);
  EXPECT_EQ(impulse_model_for(*m, ContactModel::Soft, o.impulse), nullptr);
}

// --contact, --kappa and --sweeps: parsed for rollout, grad and gradcheck; bad values and
// combinations are usage errors (status 2) found before any file is read; a model the impulse
// model cannot step is an error (status 1) naming the joint.
TEST(ImpulseContact, CommandLine) {
  const std::string model = sgtest::data_dir() + "/models/dm_control/cartpole.xml";
  const auto states = temp_file("imp_s.csv", "0.1,0.5,0.0,-0.3,0.7\n");
  const auto weights = temp_file("imp_w.csv", "1,0,0,0\n");
  const std::string rollout = "rollout " + model + " --states " + states + " --steps 1 ";
  const std::string grad = "grad " + model + " --states " + states + " --weights " + weights + " --steps 1 ";
  const std::string gradcheck = "gradcheck " + model + " --steps 1 ";
  const std::string missing = "rollout /nonexistent.xml --states /nonexistent.csv --steps 1 ";
  struct Case {
    std::string args, message;
  };
  const Case usage[] = {
      {rollout + "--contact rigid", "--contact must be soft or impulse, got 'rigid'"},
      {grad + "--contact Impulse", "--contact must be soft or impulse"},
      {gradcheck + "--contact", "--contact needs a value"},
      {rollout + "--kappa 100", "--kappa needs --contact impulse"},
      {grad + "--contact soft --sweeps 5", "--sweeps needs --contact impulse"},
      {gradcheck + "--sweeps 5", "--sweeps needs --contact impulse"},
      {rollout + "--contact impulse --kappa 0", "--kappa must be a positive number"},
      {rollout + "--contact impulse --kappa -5", "--kappa must be a positive number"},
      {rollout + "--contact impulse --kappa inf", "--kappa must be a positive number"},
      {rollout + "--contact impulse --kappa 3x", "--kappa must be a positive number"},
      {rollout + "--contact impulse --sweeps 0", "--sweeps must be an integer from 1 to 1000"},
      {gradcheck + "--contact impulse --sweeps 1001", "--sweeps must be an integer from 1 to 1000"},
      {rollout + "--contact impulse --integrator rk4", "--contact impulse steps with its own integrator"},
      {gradcheck + "--contact impulse --integrator rk4", "needs --integrator euler or implicit-actuators"},
      {grad + "--contact impulse --cfd 0,0.01,0.05,1,2", "--contact impulse cannot be combined with --cfd"},
      {missing + "--contact impulse --integrator tsit5", "needs --integrator euler"},
  };
  for (const Case& c : usage) {
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  // accepted flags reach the Simulator: a model it refuses fails at creation, before stepping
  const auto ball = temp_file("imp_ball.xml", R"(<mujoco><worldbody><body pos="0 0 1">
      <joint name="neck" type="ball" limited="true" range="0 30"/><geom type="sphere" size="0.1"/>
    </body></worldbody></mujoco>)");
  const auto ball_state = temp_file("imp_ball.csv", "1,0,0,0,0,0,0\n");
  for (const std::string& cmd : {"rollout " + ball + " --states " + ball_state + " --steps 1",
                                 "gradcheck " + ball + " --steps 1"}) {
    const auto r = run_cli(cmd + " --contact impulse --kappa 200 --sweeps 4");
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("ball joint 'neck'"), std::string::npos) << cmd << "\n" << r.err;
  }
  // --contact soft is the default
  const std::string five = "rollout " + model + " --states " + states + " --steps 5";
  const auto a = run_cli(five), b = run_cli(five + " --contact soft");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  for (const char* cmd : {"rollout", "grad", "gradcheck"}) {
    const auto h = run_cli(std::string(cmd) + " --help");
    EXPECT_EQ(h.status, 0) << cmd;
    EXPECT_NE(h.out.find("--contact soft|impulse"), std::string::npos) << cmd;
    EXPECT_NE(h.out.find("--kappa"), std::string::npos) << cmd;
    EXPECT_NE(h.out.find("--sweeps"), std::string::npos) << cmd;
  }
}

}  // namespace
