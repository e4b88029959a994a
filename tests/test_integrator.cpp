// Integrator::ImplicitDampingEuler: actuator velocity gains treated implicitly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

// Pendulum with a position servo (kp, kv) and joint damping b; hand-derived step:
// (I + h (b + kv)) dv = h f(q, v),  f = -m g L sin q + kp (u - q) - kv v - b v.
const char* kServo = R"(
<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.05"/>
  <worldbody>
    <body name="link">
      <joint name="hinge" axis="0 1 0" damping="0.3"/>
      <inertial pos="0 0 -0.5" mass="1" diaginertia="0.01 0.01 0.01"/>
    </body>
  </worldbody>
  <actuator><position joint="hinge" kp="40" kv="4"/></actuator>
</mujoco>)";

TEST(Integrator, ImplicitActuatorDampingGoldenStep) {
  const auto m = load_mjcf_string(kServo, "servo.xml");
  const double I = 0.01 + 1.0 * 0.25, g = 9.81, L = 0.5, kp = 40, kv = 4, b = 0.3, h = 0.05;
  for (Integrator integ : {Integrator::SemiImplicitEuler, Integrator::ImplicitDampingEuler}) {
    SimulatorOptions opt;
    opt.integrator = integ;
    Simulator sim(m, opt);
    const double q0 = 0.4, v0 = -1.5, u = 0.1;
    sim.set_state(&q0, &v0);
    sim.step(&u);
    double q1, v1;
    sim.get_state(&q1, &v1);
    const double f = -1.0 * g * L * std::sin(q0) + kp * (u - q0) - kv * v0 - b * v0;
    const double implicit = integ == Integrator::ImplicitDampingEuler ? b + kv : b;
    const double v = v0 + h * f / (I + h * implicit);
    EXPECT_NEAR(v1, v, 1e-13);
    EXPECT_NEAR(q1, q0 + h * v, 1e-13);
  }
}

// The G1's wrist servos (kv = 2 on ~0.004 kg m^2) are at the edge of explicit stability at the
// model's 4 ms step: under MuJoCo's Euler the wrist velocities alternate sign every substep,
// held only by the actuator force clamp. With the velocity gain implicit they settle.
TEST(Integrator, G1WristsSettleWithImplicitActuatorDamping) {
  const auto m = load_mjcf(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml");
  const int k = m->keyframe_id("knees_bent");
  ASSERT_GE(k, 0);
  auto flips = [&](Integrator integ) {
    SimulatorOptions opt;
    opt.integrator = integ;
    opt.constraints = false;  // the servo alone: the joints' friction loss would damp the wrists too
    Simulator sim(m, opt);
    sim.reset_keyframe("knees_bent");
    std::vector<double> q(m->nq), v(m->nv), prev(m->nv, 0.0);
    // a small disturbance of the wrists: 0.5 rad/s
    sim.get_state(q.data(), v.data());
    for (int j = 0; j < m->njnt; ++j)
      if (m->jnt_name[j].find("wrist") != std::string::npos) v[m->jnt_dofadr[j]] = 0.5;
    sim.set_state(q.data(), v.data());
    int n = 0;
    double vmax = 0;
    for (int t = 0; t < 250; ++t) {
      sim.step();
      sim.get_state(q.data(), v.data());
      for (int j = 0; j < m->njnt; ++j) {
        if (m->jnt_name[j].find("wrist") == std::string::npos) continue;
        const int i = m->jnt_dofadr[j];
        if (t >= 50 && v[i] * prev[i] < 0 && std::abs(v[i]) > 0.5) ++n;  // sustained chatter
        if (t >= 50) vmax = std::max(vmax, std::abs(v[i]));
        prev[i] = v[i];
      }
    }
    std::printf("[integrator] G1 wrists, %s: %d large sign flips in 200 steps, max |v| %.2f rad/s\n",
                integ == Integrator::SemiImplicitEuler ? "Euler" : "implicit actuator damping", n, vmax);
    return std::make_pair(n, vmax);
  };
  const auto euler = flips(Integrator::SemiImplicitEuler);
  const auto implicit = flips(Integrator::ImplicitDampingEuler);
  EXPECT_GT(euler.first, 100);  // the instability this integrator exists for is real
  EXPECT_EQ(implicit.first, 0);
  EXPECT_LT(implicit.second, 0.5);
}

// Its gradients: adjoint vs extended-precision finite differences and forward mode.
TEST(Integrator, ImplicitActuatorDampingGradients) {
  for (const std::string path : {sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml",
                                 sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml"}) {
    GradcheckOptions opt;
    opt.integrator = Integrator::ImplicitDampingEuler;
    opt.steps = 30;
    opt.samples = 8;
    // constraints on, the solve converged (the files' iterations="5" stops it early, where
    // finite differences see the truncated iteration: test_gradcheck.cpp)
    auto model = std::make_shared<Model>(*load_mjcf(path));
    model->opt.iterations = 50;
    const auto rep = run_gradcheck(model, opt);
    std::printf("[integrator] gradcheck %s: FD %.2e (double FD %.2e), dot %.2e\n", path.c_str(),
                rep.max_rel_error, rep.max_rel_error_double_fd, rep.dot_residual);
    EXPECT_TRUE(rep.passed) << path;
    EXPECT_LE(rep.max_rel_error, 1e-6);
    EXPECT_LE(rep.dot_residual, 1e-10);
  }
}

}  // namespace
