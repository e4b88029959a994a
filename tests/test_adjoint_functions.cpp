// Dot-product tests of every hand-written adjoint kernel, one function at a time and then one
// pipeline stage at a time on real models (docs/architecture.md, "How we know it is right", item 2).
//
// For each function y = f(x) the forward-mode Dual<double> instantiation of the same template
// gives J u; the adj_ twin gives J^T w; both sides must agree to 1e-12 of the sum of the
// magnitudes of their terms (adjoint_support.hpp explains the scale). Each adjoint is run a
// second time with its adjoint inputs pre-filled with random values, which must come out as
// pre + J^T w, so that an adjoint which overwrites instead of accumulating (+=) fails too.
#include <functional>

#include "adjoint_support.hpp"

namespace {

using namespace sgadj;

// accumulation check: (pre + J^T w) - pre versus J^T w, a few roundings of |pre| + |J^T w|
constexpr double kAccTol = 1e-14;

// ======================================================================== scalar kernels

// x: NI inputs, y: NO outputs. fwd(const D* x, D* y) runs the primal on duals; adj(const
// double* x, double* adj_x (accumulate), const double* adj_y) runs the adjoint.
template <int NI, int NO>
DotTest small_dot(Rng& rng, const double* x, const std::function<void(const D*, D*)>& fwd,
                  const std::function<void(const double*, double*, const double*)>& adj) {
  D xd[NI], yd[NO];
  double u[NI], w[NO], pre[NI], ax[NI], axp[NI];
  for (int i = 0; i < NI; ++i) {
    u[i] = rng.normal();
    xd[i] = D(x[i]);
    xd[i].d[0] = u[i];
    pre[i] = rng.normal();
    ax[i] = 0.0;
    axp[i] = pre[i];
  }
  for (int i = 0; i < NO; ++i) w[i] = rng.normal();
  fwd(xd, yd);
  adj(x, ax, w);
  adj(x, axp, w);  // accumulation: pre-filled adjoint inputs must come out as pre + J^T w
  for (int i = 0; i < NI; ++i) EXPECT_LE(std::fabs(axp[i] - pre[i] - ax[i]), kAccTol * (std::fabs(pre[i]) + std::fabs(ax[i])));
  DotTest t;
  for (int i = 0; i < NO; ++i) t.out(w[i], yd[i].d[0]);
  for (int i = 0; i < NI; ++i) t.in(ax[i], u[i]);
  return t;
}

struct FnReport {
  const char* name;
  Worst worst{};
  int cases = 0;
  explicit FnReport(const char* n) : name(n) {}
  ~FnReport() { std::printf("[adjoint] function %-22s cases %3d  worst dot-product rel residual %.2e\n", name, cases, worst.v); }
  void check(const DotTest& t, const std::string& what) {
    ++cases;
    worst.add(t.rel());
    EXPECT_TRUE(t.ok()) << name << " " << what << ": " << t.str();
  }
};

std::vector<double> rand_vec(Rng& rng, int n, double s = 1.0) { return rng.normals(n, s); }

TEST(AdjointFunctions, Cross3) {
  FnReport rep{"adj_cross3"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(1000 + seed);
    auto x = rand_vec(rng, 6);
    rep.check(small_dot<6, 3>(
                  rng, x.data(), [](const D* x, D* y) { kern::cross3(y, x, x + 3); },
                  [](const double* x, double* ax, const double* ay) { kern::adj_cross3(x, x + 3, ax, ax + 3, ay); }),
              "seed " + std::to_string(seed));
  }
}

TEST(AdjointFunctions, MatVec3) {
  FnReport rep{"adj_mat_vec3"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(1100 + seed);
    auto x = rand_vec(rng, 12);
    rep.check(small_dot<12, 3>(
                  rng, x.data(), [](const D* x, D* y) { kern::mat_vec3(y, x, x + 9); },
                  [](const double* x, double* ax, const double* ay) { kern::adj_mat_vec3(x, x + 9, ax, ax + 9, ay); }),
              "seed " + std::to_string(seed));
  }
}

void normalize4_case(FnReport& rep, Rng& rng, const double q[4], const std::string& what) {
  rep.check(small_dot<4, 4>(
                rng, q,
                [](const D* x, D* y) {
                  for (int k = 0; k < 4; ++k) y[k] = x[k];
                  kern::normalize4(y);
                },
                [](const double* x, double* ax, const double* ay) { kern::adj_normalize4(x, ax, ay); }),
            what);
}

TEST(AdjointFunctions, Normalize4AllBranches) {
  FnReport rep{"adj_normalize4"};
  int generic = 0, identity = 0, tiny = 0;
  for (int seed = 0; seed < 30; ++seed) {
    Rng rng(1200 + seed);
    double q[4];
    rng.unit_quat(q);
    const double n_unit = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    // identity branch: |n - 1| <= 1e-15, the primal leaves q untouched
    if (std::fabs(n_unit - 1.0) <= 1e-15) {
      ++identity;
      normalize4_case(rep, rng, q, "identity branch seed " + std::to_string(seed));
    }
    // generic branch: scaled by 0.3 .. 3
    const double s = std::exp(rng.uniform(std::log(0.3), std::log(3.0)));
    double qs[4] = {q[0] * s, q[1] * s, q[2] * s, q[3] * s};
    ++generic;
    normalize4_case(rep, rng, qs, "generic branch seed " + std::to_string(seed));
    // tiny branch: |q| < 1e-15 (output is the constant identity quaternion)
    double qt[4] = {q[0] * 1e-17, q[1] * 1e-17, q[2] * 1e-17, q[3] * 1e-17};
    ++tiny;
    normalize4_case(rep, rng, qt, "tiny branch seed " + std::to_string(seed));
  }
  // an exactly unit quaternion and the zero quaternion
  Rng rng(1299);
  const double e[4] = {1, 0, 0, 0}, z[4] = {0, 0, 0, 0};
  normalize4_case(rep, rng, e, "exact identity");
  normalize4_case(rep, rng, z, "zero");
  EXPECT_GT(identity, 5) << "too few random unit quaternions fell in the identity branch";
  EXPECT_GT(generic, 0);
  EXPECT_GT(tiny, 0);
}

TEST(AdjointFunctions, QuatMul) {
  FnReport rep{"adj_quat_mul"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(1300 + seed);
    auto x = rand_vec(rng, 8);
    rep.check(small_dot<8, 4>(
                  rng, x.data(), [](const D* x, D* y) { kern::quat_mul(y, x, x + 4); },
                  [](const double* x, double* ax, const double* ay) { kern::adj_quat_mul(x, x + 4, ax, ax + 4, ay); }),
              "seed " + std::to_string(seed));
    // aliased output (r = a * b written into a), as kinematics uses it
    rep.check(small_dot<8, 4>(
                  rng, x.data(),
                  [](const D* x, D* y) {
                    for (int k = 0; k < 4; ++k) y[k] = x[k];
                    kern::quat_mul(y, y, x + 4);
                  },
                  [](const double* x, double* ax, const double* ay) { kern::adj_quat_mul(x, x + 4, ax, ax + 4, ay); }),
              "aliased seed " + std::to_string(seed));
  }
}

TEST(AdjointFunctions, QuatToMat) {
  FnReport rep{"adj_quat_to_mat"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(1400 + seed);
    auto x = rand_vec(rng, 4);  // not unit: the polynomial formula holds for any q
    if (seed % 2 == 0) rng.unit_quat(x.data());
    rep.check(small_dot<4, 9>(
                  rng, x.data(), [](const D* x, D* y) { kern::quat_to_mat(y, x); },
                  [](const double* x, double* ax, const double* ay) { kern::adj_quat_to_mat(x, ax, ay); }),
              "seed " + std::to_string(seed));
  }
}

TEST(AdjointFunctions, QuatRotate) {
  FnReport rep{"adj_quat_rotate"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(1500 + seed);
    auto x = rand_vec(rng, 7);
    if (seed % 2 == 0) rng.unit_quat(x.data());
    rep.check(small_dot<7, 3>(
                  rng, x.data(), [](const D* x, D* y) { kern::quat_rotate(y, x, x + 4); },
                  [](const double* x, double* ax, const double* ay) { kern::adj_quat_rotate(x, x + 4, ax, ax + 4, ay); }),
              "seed " + std::to_string(seed));
  }
}

TEST(AdjointFunctions, AxisAngleToQuat) {
  FnReport rep{"adj_axis_angle_to_quat"};
  std::vector<double> angles = {0.0, -0.0, 1e-12, -1e-8, kern::pi<double>(), -kern::pi<double>(), 2 * kern::pi<double>(), 7.5};
  for (int seed = 0; seed < 20; ++seed) angles.push_back(Rng(1600 + seed).uniform(-4, 4));
  int i = 0;
  for (double angle : angles) {
    Rng rng(1650 + i++);
    double axis[3] = {rng.normal(), rng.normal(), rng.normal()};
    kern::normalize3(axis);
    rep.check(small_dot<1, 4>(
                  rng, &angle,
                  [&axis](const D* x, D* y) {
                    const D ad[3] = {D(axis[0]), D(axis[1]), D(axis[2])};
                    kern::axis_angle_to_quat(y, ad, x[0]);
                  },
                  [&axis](const double* x, double* ax, const double* ay) {
                    ax[0] += kern::adj_axis_angle_to_quat(axis, x[0], ay);
                  }),
              "angle " + std::to_string(angle));
  }
}

TEST(AdjointFunctions, RotvecToQuatBothBranches) {
  FnReport rep{"adj_rotvec_to_quat"};
  // |r| magnitudes: 0 exactly and Taylor-branch values (t^2 < 1e-8), then generic ones,
  // including both sides of the switch at t = 1e-4 and angles beyond 2 pi
  const double mags[] = {0.0, 1e-300, 1e-12, 1e-7, 1e-5, 0.99e-4, 1.01e-4, 1e-3, 0.1, 1.0, 3.0, 7.0, 20.0};
  int taylor = 0, generic = 0, i = 0;
  for (double mag : mags)
    for (int rep_i = 0; rep_i < 4; ++rep_i) {
      Rng rng(1700 + i++);
      double r[3] = {rng.normal(), rng.normal(), rng.normal()};
      kern::normalize3(r);
      for (double& c : r) c *= mag;
      const double t2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
      (t2 < 1e-8 ? taylor : generic)++;
      rep.check(small_dot<3, 4>(
                    rng, r, [](const D* x, D* y) { kern::rotvec_to_quat(y, x); },
                    [](const double* x, double* ax, const double* ay) { kern::adj_rotvec_to_quat(x, ax, ay); }),
                "|r| = " + std::to_string(mag));
    }
  EXPECT_GE(taylor, 20);
  EXPECT_GE(generic, 20);
}

TEST(AdjointFunctions, QuatIntegrate) {
  FnReport rep{"adj_quat_integrate"};
  const double hs[] = {0.002, 0.05, 1.0};
  for (int seed = 0; seed < 24; ++seed) {
    Rng rng(1800 + seed);
    double x[7];
    rng.unit_quat(x);
    if (seed % 3 == 1)
      for (int k = 0; k < 4; ++k) x[k] *= 1.7;  // normalize4's generic branch
    const double sw = seed % 4 == 0 ? 0.0 : (seed % 4 == 1 ? 1e-7 : 3.0);  // omega = 0 exactly
    for (int k = 0; k < 3; ++k) x[4 + k] = sw * rng.normal();
    const double h = hs[seed % 3];
    rep.check(small_dot<7, 4>(
                  rng, x,
                  [h](const D* x, D* y) {
                    for (int k = 0; k < 4; ++k) y[k] = x[k];
                    kern::quat_integrate(y, x + 4, D(h));
                  },
                  [h](const double* x, double* ax, const double* ay) { kern::adj_quat_integrate(x, x + 4, h, ax, ax + 4, ay); }),
              "seed " + std::to_string(seed) + " |omega| scale " + std::to_string(sw) + " h " + std::to_string(h));
  }
}

TEST(AdjointFunctions, QuatToVelAndQuatSub) {
  FnReport rep_v{"adj_quat_to_vel"};
  FnReport rep_s{"adj_quat_sub"};
  for (int seed = 0; seed < 30; ++seed) {
    Rng rng(1900 + seed);
    double q[4];
    rng.unit_quat(q);
    if (seed % 3 == 0) q[0] = std::fabs(q[0]);   // angle < pi
    if (seed % 3 == 1) q[0] = -std::fabs(q[0]);  // angle > pi: the primal wraps it
    if (seed % 5 == 2)
      for (double& c : q) c *= 0.6;  // non-unit: atan2 form, scale-invariant
    if (seed % 7 == 3) {             // close to the identity, still the generic branch
      q[0] = 1.0; q[1] = 1e-9 * rng.normal(); q[2] = 1e-9 * rng.normal(); q[3] = 1e-9 * rng.normal();
    }
    rep_v.check(small_dot<4, 3>(
                    rng, q, [](const D* x, D* y) { kern::quat_to_vel(y, x, D(1.0)); },
                    [](const double* x, double* ax, const double* ay) { kern::adj_quat_to_vel(x, ax, ay); }),
                "seed " + std::to_string(seed));
    double qb[4];
    rng.unit_quat(qb);
    rep_s.check(small_dot<4, 3>(
                    rng, q,
                    [&qb](const D* x, D* y) {
                      const D b[4] = {D(qb[0]), D(qb[1]), D(qb[2]), D(qb[3])};
                      kern::quat_sub(y, x, b);
                    },
                    [&qb](const double* x, double* ax, const double* ay) { kern::adj_quat_sub(x, qb, ax, ay); }),
                "seed " + std::to_string(seed));
  }
}

// At and near the identity quat_to_vel takes its series branch r = (2 / w) g(|v|^2 / w^2) v,
// whose Jacobian at v = 0 is the limit dr = 2 dvec / w (and dr/dw = 0) of
// r(q) = 2 atan2(|v|, w) v / |v|. Check the adjoint against that analytic Jacobian, and that it
// is continuous at |v| ~ 1e-14 (test_gradient_edge_cases.cpp checks it against Dual there).
TEST(AdjointFunctions, QuatToVelNearIdentityLimit) {
  FnReport rep{"adj_quat_to_vel(limit)"};
  for (int seed = 0; seed < 10; ++seed) {
    Rng rng(1950 + seed);
    const double w0 = seed % 2 ? 1.0 : rng.uniform(0.5, 2.0);
    double q[4] = {w0, 0.0, 0.0, 0.0};
    if (seed >= 4)
      for (int k = 1; k < 4; ++k) q[k] = 1e-17 * rng.normal();
    double u[4], wr[3], aq[4], pre[4];
    for (int k = 0; k < 4; ++k) { u[k] = rng.normal(); pre[k] = aq[k] = rng.normal(); }
    for (int k = 0; k < 3; ++k) wr[k] = rng.normal();
    kern::adj_quat_to_vel(q, aq, wr);
    DotTest t;
    for (int k = 0; k < 3; ++k) t.out(wr[k], 2.0 * u[k + 1] / w0);  // analytic J u
    for (int k = 0; k < 4; ++k) t.in(aq[k] - pre[k], u[k]);
    rep.check(t, "seed " + std::to_string(seed));
    // just above the threshold the generic branch (checked by Dual above) agrees to O(|v|)
    double q2[4] = {w0, 1e-14, -2e-14, 0.5e-14}, aq2[4] = {0, 0, 0, 0}, aq0[4] = {0, 0, 0, 0};
    kern::adj_quat_to_vel(q2, aq2, wr);
    kern::adj_quat_to_vel(q, aq0, wr);
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(aq2[k], aq0[k], 1e-12 * (1.0 + std::fabs(aq0[k])));
  }
}

TEST(AdjointFunctions, CrossMotionCrossForce) {
  FnReport rep_m{"adj_cross_motion"};
  FnReport rep_f{"adj_cross_force"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(2000 + seed);
    auto x = rand_vec(rng, 12);
    rep_m.check(small_dot<12, 6>(
                    rng, x.data(), [](const D* x, D* y) { kern::cross_motion(y, x, x + 6); },
                    [](const double* x, double* ax, const double* ay) { kern::adj_cross_motion(x, x + 6, ax, ax + 6, ay); }),
                "seed " + std::to_string(seed));
    rep_f.check(small_dot<12, 6>(
                    rng, x.data(), [](const D* x, D* y) { kern::cross_force(y, x, x + 6); },
                    [](const double* x, double* ax, const double* ay) { kern::adj_cross_force(x, x + 6, ax, ax + 6, ay); }),
                "seed " + std::to_string(seed));
  }
}

TEST(AdjointFunctions, InertiaMulAndInertiaFromCom) {
  FnReport rep_m{"adj_inertia_mul"};
  FnReport rep_c{"adj_inertia_from_com"};
  for (int seed = 0; seed < 20; ++seed) {
    Rng rng(2100 + seed);
    auto x = rand_vec(rng, 16);
    rep_m.check(small_dot<16, 6>(
                    rng, x.data(), [](const D* x, D* y) { kern::inertia_mul(y, x, x + 10); },
                    [](const double* x, double* ax, const double* ay) { kern::adj_inertia_mul(x, x + 10, ax, ax + 10, ay); }),
                "seed " + std::to_string(seed));
    const double mass = rng.uniform(0.1, 5.0);
    auto y = rand_vec(rng, 12);  // c (3), Ic (9; only the six entries read matter)
    rep_c.check(small_dot<12, 10>(
                    rng, y.data(), [mass](const D* x, D* y) { kern::inertia_from_com(y, D(mass), x, x + 3); },
                    [mass](const double* x, double* ax, const double* ay) { kern::adj_inertia_from_com(mass, x, ax, ax + 3, ay); }),
                "seed " + std::to_string(seed));
  }
}

// ======================================================================== pipeline stages

// Dot-product test of one stage: `prep` fills the primal Data (state and whatever the stage
// and its adjoint read), `fwd` runs the stage on the Dual copy (seeded with u on the `in`
// fields), `adj` runs the adjoint with w on the `out` fields. Input adjoints that are not also
// outputs are pre-filled with random values (accumulation check).
template <class Prep, class Fwd, class Adj>
DotTest stage_dot(Kit& k, Rng& rng, const std::vector<Field>& in, const std::vector<Field>& out, Prep prep,
                  Fwd fwd, Adj adj) {
  Buf<double> d(k.o), a(k.o), d2(k.o), a2(k.o);
  Buf<D> dD(k.o);
  prep(k.m, d.d);
  for (int i = 0; i < k.o.size; ++i) dD[i] = D(d[i]);
  std::vector<std::vector<double>> u;
  for (const Field& f : in) {
    u.push_back(rng.normals(f.n));
    for (int i = 0; i < f.n; ++i) dD[f.off + i].d[0] = u.back()[static_cast<std::size_t>(i)];
  }
  fwd(k.mD, dD.d);
  std::vector<std::vector<double>> w;
  for (const Field& f : out) {
    w.push_back(rng.normals(f.n));
    for (int i = 0; i < f.n; ++i) a[f.off + i] = w.back()[static_cast<std::size_t>(i)];
  }
  // second run with the input adjoints (those that are not also outputs) pre-filled
  d2.v = d.v;
  a2.v = a.v;
  auto is_out = [&out](const Field& f) {
    return std::any_of(out.begin(), out.end(), [&f](const Field& g) { return g.off == f.off; });
  };
  std::vector<double> pre(a.v.size(), 0.0);
  for (const Field& f : in)
    if (!is_out(f))
      for (int i = 0; i < f.n; ++i) a2[f.off + i] = pre[static_cast<std::size_t>(f.off + i)] = rng.normal();
  DotTest t;
  for (std::size_t j = 0; j < out.size(); ++j)
    for (int i = 0; i < out[j].n; ++i) t.out(w[j][static_cast<std::size_t>(i)], dD[out[j].off + i].d[0]);
  adj(k.m, d.d, a.d);
  adj(k.m, d2.d, a2.d);
  for (std::size_t j = 0; j < in.size(); ++j)
    for (int i = 0; i < in[j].n; ++i) {
      const int at = in[j].off + i;
      const double p = pre[static_cast<std::size_t>(at)];
      t.in(a[at], u[j][static_cast<std::size_t>(i)]);
      EXPECT_LE(std::fabs(a2[at] - p - a[at]), kAccTol * (std::fabs(p) + std::fabs(a[at])))
          << "adjoint of " << in[j].name << "[" << i << "] does not accumulate";
    }
  return t;
}

struct StageModel {
  const char* name;
  std::string key;
};

std::vector<StageModel> stage_models() {
  return {
      {"humanoid", sgtest::humanoid_xml()},
      {"g1_scene", shared_model("unitree_g1/scene_mjx.xml")},
      {"g1_mujoco222", shared_model("unitree_g1/g1_mjx_mujoco222.xml")},
      {"cartpole", shared_model("dm_control/cartpole.xml")},
      {"hopper", shared_model("gymnasium/hopper.xml")},
      {"ant", shared_model("brax/ant.xml")},
      {"humanoid_CMU", shared_model("dm_control/humanoid_CMU.xml")},
      {"gym_humanoid", shared_model("gymnasium/humanoid.xml")},
      {"ball_chain", "inline:ball_chain"},
      {"features", "inline:features"},
  };
}

// Fills qpos, qvel, ctrl, qacc with a random state; seeds alternate unit and non-unit
// quaternions and moderate / large excursions.
template <class DataT>
void random_data(const Kit& k, Rng& rng, int seed, const DataT& d, double ctrl_spread = 1.0) {
  const auto& md = *k.model;
  std::vector<double> q(static_cast<std::size_t>(md.nq)), v(static_cast<std::size_t>(md.nv)),
      c(static_cast<std::size_t>(md.nu) + 1);
  StateScales s;
  s.sq = seed % 2 ? 0.5 : 1.5;
  s.quat_norm = seed % 3 == 2 ? 1.25 : 1.0;
  random_state(md, rng, s, q.data(), v.data());
  random_ctrl(md, rng, ctrl_spread, c.data());
  for (int i = 0; i < md.nq; ++i) d.qpos()[i] = q[static_cast<std::size_t>(i)];
  for (int i = 0; i < md.nv; ++i) {
    d.qvel()[i] = v[static_cast<std::size_t>(i)];
    d.qacc()[i] = 3.0 * rng.normal();
  }
  for (int i = 0; i < md.nu; ++i) d.ctrl()[i] = c[static_cast<std::size_t>(i)];
}

using DD = kern::Data<double, LC>;
using DDual = kern::Data<D, LC>;
using MD = kern::ModelView<double>;
using MDual = kern::ModelView<D>;

struct StageReport {
  const char* stage;
  std::map<std::string, double> worst{}, scale{};
  explicit StageReport(const char* s) : stage(s) {}
  ~StageReport() {
    double total = 0;
    for (const auto& [model, v] : worst) {
      total += scale[model];
      if (scale[model] > 0)
        std::printf("[adjoint] stage %-24s %-13s worst dot-product rel residual %.2e\n", stage, model.c_str(), v);
      else  // e.g. passive forces of a model without damping, stiffness or tendons
        std::printf("[adjoint] stage %-24s %-13s (map is identically zero)\n", stage, model.c_str());
    }
    EXPECT_GT(total, 0.0) << stage << ": nothing was compared";
  }
  void check(const char* model, const DotTest& t, int seed) {
    worst[model] = std::max(worst[model], t.rel());
    scale[model] += t.scale;
    EXPECT_TRUE(t.ok()) << stage << " on " << model << " seed " << seed << ": " << t.str();
  }
};

constexpr int kStageSeeds = 3;

TEST(AdjointStages, FwdKinematics) {
  StageReport rep{"adj_fwd_kinematics_base_to_tip"};
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    const std::vector<Field> in = {{"qpos", o.qpos, m.nq}};
    const std::vector<Field> out = {{"xpos", o.xpos, 3 * m.nbody},     {"xquat", o.xquat, 4 * m.nbody},
                                    {"xmat", o.xmat, 9 * m.nbody},     {"xipos", o.xipos, 3 * m.nbody},
                                    {"ximat", o.ximat, 9 * m.nbody},   {"xanchor", o.xanchor, 3 * m.njnt},
                                    {"xaxis", o.xaxis, 3 * m.njnt},    {"tree_origin", o.tree_origin, 3 * m.nbody}};
    for (int seed = 0; seed < kStageSeeds; ++seed) {
      Rng rng(3000 + seed);
      auto t = stage_dot(
          k, rng, in, out,
          [&](const MD& m, const DD& d) {
            random_data(k, rng, seed, d);
            kern::fwd_kinematics_base_to_tip(m, d);
          },
          [](const MDual& m, const DDual& d) { kern::fwd_kinematics_base_to_tip(m, d); },
          [](const MD& m, const DD& d, const DD& a) { kern::adj_fwd_kinematics_base_to_tip(m, d, a); });
      rep.check(sm.name, t, seed);
    }
  }
}

TEST(AdjointStages, ComInertiaAndDofs) {
  StageReport rep{"adj_com_inertia_and_dofs"};
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    const std::vector<Field> in = {{"ximat", o.ximat, 9 * m.nbody}, {"xipos", o.xipos, 3 * m.nbody},
                                   {"xmat", o.xmat, 9 * m.nbody},   {"xanchor", o.xanchor, 3 * m.njnt},
                                   {"xaxis", o.xaxis, 3 * m.njnt}};
    const std::vector<Field> out = {{"cinert", o.cinert, 10 * m.nbody}, {"cdof", o.cdof, 6 * m.nv}};
    for (int seed = 0; seed < kStageSeeds; ++seed) {
      Rng rng(3100 + seed);
      auto t = stage_dot(
          k, rng, in, out,
          [&](const MD& m, const DD& d) {
            random_data(k, rng, seed, d);
            kern::fwd_kinematics_base_to_tip(m, d);
            kern::com_inertia_and_dofs(m, d);
          },
          [](const MDual& m, const DDual& d) { kern::com_inertia_and_dofs(m, d); },
          [](const MD& m, const DD& d, const DD& a) { kern::adj_com_inertia_and_dofs(m, d, a); });
      rep.check(sm.name, t, seed);
    }
  }
}

TEST(AdjointStages, ComVelocity) {
  StageReport rep{"adj_com_velocity_base_to_tip"};
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    const std::vector<Field> in = {{"cdof", o.cdof, 6 * m.nv}, {"qvel", o.qvel, m.nv}};
    const std::vector<Field> out = {{"cvel", o.cvel, 6 * m.nbody}, {"cdof_dot", o.cdof_dot, 6 * m.nv}};
    for (int seed = 0; seed < kStageSeeds; ++seed) {
      Rng rng(3200 + seed);
      auto t = stage_dot(
          k, rng, in, out,
          [&](const MD& m, const DD& d) {
            random_data(k, rng, seed, d);
            kern::fwd_position(m, d);
            kern::com_velocity_base_to_tip(m, d);
          },
          [](const MDual& m, const DDual& d) { kern::com_velocity_base_to_tip(m, d); },
          [](const MD& m, const DD& d, const DD& a) { kern::adj_com_velocity_base_to_tip(m, d, a); });
      rep.check(sm.name, t, seed);
    }
  }
}

TEST(AdjointStages, RneaWithQacc) {
  StageReport rep{"adj_rnea"};
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    const std::vector<Field> in = {{"cdof", o.cdof, 6 * m.nv},     {"cdof_dot", o.cdof_dot, 6 * m.nv},
                                   {"cinert", o.cinert, 10 * m.nbody}, {"cvel", o.cvel, 6 * m.nbody},
                                   {"qvel", o.qvel, m.nv}};
    const std::vector<Field> out = {{"tau", o.qfrc_bias, m.nv}};
    for (int seed = 0; seed < kStageSeeds; ++seed) {
      Rng rng(3300 + seed);
      auto t = stage_dot(
          k, rng, in, out,
          [&](const MD& m, const DD& d) {
            random_data(k, rng, seed, d);
            kern::fwd_position(m, d);
            kern::com_velocity_base_to_tip(m, d);
            kern::rnea(m, d, /*use_qacc=*/true, d.qfrc_bias());
          },
          [](const MDual& m, const DDual& d) { kern::rnea(m, d, true, d.qfrc_bias()); },
          [](const MD& m, const DD& d, const DD& a) { kern::adj_rnea(m, d, a, a.qfrc_bias()); });
      rep.check(sm.name, t, seed);
    }
  }
}

TEST(AdjointStages, PassiveForces) {
  StageReport rep{"adj_passive_forces"};
  int with_stiffness = 0, with_tendon = 0, with_quat_spring = 0;
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    for (int j = 0; j < m.njnt; ++j)
      if (m.jnt_stiffness[j] != 0) {
        ++with_stiffness;
        if (m.jnt_type[j] == kern::kJntBall || m.jnt_type[j] == kern::kJntFree) ++with_quat_spring;
      }
    with_tendon += m.ntendon;
    // the map (qpos, qvel) -> qfrc_passive through tendon_kinematics and passive_forces
    const std::vector<Field> in = {{"qpos", o.qpos, m.nq}, {"qvel", o.qvel, m.nv}};
    const std::vector<Field> out = {{"qfrc_passive", o.qfrc_passive, m.nv}};
    for (int seed = 0; seed < kStageSeeds; ++seed) {
      Rng rng(3400 + seed);
      auto t = stage_dot(
          k, rng, in, out, [&](const MD&, const DD& d) { random_data(k, rng, seed, d); },
          [](const MDual& m, const DDual& d) {
            kern::tendon_kinematics(m, d);
            kern::passive_forces(m, d);
          },
          [](const MD& m, const DD& d, const DD& a) { kern::adj_passive_forces(m, d, a); });
      rep.check(sm.name, t, seed);
    }
  }
  EXPECT_GT(with_stiffness, 0);
  EXPECT_GT(with_tendon, 0);
  EXPECT_GT(with_quat_spring, 0);
}

TEST(AdjointStages, ActuatorForcesWithClamps) {
  StageReport rep{"adj_actuator_forces"};
  ClampStats all;
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    if (m.nu == 0) continue;
    const std::vector<Field> in = {{"ctrl", o.ctrl, m.nu}, {"qpos", o.qpos, m.nq}, {"qvel", o.qvel, m.nv}};
    const std::vector<Field> out = {{"qfrc_actuator", o.qfrc_actuator, m.nv}};
    ClampStats model_stats;
    for (int seed = 0; seed < 4 * kStageSeeds; ++seed) {
      Rng rng(3500 + seed);
      auto t = stage_dot(
          k, rng, in, out,
          [&](const MD& m, const DD& d) {
            // controls spread 1.6 half-widths: about a third beyond ctrlrange; the random
            // states push affine (servo) forces beyond forcerange / actuatorfrcrange too
            random_data(k, rng, seed, d, 1.6);
            model_stats.merge(clamp_stats(m, d));
            kern::actuator_forces(m, d);
          },
          [](const MDual& m, const DDual& d) { kern::actuator_forces(m, d); },
          [](const MD& m, const DD& d, const DD& a) { kern::adj_actuator_forces(m, d, a); });
      rep.check(sm.name, t, seed);
    }
    std::printf("[adjoint] clamps %-13s ctrl active/inactive %d/%d  force %d/%d  joint total %d/%d\n", sm.name,
                model_stats.ctrl_active, model_stats.ctrl_inactive, model_stats.force_active, model_stats.force_inactive,
                model_stats.jnt_active, model_stats.jnt_inactive);
    all.merge(model_stats);
  }
  // every kind of clamp was exercised both active and inactive
  EXPECT_GT(all.ctrl_active, 0);
  EXPECT_GT(all.ctrl_inactive, 0);
  EXPECT_GT(all.force_active, 0);
  EXPECT_GT(all.force_inactive, 0);
  EXPECT_GT(all.jnt_active, 0);
  EXPECT_GT(all.jnt_inactive, 0);
}

TEST(AdjointStages, IntegratePos) {
  StageReport rep{"adj_integrate_pos"};
  for (const auto& sm : stage_models()) {
    Kit k(load_cached(sm.key));
    const auto& o = k.o;
    const auto& m = k.m;
    const std::vector<Field> in = {{"qpos", o.qpos, m.nq}, {"qvel", o.qvel, m.nv}};
    const std::vector<Field> out = {{"qpos", o.qpos, m.nq}};
    for (double h : {m.timestep, 0.1}) {
      for (int seed = 0; seed < kStageSeeds; ++seed) {
        Rng rng(3600 + seed);
        auto t = stage_dot(
            k, rng, in, out, [&](const MD&, const DD& d) { random_data(k, rng, seed, d); },
            [h](const MDual& m, const DDual& d) {
              kern::integrate_pos(m, d.qpos(), d.qvel(), D(h));
            },
            [h](const MD& m, const DD& d, const DD& a) {
              kern::adj_integrate_pos(m, d.qpos(), d.qvel(), h, a.qpos(), a.qvel());
            });
        rep.check(sm.name, t, seed);
      }
    }
  }
}

}  // namespace
