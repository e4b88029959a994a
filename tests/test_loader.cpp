// MJCF loader unit tests: orientation forms, inertia formulas, defaults, includes, keyframes,
// notes, and the error for each kind of bad input ("FILE:LINE: message").
//
// Expected numbers are derived by hand (and were cross-checked once against MuJoCo 2.2.2's
// mj_loadXML); none is produced by the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "stiffgrad/mjcf.hpp"

namespace {

using stiffgrad::GeomType;
using stiffgrad::JointType;
using stiffgrad::LoadNotes;
using stiffgrad::MjcfError;
using stiffgrad::Model;

constexpr double kPi = 3.14159265358979323846;
const double kS = std::sqrt(0.5);

std::shared_ptr<const Model> load(const std::string& xml, LoadNotes* notes = nullptr) {
  return stiffgrad::load_mjcf_string(xml, "test.xml", notes);
}

// One moving sphere body whose orientation attribute is `attrs`.
std::string body_with(const std::string& attrs, const std::string& compiler = "") {
  return "<mujoco>" + compiler + "<worldbody><body " + attrs +
         "><joint/><geom size=\"0.1\"/></body></worldbody></mujoco>";
}

void expect_quat(const Model& m, int body, double w, double x, double y, double z) {
  const double* q = &m.body_quat[4 * body];
  EXPECT_NEAR(q[0], w, 1e-12);
  EXPECT_NEAR(q[1], x, 1e-12);
  EXPECT_NEAR(q[2], y, 1e-12);
  EXPECT_NEAR(q[3], z, 1e-12);
}

// Loading must fail with "file:line: ..." containing every word in `words`.
void expect_error(const std::string& xml, int line, const std::vector<std::string>& words,
                  const std::string& file = "test.xml") {
  try {
    load(xml);
    ADD_FAILURE() << "expected an error containing '" << words.front() << "'";
  } catch (const MjcfError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), file) << what;
    EXPECT_EQ(e.line(), line) << what;
    EXPECT_EQ(what.rfind(file + ":" + std::to_string(line) + ": ", 0), 0u) << what;
    for (const auto& w : words) EXPECT_NE(what.find(w), std::string::npos) << "'" << w << "' not in: " << what;
  }
}

void expect_file_error(const std::string& path, const std::string& file_suffix, int line,
                       const std::vector<std::string>& words) {
  try {
    stiffgrad::load_mjcf(path);
    ADD_FAILURE() << "expected an error loading " << path;
  } catch (const MjcfError& e) {
    const std::string what = e.what();
    ASSERT_GE(e.file().size(), file_suffix.size()) << what;
    EXPECT_EQ(e.file().substr(e.file().size() - file_suffix.size()), file_suffix) << what;
    EXPECT_EQ(e.line(), line) << what;
    for (const auto& w : words) EXPECT_NE(what.find(w), std::string::npos) << "'" << w << "' not in: " << what;
  }
}

std::string data(const std::string& rel) { return std::string(SG_TEST_DATA) + "/" + rel; }

// ------------------------------------------------------------------ orientation forms

TEST(LoaderOrientation, QuatIsNormalized) {
  expect_quat(*load(body_with("quat=\"0 0 0 2\"")), 1, 0, 0, 0, 1);
  expect_quat(*load(body_with("quat=\"1 1 1 1\"")), 1, 0.5, 0.5, 0.5, 0.5);
}

TEST(LoaderOrientation, AxisAngleDegreesAndRadians) {
  // 90 degrees about z: (cos 45, 0, 0, sin 45); the axis is normalized first.
  expect_quat(*load(body_with("axisangle=\"0 0 3 90\"")), 1, kS, 0, 0, kS);
  expect_quat(*load(body_with("axisangle=\"1 0 0 3.141592653589793\"", "<compiler angle=\"radian\"/>")), 1,
              0, 1, 0, 0);
}

TEST(LoaderOrientation, EulerIntrinsicAndExtrinsic) {
  // xyz (rotating axes): q = qx(90) * qy(90) = (c,s,0,0)(c,0,s,0) = (.5, .5, .5, .5).
  expect_quat(*load(body_with("euler=\"90 90 0\"")), 1, 0.5, 0.5, 0.5, 0.5);
  // XYZ (fixed axes): q = qy(90) * qx(90) = (.5, .5, .5, -.5).
  expect_quat(*load(body_with("euler=\"90 90 0\"", "<compiler eulerseq=\"XYZ\"/>")), 1, 0.5, 0.5, 0.5, -0.5);
  // The angles follow the letters of eulerseq: with ZYX the third angle turns about x.
  expect_quat(*load(body_with("euler=\"0 0 90\"", "<compiler eulerseq=\"ZYX\"/>")), 1, kS, kS, 0, 0);
  expect_quat(*load(body_with("euler=\"1.5707963267948966 0 0\"", "<compiler angle=\"radian\"/>")), 1, kS,
              kS, 0, 0);
}

TEST(LoaderOrientation, XYAxesAndZAxis) {
  // x -> y, y -> -x: 90 degrees about z.
  expect_quat(*load(body_with("xyaxes=\"0 1 0 -1 0 0\"")), 1, kS, 0, 0, kS);
  // y is orthogonalized against x: same frame.
  expect_quat(*load(body_with("xyaxes=\"0 2 0 -1 5 0\"")), 1, kS, 0, 0, kS);
  // +z onto +x: 90 degrees about y.
  expect_quat(*load(body_with("zaxis=\"1 0 0\"")), 1, kS, 0, kS, 0);
  // +z onto -z: half turn about x (MuJoCo's choice of axis).
  expect_quat(*load(body_with("zaxis=\"0 0 -1\"")), 1, 0, 1, 0, 0);
  expect_quat(*load(body_with("zaxis=\"0 0 5\"")), 1, 1, 0, 0, 0);
}

TEST(LoaderOrientation, GeomFromto) {
  // Capsule from (0,0,0) to (0,0,0.4): centred at z=0.2, half-length 0.2, z axis pointing
  // from "to" to "from" (-z), i.e. a half turn about x.
  auto m = load("<mujoco><worldbody><body><joint/><geom type=\"capsule\" size=\"0.1\" "
                "fromto=\"0 0 0 0 0 0.4\"/></body></worldbody></mujoco>");
  EXPECT_NEAR(m->geom_pos[2], 0.2, 1e-15);
  EXPECT_NEAR(m->geom_size[1], 0.2, 1e-15);
  EXPECT_NEAR(std::abs(m->geom_quat[1]), 1.0, 1e-12);
  // Box along x: half sizes (r, r, len/2) and z axis along -x (90 degrees about -y).
  auto b = load("<mujoco><worldbody><body><joint/><geom type=\"box\" size=\"0.1 0.3\" "
                "fromto=\"0 0 0 1 0 0\"/></body></worldbody></mujoco>");
  EXPECT_DOUBLE_EQ(b->geom_size[0], 0.1);
  EXPECT_DOUBLE_EQ(b->geom_size[1], 0.1);
  EXPECT_DOUBLE_EQ(b->geom_size[2], 0.5);
  EXPECT_NEAR(b->geom_quat[0], kS, 1e-12);
  EXPECT_NEAR(b->geom_quat[2], -kS, 1e-12);
}

// ------------------------------------------------------------------ inertia

std::shared_ptr<const Model> one_geom(const std::string& geom) {
  return load("<mujoco><worldbody><body><joint/><geom " + geom + "/></body></worldbody></mujoco>");
}

void expect_inertia(const Model& m, int b, double mass, double i0, double i1, double i2) {
  EXPECT_NEAR(m.body_mass[b], mass, 1e-12 * mass);
  EXPECT_NEAR(m.body_inertia[3 * b], i0, 1e-12 * i0);
  EXPECT_NEAR(m.body_inertia[3 * b + 1], i1, 1e-12 * i1);
  EXPECT_NEAR(m.body_inertia[3 * b + 2], i2, 1e-12 * i2);
}

TEST(LoaderInertia, Sphere) {
  // m = 1000 * 4/3 pi 0.1^3, I = 2/5 m r^2.
  const double m = 1000 * 4.0 / 3.0 * kPi * 1e-3;
  expect_inertia(*one_geom("size=\"0.1\""), 1, m, 0.4 * m * 0.01, 0.4 * m * 0.01, 0.4 * m * 0.01);
  EXPECT_NEAR(m, 4.1887902047863905, 1e-12);
}

TEST(LoaderInertia, Box) {
  // Half sizes .1 .2 .3: m = 1000 * 8 * .006 = 48; Ixx = m/3 (b^2 + c^2) = 16 * .13 = 2.08.
  expect_inertia(*one_geom("type=\"box\" size=\"0.1 0.2 0.3\""), 1, 48, 2.08, 1.6, 0.8);
}

TEST(LoaderInertia, Ellipsoid) {
  // m = 1000 * 4/3 pi .006 = 8 pi; Ixx = m/5 (b^2 + c^2) = .026 m.
  const double m = 8 * kPi;
  expect_inertia(*one_geom("type=\"ellipsoid\" size=\"0.1 0.2 0.3\""), 1, m, 0.026 * m, 0.02 * m, 0.01 * m);
}

TEST(LoaderInertia, CylinderWithMass) {
  // r = .1, h = .4, m = 3: Ixx = m (3 r^2 + h^2)/12 = 3 * .19/12, Izz = m r^2/2.
  expect_inertia(*one_geom("type=\"cylinder\" size=\"0.1 0.2\" mass=\"3\""), 1, 3, 0.0475, 0.0475, 0.015);
}

TEST(LoaderInertia, CapsuleWithDensity) {
  // r = .1, h = .4, density 10. Cylinder mc = 10 pi r^2 h = .04 pi, hemispheres
  // ms = 10 * 4/3 pi r^3 = pi/75.
  // Ixx = mc (3r^2 + h^2)/12 + ms (2r^2/5 + h^2/4 + 3hr/8) = .04pi * .19/12 + pi/75 * .059
  // Izz = mc r^2/2 + ms 2r^2/5 = .04pi * .005 + pi/75 * .004
  const double mc = 0.04 * kPi, ms = kPi / 75;
  expect_inertia(*one_geom("type=\"capsule\" size=\"0.1 0.2\" density=\"10\""), 1, mc + ms,
                 mc * 0.19 / 12 + ms * 0.059, mc * 0.19 / 12 + ms * 0.059, mc * 0.005 + ms * 0.004);
}

TEST(LoaderInertia, TwoGeomsCombinedAboutCom) {
  // Two spheres (m, r = .1) at x = +-0.5: COM at 0, Ixx = 2 (2/5 m r^2),
  // Iyy = Izz = 2 (2/5 m r^2 + m .25). Principal moments come out in descending order.
  const double m = 1000 * 4.0 / 3.0 * kPi * 1e-3, is = 0.4 * m * 0.01;
  auto model = load("<mujoco><worldbody><body><joint/><geom size=\"0.1\" pos=\"0.5 0 0\"/>"
                    "<geom size=\"0.1\" pos=\"-0.5 0 0\"/></body></worldbody></mujoco>");
  expect_inertia(*model, 1, 2 * m, 2 * (is + 0.25 * m), 2 * (is + 0.25 * m), 2 * is);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(model->body_ipos[3 + i], 0, 1e-15);
  // The smallest moment's axis (third principal axis) is the x axis of the body.
  const double* q = &model->body_iquat[4];
  const double z_axis_x = 2 * (q[1] * q[3] + q[0] * q[2]);
  EXPECT_NEAR(std::abs(z_axis_x), 1.0, 1e-12);
}

TEST(LoaderInertia, ExplicitInertialAndFullInertia) {
  auto m = load("<mujoco><worldbody><body><joint/><inertial pos=\"1 2 3\" mass=\"2\" diaginertia=\"1 2 3\" "
                "euler=\"0 0 90\"/><geom size=\"1\"/></body></worldbody></mujoco>");
  // inertiafromgeom="auto": the <inertial> wins over the geom; diaginertia is kept as given.
  expect_inertia(*m, 1, 2, 1, 2, 3);
  EXPECT_DOUBLE_EQ(m->body_ipos[3], 1);
  expect_quat(*m, 0, 1, 0, 0, 0);
  EXPECT_NEAR(m->body_iquat[4], kS, 1e-12);
  EXPECT_NEAR(m->body_iquat[7], kS, 1e-12);
  // fullinertia with an xy product: eigenvalues of [[2,1],[1,2]] are 3 and 1, plus Izz = 3.5.
  auto f = load("<mujoco><worldbody><body><joint/><inertial pos=\"0 0 0\" mass=\"1\" "
                "fullinertia=\"2 2 3.5 1 0 0\"/></body></worldbody></mujoco>");
  expect_inertia(*f, 1, 1, 3.5, 3, 1);
}

TEST(LoaderInertia, InertiaFromGeomTrueOverridesInertial) {
  auto m = load("<mujoco><compiler inertiafromgeom=\"true\"/><worldbody><body><joint/>"
                "<inertial pos=\"0 0 0\" mass=\"7\" diaginertia=\"1 1 1\"/>"
                "<geom type=\"box\" size=\"0.1 0.2 0.3\"/></body></worldbody></mujoco>");
  expect_inertia(*m, 1, 48, 2.08, 1.6, 0.8);
}

TEST(LoaderInertia, SetTotalMassScalesMassesAndInertias) {
  auto m = load("<mujoco><compiler settotalmass=\"96\"/><worldbody><body><joint/>"
                "<geom type=\"box\" size=\"0.1 0.2 0.3\"/><body><joint/><geom type=\"box\" size=\"0.1 0.2 0.3\"/>"
                "</body></body></worldbody></mujoco>");
  // Each body was 48: already the requested total, so scale 1; then ask for 48 in total.
  expect_inertia(*m, 1, 48, 2.08, 1.6, 0.8);
  auto h = load("<mujoco><compiler settotalmass=\"48\"/><worldbody><body><joint/>"
                "<geom type=\"box\" size=\"0.1 0.2 0.3\"/><body><joint/><geom type=\"box\" size=\"0.1 0.2 0.3\"/>"
                "</body></body></worldbody></mujoco>");
  expect_inertia(*h, 2, 24, 1.04, 0.8, 0.4);
  EXPECT_NEAR(h->total_mass(), 48, 1e-12);
}

TEST(LoaderInertia, BoundMassAndBoundInertia) {
  // Lower bounds apply to every non-world body, including a massless welded one (as 2.2.2).
  auto m = load("<mujoco><compiler boundmass=\"2\" boundinertia=\"0.5\"/><worldbody><body><joint/>"
                "<geom size=\"0.1\"/><body pos=\"1 0 0\"/></body></worldbody></mujoco>");
  expect_inertia(*m, 1, 4000 * kPi / 3 * 1e-3, 0.5, 0.5, 0.5);
  expect_inertia(*m, 2, 2, 0.5, 0.5, 0.5);
}

TEST(LoaderInertia, MasslessStaticBodyKeepsItsFrame) {
  // MuJoCo 2.2.2: a body without geoms or <inertial> gets ipos/iquat = its own pos/quat.
  auto m = load("<mujoco><worldbody><body><joint/><geom size=\"0.1\"/><body pos=\"1 2 3\"/></body>"
                "</worldbody></mujoco>");
  EXPECT_EQ(m->body_mass[2], 0);
  EXPECT_EQ(m->body_ipos[6], 1);
  EXPECT_EQ(m->body_ipos[8], 3);
}

// ------------------------------------------------------------------ joints, dofs, tree

TEST(LoaderTree, JointsDofsAndReferenceConfiguration) {
  auto m = load(R"(<mujoco><worldbody>
    <body name="root" pos="1 2 3"><freejoint/><geom size="0.1"/>
      <body name="a"><joint name="h" ref="90" springref="45" range="-90 90"/><geom size="0.1"/>
        <body name="b"><geom size="0.1"/>
          <body name="c"><joint type="ball"/><joint type="slide" ref="0.5" axis="0 0 2"/><geom size="0.1"/></body>
        </body>
      </body>
    </body></worldbody></mujoco>)");
  ASSERT_EQ(m->nq, 7 + 1 + 4 + 1);
  ASSERT_EQ(m->nv, 6 + 1 + 3 + 1);
  EXPECT_EQ(m->body_rootid, (std::vector<int>{0, 1, 1, 1, 1}));
  EXPECT_EQ(m->body_jntadr, (std::vector<int>{-1, 0, 1, -1, 2}));
  EXPECT_EQ(m->body_dofadr, (std::vector<int>{-1, 0, 6, -1, 7}));
  // dof parents: chain through the free joint, skipping body b (no dofs).
  EXPECT_EQ(m->dof_parentid, (std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const std::vector<double> qpos0 = {1, 2, 3, 1, 0, 0, 0, kPi / 2, 1, 0, 0, 0, 0.5};
  for (int i = 0; i < m->nq; ++i) EXPECT_NEAR(m->qpos0[i], qpos0[i], 1e-15) << i;
  EXPECT_NEAR(m->qpos_spring[7], kPi / 4, 1e-15);
  EXPECT_EQ(m->qpos_spring[12], 0);
  // autolimits: a range makes the joint limited; degrees become radians.
  EXPECT_EQ(m->jnt_limited[1], 1);
  EXPECT_NEAR(m->jnt_range[3], kPi / 2, 1e-15);
  EXPECT_EQ(m->jnt_axis[3 * 3 + 2], 1.0);  // normalized
}

TEST(LoaderTree, UnlimitedHingeRangeIsKeptAsWritten) {
  // MuJoCo 2.2.2 converts a hinge range to radians only when the joint is limited.
  auto m = load("<mujoco><worldbody><body><joint range=\"10 20\" limited=\"false\"/><geom size=\"0.1\"/>"
                "</body></worldbody></mujoco>");
  EXPECT_EQ(m->jnt_limited[0], 0);
  EXPECT_EQ(m->jnt_range[0], 10);
}

// ------------------------------------------------------------------ defaults

TEST(LoaderDefaults, NestedClassesAndChildclass) {
  auto m = load(R"(<mujoco>
  <default>
    <joint damping="1" armature="0.1"/>
    <geom friction="0.7 0.01 0.002"/>
    <default class="outer">
      <default class="inner"><joint damping="3"/><geom friction="0.5"/></default>
      <joint damping="2"/>
    </default>
  </default>
  <worldbody>
    <body childclass="outer"><joint name="j0"/><geom size="0.1"/>
      <body><joint name="j1" class="inner"/><geom size="0.1" class="inner"/>
        <body childclass="inner"><joint name="j2"/><joint name="j3" class="main" damping="4"/><geom size="0.1"/></body>
      </body>
    </body>
  </worldbody></mujoco>)");
  // outer's joint damping is set after its nested class in the file but still inherited.
  EXPECT_EQ(m->dof_damping, (std::vector<double>{2, 3, 3, 4}));
  EXPECT_EQ(m->dof_armature, (std::vector<double>{0.1, 0.1, 0.1, 0.1}));
  // A partial vector overrides only its leading entries.
  EXPECT_EQ(m->geom_friction[3], 0.5);
  EXPECT_EQ(m->geom_friction[4], 0.01);
  EXPECT_EQ(m->geom_friction[0], 0.7);
}

TEST(LoaderDefaults, ActuatorClassesAndShortcuts) {
  auto m = load(R"(<mujoco>
  <default>
    <motor ctrlrange="-1 1" gear="3"/>
    <default class="servo"><position kp="50" kv="2"/></default>
  </default>
  <worldbody><body><joint name="j" range="-1 2"/><geom size="0.1"/></body></worldbody>
  <actuator>
    <motor joint="j"/>
    <position class="servo" joint="j" inheritrange="0.5"/>
    <velocity joint="j" kv="7"/>
    <general joint="j" gainprm="4" biastype="affine" biasprm="1 2 3"/>
  </actuator></mujoco>)");
  ASSERT_EQ(m->nu, 4);
  EXPECT_EQ(m->actuator_gear[0], 3);
  EXPECT_EQ(m->actuator_ctrllimited[0], 1);
  // position: gain kp, bias (0, -kp, -kv); ctrlrange = midpoint +- 0.5 * half width of the
  // joint range (in radians: -1 deg .. 2 deg).
  EXPECT_EQ(m->actuator_gainprm[3], 50);
  EXPECT_EQ(m->actuator_biasprm[4], -50);
  EXPECT_EQ(m->actuator_biasprm[5], -2);
  const double lo = -kPi / 180, hi = 2 * kPi / 180;
  EXPECT_NEAR(m->actuator_ctrlrange[2], 0.5 * (lo + hi) - 0.25 * (hi - lo), 1e-15);
  EXPECT_NEAR(m->actuator_ctrlrange[3], 0.5 * (lo + hi) + 0.25 * (hi - lo), 1e-15);
  // velocity: gain kv, bias (0, 0, -kv).
  EXPECT_EQ(m->actuator_gainprm[6], 7);
  EXPECT_EQ(m->actuator_biasprm[8], -7);
  EXPECT_EQ(m->actuator_biastype[3], stiffgrad::BiasType::Affine);
  EXPECT_EQ(m->actuator_biasprm[9], 1);
  EXPECT_EQ(m->actuator_biasprm[11], 3);
}

TEST(LoaderDefaults, ActuatorDefaultIsSharedBetweenShortcuts) {
  // MuJoCo keeps one actuator default per class: a <velocity> starts from the kp that a
  // <position> default wrote into gainprm[0].
  auto m = load("<mujoco><default><position kp=\"5\"/></default><worldbody><body><joint name=\"j\"/>"
                "<geom size=\"0.1\"/></body></worldbody><actuator><velocity joint=\"j\"/><motor joint=\"j\"/>"
                "</actuator></mujoco>");
  EXPECT_EQ(m->actuator_gainprm[0], 5);
  EXPECT_EQ(m->actuator_biasprm[2], -5);
  EXPECT_EQ(m->actuator_gainprm[3], 1);
  EXPECT_EQ(m->actuator_biastype[1], stiffgrad::BiasType::None);
}

// <position dampratio> (MuJoCo >= 3): kv = dampratio · 2 √(kp · m) with m the joint dof's
// inertia at qpos0 (armature included) over gear², computed here by hand for a sphere on a
// hinge (I = 2/5 m r² + m L² + armature) and a box on a slide (its mass); kv and dampratio
// replace one another between class and element, and both on one element are refused.
TEST(LoaderDefaults, PositionDampratioGivesKvFromTheReflectedInertia) {
  auto m = load(
      R"(<mujoco><default><default class="d"><position kp="100" dampratio="1"/></default></default>
  <worldbody><body><joint name="h" type="hinge" axis="0 0 1" armature="0.01"/>
    <geom type="sphere" size="0.1" mass="2" pos="0.5 0 0"/></body>
  <body pos="2 0 0"><joint name="s" type="slide" axis="1 0 0"/><geom type="box" size="0.1 0.1 0.1" mass="3"/></body>
  </worldbody><actuator>
  <position joint="h" kp="100" dampratio="1" gear="2"/>
  <position joint="s" kp="50" dampratio="0.5"/>
  <position joint="h" kp="10" kv="3"/>
  <position class="d" joint="s" kv="7"/>
  <position class="d" joint="s"/>
  </actuator></mujoco>)");
  ASSERT_EQ(m->nu, 5);
  const double hinge = (0.4 * 2 * 0.1 * 0.1 + 2 * 0.5 * 0.5 + 0.01) / 4;  // over gear² = 4
  EXPECT_NEAR(m->actuator_biasprm[2], -2 * std::sqrt(100 * hinge), 1e-12);
  EXPECT_NEAR(m->actuator_biasprm[5], -0.5 * 2 * std::sqrt(50 * 3.0), 1e-12);
  EXPECT_EQ(m->actuator_biasprm[8], -3);
  EXPECT_EQ(m->actuator_biasprm[11], -7);  // the element's kv replaces the class's dampratio
  EXPECT_NEAR(m->actuator_biasprm[14], -2 * std::sqrt(100 * 3.0), 1e-12);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(m->actuator_biasprm[3 * i + 1], -m->actuator_gainprm[3 * i]);
  expect_error(
      "<mujoco><worldbody><body><joint name=\"h\"/><geom "
      "size=\"0.1\"/></body></worldbody><actuator>\n"
      "<position joint=\"h\" kv=\"1\" dampratio=\"1\"/></actuator></mujoco>",
      2, {"both 'kv' and 'dampratio'"});
  expect_error(
      "<mujoco><worldbody><body><joint name=\"h\"/><geom "
      "size=\"0.1\"/></body></worldbody><actuator>\n"
      "<position joint=\"h\" dampratio=\"-1\"/></actuator></mujoco>",
      2, {"dampratio must be non-negative"});
}

TEST(LoaderDefaults, EmptyTendonDefaultAndFixedTendon) {
  auto m = load(R"(<mujoco><default><tendon/></default>
  <worldbody><body><joint name="a" springref="10"/><geom size="0.1"/>
    <body><joint name="b" type="slide" springref="0.5"/><geom size="0.1"/></body></body></worldbody>
  <tendon><fixed name="t" stiffness="3" range="-1 1"><joint joint="a" coef="2"/><joint joint="b" coef="-1"/></fixed></tendon>
  </mujoco>)");
  ASSERT_EQ(m->ntendon, 1);
  EXPECT_EQ(m->wrap_jntid, (std::vector<int>{0, 1}));
  EXPECT_EQ(m->tendon_limited[0], 1);
  // springlength unset: tendon length at qpos_spring = 2 * 10 deg - 0.5.
  EXPECT_NEAR(m->tendon_lengthspring[0], 2 * 10 * kPi / 180 - 0.5, 1e-15);
}

// ------------------------------------------------------------------ includes, keyframes, notes

TEST(LoaderInclude, NestedIncludesRelativeToIncludingFile) {
  auto m = stiffgrad::load_mjcf(data("include/main.xml"));
  ASSERT_EQ(m->nbody, 3);
  EXPECT_EQ(m->body_name[2], "lower");
  EXPECT_EQ(m->dof_damping, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(m->jnt_range[1], 1);  // radian from the included <compiler>
  EXPECT_EQ(m->actuator_gear[0], 2);
  EXPECT_EQ(m->name, "include test");
}

TEST(LoaderInclude, ErrorInIncludedFileNamesThatFile) {
  expect_file_error(data("include/main_bad.xml"), "parts/bad_geom.xml", 5, {"bad number 'abc'", "size"});
  expect_file_error(data("include/main_missing.xml"), "main_missing.xml", 3, {"cannot open included file"});
  expect_file_error(data("malformed/include_self.xml"), "include_self.xml", 2, {"recursive include"});
  expect_file_error(data("malformed/include_cycle_a.xml"), "include_cycle_b.xml", 2, {"recursive include"});
}

TEST(LoaderKeyframes, FilledAndPadded) {
  auto m = load(R"(<mujoco><size nkey="3"/>
  <worldbody><body pos="0 0 1"><freejoint/><geom size="0.1"/></body>
  <body><joint name="h" ref="30"/><geom size="0.1"/></body></worldbody>
  <actuator><motor joint="h"/></actuator>
  <keyframe><key name="up" time="0.5" qpos="0 0 2 1 0 0 0 0.1"/><key ctrl="0.3"/></keyframe></mujoco>)");
  ASSERT_EQ(m->keyframes.size(), 3u);
  EXPECT_EQ(m->keyframe_id("up"), 0);
  EXPECT_EQ(m->keyframe_id("nope"), -1);
  EXPECT_EQ(m->keyframes[0].time, 0.5);
  EXPECT_EQ(m->keyframes[0].qpos[2], 2);
  EXPECT_EQ(m->keyframes[0].qvel, std::vector<double>(7, 0.0));
  EXPECT_EQ(m->keyframes[1].qpos, m->qpos0);
  EXPECT_NEAR(m->keyframes[2].qpos[7], kPi / 6, 1e-15);
  EXPECT_EQ(m->keyframes[1].ctrl, std::vector<double>{0.3});
}

TEST(LoaderNotes, IntegratorNoteOnlyForNonEuler) {
  LoadNotes notes;
  auto m = load("<mujoco>\n<option integrator=\"RK4\" iterations=\"50\" solver=\"PGS\"/></mujoco>", &notes);
  // One note for the integrator and one for the solver (solved by Newton, issue 7).
  ASSERT_EQ(notes.notes.size(), 2u);
  EXPECT_EQ(notes.notes[0].rfind("test.xml:2: note: integrator RK4", 0), 0u) << notes.notes[0];
  EXPECT_EQ(notes.notes[1].rfind("test.xml:2: note: solver PGS requested", 0), 0u) << notes.notes[1];
  EXPECT_EQ(m->opt.mjcf_integrator, "RK4");
  LoadNotes none;
  load("<mujoco><option integrator=\"Euler\" timestep=\"0.01\" gravity=\"0 0 -1\"><flag gravity=\"disable\" "
       "contact=\"disable\" eulerdamp=\"disable\" energy=\"enable\"/></option></mujoco>",
       &none);
  EXPECT_TRUE(none.notes.empty());
  auto o = load("<mujoco><option timestep=\"0.01\" gravity=\"0 0 -1\"><flag gravity=\"disable\" "
                "contact=\"disable\" constraint=\"disable\" eulerdamp=\"disable\"/></option></mujoco>");
  EXPECT_EQ(o->opt.timestep, 0.01);
  EXPECT_EQ(o->opt.gravity[2], -1);
  EXPECT_FALSE(o->opt.gravity_enabled);
  EXPECT_FALSE(o->opt.contact_enabled);
  EXPECT_FALSE(o->opt.constraint_enabled);
  EXPECT_FALSE(o->opt.eulerdamp_enabled);
}

TEST(LoaderContact, PairsAndExcludes) {
  auto m = load(R"(<mujoco><worldbody><geom name="floor" type="plane" size="1 1 1"/>
  <body name="a"><joint/><geom name="ga" size="0.1"/><body name="b"><joint/><geom name="gb" size="0.1"/></body></body>
  </worldbody><contact><pair geom1="gb" geom2="ga" friction="0.5 0.5" condim="4"/><pair geom1="ga" geom2="floor"/>
  <exclude body1="b" body2="a"/></contact></mujoco>)");
  ASSERT_EQ(m->npair, 2);
  // Ordered by body: (floor, ga) first, each pair with the lower body first.
  EXPECT_EQ(m->pair_geom1, (std::vector<int>{0, 1}));
  EXPECT_EQ(m->pair_geom2, (std::vector<int>{1, 2}));
  EXPECT_EQ(m->pair_condim[1], 4);
  EXPECT_EQ(m->pair_friction[5], 0.5);
  EXPECT_EQ(m->pair_friction[7], 0.005);  // unspecified entries keep the defaults
  EXPECT_EQ(m->exclude_body1, std::vector<int>{1});
  EXPECT_EQ(m->exclude_body2, std::vector<int>{2});
}

TEST(LoaderMesh, VisualMeshDroppedCollidingMeshKept) {
  auto m = load(R"(<mujoco><asset><mesh name="m" file="nonexistent.stl"/></asset><worldbody>
  <body><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/><joint/>
  <geom type="mesh" mesh="m" contype="0" conaffinity="0" density="0" group="2"/><geom size="0.1"/></body>
  </worldbody></mujoco>)");
  EXPECT_EQ(m->ngeom, 1);
  EXPECT_EQ(m->geom_type[0], GeomType::Sphere);
  expect_error(
      "<mujoco><worldbody><body><joint/>\n<geom type=\"mesh\" "
      "mesh=\"m\"/></body></worldbody></mujoco>",
      2, {"unknown mesh 'm'"});
  // a colliding mesh stays, with its hull (inline vertices: the hull's faces)
  auto c = load(
      R"(<mujoco><asset><mesh name="t" vertex="0 0 0  1 0 0  0 1 0  0 0 1  0.1 0.1 0.1"/></asset>
  <worldbody><geom type="plane" size="1 1 1"/><body><freejoint/><geom type="mesh" mesh="t"/></body></worldbody></mujoco>)");
  ASSERT_EQ(c->ngeom, 2);
  EXPECT_EQ(c->geom_type[1], GeomType::Mesh);
  EXPECT_EQ(c->geom_dataid, (std::vector<int>{-1, 0}));
  ASSERT_EQ(c->nmesh, 1);
  EXPECT_EQ(c->mesh_vertnum[0], 5);
  ASSERT_EQ(c->mesh_graphadr[0], 0);
  EXPECT_EQ(c->mesh_graph[0], 4);  // the interior vertex is not on the hull
  EXPECT_EQ(c->mesh_graph[1], 4);  // four triangles
  EXPECT_EQ(c->ncpair, 1);
  EXPECT_EQ(c->cpair_maxcon[0], 3);
  // errors: too few vertices, a flat hull, a nameless inline mesh, file and vertex together
  expect_error("<mujoco><asset>\n<mesh name=\"t\" vertex=\"0 0 0 1 0 0 0 1 0\"/></asset></mujoco>",
               2, {"at least 4 vertices"});
  expect_error(
      "<mujoco><asset>\n<mesh name=\"t\" vertex=\"0 0 0 1 0 0 0 1 0 1 1 "
      "0\"/></asset><worldbody><body>"
      "<freejoint/><geom type=\"mesh\" mesh=\"t\" mass=\"1\"/></body></worldbody></mujoco>",
      2, {"mesh 't'", "no faces", "qhull"});
  expect_error("<mujoco><asset>\n<mesh vertex=\"0 0 0 1 0 0 0 1 0 0 0 1\"/></asset></mujoco>", 2,
               {"needs a 'name'"});
  expect_error(
      "<mujoco><asset>\n<mesh name=\"t\" file=\"a.stl\" vertex=\"0 0 0 1 0 0 0 1 0 0 0 "
      "1\"/></asset></mujoco>",
      2, {"not both"});
  // a visual mesh that gives its body mass needs its mesh: an unknown one, or a missing file
  // (named with the <mesh> element's line and the path tried)
  expect_error(
      "<mujoco><worldbody><body><joint/>\n<geom type=\"mesh\" mesh=\"m\" contype=\"0\" "
      "conaffinity=\"0\"/>"
      "</body></worldbody></mujoco>",
      2, {"unknown mesh 'm'"});
  expect_error(
      "<mujoco><asset>\n<mesh name=\"m\" "
      "file=\"nonexistent.stl\"/></asset><worldbody><body><joint/>"
      "<geom type=\"mesh\" mesh=\"m\" contype=\"0\" "
      "conaffinity=\"0\"/></body></worldbody></mujoco>",
      2, {"mesh 'm'", "nonexistent.stl"});
}

// ------------------------------------------------------------------ errors

TEST(LoaderErrors, BadNumbers) {
  const std::string head = "<mujoco><worldbody><body><joint/>\n";
  const std::string tail = "</body></worldbody></mujoco>";
  expect_error(head + "<geom size=\"1.2.3\"/>" + tail, 2, {"bad number '1.2.3'", "size", "<geom>"});
  expect_error(head + "<geom size=\"abc\"/>" + tail, 2, {"bad number 'abc'"});
  expect_error(head + "<geom size=\"nan\"/>" + tail, 2, {"bad number 'nan'"});
  expect_error(head + "<geom size=\"1e400\"/>" + tail, 2, {"bad number '1e400'"});
  expect_error(head + "<geom size=\"\"/>" + tail, 2, {"empty attribute 'size'"});
  expect_error(head + "<geom size=\"0.1 0.1 0.1 0.1\"/>" + tail, 2, {"too many numbers"});
  expect_error(head + "<geom size=\"0.1\" pos=\"1 2\"/>" + tail, 2, {"too few numbers", "'pos'"});
  expect_error(head + "<geom size=\"0.1\" condim=\"3.5\"/>" + tail, 2, {"bad integer '3.5'"});
  expect_error(head + "<geom size=\"0.1\" contype=\"99999999999\"/>" + tail, 2, {"bad integer"});
  expect_error(head + "<geom size=\"0.1\" type=\"blob\"/>" + tail, 2, {"invalid value 'blob'"});
}

TEST(LoaderErrors, ClassesNamesAndReferences) {
  expect_error("<mujoco><worldbody><body><joint/>\n<geom class=\"nope\" size=\"1\"/></body></worldbody></mujoco>", 2,
               {"unknown default class 'nope'"});
  expect_error("<mujoco><worldbody>\n<body childclass=\"nope\"/></worldbody></mujoco>", 2, {"unknown default class"});
  expect_error("<mujoco><default><default class=\"a\"/>\n<default class=\"a\"/></default></mujoco>", 2,
               {"repeated default class name 'a'"});
  expect_error("<mujoco><worldbody><body name=\"x\"><joint/><geom size=\"1\"/></body>\n<body name=\"x\"><joint/>"
               "<geom size=\"1\"/></body></worldbody></mujoco>",
               2, {"repeated body name 'x'"});
  expect_error("<mujoco><worldbody><body><joint name=\"j\"/>\n<joint name=\"j\"/><geom size=\"1\"/></body>"
               "</worldbody></mujoco>",
               2, {"repeated joint name 'j'"});
  expect_error("<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"1\"/></body></worldbody><actuator>\n"
               "<motor joint=\"missing\"/></actuator></mujoco>",
               2, {"unknown joint 'missing'"});
  expect_error("<mujoco><worldbody><body><joint type=\"ball\" name=\"j\"/><geom size=\"1\"/></body></worldbody>"
               "<actuator>\n<motor joint=\"j\"/></actuator></mujoco>",
               2, {"unsupported transmission", "not a hinge or slide"});
  expect_error("<mujoco><worldbody><body><joint/><geom name=\"g\" size=\"1\"/></body></worldbody><contact>\n"
               "<pair geom1=\"g\" geom2=\"other\"/></contact></mujoco>",
               2, {"unknown geom 'other'"});
}

TEST(LoaderErrors, TreeRules) {
  expect_error("<mujoco><worldbody><body><joint type=\"ball\"/>\n<joint type=\"hinge\"/><geom size=\"1\"/></body>"
               "</worldbody></mujoco>",
               2, {"ball joint followed by a rotational joint"});
  expect_error("<mujoco><worldbody><body><joint/><geom size=\"1\"/><body>\n<freejoint/><geom size=\"1\"/></body>"
               "</body></worldbody></mujoco>",
               2, {"free joint", "direct child of the world"});
  expect_error("<mujoco><worldbody>\n<body><joint/></body></worldbody></mujoco>", 2,
               {"mass and inertia of moving body"});
  expect_error("<mujoco><worldbody><body><joint/><geom size=\"1\"/>\n<geom type=\"plane\" size=\"1 1 1\"/></body>"
               "</worldbody></mujoco>",
               2, {"plane geoms are only allowed in static bodies"});
  expect_error("<mujoco><worldbody><body>\n<joint axis=\"0 0 0\"/><geom size=\"1\"/></body></worldbody></mujoco>", 2,
               {"zero joint axis"});
  expect_error("<mujoco><worldbody><body><joint/>\n<geom size=\"-1\"/></body></worldbody></mujoco>", 2,
               {"sizes must be non-negative"});
  expect_error("<mujoco><worldbody><body><joint/>\n<inertial pos=\"0 0 0\" mass=\"-1\" diaginertia=\"1 1 1\"/>"
               "</body></worldbody></mujoco>",
               2, {"negative mass"});
  expect_error("<mujoco><worldbody><body><joint/>\n<geom size=\"1\" mass=\"-2\"/></body></worldbody></mujoco>", 2,
               {"mass must be non-negative"});
  expect_error("<mujoco><worldbody><body><joint/>\n<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 3\"/>"
               "</body></worldbody></mujoco>",
               2, {"A + B >= C"});
  expect_error("<mujoco><compiler autolimits=\"false\"/><worldbody><body>\n<joint range=\"0 1\"/><geom size=\"1\"/>"
               "</body></worldbody></mujoco>",
               2, {"'range' but not 'limited'"});
  expect_error("<mujoco><worldbody><body>\n<joint limited=\"true\" range=\"1 -1\"/><geom size=\"1\"/></body>"
               "</worldbody></mujoco>",
               2, {"range[0] must be smaller"});
  expect_error("<mujoco><worldbody><body><joint/><geom size=\"1\"/></body></worldbody>\n<keyframe><key qpos=\"1 2\"/>"
               "</keyframe></mujoco>",
               2, {"key 'qpos' has 2 values, expected 1"});
}

TEST(LoaderErrors, DocumentLevel) {
  expect_error("<notmujoco/>", 1, {"expected <mujoco>"});
  expect_error("<mujoco>\n<worldbody>\n<body></worldbody></mujoco>", 3, {"XML parse error"});
  expect_error("", 1, {"not an MJCF file", "no XML element"});
  expect_error("<mujoco><compiler coordinate=\"global\"/></mujoco>", 1, {"unsupported", "global"});
}

// <connect site1 site2> (MuJoCo 3): the sites' bodies, and their positions as the two anchors;
// where the sites coincide at qpos0 it is the 2.2.2 connect of body1, body2 at site1's position.
TEST(LoaderEquality, ConnectBetweenSitesTakesTheirPositions) {
  const std::string bodies =
      "<mujoco><worldbody><body name=\"a\" pos=\"0 0 1\"><joint axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<site name=\"s1\" pos=\"0.3 0 0\"/></body>"
      "<body name=\"b\" pos=\"0.5 0 1\" euler=\"0 0 90\"><joint axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<site name=\"s2\" pos=\"0 0.2 0\"/></body></worldbody><equality>";
  const auto sites = load(bodies + "<connect site1=\"s1\" site2=\"s2\"/></equality></mujoco>");
  const auto anchor =
      load(bodies + "<connect body1=\"a\" body2=\"b\" anchor=\"0.3 0 0\"/></equality></mujoco>");
  ASSERT_EQ(sites->neq, 1);
  EXPECT_EQ(sites->eq_obj1id[0], 1);
  EXPECT_EQ(sites->eq_obj2id[0], 2);
  EXPECT_EQ(sites->eq_objtype[0], 6);
  const std::vector<double> expect = {0.3, 0, 0, 0, 0.2, 0};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(sites->eq_data[static_cast<std::size_t>(k)], expect[static_cast<std::size_t>(k)])
        << k;
    // s2 = b's origin + Rz(90) (0, 0.2, 0) = (0.3, 0, 1) = s1 at qpos0: the same constraint
    EXPECT_NEAR(anchor->eq_data[static_cast<std::size_t>(k)], expect[static_cast<std::size_t>(k)],
                1e-15)
        << k;
  }
}

TEST(LoaderErrors, UnsupportedElementsAndAttributes) {
  expect_error(
      "<mujoco>\n<equality><connect body1=\"a\" body2=\"b\" anchor=\"0 0 0\"/></equality></mujoco>",
      2, {"unknown body 'a'", "equality"});
  const std::string bodies =
      "<mujoco><worldbody><body name=\"a\"><joint name=\"j\"/><geom size=\".1\"/></body>"
      "<body name=\"b\"><joint name=\"k\" type=\"ball\"/><geom size=\".1\"/></body>"
      "</worldbody><equality>\n";
  expect_error(bodies + "<weld body1=\"a\"/></equality></mujoco>", 2, {"unsupported <weld>"});
  expect_error(bodies + "<connect body1=\"a\"/></equality></mujoco>", 2, {"needs 'anchor'"});
  expect_error(bodies + "<connect body1=\"a\" body2=\"a\" anchor=\"0 0 0\"/></equality></mujoco>",
               2, {"repeated"});
  expect_error(bodies + "<connect site1=\"s\" site2=\"t\"/></equality></mujoco>", 2,
               {"unknown site 's'"});
  expect_error(bodies + "<connect site1=\"s\"/></equality></mujoco>", 2,
               {"needs 'site1' and 'site2'"});
  expect_error(bodies + "<joint joint1=\"j\" joint2=\"k\"/></equality></mujoco>", 2,
               {"only hinge and slide"});
  expect_error(bodies + "<tendon tendon1=\"t\"/></equality></mujoco>", 2, {"unknown tendon 't'"});
  expect_error(bodies + "<distance geom1=\"g\" geom2=\"h\"/></equality></mujoco>", 2,
               {"removed distance"});
  const auto eq =
      load(bodies +
           "<connect body1=\"a\" anchor=\"0.1 0 0\" active=\"false\"/>"
           "<joint joint1=\"j\" polycoef=\"0.5\" solref=\"0.1 2\"/></equality></mujoco>");
  ASSERT_EQ(eq->neq, 2);
  EXPECT_EQ(eq->eq_type, (std::vector<int>{0, 2}));
  EXPECT_EQ(eq->eq_obj2id, (std::vector<int>{0, -1}));  // a connect's missing body2 is the world
  EXPECT_EQ(eq->eq_active, (std::vector<int>{0, 1}));
  EXPECT_EQ(eq->eq_data[11], 0.5);
  EXPECT_EQ(eq->eq_data[12], 1.0);  // polycoef's unspecified entries keep 0 1 0 0 0
  EXPECT_EQ(eq->eq_solref[2], 0.1);
  expect_error("<mujoco><worldbody>\n<composite type=\"grid\" count=\"2 2 1\"/></worldbody></mujoco>", 2,
               {"unsupported <composite>"});
  expect_error("<mujoco><worldbody>\n<frame/></worldbody></mujoco>", 2, {"unsupported <frame>"});
  expect_error("<mujoco><tendon>\n<spatial/></tendon></mujoco>", 2, {"unsupported <spatial>"});
  expect_error("<mujoco><actuator>\n<muscle joint=\"j\"/></actuator></mujoco>", 2, {"unsupported <muscle>"});
  expect_error("<mujoco><actuator>\n<cylinder joint=\"j\"/></actuator></mujoco>", 2, {"unsupported <cylinder>"});
  expect_error("<mujoco><worldbody><body><joint/><geom size=\"1\"/></body></worldbody><actuator>\n"
               "<general joint=\"j\" dyntype=\"filter\"/></actuator></mujoco>",
               2, {"unsupported attribute 'dyntype'"});
  expect_error("<mujoco><actuator>\n<motor tendon=\"t\"/></actuator></mujoco>", 2,
               {"unknown tendon 't'"});
  expect_error("<mujoco><actuator>\n<motor site=\"s\"/></actuator></mujoco>", 2,
               {"unsupported attribute 'site' of <motor>", "joint and tendon transmissions"});
  expect_error("<mujoco><actuator>\n<motor joint=\"j\" tendon=\"t\"/></actuator></mujoco>", 2,
               {"one transmission"});
  expect_error("<mujoco><worldbody><body>\n<joint springdamper=\"1 1\"/><geom size=\"1\"/></body></worldbody></mujoco>",
               2, {"unsupported attribute 'springdamper' of <joint>"});
  expect_error("<mujoco><worldbody><body><joint/>\n<geom size=\"1\" fluidshape=\"ellipsoid\"/></body></worldbody>"
               "</mujoco>",
               2, {"unsupported attribute 'fluidshape' of <geom>"});
  expect_error("<mujoco><worldbody>\n<body gravcomp=\"x\"/></worldbody></mujoco>", 2,
               {"bad number 'x'", "gravcomp"});
  expect_error("<mujoco><worldbody><body>\n<joint stiffnes=\"1\"/></body></worldbody></mujoco>", 2,
               {"unsupported attribute 'stiffnes' of <joint>"});
  expect_error("<mujoco><worldbody><body><joint/>\n<geom type=\"hfield\" size=\"1\"/></body></worldbody></mujoco>", 2,
               {"unsupported geom type 'hfield'"});
  expect_error("<mujoco>\n<option density=\"1.2\"/></mujoco>", 2, {"unsupported attribute 'density' of <option>"});
  expect_error("<mujoco><option>\n<flag passive=\"disable\"/></option></mujoco>", 2, {"unsupported attribute 'passive'"});
  // Cosmetic attributes are fine.
  load("<mujoco><worldbody><body name=\"b\" user=\"1 2\"><joint group=\"1\" user=\"3\" margin=\"0.1\"/>"
       "<geom size=\"1\" rgba=\"1 0 0 1\" material=\"m\" group=\"2\"/><site name=\"s\"/><camera/><light/></body>"
       "</worldbody><sensor><jointpos joint=\"nothing\"/></sensor></mujoco>");
}

// ------------------------------------------------------------------ malformed corpus

TEST(LoaderCorpus, MalformedFilesGiveAModelOrAnMjcfError) {
  namespace fs = std::filesystem;
  const fs::path dir = data("malformed");
  int files = 0, errors = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".xml") continue;
    ++files;
    try {
      stiffgrad::load_mjcf(entry.path().string());
    } catch (const MjcfError& e) {
      ++errors;
      // Every message names a file and a line.
      EXPECT_NE(std::string(e.what()).find(".xml:"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry.path() << ": unexpected exception: " << e.what();
    } catch (...) {
      ADD_FAILURE() << entry.path() << ": unexpected non-standard exception";
    }
  }
  EXPECT_GE(files, 30);
  EXPECT_GE(errors, 25);
}

}  // namespace
