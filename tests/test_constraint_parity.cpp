// MuJoCo 2.2.2 parity of the whole constraint pipeline (issue 7): collision, rows and the Newton
// solve, at states taken along MuJoCo's own simulation (contact-rich, not hand-placed).
//
// MuJoCo runs with warmstart off, tolerance 1e-14 and 200 iterations, so its qacc is converged;
// ours uses the same settings (cold start is all we do). Bounds are the issue's: contacts and
// rows <= 1e-9, qacc / qfrc_constraint / efc_force <= 1e-8, each relative to max(1, max|mujoco|)
// over the compared array.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <unistd.h>
#include <string>
#include <vector>

#include "mujoco_bridge.hpp"
#include "stiffgrad/dynamics.hpp"
#include "stiffgrad/mjcf.hpp"
#include "test_support.hpp"

namespace {

using stiffgrad::ConstrainedDynamics;
using stiffgrad::Model;

constexpr double kGeomTol = 1e-9;
constexpr double kRowTol = 1e-9;
constexpr double kForceTol = 1e-8;
constexpr int kTwins = 8;  // MuJoCo twins per state (see mujoco_twin)

double rel(const double* a, const double* b, int n) {
  double scale = 1, diff = 0;
  for (int i = 0; i < n; ++i) {
    scale = std::max(scale, std::abs(b[i]));
    diff = std::max(diff, std::abs(a[i] - b[i]));
  }
  return diff / scale;
}

// MuJoCo converged: no warm start, tight tolerance, enough iterations (facts §5 "For parity").
void converge(mjModel* m) {
  m->opt.disableflags |= mjDSBL_WARMSTART;
  m->opt.tolerance = 1e-14;
  m->opt.iterations = 200;
}

// One side of a comparison: MuJoCo's mjData or our ConstrainedDynamics, as plain arrays.
struct Snapshot {
  int nv = 0;
  std::vector<int> geom1, geom2, dim;
  std::vector<double> dist, pos, frame;  // ncon, ncon x 3, ncon x 9
  std::vector<int> type, id;            // nefc
  std::vector<double> J, efc_pos, aref, R, D, force;
  std::vector<double> qacc, qfrc;
};

void add_contact(Snapshot& s, int g1, int g2, int dim, double dist, const double* pos, const double* frame) {
  s.geom1.push_back(g1);
  s.geom2.push_back(g2);
  s.dim.push_back(dim);
  s.dist.push_back(dist);
  s.pos.insert(s.pos.end(), pos, pos + 3);
  s.frame.insert(s.frame.end(), frame, frame + 9);
}

Snapshot from_mujoco(const mjModel* m, const mjData* d) {
  Snapshot s;
  s.nv = m->nv;
  for (int k = 0; k < d->ncon; ++k) {
    const mjContact& c = d->contact[k];
    add_contact(s, c.geom1, c.geom2, c.dim, c.dist, c.pos, c.frame);
  }
  s.type.assign(d->efc_type, d->efc_type + d->nefc);
  s.id.assign(d->efc_id, d->efc_id + d->nefc);
  s.J.assign(d->efc_J, d->efc_J + d->nefc * m->nv);
  s.efc_pos.assign(d->efc_pos, d->efc_pos + d->nefc);
  s.aref.assign(d->efc_aref, d->efc_aref + d->nefc);
  s.R.assign(d->efc_R, d->efc_R + d->nefc);
  s.D.assign(d->efc_D, d->efc_D + d->nefc);
  s.force.assign(d->efc_force, d->efc_force + d->nefc);
  s.qacc.assign(d->qacc, d->qacc + m->nv);
  s.qfrc.assign(d->qfrc_constraint, d->qfrc_constraint + m->nv);
  return s;
}

Snapshot from_ours(const ConstrainedDynamics& cd, int nv) {
  Snapshot s;
  s.nv = nv;
  for (const auto& c : cd.contacts) add_contact(s, c.geom1, c.geom2, c.dim, c.dist, c.pos, c.frame);
  s.type = cd.efc_type;
  s.id = cd.efc_id;
  s.J = cd.efc_J;
  s.efc_pos = cd.efc_pos;
  s.aref = cd.efc_aref;
  s.R = cd.efc_R;
  s.D = cd.efc_D;
  s.force = cd.efc_force;
  s.qacc = cd.qacc;
  s.qfrc = cd.qfrc_constraint;
  return s;
}

// Differences of `a` from the reference `b`, each relative to max(1, max|b|) over the compared
// array. Contacts are matched by geom pair and nearest position (MuJoCo's order among <pair>s of
// one body pair comes from an unstable sort), rows through their contact ("up to row order").
struct Diff {
  bool same_structure = true;
  std::string why;
  double dist = 0, pos = 0, frame = 0, J = 0, efc_pos = 0, aref = 0, R = 0, D = 0, qacc = 0, qfrc = 0, force = 0;
};

Diff compare(const Snapshot& a, const Snapshot& b) {
  Diff r;
  const int ncon = static_cast<int>(b.dist.size());
  if (static_cast<int>(a.dist.size()) != ncon || a.type.size() != b.type.size()) {
    r.same_structure = false;
    r.why = "contacts " + std::to_string(a.dist.size()) + " vs " + std::to_string(ncon) + ", rows " +
            std::to_string(a.type.size()) + " vs " + std::to_string(b.type.size());
    return r;
  }
  std::vector<int> perm(static_cast<std::size_t>(ncon), -1);
  std::vector<bool> used(static_cast<std::size_t>(ncon), false);
  for (int k = 0; k < ncon; ++k) {
    double best = 1e300;
    for (int j = 0; j < ncon; ++j) {
      if (used[static_cast<std::size_t>(j)] || a.geom1[j] != b.geom1[k] || a.geom2[j] != b.geom2[k]) continue;
      double d2 = 0;
      for (int i = 0; i < 3; ++i) d2 += std::pow(a.pos[3 * j + i] - b.pos[3 * k + i], 2);
      if (d2 < best) { best = d2; perm[static_cast<std::size_t>(k)] = j; }
    }
    if (perm[static_cast<std::size_t>(k)] < 0) {
      r.same_structure = false;
      r.why = "no contact of geoms " + std::to_string(b.geom1[k]) + "-" + std::to_string(b.geom2[k]);
      return r;
    }
    used[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])] = true;
  }
  auto scale_of = [](const std::vector<double>& v) {
    double s = 1;
    for (double x : v) s = std::max(s, std::abs(x));
    return s;
  };
  const double sd = scale_of(b.dist), sp = scale_of(b.pos);
  for (int k = 0; k < ncon; ++k) {
    const int j = perm[static_cast<std::size_t>(k)];
    if (a.dim[j] != b.dim[k]) { r.same_structure = false; r.why = "condim"; return r; }
    r.dist = std::max(r.dist, std::abs(a.dist[j] - b.dist[k]) / sd);
    for (int i = 0; i < 3; ++i) r.pos = std::max(r.pos, std::abs(a.pos[3 * j + i] - b.pos[3 * k + i]) / sp);
    for (int i = 0; i < 9; ++i) r.frame = std::max(r.frame, std::abs(a.frame[9 * j + i] - b.frame[9 * k + i]));
  }
  // row map: non-contact rows in order; a contact's rows follow its contact
  const int nefc = static_cast<int>(b.type.size()), nv = b.nv;
  auto first_rows = [](const Snapshot& s, int n) {
    std::vector<int> first(static_cast<std::size_t>(n), -1);
    for (int i = static_cast<int>(s.type.size()) - 1; i >= 0; --i)
      if (s.type[static_cast<std::size_t>(i)] >= mjCNSTR_CONTACT_FRICTIONLESS) first[static_cast<std::size_t>(s.id[static_cast<std::size_t>(i)])] = i;
    return first;
  };
  const auto fa = first_rows(a, ncon), fb = first_rows(b, ncon);
  std::vector<int> row(static_cast<std::size_t>(nefc));
  for (int i = 0; i < nefc; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    if (b.type[ui] < mjCNSTR_CONTACT_FRICTIONLESS) {
      row[ui] = i;
    } else {
      const int k = b.id[ui];
      row[ui] = fa[static_cast<std::size_t>(perm[static_cast<std::size_t>(k)])] + (i - fb[static_cast<std::size_t>(k)]);
    }
    const auto ai = static_cast<std::size_t>(row[ui]);
    if (row[ui] < 0 || row[ui] >= nefc || a.type[ai] != b.type[ui]) {
      r.same_structure = false;
      r.why = "row " + std::to_string(i) + " type";
      return r;
    }
  }
  auto rows_diff = [&](const std::vector<double>& va, const std::vector<double>& vb, int width) {
    double s = 1, d = 0;
    for (double x : vb) s = std::max(s, std::abs(x));
    for (int i = 0; i < nefc; ++i)
      for (int c = 0; c < width; ++c)
        d = std::max(d, std::abs(va[static_cast<std::size_t>(row[static_cast<std::size_t>(i)] * width + c)] -
                                 vb[static_cast<std::size_t>(i * width + c)]));
    return d / s;
  };
  if (nefc > 0) {
    r.J = rows_diff(a.J, b.J, nv);
    r.efc_pos = rows_diff(a.efc_pos, b.efc_pos, 1);
    r.aref = rows_diff(a.aref, b.aref, 1);
    r.R = rows_diff(a.R, b.R, 1);
    r.D = rows_diff(a.D, b.D, 1);
    r.force = rows_diff(a.force, b.force, 1);
  }
  r.qacc = rel(a.qacc.data(), b.qacc.data(), nv);
  r.qfrc = rel(a.qfrc.data(), b.qfrc.data(), nv);
  return r;
}

struct Worst {
  Diff err;            // ours vs MuJoCo, worst per quantity
  Diff twin;           // MuJoCo's own twin vs MuJoCo, worst per quantity
  double ratio = 0;    // worst err / allowed over every quantity and state
  int states = 0, contacts = 0, rows = 0, twin_states = 0;
};

// The quantities in one order, for the checks below.
std::vector<double Diff::*> quantities() {
  return {&Diff::dist, &Diff::pos, &Diff::frame, &Diff::J, &Diff::efc_pos, &Diff::aref, &Diff::R, &Diff::D,
          &Diff::qacc, &Diff::qfrc, &Diff::force};
}
double issue_bound(double Diff::*q) {
  if (q == &Diff::dist || q == &Diff::pos || q == &Diff::frame) return kGeomTol;
  if (q == &Diff::qacc || q == &Diff::qfrc || q == &Diff::force) return kForceTol;
  return kRowTol;
}

// MuJoCo's own sensitivity at this state: the same mj_forward at qpos moved by rounding-sized
// noise (1e-15 relative). Where the contact geometry is ill-conditioned (a nearly upright
// cylinder's deepest rim point turns with 1/|tilt|), MuJoCo's answer moves by far more than
// 1e-9 under such noise, and so may ours, whose kinematics round differently.
Diff mujoco_twin(const mjModel* m, mjData* dt, const mjData* d, const Snapshot& ref, std::uint64_t seed) {
  std::copy(d->qpos, d->qpos + m->nq, dt->qpos);
  std::copy(d->qvel, d->qvel + m->nv, dt->qvel);
  std::copy(d->ctrl, d->ctrl + m->nu, dt->ctrl);
  std::uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int i = 0; i < m->nq; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(x >> 11) / 9007199254740992.0 * 2 - 1;
    dt->qpos[i] += 1e-15 * u * std::max(1.0, std::abs(dt->qpos[i]));
  }
  mj_forward(m, dt);
  return compare(from_mujoco(m, dt), ref);
}

// Compares our constrained dynamics with mj_forward's at MuJoCo's current state. Each quantity
// must be within max(issue bound, 100 x MuJoCo's own twin divergence at this state).
// rows_only: the rows (geometry, J, R, D, aref, efc_force) are compared, the dynamics (qacc,
// qfrc_constraint) only checked finite: where a force far beyond the state's scale meets a
// Jacobian whose entries cancel, Jᵀ f is rounding noise times that force on both sides.
void compare_state(const Model& ours, const mjModel* mm, mjData* md, mjData* twin,
                   const std::string& name, Worst& w, bool rows_only = false) {
  mj_forward(mm, md);
  const ConstrainedDynamics cd = stiffgrad::constrained_dynamics(ours, md->qpos, md->qvel, md->ctrl);
  ASSERT_EQ(cd.status, 0) << name << ": capacity overflow";
  const Snapshot ref = from_mujoco(mm, md);
  const Diff e = compare(from_ours(cd, mm->nv), ref);
  ASSERT_TRUE(e.same_structure) << name << " state " << w.states << ": " << e.why;
  // the largest divergence of a few twins (each a different draw of rounding-sized noise)
  Diff t;
  for (int k = 0; k < kTwins; ++k) {
    const Diff tk = mujoco_twin(mm, twin, md, ref, static_cast<std::uint64_t>(kTwins * w.states + k + 1));
    if (!tk.same_structure) { t = tk; break; }
    for (auto q : quantities()) t.*q = std::max(t.*q, tk.*q);
  }
  if (t.same_structure) ++w.twin_states;
  for (auto q : quantities()) {
    if (rows_only && (q == &Diff::qacc || q == &Diff::qfrc)) {
      for (int i = 0; i < mm->nv; ++i)
        EXPECT_TRUE(std::isfinite(cd.qacc[i])) << name << " qacc " << i;
      continue;
    }
    w.err.*q = std::max(w.err.*q, e.*q);
    const double tw = t.same_structure ? t.*q : 0.0;
    w.twin.*q = std::max(w.twin.*q, tw);
    const double allowed = std::max(issue_bound(q), 100 * tw);
    w.ratio = std::max(w.ratio, e.*q / allowed);
    EXPECT_LE(e.*q, allowed) << name << " state " << w.states;
  }
  ++w.states;
  w.contacts += md->ncon;
  w.rows += md->nefc;
}

void report_and_check(const std::string& name, const Worst& w) {
  const Diff& e = w.err;
  std::printf("[constraint parity] %-26s %3d states, %5d contacts, %6d rows: dist %.1e pos %.1e frame %.1e | "
              "J %.1e pos %.1e aref %.1e R %.1e D %.1e | qacc %.1e qfrc_constraint %.1e efc_force %.1e | "
              "worst error / allowed %.2f; MuJoCo twin (1e-15 noise): dist %.1e qacc %.1e\n",
              name.c_str(), w.states, w.contacts, w.rows, e.dist, e.pos, e.frame, e.J, e.efc_pos, e.aref, e.R,
              e.D, e.qacc, e.qfrc, e.force, w.ratio, w.twin.dist, w.twin.qacc);
  EXPECT_GT(w.rows, 0) << name << ": no constraint row was compared";
}

// Runs MuJoCo's own simulation (its default solver settings) from `key` (or qpos0) with the
// keyframe's controls, and compares at every `every`-th of `steps` steps.
// Writes `xml` to a per-process temporary file and returns its path (MuJoCo 2.2.2 loads files).
std::string temp_model(const std::string& name, const std::string& xml) {
  const std::string path = "/tmp/sg_constraint_parity_" + std::to_string(::getpid()) + "_" + name + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return path;
  std::fputs(xml.c_str(), f);
  std::fclose(f);
  return path;
}

// patch: edits our model from MuJoCo's after loading (nullptr: none).
void run_case(const std::string& name, const std::string& path_or_xml, bool is_xml, int steps,
              int every, const char* key = nullptr, bool rows_only = false,
              void (*patch)(Model&, const mjModel*) = nullptr) {
  const std::string path = is_xml ? temp_model(name, path_or_xml) : path_or_xml;
  std::string error;
  sgtest::MjModelPtr sim = sgtest::mujoco_load(path, &error);
  ASSERT_TRUE(sim) << error;
  sgtest::MjModelPtr ref = sgtest::mujoco_load(path, &error);
  converge(ref.get());
  Model ours = *stiffgrad::load_mjcf(path);
  if (patch) patch(ours, ref.get());
  if (is_xml) std::remove(path.c_str());
  ours.opt.tolerance = 1e-14;
  ours.opt.iterations = 200;
  sgtest::MjDataPtr d(mj_makeData(sim.get()));
  sgtest::MjDataPtr dr(mj_makeData(ref.get()));
  sgtest::MjDataPtr dt(mj_makeData(ref.get()));
  if (key) {
    const int k = mj_name2id(sim.get(), mjOBJ_KEY, key);
    ASSERT_GE(k, 0) << key;
    mj_resetDataKeyframe(sim.get(), d.get(), k);
  }
  Worst w;
  for (int s = 1; s <= steps; ++s) {
    mj_step(sim.get(), d.get());
    if (s % every) continue;
    std::copy(d->qpos, d->qpos + sim->nq, dr->qpos);
    std::copy(d->qvel, d->qvel + sim->nv, dr->qvel);
    std::copy(d->ctrl, d->ctrl + sim->nu, dr->ctrl);
    compare_state(ours, ref.get(), dr.get(), dt.get(), name, w, rows_only);
    if (testing::Test::HasFatalFailure()) return;
  }
  report_and_check(name, w);
}

std::string pile_xml(const char* cone, int condim, const char* extra_geoms) {
  return std::string(R"(<mujoco><option timestep="0.002" cone=")") + cone +
         R"("/><default><geom condim=")" + std::to_string(condim) + R"(" friction="0.8 0.02 0.001"/></default>
<worldbody><geom type="plane" size="5 5 0.1"/>)" + extra_geoms + "</worldbody></mujoco>";
}

const char* kPrimitives = R"(
<body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.08 0.06"/></body>
<body pos="0.05 0.02 0.6" euler="10 20 30"><freejoint/><geom type="box" size="0.07 0.07 0.07"/></body>
<body pos="0.4 0 0.3"><freejoint/><geom type="sphere" size="0.08"/></body>
<body pos="0.42 0.03 0.6"><freejoint/><geom type="sphere" size="0.06"/></body>
<body pos="-0.4 0 0.3" euler="0 80 0"><freejoint/><geom type="capsule" size="0.05 0.12"/></body>
<body pos="-0.38 0.05 0.6" euler="30 60 0"><freejoint/><geom type="capsule" size="0.04 0.1"/></body>
<body pos="0 0.5 0.3" euler="20 0 0"><freejoint/><geom type="cylinder" size="0.08 0.05"/></body>
<body pos="0 -0.5 0.3" euler="0 30 10"><freejoint/><geom type="ellipsoid" size="0.1 0.07 0.05"/></body>
<body pos="0.4 0.4 0.3"><freejoint/><geom type="box" size="0.05 0.05 0.05"/>
  <geom type="sphere" size="0.05" pos="0 0 0.1"/></body>)";

TEST(ConstraintParity, HumanoidFallingOntoTheFloor) {
  run_case("humanoid", sgtest::humanoid_xml(), false, 400, 20);
}

TEST(ConstraintParity, G1StandingAtHome) {
  run_case("g1_mujoco222", sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml", false, 300, 20,
           "home");
}

TEST(ConstraintParity, PrimitivesPyramidalCondim3) {
  run_case("pile_pyramidal_3", pile_xml("pyramidal", 3, kPrimitives), true, 400, 20);
}
TEST(ConstraintParity, PrimitivesEllipticCondim3) {
  run_case("pile_elliptic_3", pile_xml("elliptic", 3, kPrimitives), true, 400, 20);
}
TEST(ConstraintParity, PrimitivesCondim1) {
  run_case("pile_condim_1", pile_xml("pyramidal", 1, kPrimitives), true, 300, 20);
}
TEST(ConstraintParity, PrimitivesPyramidalCondim4And6) {
  run_case("pile_pyramidal_4", pile_xml("pyramidal", 4, kPrimitives), true, 300, 30);
  run_case("pile_pyramidal_6", pile_xml("pyramidal", 6, kPrimitives), true, 300, 30);
}
TEST(ConstraintParity, PrimitivesEllipticCondim4And6ImpratioNot1) {
  const std::string xml4 = pile_xml("elliptic", 4, kPrimitives);
  run_case("pile_elliptic_4", xml4, true, 300, 30);
  std::string xml6 = pile_xml("elliptic", 6, kPrimitives);
  xml6.replace(xml6.find("cone="), 5, "impratio=\"3\" cone=");
  run_case("pile_elliptic_6_impratio3", xml6, true, 300, 30);
}

// A contact whose bodies' centres of mass cannot translate at qpos0 (two capsules either side of
// a hinge's axis, their body's centre on the axis, reaching into the floor; the Menagerie
// UR10e's shoulder capsule at its keyframe, on the axis itself): the diagApprox of its rows is 0,
// so R sits at MuJoCo's floor mjMINVAL before the contact overwrite, in every cone; the overwrite
// once started from 0 instead (R = 0, D = inf, a non-finite force at the first step). The rows are
// compared (measured: R 1.1e-16, D 1.1e-30, efc_force 3.6e-18 relative), the dynamics only checked
// finite: D = 1/R ~ 5e14 makes the pyramid edges' forces cancel in Jᵀ f to rounding noise times
// 1e15, on both sides (qacc differs by 0.1 to 1 of its scale, and MuJoCo's own twin cannot show it:
// the twin's noise in the hinge angle leaves the contact where it is).
const char* kCapsuleOnHingeAxis = R"(
<body pos="0 0 0.12"><joint type="hinge" axis="0 0 1" damping="0.1"/>
  <geom type="capsule" size="0.05 0.1" pos="0.1 0 0"/><geom type="capsule" size="0.05 0.1" pos="-0.1 0 0"/></body>
<body pos="0.5 0 0.3"><freejoint/><geom type="sphere" size="0.05"/></body>)";

TEST(ConstraintParity, ContactWhoseBodiesCannotTranslate) {
  run_case("axis_pyramidal_3", pile_xml("pyramidal", 3, kCapsuleOnHingeAxis), true, 200, 20,
           nullptr, true);
  run_case("axis_elliptic_3", pile_xml("elliptic", 3, kCapsuleOnHingeAxis), true, 200, 20, nullptr,
           true);
  run_case("axis_condim_1", pile_xml("pyramidal", 1, kCapsuleOnHingeAxis), true, 200, 20, nullptr,
           true);
  run_case("axis_pyramidal_6", pile_xml("pyramidal", 6, kCapsuleOnHingeAxis), true, 200, 20,
           nullptr, true);
}

TEST(ConstraintParity, LimitedChainWithFrictionLoss) {
  run_case("limited_chain", sgtest::kLimitedChainXml, true, 600, 20);
}

// Connect, joint and tendon equality constraints (issue 39) with contacts: rows, impedance from
// the residual's norm, diagApprox and the solve against MuJoCo 2.2.2.
TEST(ConstraintParity, EqualityConstraints) {
  run_case("equality", sgtest::kEqualityXml, true, 600, 20, "start");
}

// Takes over MuJoCo's compile-time constants that come from mju_eig3 (the mesh frame, hence the
// float vertices in it and the geom frames; the bodies' principal inertia and the inverse
// weights from it): they differ from ours by its tolerance (tests/test_mesh_vs_mujoco.cpp
// measures it: axes 1.1e-7 rad, inertia 2.3e-7), and each vertex is rounded to float in its
// frame, so world vertices differ by up to half a float ulp (measured here without the patch:
// contact dist 3.9e-9, R and D 3.8e-7, qacc 5.1e-7). The pipeline itself is then compared exactly.
void adopt_mujoco_mesh_frames(Model& ours, const mjModel* mj) {
  auto copy = [](std::vector<double>& dst, const double* src, int n) { dst.assign(src, src + n); };
  copy(ours.body_mass, mj->body_mass, mj->nbody);
  copy(ours.body_inertia, mj->body_inertia, 3 * mj->nbody);
  copy(ours.body_ipos, mj->body_ipos, 3 * mj->nbody);
  copy(ours.body_iquat, mj->body_iquat, 4 * mj->nbody);
  copy(ours.body_invweight0, mj->body_invweight0, 2 * mj->nbody);
  copy(ours.dof_invweight0, mj->dof_invweight0, mj->nv);
  ours.stat_meaninertia = mj->stat.meaninertia;
  ASSERT_EQ(ours.ngeom, mj->ngeom);
  copy(ours.geom_pos, mj->geom_pos, 3 * mj->ngeom);
  copy(ours.geom_quat, mj->geom_quat, 4 * mj->ngeom);
  copy(ours.geom_size, mj->geom_size, 3 * mj->ngeom);
  copy(ours.geom_rbound, mj->geom_rbound, mj->ngeom);
  for (int g = 0; g < mj->ngeom; ++g) {
    const int ours_id = ours.geom_dataid[static_cast<std::size_t>(g)], id = mj->geom_dataid[g];
    if (id < 0) continue;
    ASSERT_EQ(ours.mesh_vertnum[static_cast<std::size_t>(ours_id)], mj->mesh_vertnum[id]);
    std::copy(mj->mesh_vert + 3 * mj->mesh_vertadr[id],
              mj->mesh_vert + 3 * (mj->mesh_vertadr[id] + mj->mesh_vertnum[id]),
              ours.mesh_vert.begin() + 3 * ours.mesh_vertadr[static_cast<std::size_t>(ours_id)]);
  }
}

// Mesh geoms on a floor (plane-mesh contacts, up to three per mesh; issue 39): two rocks and a
// cube given as inline vertices, the hull's faces and mass as MuJoCo 2.2.2 computes them, with
// MuJoCo's mesh frames (adopt_mujoco_mesh_frames).
TEST(ConstraintParity, MeshesOnAFloor) {
  run_case("meshes", sgtest::kMeshPileXml, true, 400, 20, nullptr, false, adopt_mujoco_mesh_frames);
}

}  // namespace
