// Golden tests on small chains against hand-derived closed forms (not produced by the code
// under test): a pendulum, a double pendulum and a free body, in double and float.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"

namespace {

using namespace stiffgrad;

constexpr double g = 9.81;

// Pendulum: hinge about y through the origin, COM at (0, 0, -L), mass m, Iyy about the COM,
// armature a, stiffness k about springref q_s, damping b, one motor of gear G.
const char* kPendulum = R"(
<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="link">
      <joint name="hinge" type="hinge" axis="0 1 0" armature="0.05" stiffness="2" springref="0.3" damping="0.4"/>
      <inertial pos="0 0 -0.7" mass="1.5" diaginertia="0.02 0.03 0.04"/>
    </body>
  </worldbody>
  <actuator><motor joint="hinge" gear="2.5" ctrlrange="-1 1" ctrllimited="true"/></actuator>
</mujoco>)";
constexpr double pL = 0.7, pm = 1.5, pIyy = 0.03, pa = 0.05, pk = 2, pqs = 0.3, pb = 0.4, pG = 2.5;

TEST(Golden, PendulumDynamics) {
  const auto m = load_mjcf_string(kPendulum, "pendulum.xml");
  for (double q : {-2.0, -0.4, 0.0, 0.9, 2.8}) {
    for (double v : {-1.5, 0.0, 2.0}) {
      for (double u : {-3.0, 0.2, 0.8}) {
        const auto r = smooth_dynamics(*m, &q, &v, &u);
        const double M = pIyy + pm * pL * pL + pa;
        const double bias = pm * g * pL * std::sin(q);  // -dV/dq with V = -m g L cos q
        const double passive = -pk * (q - pqs) - pb * v;
        const double act = pG * std::clamp(u, -1.0, 1.0);  // gear * (gain 1 * clamped ctrl)
        EXPECT_NEAR(r.M[0], M, 1e-14);
        EXPECT_NEAR(r.qfrc_bias[0], bias, 1e-13);
        EXPECT_NEAR(r.qfrc_passive[0], passive, 1e-13);
        EXPECT_NEAR(r.qfrc_actuator[0], act, 1e-13);
        EXPECT_NEAR(r.qacc[0], (passive + act - bias) / M, 1e-12);
      }
    }
  }
}

// One step of MuJoCo's Euler with implicit damping: (M + h b) dv = h f, q1 = q0 + h v1.
void pendulum_step_check(Precision precision, double tol) {
  const auto m = load_mjcf_string(kPendulum, "pendulum.xml");
  SimulatorOptions opt;
  opt.nenv = 3;
  opt.precision = precision;
  Simulator sim(m, opt);
  const std::vector<double> q0 = {0.5, -1.0, 2.0}, v0 = {0.0, 1.0, -2.0}, u = {0.3, -0.7, 2.0};
  sim.set_state(q0.data(), v0.data());
  sim.step(u.data());
  std::vector<double> q1(3), v1(3);
  sim.get_state(q1.data(), v1.data());
  const double h = 0.01;
  for (int e = 0; e < 3; ++e) {
    const double M = pIyy + pm * pL * pL + pa;
    const double f = -pk * (q0[e] - pqs) - pb * v0[e] + pG * std::clamp(u[e], -1.0, 1.0) -
                     pm * g * pL * std::sin(q0[e]);
    const double v = v0[e] + h * f / (M + h * pb);
    EXPECT_NEAR(v1[e], v, tol * (1 + std::abs(v)));
    EXPECT_NEAR(q1[e], q0[e] + h * v, tol * (1 + std::abs(q0[e])));
  }
}

TEST(Golden, PendulumEulerStepDouble) { pendulum_step_check(Precision::Double, 1e-14); }
TEST(Golden, PendulumEulerStepFloat) { pendulum_step_check(Precision::Float, 2e-6); }

// Double pendulum of point-like links (rotational inertia I about y at each COM), relative
// angles, both hinges about y: the textbook mass matrix and Coriolis/gravity terms.
const char* kDoublePendulum = R"(
<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="a">
      <joint name="j1" axis="0 1 0"/>
      <inertial pos="0 0 -0.8" mass="1.2" diaginertia="0.01 0.02 0.01"/>
      <body name="b" pos="0 0 -0.8">
        <joint name="j2" axis="0 1 0"/>
        <inertial pos="0 0 -0.6" mass="0.7" diaginertia="0.01 0.015 0.01"/>
      </body>
    </body>
  </worldbody>
</mujoco>)";

TEST(Golden, DoublePendulumDynamics) {
  const auto m = load_mjcf_string(kDoublePendulum, "double_pendulum.xml");
  const double m1 = 1.2, m2 = 0.7, L1 = 0.8, L2 = 0.6, I1 = 0.02, I2 = 0.015;
  const double states[][4] = {{0.3, -0.5, 1.0, 2.0}, {2.0, 1.0, -0.5, 0.3}, {-1.2, 2.5, 0, 0}};
  for (const auto& s : states) {
    const double q[2] = {s[0], s[1]}, v[2] = {s[2], s[3]};
    const auto r = smooth_dynamics(*m, q, v, nullptr);
    const double c2 = std::cos(q[1]), s2 = std::sin(q[1]);
    const double M11 = I1 + I2 + m1 * L1 * L1 + m2 * (L1 * L1 + L2 * L2 + 2 * L1 * L2 * c2);
    const double M12 = I2 + m2 * (L2 * L2 + L1 * L2 * c2);
    const double M22 = I2 + m2 * L2 * L2;
    const double h = m2 * L1 * L2 * s2;
    const double cor1 = -h * (2 * v[0] * v[1] + v[1] * v[1]);
    const double cor2 = h * v[0] * v[0];
    const double g1 = g * (m1 * L1 * std::sin(q[0]) + m2 * (L1 * std::sin(q[0]) + L2 * std::sin(q[0] + q[1])));
    const double g2 = g * m2 * L2 * std::sin(q[0] + q[1]);
    EXPECT_NEAR(r.M[0], M11, 1e-13);
    EXPECT_NEAR(r.M[1], M12, 1e-13);
    EXPECT_NEAR(r.M[2], M12, 1e-13);
    EXPECT_NEAR(r.M[3], M22, 1e-13);
    EXPECT_NEAR(r.qfrc_bias[0], cor1 + g1, 1e-12);
    EXPECT_NEAR(r.qfrc_bias[1], cor2 + g2, 1e-12);
    // qacc = M^-1 (-bias), by Cramer's rule
    const double det = M11 * M22 - M12 * M12;
    const double f1 = -(cor1 + g1), f2 = -(cor2 + g2);
    EXPECT_NEAR(r.qacc[0], (M22 * f1 - M12 * f2) / det, 1e-11);
    EXPECT_NEAR(r.qacc[1], (M11 * f2 - M12 * f1) / det, 1e-11);
  }
}

// Free body with its COM at the body origin: M = diag(m, m, m, Ix, Iy, Iz) in MuJoCo's free
// joint coordinates (linear velocity in world, angular velocity in the body frame), bias =
// (0, 0, m g, w x I w) (Euler's equations), so a body at rest falls with -g.
const char* kFreeBody = R"(
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <body name="box" pos="0 0 1">
      <freejoint/>
      <inertial pos="0 0 0" mass="2" diaginertia="0.1 0.2 0.3"/>
    </body>
  </worldbody>
</mujoco>)";

TEST(Golden, FreeBodyDynamics) {
  const auto m = load_mjcf_string(kFreeBody, "free.xml");
  ASSERT_EQ(m->nq, 7);
  ASSERT_EQ(m->nv, 6);
  const double I[3] = {0.1, 0.2, 0.3}, mass = 2;
  const double c = std::cos(0.35), s = std::sin(0.35);
  const double qpos[7] = {0.1, -0.2, 1.5, c, s * 0.6, 0.0, s * 0.8};  // any orientation
  const double w[3] = {0.7, -1.1, 2.0};
  const double qvel[6] = {0.3, 0.2, -0.1, w[0], w[1], w[2]};
  const auto r = smooth_dynamics(*m, qpos, qvel, nullptr);
  const double Mdiag[6] = {mass, mass, mass, I[0], I[1], I[2]};
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_NEAR(r.M[6 * i + j], i == j ? Mdiag[i] : 0.0, 1e-14);
  const double Iw[3] = {I[0] * w[0], I[1] * w[1], I[2] * w[2]};
  const double gyro[3] = {w[1] * Iw[2] - w[2] * Iw[1], w[2] * Iw[0] - w[0] * Iw[2], w[0] * Iw[1] - w[1] * Iw[0]};
  const double bias[6] = {0, 0, mass * g, gyro[0], gyro[1], gyro[2]};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(r.qfrc_bias[i], bias[i], 1e-13);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.qacc[i], i == 2 ? -g : 0.0, 1e-13);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.qacc[3 + i], -gyro[i] / I[i], 1e-13);
}

// Falling from rest for N semi-implicit Euler steps: v_N = -N g h, z_N = z0 - g h^2 N(N+1)/2.
void free_fall_check(Precision precision, double tol) {
  const auto m = load_mjcf_string(kFreeBody, "free.xml");
  SimulatorOptions opt;
  opt.precision = precision;
  opt.nenv = 2;
  opt.substeps = 5;
  Simulator sim(m, opt);
  const int N = 40 * opt.substeps;
  for (int t = 0; t < N / opt.substeps; ++t) sim.step();
  std::vector<double> qpos(2 * 7), qvel(2 * 6);
  sim.get_state(qpos.data(), qvel.data());
  const double h = 0.002;
  for (int e = 0; e < 2; ++e) {
    EXPECT_NEAR(qvel[6 * e + 2], -N * g * h, tol);
    EXPECT_NEAR(qpos[7 * e + 2], 1.0 - g * h * h * N * (N + 1) / 2.0, tol);
    EXPECT_EQ(qpos[7 * e + 3], 1.0);  // orientation untouched
  }
}

TEST(Golden, FreeFallDouble) { free_fall_check(Precision::Double, 1e-12); }
TEST(Golden, FreeFallFloat) { free_fall_check(Precision::Float, 1e-5); }

}  // namespace
