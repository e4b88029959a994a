// The MJCF compiler against MuJoCo 2.2.2's own (mj_loadXML): every compiled field that
// stiffgrad keeps, for MuJoCo's humanoid and every shared model MuJoCo 2.2.2 can load.
//
// Not compared against MuJoCo: unitree_g1/scene_mjx.xml (and the g1_mjx.xml it includes) use
// MJCF newer than 2.2.2 (option ls_iterations, position kv, inheritrange, joint
// actuatorfrcrange, flag eulerdamp, implicitfast), so 2.2.2 rejects them ("unrecognized
// attribute: 'ls_iterations'"). Every other shared model loads in 2.2.2. The G1 scene is instead
// compared with g1_mjx_mujoco222.xml, its 2.2.2-compatible rewrite, at the end of this file.
//
// Differences that are allowed, and why:
//  - body_iquat / body_inertia: the principal frame is unique only up to axis signs and, for
//    equal moments, up to rotations within the eigenspace; the body-frame inertia tensor
//    R diag(I) R^T is unique and is what we compare (plus the sorted moments).
//  - quaternions up to sign.
//  - pair order among pairs with the same body signature (MuJoCo 2.2.2's sort is not stable;
//    we keep file order): pairs are matched by their geoms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "mujoco_bridge.hpp"
#include "stiffgrad/mjcf.hpp"
#include "test_support.hpp"

namespace {

using stiffgrad::Model;

constexpr double kRel = 1e-12;

// Relative to the larger magnitude, with values below 1e-3 compared at 1e-15 absolute.
bool near(double a, double b) {
  return std::abs(a - b) <= kRel * std::max({std::abs(a), std::abs(b), 1e-3});
}

bool quat_near(const double* a, const double* b) {
  bool same = true, flipped = true;
  for (int i = 0; i < 4; ++i) {
    same = same && near(a[i], b[i]);
    flipped = flipped && near(a[i], -b[i]);
  }
  return same || flipped;
}

std::string path_of(const std::string& rel) { return sgtest::data_dir() + "/" + rel; }

// Compares the body/joint/dof fields that do not depend on how a file spells its actuators
// (used for MuJoCo parity and for the two G1 variants).
void expect_same_bodies(const Model& a, const Model& b) {
  ASSERT_EQ(a.nbody, b.nbody);
  ASSERT_EQ(a.njnt, b.njnt);
  ASSERT_EQ(a.nq, b.nq);
  ASSERT_EQ(a.nv, b.nv);
  for (int i = 0; i < a.nbody; ++i) {
    SCOPED_TRACE("body " + std::to_string(i) + " " + a.body_name[i]);
    EXPECT_EQ(a.body_parentid[i], b.body_parentid[i]);
    EXPECT_EQ(a.body_rootid[i], b.body_rootid[i]);
    EXPECT_EQ(a.body_jntadr[i], b.body_jntadr[i]);
    EXPECT_EQ(a.body_jntnum[i], b.body_jntnum[i]);
    EXPECT_EQ(a.body_dofadr[i], b.body_dofadr[i]);
    EXPECT_EQ(a.body_dofnum[i], b.body_dofnum[i]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_PRED2(near, a.body_pos[3 * i + k], b.body_pos[3 * i + k]);
      EXPECT_PRED2(near, a.body_ipos[3 * i + k], b.body_ipos[3 * i + k]);
    }
    EXPECT_TRUE(quat_near(&a.body_quat[4 * i], &b.body_quat[4 * i]));
    EXPECT_PRED2(near, a.body_mass[i], b.body_mass[i]);
    double ta[9], tb[9];
    sgtest::inertia_tensor(&a.body_iquat[4 * i], &a.body_inertia[3 * i], ta);
    sgtest::inertia_tensor(&b.body_iquat[4 * i], &b.body_inertia[3 * i], tb);
    const double scale = std::max({a.body_inertia[3 * i], a.body_inertia[3 * i + 1], a.body_inertia[3 * i + 2], 1e-300});
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(ta[k], tb[k], 1e-12 * scale) << "inertia tensor entry " << k;
    std::vector<double> ma(&a.body_inertia[3 * i], &a.body_inertia[3 * i] + 3);
    std::vector<double> mb(&b.body_inertia[3 * i], &b.body_inertia[3 * i] + 3);
    std::sort(ma.begin(), ma.end());
    std::sort(mb.begin(), mb.end());
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(ma[k], mb[k], 1e-12 * scale);
  }
  for (int j = 0; j < a.njnt; ++j) {
    SCOPED_TRACE("joint " + std::to_string(j) + " " + a.jnt_name[j]);
    EXPECT_EQ(a.jnt_type[j], b.jnt_type[j]);
    EXPECT_EQ(a.jnt_qposadr[j], b.jnt_qposadr[j]);
    EXPECT_EQ(a.jnt_dofadr[j], b.jnt_dofadr[j]);
    EXPECT_EQ(a.jnt_bodyid[j], b.jnt_bodyid[j]);
    EXPECT_EQ(a.jnt_limited[j], b.jnt_limited[j]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_PRED2(near, a.jnt_pos[3 * j + k], b.jnt_pos[3 * j + k]);
      EXPECT_PRED2(near, a.jnt_axis[3 * j + k], b.jnt_axis[3 * j + k]);
    }
    EXPECT_PRED2(near, a.jnt_stiffness[j], b.jnt_stiffness[j]);
    for (int k = 0; k < 2; ++k) {
      EXPECT_PRED2(near, a.jnt_range[2 * j + k], b.jnt_range[2 * j + k]);
      EXPECT_PRED2(near, a.jnt_solref[2 * j + k], b.jnt_solref[2 * j + k]);
    }
    for (int k = 0; k < 5; ++k) EXPECT_PRED2(near, a.jnt_solimp[5 * j + k], b.jnt_solimp[5 * j + k]);
  }
  for (int d = 0; d < a.nv; ++d) {
    SCOPED_TRACE("dof " + std::to_string(d));
    EXPECT_EQ(a.dof_bodyid[d], b.dof_bodyid[d]);
    EXPECT_EQ(a.dof_jntid[d], b.dof_jntid[d]);
    EXPECT_EQ(a.dof_parentid[d], b.dof_parentid[d]);
    EXPECT_PRED2(near, a.dof_armature[d], b.dof_armature[d]);
    EXPECT_PRED2(near, a.dof_damping[d], b.dof_damping[d]);
    EXPECT_PRED2(near, a.dof_frictionloss[d], b.dof_frictionloss[d]);
  }
  for (int q = 0; q < a.nq; ++q) {
    EXPECT_PRED2(near, a.qpos0[q], b.qpos0[q]) << "qpos0[" << q << "]";
    EXPECT_PRED2(near, a.qpos_spring[q], b.qpos_spring[q]) << "qpos_spring[" << q << "]";
  }
}

}  // namespace

namespace {

// A Model view of an mjModel, restricted to what stiffgrad's Model holds, so both sides go
// through the same comparison code.
Model from_mujoco(const mjModel* m) {
  Model o;
  o.nq = m->nq, o.nv = m->nv, o.nbody = m->nbody, o.njnt = m->njnt, o.ngeom = m->ngeom, o.nu = m->nu;
  auto copy = [](auto* src, int n, auto& dst) { dst.assign(src, src + n); };
  for (int i = 0; i < m->nbody; ++i) o.body_name.push_back(mj_id2name(m, mjOBJ_BODY, i) ? mj_id2name(m, mjOBJ_BODY, i) : "");
  for (int i = 0; i < m->njnt; ++i) o.jnt_name.push_back(mj_id2name(m, mjOBJ_JOINT, i) ? mj_id2name(m, mjOBJ_JOINT, i) : "");
  copy(m->body_parentid, m->nbody, o.body_parentid);
  copy(m->body_rootid, m->nbody, o.body_rootid);
  copy(m->body_jntnum, m->nbody, o.body_jntnum);
  copy(m->body_jntadr, m->nbody, o.body_jntadr);
  copy(m->body_dofnum, m->nbody, o.body_dofnum);
  copy(m->body_dofadr, m->nbody, o.body_dofadr);
  copy(m->body_pos, 3 * m->nbody, o.body_pos);
  copy(m->body_quat, 4 * m->nbody, o.body_quat);
  copy(m->body_ipos, 3 * m->nbody, o.body_ipos);
  copy(m->body_iquat, 4 * m->nbody, o.body_iquat);
  copy(m->body_mass, m->nbody, o.body_mass);
  copy(m->body_inertia, 3 * m->nbody, o.body_inertia);
  for (int j = 0; j < m->njnt; ++j) o.jnt_type.push_back(static_cast<stiffgrad::JointType>(m->jnt_type[j]));
  copy(m->jnt_qposadr, m->njnt, o.jnt_qposadr);
  copy(m->jnt_dofadr, m->njnt, o.jnt_dofadr);
  copy(m->jnt_bodyid, m->njnt, o.jnt_bodyid);
  for (int j = 0; j < m->njnt; ++j) o.jnt_limited.push_back(m->jnt_limited[j]);
  copy(m->jnt_pos, 3 * m->njnt, o.jnt_pos);
  copy(m->jnt_axis, 3 * m->njnt, o.jnt_axis);
  copy(m->jnt_stiffness, m->njnt, o.jnt_stiffness);
  copy(m->jnt_range, 2 * m->njnt, o.jnt_range);
  copy(m->jnt_solref, 2 * m->njnt, o.jnt_solref);
  copy(m->jnt_solimp, 5 * m->njnt, o.jnt_solimp);
  copy(m->dof_bodyid, m->nv, o.dof_bodyid);
  copy(m->dof_jntid, m->nv, o.dof_jntid);
  copy(m->dof_parentid, m->nv, o.dof_parentid);
  copy(m->dof_armature, m->nv, o.dof_armature);
  copy(m->dof_damping, m->nv, o.dof_damping);
  copy(m->dof_frictionloss, m->nv, o.dof_frictionloss);
  copy(m->qpos0, m->nq, o.qpos0);
  copy(m->qpos_spring, m->nq, o.qpos_spring);
  return o;
}

class ModelVsMujoco : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelVsMujoco, CompiledFieldsMatch) {
  const std::string path = GetParam();
  ASSERT_TRUE(sgtest::file_exists(path)) << "missing model file " << path << " (data/ is part of the repository)";
  std::string err;
  const auto mm = sgtest::mujoco_load(path, &err);
  ASSERT_TRUE(mm) << "MuJoCo 2.2.2 cannot load " << path << ": " << err;
  const mjModel* m = mm.get();
  const auto ours = stiffgrad::load_mjcf(path);
  const Model& o = *ours;

  ASSERT_EQ(o.nq, m->nq);
  ASSERT_EQ(o.nv, m->nv);
  ASSERT_EQ(o.nbody, m->nbody);
  ASSERT_EQ(o.njnt, m->njnt);
  ASSERT_EQ(o.nu, m->nu);
  ASSERT_EQ(o.ngeom, m->ngeom);  // none of these files has a visual-only mesh
  ASSERT_EQ(o.ntendon, m->ntendon);
  ASSERT_EQ(o.npair, m->npair);
  ASSERT_EQ(o.nexclude, m->nexclude);
  expect_same_bodies(o, from_mujoco(m));

  // Geoms.
  for (int g = 0; g < m->ngeom; ++g) {
    SCOPED_TRACE("geom " + std::to_string(g));
    EXPECT_EQ(static_cast<int>(o.geom_type[g]), m->geom_type[g]);
    EXPECT_EQ(o.geom_bodyid[g], m->geom_bodyid[g]);
    EXPECT_EQ(o.geom_contype[g], m->geom_contype[g]);
    EXPECT_EQ(o.geom_conaffinity[g], m->geom_conaffinity[g]);
    EXPECT_EQ(o.geom_condim[g], m->geom_condim[g]);
    EXPECT_EQ(o.geom_priority[g], m->geom_priority[g]);
    EXPECT_EQ(o.geom_group[g], m->geom_group[g]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_PRED2(near, o.geom_size[3 * g + k], m->geom_size[3 * g + k]);
      EXPECT_PRED2(near, o.geom_pos[3 * g + k], m->geom_pos[3 * g + k]);
      EXPECT_PRED2(near, o.geom_friction[3 * g + k], m->geom_friction[3 * g + k]);
    }
    EXPECT_TRUE(quat_near(&o.geom_quat[4 * g], &m->geom_quat[4 * g]));
    for (int k = 0; k < 2; ++k) EXPECT_PRED2(near, o.geom_solref[2 * g + k], m->geom_solref[2 * g + k]);
    for (int k = 0; k < 5; ++k) EXPECT_PRED2(near, o.geom_solimp[5 * g + k], m->geom_solimp[5 * g + k]);
    EXPECT_PRED2(near, o.geom_margin[g], m->geom_margin[g]);
    EXPECT_PRED2(near, o.geom_gap[g], m->geom_gap[g]);
  }

  // Actuators: joint transmission, gain/bias, limits.
  for (int u = 0; u < m->nu; ++u) {
    SCOPED_TRACE("actuator " + std::to_string(u));
    EXPECT_EQ(m->actuator_trntype[u], mjTRN_JOINT);
    EXPECT_EQ(m->actuator_dyntype[u], mjDYN_NONE);
    EXPECT_EQ(o.actuator_trnid[u], m->actuator_trnid[2 * u]);
    EXPECT_PRED2(near, o.actuator_gear[u], m->actuator_gear[6 * u]);
    EXPECT_EQ(static_cast<int>(o.actuator_gaintype[u]), m->actuator_gaintype[u]);
    EXPECT_EQ(static_cast<int>(o.actuator_biastype[u]), m->actuator_biastype[u]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_PRED2(near, o.actuator_gainprm[3 * u + k], m->actuator_gainprm[mjNGAIN * u + k]);
      EXPECT_PRED2(near, o.actuator_biasprm[3 * u + k], m->actuator_biasprm[mjNBIAS * u + k]);
    }
    EXPECT_EQ(o.actuator_ctrllimited[u], m->actuator_ctrllimited[u]);
    EXPECT_EQ(o.actuator_forcelimited[u], m->actuator_forcelimited[u]);
    for (int k = 0; k < 2; ++k) {
      EXPECT_PRED2(near, o.actuator_ctrlrange[2 * u + k], m->actuator_ctrlrange[2 * u + k]);
      EXPECT_PRED2(near, o.actuator_forcerange[2 * u + k], m->actuator_forcerange[2 * u + k]);
    }
  }

  // Fixed tendons.
  ASSERT_EQ(o.nwrap, m->nwrap);
  for (int t = 0; t < m->ntendon; ++t) {
    SCOPED_TRACE("tendon " + std::to_string(t));
    EXPECT_EQ(o.tendon_adr[t], m->tendon_adr[t]);
    EXPECT_EQ(o.tendon_num[t], m->tendon_num[t]);
    EXPECT_PRED2(near, o.tendon_stiffness[t], m->tendon_stiffness[t]);
    EXPECT_PRED2(near, o.tendon_damping[t], m->tendon_damping[t]);
    EXPECT_PRED2(near, o.tendon_lengthspring[t], m->tendon_lengthspring[t]);
    EXPECT_EQ(o.tendon_limited[t], m->tendon_limited[t]);
    for (int k = 0; k < 2; ++k) EXPECT_PRED2(near, o.tendon_range[2 * t + k], m->tendon_range[2 * t + k]);
  }
  for (int w = 0; w < m->nwrap; ++w) {
    EXPECT_EQ(m->wrap_type[w], mjWRAP_JOINT);
    EXPECT_EQ(o.wrap_jntid[w], m->wrap_objid[w]);
    EXPECT_PRED2(near, o.wrap_coef[w], m->wrap_prm[w]);
  }

  // Contact pairs, matched by their geoms; excludes as body pairs.
  std::map<std::pair<int, int>, int> ours_pairs;
  for (int p = 0; p < o.npair; ++p) ours_pairs[{o.pair_geom1[p], o.pair_geom2[p]}] = p;
  for (int p = 0; p < m->npair; ++p) {
    SCOPED_TRACE("pair " + std::to_string(p));
    auto it = ours_pairs.find({m->pair_geom1[p], m->pair_geom2[p]});
    ASSERT_NE(it, ours_pairs.end());
    const int q = it->second;
    EXPECT_EQ(o.pair_condim[q], m->pair_dim[p]);
    for (int k = 0; k < 5; ++k) EXPECT_PRED2(near, o.pair_friction[5 * q + k], m->pair_friction[5 * p + k]);
    for (int k = 0; k < 2; ++k) EXPECT_PRED2(near, o.pair_solref[2 * q + k], m->pair_solref[2 * p + k]);
    for (int k = 0; k < 5; ++k) EXPECT_PRED2(near, o.pair_solimp[5 * q + k], m->pair_solimp[5 * p + k]);
    EXPECT_PRED2(near, o.pair_margin[q], m->pair_margin[p]);
    EXPECT_PRED2(near, o.pair_gap[q], m->pair_gap[p]);
  }
  for (int e = 0; e < m->nexclude; ++e) {
    // MuJoCo 2.2.2 stores ((body1 + 1) << 16) + body2 + 1, sorted.
    EXPECT_EQ(((o.exclude_body1[e] + 1) << 16) + o.exclude_body2[e] + 1, m->exclude_signature[e]);
  }

  // Options.
  EXPECT_EQ(o.opt.timestep, m->opt.timestep);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(o.opt.gravity[k], m->opt.gravity[k]);
  EXPECT_EQ(o.opt.gravity_enabled, !(m->opt.disableflags & mjDSBL_GRAVITY));
  EXPECT_EQ(o.opt.contact_enabled, !(m->opt.disableflags & mjDSBL_CONTACT));
  EXPECT_EQ(o.opt.constraint_enabled, !(m->opt.disableflags & mjDSBL_CONSTRAINT));

  // Keyframes (including the ones <size nkey> adds).
  ASSERT_EQ(static_cast<int>(o.keyframes.size()), m->nkey);
  for (int k = 0; k < m->nkey; ++k) {
    const auto& key = o.keyframes[k];
    EXPECT_EQ(key.time, m->key_time[k]);
    for (int i = 0; i < m->nq; ++i) EXPECT_PRED2(near, key.qpos[i], m->key_qpos[k * m->nq + i]);
    for (int i = 0; i < m->nv; ++i) EXPECT_PRED2(near, key.qvel[i], m->key_qvel[k * m->nv + i]);
    for (int i = 0; i < m->nu; ++i) EXPECT_PRED2(near, key.ctrl[i], m->key_ctrl[k * m->nu + i]);
    const char* name = mj_id2name(m, mjOBJ_KEY, k);
    EXPECT_EQ(key.name, name ? name : "");
  }
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return sgtest::model_test_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelVsMujoco, ::testing::ValuesIn(sgtest::mujoco_loadable_models()), test_name);

// A limit of the reference, measured: MuJoCo 2.2.2 stores every body inertia as principal
// moments plus a principal frame (body_inertia, body_iquat) that its compiler computes by an
// iterative eigendecomposition whenever the frame is not given: a `fullinertia`, or several
// geoms without <inertial>. The decomposition stops at a tolerance, so R diag(I) R^T does not
// give back the tensor it came from. tests/data/principal_axes.xml has two fullinertia bodies
// and one body of three rotated geoms. Measured (max entry error / max |entry|):
//   fullinertia body 1: MuJoCo 1.6e-7, ours 5.4e-16;  body 2: MuJoCo 1.1e-9, ours 1.4e-16
//   (issue 6 quotes 1.9e-8 for another tensor: the error depends on the tensor);
//   three-geom body: our tensor and MuJoCo's differ by 8.1e-9.
// Ours is exact to rounding and is kept. The bounds are these measurements with a factor ~3:
// they document the reference's limit and fail if either side changes. The parity tests cover
// the same bodies in M and qacc with bounds derived from this (test_parity.cpp,
// Parity.PrincipalAxesBodiesWithinMujocoEigendecompositionError).
TEST(PrincipalAxes, MujocoReconstructsFullinertiaTo2e7WeExactly) {
  const std::string path = sgtest::test_data() + "/principal_axes.xml";
  std::string err;
  const auto mm = sgtest::mujoco_load(path, &err);
  ASSERT_TRUE(mm) << err;
  const auto ours = stiffgrad::load_mjcf(path);
  ASSERT_EQ(ours->nbody, mm->nbody);
  ASSERT_EQ(ours->nbody, 4);
  // fullinertia="ixx iyy izz ixy ixz iyz" of bodies 1 and 2, as written in the file
  const double given[2][6] = {{0.31, 0.27, 0.18, 0.021, -0.013, 0.034}, {0.05, 0.04, 0.03, 0.007, 0.002, -0.004}};
  auto rel_err = [](const double* a, const double* b) {
    double num = 0, den = 0;
    for (int k = 0; k < 9; ++k) {
      num = std::max(num, std::abs(a[k] - b[k]));
      den = std::max(den, std::abs(b[k]));
    }
    return num / den;
  };
  double worst_mj = 0, worst_ours = 0;
  for (int b = 1; b <= 2; ++b) {
    const double* f = given[b - 1];
    const double G[9] = {f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2]};
    double tm[9], to[9];
    sgtest::inertia_tensor(mm->body_iquat + 4 * b, mm->body_inertia + 3 * b, tm);
    sgtest::inertia_tensor(&ours->body_iquat[4 * b], &ours->body_inertia[3 * b], to);
    const double e_mj = rel_err(tm, G), e_ours = rel_err(to, G);
    std::printf("[principal axes] body %d fullinertia: R diag(I) R^T - given: MuJoCo 2.2.2 %.2e, stiffgrad %.2e\n", b,
                e_mj, e_ours);
    worst_mj = std::max(worst_mj, e_mj);
    worst_ours = std::max(worst_ours, e_ours);
  }
  double tm[9], to[9];
  sgtest::inertia_tensor(mm->body_iquat + 12, mm->body_inertia + 9, tm);
  sgtest::inertia_tensor(&ours->body_iquat[12], &ours->body_inertia[9], to);
  const double geoms = rel_err(to, tm);
  std::printf("[principal axes] body 3 (three geoms): stiffgrad vs MuJoCo 2.2.2 tensor %.2e\n", geoms);
  RecordProperty("mujoco_fullinertia_reconstruction", std::to_string(worst_mj));
  RecordProperty("stiffgrad_fullinertia_reconstruction", std::to_string(worst_ours));
  RecordProperty("geoms_body_tensor_difference", std::to_string(geoms));
  EXPECT_LE(worst_ours, 2e-15) << "our principal decomposition should give back the tensor to rounding (5.4e-16)";
  EXPECT_LE(worst_mj, 5e-7) << "MuJoCo 2.2.2's reconstruction error was measured at 1.6e-7";
  EXPECT_LE(geoms, 3e-8) << "measured 8.1e-9";
}

}  // namespace

// The Menagerie G1 (through scene_mjx.xml's include of g1_mjx.xml, with the newer actuator
// syntax) and its 2.2.2 rewrite compile to the same robot and equivalent actuators.
TEST(ModelG1Variants, SceneMjxMatchesMujoco222Rewrite) {
  const std::string a_path = path_of("models/unitree_g1/scene_mjx.xml");
  const std::string b_path = path_of("models/unitree_g1/g1_mjx_mujoco222.xml");
  ASSERT_TRUE(sgtest::file_exists(a_path) && sgtest::file_exists(b_path)) << "G1 files missing under data/models/unitree_g1";
  stiffgrad::LoadNotes notes;
  const auto a = stiffgrad::load_mjcf(a_path, &notes);
  const auto b = stiffgrad::load_mjcf(b_path);
  expect_same_bodies(*a, *b);
  EXPECT_NEAR(a->total_mass(), 33.34, 0.01);
  EXPECT_NEAR(a->total_mass(), b->total_mass(), 1e-12);

  // Visual meshes are dropped, leaving the same primitive colliders and contact pairs.
  ASSERT_EQ(a->ngeom, b->ngeom);
  ASSERT_EQ(a->npair, b->npair);
  for (int p = 0; p < a->npair; ++p) {
    EXPECT_EQ(a->pair_geom1[p], b->pair_geom1[p]);
    EXPECT_EQ(a->pair_geom2[p], b->pair_geom2[p]);
    EXPECT_EQ(a->pair_condim[p], b->pair_condim[p]);
  }

  // position kp kv inheritrange=1  ==  general gainprm=kp biasprm="0 -kp -kv" ctrlrange=range.
  ASSERT_EQ(a->nu, b->nu);
  for (int u = 0; u < a->nu; ++u) {
    SCOPED_TRACE("actuator " + std::to_string(u) + " " + a->actuator_name[u]);
    EXPECT_EQ(a->actuator_trnid[u], b->actuator_trnid[u]);
    EXPECT_EQ(a->actuator_gear[u], b->actuator_gear[u]);
    EXPECT_EQ(a->actuator_biastype[u], b->actuator_biastype[u]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(a->actuator_gainprm[3 * u + k], b->actuator_gainprm[3 * u + k]);
      EXPECT_EQ(a->actuator_biasprm[3 * u + k], b->actuator_biasprm[3 * u + k]);
    }
    EXPECT_EQ(a->actuator_ctrllimited[u], 1);
    EXPECT_EQ(b->actuator_ctrllimited[u], 1);
    for (int k = 0; k < 2; ++k)
      EXPECT_NEAR(a->actuator_ctrlrange[2 * u + k], b->actuator_ctrlrange[2 * u + k], 1e-12);
    // Force clamping: joint actuatorfrcrange in g1_mjx.xml, actuator forcerange in the rewrite.
    const int j = a->actuator_trnid[u];
    EXPECT_EQ(a->jnt_actfrclimited[j], 1);
    EXPECT_EQ(a->actuator_forcelimited[u], 0);
    EXPECT_EQ(b->jnt_actfrclimited[j], 0);
    EXPECT_EQ(b->actuator_forcelimited[u], 1);
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(a->jnt_actfrcrange[2 * j + k], b->actuator_forcerange[2 * u + k]);
  }

  ASSERT_EQ(a->keyframes.size(), b->keyframes.size());
  EXPECT_EQ(a->keyframe_id("home"), 0);
  EXPECT_EQ(a->keyframe_id("knees_bent"), 1);
  for (size_t k = 0; k < a->keyframes.size(); ++k) {
    EXPECT_EQ(a->keyframes[k].qpos, b->keyframes[k].qpos);
    EXPECT_EQ(a->keyframes[k].ctrl, b->keyframes[k].ctrl);
  }
  EXPECT_EQ(a->opt.timestep, b->opt.timestep);
  EXPECT_FALSE(a->opt.eulerdamp_enabled);
  EXPECT_EQ(a->opt.mjcf_integrator, "implicitfast");
  // the integrator note, then the dropped visual meshes' (the rewrite for 2.2.2 has none)
  ASSERT_EQ(notes.notes.size(), 2u);
  EXPECT_NE(notes.notes[0].find("g1_mjx.xml:4: note: integrator implicitfast"), std::string::npos);
  EXPECT_NE(notes.notes[1].find("note: dropped 35 visual-only geoms"), std::string::npos) << notes.notes[1];
}
