// The constraint and contact fields of the compiled Model against MuJoCo 2.2.2's mjModel, and
// the compiled candidate pair list (core/collision_pairs.cpp) against the contacts MuJoCo's
// mj_collision actually produces (facts §0, §1, §4).
//
// Tolerances:
//  - copied or max/min-combined values (margins, solref/solimp, solmix, weld ids, options,
//    condim, friction, contact parameters): equal. Mixed solref/solimp are computed with the same
//    operations in the same order as mj_collideGeoms, so they are equal too.
//  - geom_rbound: a sqrt of the same sizes, kRel = 1e-14 relative.
//  - invweight0 and meaninertia: from our own mass matrix (equal to MuJoCo's to ~1e-15, docs/testing.md)
//    factorized by Eigen's LLT where MuJoCo uses its own LDL^T; the inverse amplifies rounding by
//    up to cond(M). Measured worst 6.9e-14 (humanoid_CMU); bound kInvRel = 1e-12 relative, and the
//    measured maximum is printed.
//  - The candidate list is checked for order (each MuJoCo contact's geom pair is in our list, and
//    MuJoCo's contact order is a subsequence of it) and for every mixed parameter of the contact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <mujoco/mujoco.h>

#include "mujoco_bridge.hpp"
#include "stiffgrad/mjcf.hpp"
#include "test_support.hpp"

namespace {

using stiffgrad::Model;

constexpr double kRel = 1e-14;
constexpr double kInvRel = 1e-12;

double rel_err(double a, double b) {
  if (a == b) return 0;
  return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300});
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return sgtest::model_test_name(info.param);
}

// ---------------------------------------------------------------- contact list vs cpair list

// Key of each candidate for the order check. MuJoCo sorts <pair>s by body signature with an
// unstable sort, our compiler keeps file order among equal signatures (test_model_vs_mujoco.cpp);
// so when `pairs_unordered`, consecutive candidates that are <pair>s of the same body pair share
// the key of the first of them. Otherwise the key is the index itself.
std::vector<int> order_keys(const Model& o, bool pairs_unordered) {
  std::vector<int> key(o.ncpair);
  auto pair_sig = [&](int i) -> int {
    for (int k = 0; k < o.npair; ++k) {
      const int a = o.pair_geom1[k], b = o.pair_geom2[k];
      if ((a == o.cpair_geom1[i] && b == o.cpair_geom2[i]) || (a == o.cpair_geom2[i] && b == o.cpair_geom1[i]))
        return (std::min(o.geom_bodyid[a], o.geom_bodyid[b]) << 16) + std::max(o.geom_bodyid[a], o.geom_bodyid[b]);
    }
    return -1;
  };
  for (int i = 0; i < o.ncpair; ++i) {
    key[i] = i;
    const int s = pairs_unordered ? pair_sig(i) : -1;
    if (s >= 0 && i > 0 && pair_sig(i - 1) == s) key[i] = key[i - 1];
  }
  return key;
}

struct ContactStats {
  int states = 0, contacts = 0, duplicates = 0;
  std::vector<char> seen;  // ncpair: touched in some state
};

// Runs MuJoCo's mj_forward at random states and checks its contact list against o's candidates.
// With `dedupe`, a contact equal to an earlier one (same geoms and position) is counted as a
// duplicate and skipped (MuJoCo's static-body plane quirk, facts §1).
ContactStats check_contacts(const mjModel* m, const Model& o, bool pairs_unordered, int nstates, bool dedupe,
                            unsigned seed = 7) {
  ContactStats st;
  st.seen.assign(o.ncpair, 0);
  std::map<std::pair<int, int>, int> index;
  for (int i = 0; i < o.ncpair; ++i) {
    EXPECT_TRUE(index.emplace(std::make_pair(o.cpair_geom1[i], o.cpair_geom2[i]), i).second)
        << "geom pair listed twice: " << o.cpair_geom1[i] << " " << o.cpair_geom2[i];
  }
  const std::vector<int> key = order_keys(o, pairs_unordered);
  sgtest::MjDataPtr dp(mj_makeData(m));
  mjData* d = dp.get();
  std::mt19937_64 rng(seed);
  for (int s = 0; s < nstates; ++s) {
    const sgtest::RandomState rs = sgtest::random_state(o, rng, 1.0);
    sgtest::mujoco_set_state(m, d, rs);
    mj_forward(m, d);
    ++st.states;
    int last_key = -1, last_pair = -1, run = 0;
    for (int c = 0; c < d->ncon; ++c) {
      const mjContact& con = d->contact[c];
      if (dedupe) {
        bool dup = false;
        for (int e = 0; e < c && !dup; ++e)
          dup = d->contact[e].geom1 == con.geom1 && d->contact[e].geom2 == con.geom2 &&
                d->contact[e].pos[0] == con.pos[0] && d->contact[e].pos[1] == con.pos[1] &&
                d->contact[e].pos[2] == con.pos[2];
        if (dup) {
          ++st.duplicates;
          continue;
        }
      }
      ++st.contacts;
      auto it = index.find({con.geom1, con.geom2});
      if (it == index.end()) {
        ADD_FAILURE() << "state " << s << ": MuJoCo contact between geoms " << con.geom1 << " and " << con.geom2
                      << " is not a candidate pair";
        continue;
      }
      const int i = it->second;
      st.seen[i] = 1;
      EXPECT_GE(key[i], last_key) << "state " << s << ": contact order differs at contact " << c;
      last_key = key[i];
      run = (i == last_pair) ? run + 1 : 1;
      last_pair = i;
      EXPECT_LE(run, o.cpair_maxcon[i]) << "more contacts than cpair_maxcon for pair " << i;
      EXPECT_EQ(con.dim, o.cpair_condim[i]);
      for (int k = 0; k < 5; ++k) EXPECT_EQ(con.friction[k], o.cpair_friction[5 * i + k]) << "friction " << k;
      for (int k = 0; k < 2; ++k) EXPECT_EQ(con.solref[k], o.cpair_solref[2 * i + k]) << "solref " << k;
      for (int k = 0; k < 5; ++k) EXPECT_EQ(con.solimp[k], o.cpair_solimp[5 * i + k]) << "solimp " << k;
      EXPECT_EQ(con.includemargin, o.cpair_margin[i] - o.cpair_gap[i]);
    }
  }
  return st;
}

int count_seen(const ContactStats& st) { return static_cast<int>(std::count(st.seen.begin(), st.seen.end(), 1)); }

// ---------------------------------------------------------------- field comparison

struct FieldErrors {
  double invweight = 0, meaninertia = 0;
};

FieldErrors expect_constraint_fields(const Model& o, const mjModel* m) {
  FieldErrors fe;
  EXPECT_EQ(o.opt.limit_enabled, !(m->opt.disableflags & mjDSBL_LIMIT));
  EXPECT_EQ(o.opt.frictionloss_enabled, !(m->opt.disableflags & mjDSBL_FRICTIONLOSS));
  EXPECT_EQ(o.opt.refsafe_enabled, !(m->opt.disableflags & mjDSBL_REFSAFE));
  EXPECT_EQ(o.opt.warmstart_enabled, !(m->opt.disableflags & mjDSBL_WARMSTART));
  EXPECT_EQ(o.opt.filterparent_enabled, !(m->opt.disableflags & mjDSBL_FILTERPARENT));
  EXPECT_EQ(o.opt.contact_enabled, !(m->opt.disableflags & mjDSBL_CONTACT));
  EXPECT_EQ(o.opt.constraint_enabled, !(m->opt.disableflags & mjDSBL_CONSTRAINT));
  EXPECT_EQ(o.opt.override_enabled, (m->opt.enableflags & mjENBL_OVERRIDE) != 0);
  EXPECT_EQ(o.opt.iterations, m->opt.iterations);
  EXPECT_EQ(o.opt.tolerance, m->opt.tolerance);
  EXPECT_EQ(o.opt.impratio, m->opt.impratio);
  EXPECT_EQ(o.opt.cone, m->opt.cone);
  EXPECT_EQ(o.opt.collision, m->opt.collision);
  static const char* const kSolver[] = {"PGS", "CG", "Newton"};
  EXPECT_EQ(o.opt.solver, kSolver[m->opt.solver]);
  EXPECT_EQ(o.opt.o_margin, m->opt.o_margin);
  for (int k = 0; k < 2; ++k) EXPECT_EQ(o.opt.o_solref[k], m->opt.o_solref[k]);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(o.opt.o_solimp[k], m->opt.o_solimp[k]);

  for (int b = 0; b < m->nbody; ++b) {
    EXPECT_EQ(o.body_weldid[b], m->body_weldid[b]) << "body " << b;
    for (int k = 0; k < 2; ++k) {
      const double e = rel_err(o.body_invweight0[2 * b + k], m->body_invweight0[2 * b + k]);
      EXPECT_LE(e, kInvRel) << "body_invweight0 body " << b << " " << k;
      fe.invweight = std::max(fe.invweight, e);
    }
  }
  for (int j = 0; j < m->njnt; ++j) {
    EXPECT_EQ(o.jnt_margin[j], m->jnt_margin[j]) << "joint " << j;
    for (int k = 0; k < 2; ++k) EXPECT_EQ(o.jnt_solref[2 * j + k], m->jnt_solref[2 * j + k]) << "joint " << j;
    for (int k = 0; k < 5; ++k) EXPECT_EQ(o.jnt_solimp[5 * j + k], m->jnt_solimp[5 * j + k]) << "joint " << j;
  }
  for (int v = 0; v < m->nv; ++v) {
    for (int k = 0; k < 2; ++k) EXPECT_EQ(o.dof_solref[2 * v + k], m->dof_solref[2 * v + k]) << "dof " << v;
    for (int k = 0; k < 5; ++k) EXPECT_EQ(o.dof_solimp[5 * v + k], m->dof_solimp[5 * v + k]) << "dof " << v;
    const double e = rel_err(o.dof_invweight0[v], m->dof_invweight0[v]);
    EXPECT_LE(e, kInvRel) << "dof_invweight0 " << v;
    fe.invweight = std::max(fe.invweight, e);
  }
  for (int g = 0; g < m->ngeom; ++g) {
    EXPECT_EQ(o.geom_solmix[g], m->geom_solmix[g]) << "geom " << g;
    EXPECT_LE(rel_err(o.geom_rbound[g], m->geom_rbound[g]), kRel) << "geom_rbound " << g;
  }
  for (int t = 0; t < m->ntendon; ++t) {
    EXPECT_EQ(o.tendon_margin[t], m->tendon_margin[t]);
    EXPECT_EQ(o.tendon_frictionloss[t], m->tendon_frictionloss[t]);
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(o.tendon_solref_lim[2 * t + k], m->tendon_solref_lim[2 * t + k]);
      EXPECT_EQ(o.tendon_solref_fri[2 * t + k], m->tendon_solref_fri[2 * t + k]);
    }
    for (int k = 0; k < 5; ++k) {
      EXPECT_EQ(o.tendon_solimp_lim[5 * t + k], m->tendon_solimp_lim[5 * t + k]);
      EXPECT_EQ(o.tendon_solimp_fri[5 * t + k], m->tendon_solimp_fri[5 * t + k]);
    }
    const double e = rel_err(o.tendon_invweight0[t], m->tendon_invweight0[t]);
    EXPECT_LE(e, kInvRel) << "tendon_invweight0 " << t;
    fe.invweight = std::max(fe.invweight, e);
  }
  fe.meaninertia = rel_err(o.stat_meaninertia, m->stat.meaninertia);
  EXPECT_LE(fe.meaninertia, kInvRel);
  return fe;
}

// Our compiler's candidates and the ones compiled from mjModel's fields: same pairs, same values.
void expect_same_cpairs(const Model& a, const Model& b) {
  ASSERT_EQ(a.ncpair, b.ncpair);
  std::map<std::pair<int, int>, int> ib;
  for (int i = 0; i < b.ncpair; ++i) ib[{b.cpair_geom1[i], b.cpair_geom2[i]}] = i;
  for (int i = 0; i < a.ncpair; ++i) {
    auto it = ib.find({a.cpair_geom1[i], a.cpair_geom2[i]});
    ASSERT_NE(it, ib.end()) << "pair " << i;
    const int j = it->second;
    EXPECT_EQ(a.cpair_condim[i], b.cpair_condim[j]);
    EXPECT_EQ(a.cpair_maxcon[i], b.cpair_maxcon[j]);
    EXPECT_EQ(a.cpair_margin[i], b.cpair_margin[j]);
    EXPECT_EQ(a.cpair_gap[i], b.cpair_gap[j]);
    for (int k = 0; k < 5; ++k) EXPECT_EQ(a.cpair_friction[5 * i + k], b.cpair_friction[5 * j + k]);
    for (int k = 0; k < 2; ++k) EXPECT_EQ(a.cpair_solref[2 * i + k], b.cpair_solref[2 * j + k]);
    for (int k = 0; k < 5; ++k) EXPECT_EQ(a.cpair_solimp[5 * i + k], b.cpair_solimp[5 * j + k]);
  }
}

// ---------------------------------------------------------------- shared models

class ModelConstraintsVsMujoco : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelConstraintsVsMujoco, FieldsAndCandidatePairsMatch) {
  const std::string path = GetParam();
  ASSERT_TRUE(sgtest::file_exists(path)) << "missing model file " << path << " (data/ is part of the repository)";
  std::string err;
  const auto mm = sgtest::mujoco_load(path, &err);
  ASSERT_TRUE(mm) << "MuJoCo 2.2.2 cannot load " << path << ": " << err;
  const auto ours = stiffgrad::load_mjcf(path);
  const FieldErrors fe = expect_constraint_fields(*ours, mm.get());

  const Model bridge = sgtest::model_from_mujoco(mm.get());
  expect_same_cpairs(*ours, bridge);
  // The bridge keeps MuJoCo's pair order, so its list must hold MuJoCo's order exactly.
  const ContactStats sb = check_contacts(mm.get(), bridge, false, 300, false);
  const ContactStats so = check_contacts(mm.get(), *ours, true, 300, false);
  std::printf("[constraint fields] %s: invweight0 max rel %.2e, meaninertia %.2e; %d candidate pairs, "
              "%d contacts in %d states touched %d of them\n",
              sgtest::model_test_name(path).c_str(), fe.invweight, fe.meaninertia, ours->ncpair, so.contacts, so.states,
              count_seen(so));
  RecordProperty("invweight0_max_rel", std::to_string(fe.invweight));
  EXPECT_EQ(sb.contacts, so.contacts);
  if (ours->ngeom > 1 && ours->ncpair > 0) EXPECT_GT(so.contacts, 0) << "random states should produce contacts";
}

INSTANTIATE_TEST_SUITE_P(Models, ModelConstraintsVsMujoco, ::testing::ValuesIn(sgtest::mujoco_loadable_models()), test_name);

// ---------------------------------------------------------------- small inline models

// Writes the MJCF to a file, loads it in both MuJoCo and stiffgrad.
struct Both {
  sgtest::MjModelPtr mj;
  std::shared_ptr<const Model> ours;
};

Both load_both(const std::string& name, const std::string& xml) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("sg_cpair_" + name + "_" + std::to_string(::getpid()) + ".xml")).string();
  { std::ofstream(path) << xml; }
  Both b;
  std::string err;
  b.mj = sgtest::mujoco_load(path, &err);
  EXPECT_TRUE(b.mj) << err;
  b.ours = stiffgrad::load_mjcf(path);
  std::filesystem::remove(path);
  return b;
}

// Free bodies close together so that random states (free positions qpos0 +- 0.3) touch often.
std::string scene(const std::string& options, const std::string& bodies, const std::string& contact = "") {
  return "<mujoco>" + options + "<worldbody><geom name=\"floor\" type=\"plane\" size=\"2 2 .1\" pos=\"0 0 -0.2\"/>" +
         bodies + "</worldbody><contact>" + contact + "</contact></mujoco>";
}

void check_inline(const std::string& name, const Both& b, int min_pairs_seen, bool dedupe = false) {
  ASSERT_TRUE(b.mj);
  expect_constraint_fields(*b.ours, b.mj.get());
  const Model bridge = sgtest::model_from_mujoco(b.mj.get());
  expect_same_cpairs(*b.ours, bridge);
  const ContactStats st = check_contacts(b.mj.get(), *b.ours, false, 400, dedupe);
  std::printf("[cpair %s] %d candidates, %d contacts, %d pairs touched, %d duplicates\n", name.c_str(),
              b.ours->ncpair, st.contacts, count_seen(st), st.duplicates);
  EXPECT_GE(count_seen(st), min_pairs_seen) << "the random states should touch these pairs";
}

const char* kThreeBodies =
    "<body name=\"a\" pos=\"0 0 0\"><freejoint/>"
    "  <geom name=\"a0\" type=\"sphere\" size=\".15\" priority=\"1\" friction=\".3 .01 .002\" condim=\"1\" solref=\".05 .9\"/>"
    "  <geom name=\"a1\" type=\"capsule\" size=\".05 .1\" pos=\".1 0 0\" solmix=\"3\" solimp=\".8 .9 .01 .4 3\"/></body>"
    "<body name=\"b\" pos=\".15 0 0\"><freejoint/>"
    "  <geom name=\"b0\" type=\"box\" size=\".1 .08 .06\" friction=\".7 .02 .001\" condim=\"6\" solref=\".03 1.2\" solmix=\".5\"/>"
    "  <geom name=\"b1\" type=\"sphere\" size=\".08\" pos=\"0 .1 0\" solmix=\"0\" solref=\"-1000 -20\"/></body>"
    "<body name=\"c\" pos=\"0 .15 0\"><freejoint/>"
    "  <geom name=\"c0\" type=\"ellipsoid\" size=\".1 .07 .05\" condim=\"4\" solref=\"-500 -10\" solimp=\".7 .8 .02 .6 2\"/>"
    "  <geom name=\"c1\" type=\"cylinder\" size=\".06 .06\" pos=\"0 0 .1\" margin=\".02\" gap=\".01\"/></body>";

TEST(ModelConstraintsInline, PrioritySolmixAndMixing) {
  check_inline("mixing", load_both("mixing", scene("", kThreeBodies)), 10);
}

TEST(ModelConstraintsInline, PairOwnParametersAndExclude) {
  const std::string contact =
      "<pair geom1=\"c0\" geom2=\"a0\" friction=\".4 .4 .003 .0002 .0002\" condim=\"6\" margin=\".03\" gap=\".01\"/>"
      "<pair geom1=\"b1\" geom2=\"floor\" solref=\".04 1.1\"/>"
      "<exclude body1=\"b\" body2=\"a\"/>";
  const Both b = load_both("pair", scene("", kThreeBodies, contact));
  check_inline("pair+exclude", b, 6);
  // The explicit pair does not inherit geom values (facts §1): default condim 3 etc.
  const Model& o = *b.ours;
  int found = 0;
  for (int i = 0; i < o.ncpair; ++i) {
    const std::string n1 = o.geom_name[o.cpair_geom1[i]], n2 = o.geom_name[o.cpair_geom2[i]];
    EXPECT_FALSE((n1[0] == 'a' && n2[0] == 'b') || (n1[0] == 'b' && n2[0] == 'a')) << "excluded body pair listed";
    if (n1 == "floor" && n2 == "b1") {
      ++found;
      EXPECT_EQ(o.cpair_condim[i], 3);
      EXPECT_EQ(o.cpair_solref[2 * i], 0.04);
      EXPECT_EQ(o.cpair_friction[5 * i + 1], 1.0);
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(ModelConstraintsInline, CollisionModesAndOverride) {
  const std::string contact = "<pair geom1=\"c0\" geom2=\"a0\"/><pair geom1=\"b0\" geom2=\"floor\" condim=\"1\"/>";
  for (const char* mode : {"predefined", "dynamic", "all"}) {
    const std::string opt = std::string("<option collision=\"") + mode + "\"/>";
    const Both b = load_both(mode, scene(opt, kThreeBodies, contact));
    check_inline(mode, b, 2);
    if (std::string(mode) == "predefined") EXPECT_EQ(b.ours->ncpair, 2);
  }
  const Both b = load_both("override",
                           scene("<option o_margin=\".01\" o_solref=\".07\" o_solimp=\".5 .6\"><flag override=\"enable\"/></option>",
                                 kThreeBodies, contact));
  check_inline("override", b, 10);
  for (int i = 0; i < b.ours->ncpair; ++i) EXPECT_EQ(b.ours->cpair_margin[i], 0.01);
}

TEST(ModelConstraintsInline, FilterparentAndMasks) {
  // A chain whose links overlap their parents, and contype/conaffinity masks.
  const std::string chain =
      "<body name=\"p\" pos=\"0 0 0\"><freejoint/><geom name=\"p0\" type=\"capsule\" size=\".06 .15\"/>"
      "  <body name=\"q\" pos=\"0 0 .15\"><joint type=\"hinge\" axis=\"1 0 0\"/>"
      "    <geom name=\"q0\" type=\"capsule\" size=\".06 .15\" contype=\"2\" conaffinity=\"2\"/>"
      "    <body name=\"r\" pos=\"0 0 .15\"><geom name=\"r0\" type=\"sphere\" size=\".1\"/>"
      "      <body name=\"s\" pos=\"0 .1 0\"><joint type=\"hinge\" axis=\"0 1 0\"/><geom name=\"s0\" type=\"box\" size=\".1 .1 .1\"/></body>"
      "    </body></body></body>"
      "<body name=\"u\" pos=\".1 0 0\"><freejoint/><geom name=\"u0\" type=\"sphere\" size=\".1\" contype=\"4\" conaffinity=\"1\"/></body>";
  for (const char* fp : {"enable", "disable"}) {
    const Both b = load_both(std::string("fp_") + fp,
                             scene(std::string("<option><flag filterparent=\"") + fp + "\"/></option>", chain));
    check_inline(std::string("filterparent ") + fp, b, 3);
    // q (weld q) and r (welded to q) vs s: s's weld parent is q, filtered only when enabled.
    bool q_s = false;
    const Model& o = *b.ours;
    for (int i = 0; i < o.ncpair; ++i)
      q_s = q_s || (o.geom_name[o.cpair_geom1[i]] == "r0" && o.geom_name[o.cpair_geom2[i]] == "s0");
    EXPECT_EQ(q_s, std::string(fp) == "disable");
  }
}

// MuJoCo 2.2.2 pairs a static non-world body that owns a plane with every body and also through
// sweep-and-prune, so the same geom pair can be collided twice in one step (facts §1 quirk). Our
// list has each pair once: MuJoCo's contacts equal ours after removing the exact duplicates, and
// the duplicates exist (the documented difference).
TEST(ModelConstraintsInline, StaticBodyPlaneDuplicateContactsAreMujocosQuirk) {
  // No world geoms: MuJoCo's body-pair buffer holds nbody(nbody-1)/2 entries, and the world's
  // pairs plus the duplicates would overflow it (a fatal mju_error in 2.2.2).
  const std::string xml =
      "<mujoco><worldbody><body name=\"ramp\" pos=\"0 0 -.05\" euler=\"5 0 0\">"
      "<geom name=\"ramp\" type=\"plane\" size=\"1 1 .1\"/></body>" + std::string(kThreeBodies) +
      "</worldbody></mujoco>";
  const Both b = load_both("static_plane", xml);
  ASSERT_TRUE(b.mj);
  EXPECT_EQ(b.ours->body_weldid[1], 0);
  const ContactStats st = check_contacts(b.mj.get(), *b.ours, false, 400, true);
  std::printf("[cpair static plane] %d contacts, %d MuJoCo duplicates removed\n", st.contacts, st.duplicates);
  EXPECT_GT(st.duplicates, 0) << "MuJoCo 2.2.2's duplicate plane contacts did not occur";
  EXPECT_GT(st.contacts, 0);
}

// ---------------------------------------------------------------- parsing and refusals

TEST(ModelConstraintsInline, OptionsJointTendonAttributesAndDefaults) {
  const std::string xml =
      "<mujoco><option impratio=\"3\" tolerance=\"1e-10\" iterations=\"77\" cone=\"elliptic\" solver=\"CG\""
      " o_margin=\".2\" o_solref=\".1 .5\" o_solimp=\".5 .6 .1 .2 4\">"
      "<flag limit=\"disable\" frictionloss=\"disable\" refsafe=\"disable\" warmstart=\"disable\"/></option>"
      "<default><joint margin=\".01\" solreffriction=\".05 2\"/><tendon margin=\".03\" frictionloss=\".2\"/>"
      "<default class=\"k\"><joint solimpfriction=\".7 .8\" solreflimit=\".04\"/><tendon solimplimit=\".5\"/>"
      "<geom solmix=\"4\"/></default></default>"
      "<worldbody><body><joint name=\"j1\" class=\"k\" range=\"-1 1\" limited=\"true\" solimplimit=\".3 .4 .1\"/>"
      "<geom class=\"k\" size=\".1\"/><body><joint name=\"j2\" type=\"ball\" margin=\".2\"/><geom size=\".1\" solmix=\".2\"/>"
      "</body></body></worldbody><tendon><fixed name=\"t\" class=\"k\" solreffriction=\".06 3\" solimpfriction=\".6\""
      " solreflimit=\".08 .9\"><joint joint=\"j1\" coef=\"2\"/></fixed></tendon></mujoco>";
  const Both b = load_both("options", xml);
  ASSERT_TRUE(b.mj);
  const FieldErrors fe = expect_constraint_fields(*b.ours, b.mj.get());
  EXPECT_LE(fe.invweight, kInvRel);
  EXPECT_EQ(b.ours->opt.iterations, 77);
  EXPECT_EQ(b.ours->jnt_solref[0], 0.04);
  EXPECT_EQ(b.ours->tendon_frictionloss[0], 0.2);
}

void expect_refused(const std::string& xml, int line, const std::string& what) {
  try {
    stiffgrad::load_mjcf_string(xml, "refused.xml");
    ADD_FAILURE() << "accepted: " << xml;
  } catch (const stiffgrad::MjcfError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("refused.xml:"), std::string::npos) << e.what();
  }
}

TEST(ModelConstraintsInline, RefusalsAndSolverNote) {
  expect_refused("<mujoco>\n<option noslip_iterations=\"3\"/></mujoco>", 2, "noslip_iterations");
  expect_refused(
      "<mujoco><worldbody><body name=\"a\"><freejoint/><geom "
      "size=\".1\"/></body></worldbody><equality>\n"
      "<weld body1=\"a\"/></equality></mujoco>",
      2, "unsupported <weld>");
  // With contacts off a mesh geom cannot collide, and is dropped like a visual mesh.
  const auto m = stiffgrad::load_mjcf_string(
      "<mujoco><asset><mesh name=\"m\" file=\"m.stl\"/></asset><option><flag "
      "contact=\"disable\"/></option>"
      "<worldbody><body><freejoint/><geom size=\".1\"/>\n<geom name=\"hull\" type=\"mesh\" "
      "mesh=\"m\" "
      "density=\"0\"/></body></worldbody></mujoco>",
      "x.xml");
  EXPECT_EQ(m->ngeom, 1);
  EXPECT_EQ(m->ncpair, 0);

  stiffgrad::LoadNotes notes;
  stiffgrad::load_mjcf_string("<mujoco>\n<option solver=\"PGS\"/></mujoco>", "note.xml", &notes);
  ASSERT_EQ(notes.notes.size(), 1u);
  EXPECT_NE(notes.notes[0].find("note.xml:2: note: solver PGS requested"), std::string::npos) << notes.notes[0];
}

}  // namespace
