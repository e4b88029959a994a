// Gravity compensation (MuJoCo >= 3's body gravcomp; kernels/dynamics/passive.hpp), which MuJoCo
// 2.2.2 does not have: checked against its definition. A body cancelling its whole weight feels
// no gravity: a chain of such bodies at rest, with nothing else acting, has qacc = 0, and the
// passive force equals the gravity part of the bias force (qfrc_bias at qvel = 0 is gravity
// alone). A fraction c of the weight gives c times that force. (Gradients: the "gravcomp" case
// of tests/test_constraint_adjoint.cpp, against dual numbers and finite differences.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "stiffgrad/dynamics.hpp"
#include "stiffgrad/mjcf.hpp"
#include "test_support.hpp"

namespace {

std::string arm(const char* c1, const char* c2) {
  return std::string(R"(<mujoco><option timestep="0.002"/><worldbody>
<body pos="0 0 0.6" gravcomp=")") +
         c1 + R"("><joint type="hinge" axis="0 1 0"/>
 <geom type="capsule" fromto="0 0 0 0.3 0 0.05" size="0.03"/>
 <body pos="0.3 0 0.05" gravcomp=")" +
         c2 + R"("><joint type="ball"/><geom type="capsule" fromto="0 0 0 0.25 0.1 0" size="0.03"/>
  <body pos="0.25 0.1 0" gravcomp=")" +
         c2 +
         R"("><joint type="slide" axis="0.3 0 1"/><geom type="sphere" size="0.04"/></body></body></body>
<body pos="0 1 1" gravcomp=")" +
         c1 + R"("><freejoint/><geom type="box" size="0.05 0.06 0.04"/></body>
</worldbody></mujoco>)";
}

TEST(Gravcomp, WholeWeightCancelsGravityAndFractionsScaleIt) {
  const auto full = stiffgrad::load_mjcf_string(arm("1", "1"), "full.xml");
  const auto half = stiffgrad::load_mjcf_string(arm("0.5", "0.5"), "half.xml");
  const auto none = stiffgrad::load_mjcf_string(arm("0", "0"), "none.xml");
  ASSERT_EQ(full->body_gravcomp, (std::vector<double>{0, 1, 1, 1, 1}));
  const int nq = full->nq, nv = full->nv;
  std::vector<double> q = full->qpos0, v(static_cast<std::size_t>(nv), 0.0), u;
  // a posed configuration: the hinge turned, the ball joint tilted, the slide out
  q[0] = 0.4;
  q[1] = std::cos(0.3), q[2] = std::sin(0.3) * 0.6, q[3] = std::sin(0.3) * 0.8, q[4] = 0;
  q[5] = 0.05;
  ASSERT_EQ(nq, 6 + 7);
  const auto f = stiffgrad::smooth_dynamics(*full, q.data(), v.data(), u.data());
  const auto h = stiffgrad::smooth_dynamics(*half, q.data(), v.data(), u.data());
  const auto z = stiffgrad::smooth_dynamics(*none, q.data(), v.data(), u.data());
  double scale = 0;
  for (int i = 0; i < nv; ++i)
    scale = std::max(scale, std::abs(f.qfrc_bias[static_cast<std::size_t>(i)]));
  ASSERT_GT(scale, 1.0);
  for (int i = 0; i < nv; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_NEAR(f.qfrc_passive[k], f.qfrc_bias[k], 1e-12 * scale)
        << i;  // J_comᵀ m g summed = gravity force
    EXPECT_NEAR(f.qacc[k], 0.0, 1e-12) << i;
    EXPECT_NEAR(h.qfrc_passive[k], 0.5 * f.qfrc_passive[k], 1e-12 * scale) << i;
    EXPECT_EQ(z.qfrc_passive[k], 0.0) << i;
  }
}

TEST(Gravcomp, DisabledGravityGivesNoForce) {
  std::string xml = arm("1", "1");
  xml.replace(xml.find("<option"), 7, "<option gravity=\"0 0 0\"");
  const auto m = stiffgrad::load_mjcf_string(xml, "nograv.xml");
  std::vector<double> q = m->qpos0, v(static_cast<std::size_t>(m->nv), 0.0), u;
  const auto d = stiffgrad::smooth_dynamics(*m, q.data(), v.data(), u.data());
  for (double x : d.qfrc_passive) EXPECT_EQ(x, 0.0);
}

}  // namespace
