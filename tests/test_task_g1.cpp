// g1-imitate:CLIP (learn/task_g1_imitate.cpp): the LAFAN1 clip reader, the imitation
// kernels' adjoints (dot-product test against dual numbers), the Task's adjoints against
// central finite differences, and the reset / reward / termination behaviour. The clips are
// read from the shared data folder (their licence forbids copying them into the project).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "adjoint_support.hpp"
#include "learn/motion_clip.hpp"
#include "learn/task_g1_imitate.hpp"
#include "core/model_arrays_impl.hpp"
#include "kernels/base/dual.hpp"
#include "kernels/tasks/imitation_add_adjoint.hpp"
#include "kernels/tasks/imitation_adjoint.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/simulator.hpp"
#include "test_support.hpp"

namespace {

namespace kern = stiffgrad::kern;
using stiffgrad::learn::G1ImitateTask;
using stiffgrad::learn::MotionClip;
using D = kern::Dual<double, 1>;
using LC = kern::Contiguous;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

std::string clip_path(const std::string& name) {
  return sgtest::data_dir() + "/motions/lafan1_g1/" + name + ".csv";
}

bool have_g1_data() {
  return sgtest::file_exists(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml") &&
         sgtest::file_exists(clip_path("run1_subject2")) && sgtest::file_exists(clip_path("jumps1_subject1"));
}

// The shared data is part of the test setup (as for every model test): missing, it is a failure,
// not a skip.
#define REQUIRE_G1_DATA() \
  if (!have_g1_data()) FAIL() << "no G1 model or motion data under " << sgtest::data_dir()

// The CSV read independently of MotionClip: one row of numbers per non-blank line.
std::vector<std::vector<double>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<double> row;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

int count_nonblank_lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++n;
  return n;
}

// MuJoCo qpos of a CSV row: quaternion x y z w -> w x y z, normalized.
std::vector<double> row_qpos(const std::vector<double>& r) {
  std::vector<double> q(r.begin(), r.end());
  const double n = std::sqrt(r[3] * r[3] + r[4] * r[4] + r[5] * r[5] + r[6] * r[6]);
  q[3] = r[6] / n; q[4] = r[3] / n; q[5] = r[4] / n; q[6] = r[5] / n;
  return q;
}

// Row-major rotation matrix of a unit quaternion w x y z (written out here, not the kernels').
void rotmat(const double* q, double R[9]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

std::unique_ptr<G1ImitateTask> make(const std::string& clip = "run1_subject2") {
  stiffgrad::learn::TaskOptions o;
  o.data_dir = sgtest::data_dir();
  return std::make_unique<G1ImitateTask>(clip, o);
}

// ------------------------------------------------------------------------ motion clip

TEST(MotionClip, FrameCountEqualsCsvLines) {
  REQUIRE_G1_DATA();
  for (const char* name : {"run1_subject2", "jumps1_subject1"}) {
    const MotionClip clip(clip_path(name));
    const int lines = count_nonblank_lines(clip_path(name));
    std::printf("[g1] %s: %d frames, %.2f s\n", name, clip.frames(), clip.duration());
    EXPECT_EQ(clip.frames(), lines) << name;
    EXPECT_GT(lines, 1000) << name;
    EXPECT_NEAR(clip.duration(), (lines - 1) / 30.0, 1e-12);
    EXPECT_EQ(clip.nq(), 36);
    EXPECT_EQ(clip.nv(), 35);
  }
}

TEST(MotionClip, InterpolationAtFrameTimesReproducesFrames) {
  REQUIRE_G1_DATA();
  for (const char* name : {"run1_subject2", "jumps1_subject1"}) {
    const MotionClip clip(clip_path(name));
    const auto rows = read_csv(clip_path(name));
    ASSERT_EQ(static_cast<int>(rows.size()), clip.frames());
    double worst = 0, worst_mid = 0;
    std::vector<double> q(36);
    const int n = clip.frames();
    for (int i : {0, 1, 2, 17, n / 3, n / 2, n - 2, n - 1}) {
      ASSERT_EQ(rows[sz(i)].size(), 36u);
      const auto ref = row_qpos(rows[sz(i)]);
      clip.qpos(i / 30.0, q.data());
      for (int k = 0; k < 36; ++k) worst = std::max(worst, std::fabs(q[sz(k)] - ref[sz(k)]));
      if (i + 1 < n) {  // half-way: positions and joint angles are the means of the two frames
        const auto nxt = row_qpos(rows[sz(i + 1)]);
        clip.qpos((i + 0.5) / 30.0, q.data());
        for (int k : {0, 1, 2})
          worst_mid = std::max(worst_mid, std::fabs(q[sz(k)] - 0.5 * (ref[sz(k)] + nxt[sz(k)])));
        for (int k = 7; k < 36; ++k)
          worst_mid = std::max(worst_mid, std::fabs(q[sz(k)] - 0.5 * (ref[sz(k)] + nxt[sz(k)])));
        // the slerp midpoint is equally far from both frames, and unit
        double ca = 0, cb = 0, nn = 0;
        for (int k = 0; k < 4; ++k) {
          ca += q[sz(3 + k)] * ref[sz(3 + k)];
          cb += q[sz(3 + k)] * nxt[sz(3 + k)];
          nn += q[sz(3 + k)] * q[sz(3 + k)];
        }
        EXPECT_NEAR(std::fabs(ca), std::fabs(cb), 1e-9) << name << " frame " << i;
        EXPECT_NEAR(nn, 1.0, 1e-12);
      }
    }
    std::printf("[g1] %s: frame reproduction error %.2e, midpoint error %.2e\n", name, worst, worst_mid);
    EXPECT_LT(worst, 1e-12) << name;
    EXPECT_LT(worst_mid, 1e-12) << name;
  }
}

TEST(MotionClip, VelocitiesMatchFiniteDifferencesOfFrames) {
  REQUIRE_G1_DATA();
  for (const char* name : {"run1_subject2", "jumps1_subject1"}) {
    const MotionClip clip(clip_path(name));
    const auto rows = read_csv(clip_path(name));
    const int n = clip.frames();
    double worst_lin = 0, worst_ang = 0, max_ang = 0;
    std::vector<double> v(35);
    for (int i = 1; i < n - 1; i += 13) {
      const auto a = row_qpos(rows[sz(i - 1)]), b = row_qpos(rows[sz(i + 1)]), c = row_qpos(rows[sz(i)]);
      clip.qvel(i / 30.0, v.data());
      for (int k = 0; k < 3; ++k) worst_lin = std::max(worst_lin, std::fabs(v[sz(k)] - (b[sz(k)] - a[sz(k)]) * 15.0));
      for (int j = 0; j < 29; ++j)
        worst_lin = std::max(worst_lin, std::fabs(v[sz(6 + j)] - (b[sz(7 + j)] - a[sz(7 + j)]) * 15.0));
      // angular velocity: the world-frame rotation between the neighbouring frames,
      // Rb Raᵀ = exp([φ]×), by its matrix logarithm; ω = Rcᵀ φ / 2h in the root frame
      double Ra[9], Rb[9], Rc[9], Rw[9];
      rotmat(&a[3], Ra); rotmat(&b[3], Rb); rotmat(&c[3], Rc);
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          double x = 0;
          for (int k = 0; k < 3; ++k) x += Rb[3 * r + k] * Ra[3 * s + k];
          Rw[3 * r + s] = x;
        }
      const double ct = std::clamp(0.5 * (Rw[0] + Rw[4] + Rw[8] - 1), -1.0, 1.0);
      const double theta = std::acos(ct);
      const double f = theta > 1e-12 ? theta / (2 * std::sin(theta)) : 0.5;
      const double phi[3] = {f * (Rw[7] - Rw[5]), f * (Rw[2] - Rw[6]), f * (Rw[3] - Rw[1])};
      double w[3];
      for (int k = 0; k < 3; ++k) w[k] = 15.0 * (Rc[k] * phi[0] + Rc[3 + k] * phi[1] + Rc[6 + k] * phi[2]);
      const double wn = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
      max_ang = std::max(max_ang, wn);
      double err = 0;
      for (int k = 0; k < 3; ++k) err += (v[sz(3 + k)] - w[k]) * (v[sz(3 + k)] - w[k]);
      err = std::sqrt(err);
      worst_ang = std::max(worst_ang, err);
      EXPECT_LT(err, 1e-8 * (1 + wn)) << name << " frame " << i;
    }
    // at the ends, one-sided differences over the part inside the clip
    clip.qvel(0.0, v.data());
    for (int j = 0; j < 29; ++j)
      worst_lin = std::max(worst_lin, std::fabs(v[sz(6 + j)] - (rows[1][sz(7 + j)] - rows[0][sz(7 + j)]) * 30.0));
    clip.qvel(clip.duration(), v.data());
    for (int k = 0; k < 3; ++k)
      worst_lin = std::max(worst_lin, std::fabs(v[sz(k)] - (rows[sz(n - 1)][sz(k)] - rows[sz(n - 2)][sz(k)]) * 30.0));
    std::printf("[g1] %s: velocity error linear/joint %.2e, angular %.2e rad/s (largest |w| %.2f rad/s)\n",
                name, worst_lin, worst_ang, max_ang);
    EXPECT_LT(worst_lin, 1e-9) << name;
    EXPECT_GT(max_ang, 0.5) << name << ": the test should see some rotation";
  }
}

TEST(MotionClip, MissingFileErrorNamesTheFile) {
  const std::string path = "/nonexistent/dir/no_such_clip.csv";
  try {
    MotionClip clip(path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(MotionClip, MalformedLineErrorNamesFileAndLine) {
  // a small synthetic file (not clip data)
  const std::string path = testing::TempDir() + "sg_bad_clip.csv";
  {
    std::ofstream out(path);
    std::string good = "0,0,0.8,0,0,0,1";
    for (int j = 0; j < 29; ++j) good += ",0.1";
    out << good << "\n" << good << "\n" << "0,0,0.8,0,0,0,1,0.1,abc\n";
  }
  try {
    MotionClip clip(path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path + ":3"), std::string::npos) << what;
  }
  std::remove(path.c_str());
}

// ------------------------------------------------------------------------ kernels: dot-product test


template <class Real>
struct Buf {
  std::vector<Real> v;
  kern::Data<Real, LC> d;
  explicit Buf(const kern::DataLayout& o) : v(sz(o.size)) { d = kern::Data<Real, LC>::bind({v.data(), LC{}}, o); }
};

// A state near the reference: every raw qpos component perturbed (the quaternion leaves the
// unit sphere unless `unit_quat`), velocities perturbed.
void perturbed_state(const G1ImitateTask& task, std::mt19937_64& g, double sigma, bool unit_quat, const double* ref_q,
                     const double* ref_v, std::vector<double>& q, std::vector<double>& v) {
  std::normal_distribution<double> N(0.0, 1.0);
  const int nq = task.model()->nq, nv = task.model()->nv;
  q.assign(ref_q, ref_q + nq);
  v.assign(ref_v, ref_v + nv);
  for (double& x : q) x += sigma * N(g);
  for (double& x : v) x += 3 * sigma * N(g);
  if (unit_quat) {
    double n = 0;
    for (int k = 3; k < 7; ++k) n += q[sz(k)] * q[sz(k)];
    for (int k = 3; k < 7; ++k) q[sz(k)] /= std::sqrt(n);
  }
}

struct Dot {
  double lhs = 0, rhs = 0, scale = 0;
  void out(double w, double ju) { lhs += w * ju; scale += std::fabs(w * ju); }
  void in(double jtw, double u) { rhs += jtw * u; scale += std::fabs(jtw * u); }
  double rel() const { return std::fabs(lhs - rhs) / scale; }
};

TEST(G1ImitateKernels, DotProductAgainstDualNumbers) {
  REQUIRE_G1_DATA();
  auto task = make();
  sgadj::Kit k(task->model());
  const auto& s = task->spec();
  const int nq = k.m.nq, nv = k.m.nv, nobs = kern::imitation_obs_dim(s);
  ASSERT_EQ(nobs, task->obs_dim());
  Buf<double> d(k.o), a(k.o), r(k.o);
  Buf<D> dD(k.o);
  std::mt19937_64 g(7);
  std::normal_distribution<double> N(0.0, 1.0);
  const MotionClip& clip = task->clip();
  double worst_obs = 0, worst_rew = 0;
  for (int seed = 0; seed < 8; ++seed) {
    const double time = std::uniform_real_distribution<double>(0.0, clip.duration())(g);
    std::vector<double> rq(sz(nq)), rv(sz(nv)), q, v;
    clip.qpos(time, rq.data());
    clip.qvel(time, rv.data());
    perturbed_state(*task, g, seed < 4 ? 0.05 : 0.3, seed % 2 == 1, rq.data(), rv.data(), q, v);
    // reference key bodies by the same kinematics
    for (int i = 0; i < nq; ++i) r.d.qpos()[i] = rq[sz(i)];
    kern::fwd_kinematics_base_to_tip(k.m, r.d);
    std::vector<double> rkey(sz(3 * s.nkey));
    kern::imitation_key_positions(r.d, s, rkey.data());
    std::vector<D> rqD(rq.begin(), rq.end()), rvD(rv.begin(), rv.end()), rkeyD(rkey.begin(), rkey.end());

    std::vector<double> uq(sz(nq)), uv(sz(nv)), w(sz(nobs));
    for (double& x : uq) x = N(g);
    for (double& x : uv) x = N(g);
    for (double& x : w) x = N(g);
    for (int i = 0; i < nq; ++i) {
      dD.d.qpos()[i] = D(q[sz(i)]);
      dD.d.qpos()[i].d[0] = uq[sz(i)];
    }
    for (int i = 0; i < nv; ++i) {
      dD.d.qvel()[i] = D(v[sz(i)]);
      dD.d.qvel()[i].d[0] = uv[sz(i)];
    }
    for (int i = 0; i < nq; ++i) d.d.qpos()[i] = q[sz(i)];
    for (int i = 0; i < nv; ++i) d.d.qvel()[i] = v[sz(i)];

    // observation
    {
      std::vector<D> obsD(sz(nobs));
      kern::imitation_observe(k.mD, dD.d, s, rqD.data(), rkeyD.data(), obsD.data());
      std::vector<double> obs(sz(nobs));
      kern::imitation_observe(k.m, d.d, s, rq.data(), rkey.data(), obs.data());
      for (int i = 0; i < nobs; ++i) ASSERT_EQ(obs[sz(i)], obsD[sz(i)].v) << "value part differs at " << i;
      std::fill(a.v.begin(), a.v.end(), 0.0);
      kern::adj_imitation_observe(k.m, d.d, a.d, s, rq.data(), rkey.data(), w.data());
      Dot t;
      for (int i = 0; i < nobs; ++i) t.out(w[sz(i)], obsD[sz(i)].d[0]);
      for (int i = 0; i < nq; ++i) t.in(a.d.qpos()[i], uq[sz(i)]);
      for (int i = 0; i < nv; ++i) t.in(a.d.qvel()[i], uv[sz(i)]);
      worst_obs = std::max(worst_obs, t.rel());
      EXPECT_LT(t.rel(), 1e-12) << "observation seed " << seed << " lhs " << t.lhs << " rhs " << t.rhs;
    }
    // reward
    {
      const D rD = kern::imitation_reward_state(k.mD, dD.d, s, rqD.data(), rvD.data(), rkeyD.data());
      const double wr = N(g);
      std::fill(a.v.begin(), a.v.end(), 0.0);
      kern::adj_imitation_reward_state(k.m, d.d, a.d, s, rq.data(), rv.data(), rkey.data(), wr);
      Dot t;
      t.out(wr, rD.d[0]);
      for (int i = 0; i < nq; ++i) t.in(a.d.qpos()[i], uq[sz(i)]);
      for (int i = 0; i < nv; ++i) t.in(a.d.qvel()[i], uv[sz(i)]);
      worst_rew = std::max(worst_rew, t.rel());
      EXPECT_GT(rD.v, 0.0);
      EXPECT_LT(t.rel(), 1e-12) << "reward seed " << seed << " lhs " << t.lhs << " rhs " << t.rhs;
    }
  }
  std::printf("[g1] dot-product test worst relative residual: observation %.2e, reward %.2e\n", worst_obs,
              worst_rew);
}

TEST(G1ImitateKernels, AddFeaturesDotProductAgainstDualNumbers) {
  REQUIRE_G1_DATA();
  auto task = make();
  sgadj::Kit k(task->model());
  const auto& s = task->spec();
  const int nq = k.m.nq, nv = k.m.nv, nf = kern::imitation_add_dim(s);
  ASSERT_EQ(nf, 15 + 2 * 29 + 3 * 10);
  ASSERT_EQ(nf, task->add_dim());
  Buf<double> d(k.o), a(k.o);
  Buf<D> dD(k.o);
  std::mt19937_64 g(17);
  std::normal_distribution<double> N(0.0, 1.0);
  double worst = 0;
  for (int seed = 0; seed < 8; ++seed) {
    const double time = std::uniform_real_distribution<double>(0.0, task->clip().duration())(g);
    std::vector<double> rq(sz(nq)), rv(sz(nv)), q, v;
    task->clip().qpos(time, rq.data());
    task->clip().qvel(time, rv.data());
    perturbed_state(*task, g, seed < 4 ? 0.05 : 0.3, seed % 2 == 1, rq.data(), rv.data(), q, v);
    std::vector<double> uq(sz(nq)), uv(sz(nv)), w(sz(nf));
    for (double& x : uq) x = N(g);
    for (double& x : uv) x = N(g);
    for (double& x : w) x = N(g);
    for (int i = 0; i < nq; ++i) {
      dD.d.qpos()[i] = D(q[sz(i)]);
      dD.d.qpos()[i].d[0] = uq[sz(i)];
      d.d.qpos()[i] = q[sz(i)];
    }
    for (int i = 0; i < nv; ++i) {
      dD.d.qvel()[i] = D(v[sz(i)]);
      dD.d.qvel()[i].d[0] = uv[sz(i)];
      d.d.qvel()[i] = v[sz(i)];
    }
    std::vector<D> fD(sz(nf));
    kern::imitation_add_features_state(k.mD, dD.d, s, fD.data());
    std::vector<double> f(sz(nf));
    kern::imitation_add_features_state(k.m, d.d, s, f.data());
    for (int i = 0; i < nf; ++i) ASSERT_EQ(f[sz(i)], fD[sz(i)].v) << "value part differs at " << i;
    std::fill(a.v.begin(), a.v.end(), 0.0);
    kern::adj_imitation_add_delta_state(k.m, d.d, a.d, s, w.data());
    Dot t;  // Δ = ref − f: ∂Δ u = −∂f u
    for (int i = 0; i < nf; ++i) t.out(w[sz(i)], -fD[sz(i)].d[0]);
    for (int i = 0; i < nq; ++i) t.in(a.d.qpos()[i], uq[sz(i)]);
    for (int i = 0; i < nv; ++i) t.in(a.d.qvel()[i], uv[sz(i)]);
    worst = std::max(worst, t.rel());
    EXPECT_LT(t.rel(), 1e-12) << "seed " << seed << " lhs " << t.lhs << " rhs " << t.rhs;
  }
  std::printf("[g1] ADD features dot-product test worst relative residual %.2e\n", worst);
}

// ------------------------------------------------------------------------ Task: finite differences

// Worst |g_adj − g_fd| / max(|g_fd|∞, 1e-3) over qpos and qvel of f(q, v) = a scalar.
template <class F>
double fd_check(const std::vector<double>& q, const std::vector<double>& v, const std::vector<double>& gq,
                const std::vector<double>& gv, F f, const char* what) {
  const double h = 1e-6;
  std::vector<double> fq(q.size()), fv(v.size());
  for (std::size_t i = 0; i < q.size(); ++i) {
    auto qp = q, qm = q;
    qp[i] += h; qm[i] -= h;
    fq[i] = (f(qp, v) - f(qm, v)) / (2 * h);
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto vp = v, vm = v;
    vp[i] += h; vm[i] -= h;
    fv[i] = (f(q, vp) - f(q, vm)) / (2 * h);
  }
  double gmax = 1e-3, err = 0;
  for (double x : fq) gmax = std::max(gmax, std::fabs(x));
  for (double x : fv) gmax = std::max(gmax, std::fabs(x));
  for (std::size_t i = 0; i < q.size(); ++i) {
    err = std::max(err, std::fabs(gq[i] - fq[i]));
    EXPECT_NEAR(gq[i], fq[i], 1e-6 * gmax) << what << " qpos[" << i << "]";
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    err = std::max(err, std::fabs(gv[i] - fv[i]));
    EXPECT_NEAR(gv[i], fv[i], 1e-6 * gmax) << what << " qvel[" << i << "]";
  }
  return err / gmax;
}

TEST(G1ImitateTask, AdjointsMatchCentralDifferences) {
  REQUIRE_G1_DATA();
  auto task = make();
  task->resize(3);
  std::mt19937_64 g(11);
  std::normal_distribution<double> N(0.0, 1.0);
  const int nq = task->model()->nq, nv = task->model()->nv, nobs = task->obs_dim();
  double worst_obs = 0, worst_rew = 0;
  for (int e = 0; e < 3; ++e) {
    std::vector<double> q0(sz(nq)), v0(sz(nv)), q, v;
    task->reset_env(e, g, q0.data(), v0.data());
    const int t = 1 + 7 * e;
    std::vector<double> rq(sz(nq)), rv(sz(nv));
    task->reference_state(e, t, rq.data(), rv.data());
    perturbed_state(*task, g, 0.05, false, rq.data(), rv.data(), q, v);
    // raw quaternion of norm 1.1: MuJoCo's normalize4 (in the kinematics) leaves a unit
    // quaternion untouched, so there the radial derivative of a finite difference and of the
    // adjoint differ by convention; off the sphere both see the normalization
    double n = 0;
    for (int k = 3; k < 7; ++k) n += q[sz(k)] * q[sz(k)];
    for (int k = 3; k < 7; ++k) q[sz(k)] *= 1.1 / std::sqrt(n);

    std::vector<double> w(sz(nobs)), action(sz(task->act_dim()), 0.0);
    for (double& x : w) x = N(g);
    std::vector<double> gq(sz(nq), 0.0), gv(sz(nv), 0.0);
    task->adj_observe(e, t, q.data(), v.data(), w.data(), gq.data(), gv.data());
    auto fobs = [&](const std::vector<double>& qq, const std::vector<double>& vv) {
      std::vector<double> obs(sz(nobs));
      task->observe(e, t, qq.data(), vv.data(), obs.data());
      double s = 0;
      for (int i = 0; i < nobs; ++i) s += w[sz(i)] * obs[sz(i)];
      return s;
    };
    worst_obs = std::max(worst_obs, fd_check(q, v, gq, gv, fobs, "observe"));

    std::fill(gq.begin(), gq.end(), 0.0);
    std::fill(gv.begin(), gv.end(), 0.0);
    std::vector<double> ga(action.size(), 0.0);
    const double adj_r = 1.7;
    task->adj_reward(e, t, q.data(), v.data(), action.data(), adj_r, gq.data(), gv.data(), ga.data());
    auto frew = [&](const std::vector<double>& qq, const std::vector<double>& vv) {
      return adj_r * task->reward(e, t, qq.data(), vv.data(), action.data());
    };
    worst_rew = std::max(worst_rew, fd_check(q, v, gq, gv, frew, "reward"));
    for (double x : ga) EXPECT_EQ(x, 0.0);
  }
  std::printf("[g1] central differences (h 1e-6) worst error / largest gradient: observe %.2e, reward %.2e\n",
              worst_obs, worst_rew);
}

TEST(G1ImitateTask, AddDeltaVanishesOnTheReferenceAndItsAdjointMatchesCentralDifferences) {
  REQUIRE_G1_DATA();
  auto task = make();
  task->resize(2);
  std::mt19937_64 g(23);
  std::normal_distribution<double> N(0.0, 1.0);
  const int nq = task->model()->nq, nv = task->model()->nv, nf = task->add_dim();
  double worst = 0;
  for (int e = 0; e < 2; ++e) {
    std::vector<double> q0(sz(nq)), v0(sz(nv));
    task->reset_env(e, g, q0.data(), v0.data());
    const int t = 3 + 5 * e;
    std::vector<double> rq(sz(nq)), rv(sz(nv)), delta(sz(nf)), q, v;
    task->reference_state(e, t, rq.data(), rv.data());
    task->add_delta(e, t, rq.data(), rv.data(), delta.data());
    double dmax = 0;
    for (double x : delta) dmax = std::max(dmax, std::fabs(x));
    EXPECT_LT(dmax, 1e-12) << "the reference's own difference is not zero";
    perturbed_state(*task, g, 0.05, false, rq.data(), rv.data(), q, v);
    double n = 0;  // off the unit sphere, as in AdjointsMatchCentralDifferences
    for (int k = 3; k < 7; ++k) n += q[sz(k)] * q[sz(k)];
    for (int k = 3; k < 7; ++k) q[sz(k)] *= 1.1 / std::sqrt(n);
    std::vector<double> w(sz(nf)), gq(sz(nq), 0.0), gv(sz(nv), 0.0);
    for (double& x : w) x = N(g);
    task->adj_add_delta(e, t, q.data(), v.data(), w.data(), gq.data(), gv.data());
    auto f = [&](const std::vector<double>& qq, const std::vector<double>& vv) {
      std::vector<double> dl(sz(nf));
      task->add_delta(e, t, qq.data(), vv.data(), dl.data());
      double sum = 0;
      for (int i = 0; i < nf; ++i) sum += w[sz(i)] * dl[sz(i)];
      return sum;
    };
    worst = std::max(worst, fd_check(q, v, gq, gv, f, "add_delta"));
  }
  std::printf("[g1] ADD delta central differences (h 1e-6) worst error / largest gradient %.2e\n", worst);
}

// adj_action_to_ctrl of environment e at step t, at action a, against central differences of
// action_to_ctrl along each action with a random adjoint; returns how many entries have a zero
// adjoint (clamped).
int expect_action_adjoint_matches_central_differences(const G1ImitateTask& task, int e, int t,
                                                      const std::vector<double>& a, std::mt19937_64& g) {
  const int nu = task.act_dim();
  std::normal_distribution<double> N(0.0, 3.0);
  std::vector<double> w(sz(nu)), ga(sz(nu), 0.0);
  for (double& x : w) x = N(g);
  task.adj_action_to_ctrl(e, t, a.data(), w.data(), ga.data());
  int clamped = 0;
  for (int i = 0; i < nu; ++i) {
    const double h = 1e-6;
    auto ap = a, am = a;
    ap[sz(i)] += h; am[sz(i)] -= h;
    std::vector<double> cp(sz(nu)), cm(sz(nu));
    task.action_to_ctrl(e, t, ap.data(), cp.data());
    task.action_to_ctrl(e, t, am.data(), cm.data());
    double fd = 0;
    for (int k = 0; k < nu; ++k) fd += w[sz(k)] * (cp[sz(k)] - cm[sz(k)]) / (2 * h);
    EXPECT_NEAR(ga[sz(i)], fd, 1e-7) << "step " << t << " action " << i;
    clamped += ga[sz(i)] == 0.0;
  }
  return clamped;
}

TEST(G1ImitateTask, ActionMapAndItsAdjoint) {
  REQUIRE_G1_DATA();
  auto task = make();
  const auto& m = *task->model();
  const int nu = task->act_dim();
  ASSERT_EQ(nu, 29);
  std::vector<double> a(sz(nu), 0.0), c(sz(nu));
  task->action_to_ctrl(0, 0, a.data(), c.data());
  // zero action: the home keyframe's control
  const int key = m.keyframe_id("home");
  ASSERT_GE(key, 0);
  for (int i = 0; i < nu; ++i) EXPECT_NEAR(c[sz(i)], m.keyframes[sz(key)].ctrl[sz(i)], 1e-12) << i;
  std::mt19937_64 g(3);
  std::normal_distribution<double> N(0.0, 3.0);
  for (double& x : a) x = N(g);  // some beyond the control range
  const int clamped = expect_action_adjoint_matches_central_differences(*task, 0, 0, a, g);
  task->action_to_ctrl(0, 0, a.data(), c.data());
  for (int i = 0; i < nu; ++i) {
    EXPECT_GE(c[sz(i)], m.actuator_ctrlrange[sz(2 * i)]);
    EXPECT_LE(c[sz(i)], m.actuator_ctrlrange[sz(2 * i + 1)]);
  }
  EXPECT_GT(clamped, 0) << "the test should reach the clamp";
}

TEST(G1ImitateTask, ReferenceServoTargetsFollowTheClipAndTheirAdjoint) {
  // --servo-targets reference: ctrl = (reference joint angle at step t + 1) + 0.25 a, clamped.
  // The zero action's controls are read against the CSV's own frames: with the episode started
  // at clip time 0, step t + 1 = 5k lies on frame 3k (30 fps, control 0.02 s).
  REQUIRE_G1_DATA();
  stiffgrad::learn::TaskOptions o;
  o.data_dir = sgtest::data_dir();
  o.servo_targets = stiffgrad::learn::TaskOptions::ServoTargets::Reference;
  G1ImitateTask task("run1_subject2", o);
  const auto& m = *task.model();
  const int nu = task.act_dim();
  task.resize(2);
  task.set_start_time(1, 0.0);
  const auto rows = read_csv(clip_path("run1_subject2"));
  std::vector<double> a(sz(nu), 0.0), c(sz(nu));
  int clamped_at_zero = 0;
  for (int t : {4, 9, 49}) {
    const auto frame = row_qpos(rows[sz(3 * (t + 1) / 5)]);
    task.action_to_ctrl(1, t, a.data(), c.data());
    for (int i = 0; i < nu; ++i) {
      const double lo = m.actuator_ctrlrange[sz(2 * i)], hi = m.actuator_ctrlrange[sz(2 * i + 1)];
      const double target = frame[sz(m.jnt_qposadr[sz(m.actuator_trnid[sz(i)])])];
      clamped_at_zero += target < lo || target > hi;
      EXPECT_NEAR(c[sz(i)], std::min(hi, std::max(lo, target)), 1e-12) << "step " << t << " actuator " << i;
    }
  }
  EXPECT_LT(clamped_at_zero, nu) << "the reference should mostly lie inside the control ranges";
  // a unit action moves each unclamped target by 0.25 rad
  std::vector<double> one(sz(nu), 0.0), c1(sz(nu));
  task.action_to_ctrl(1, 9, a.data(), c.data());
  for (int i = 0; i < nu; ++i) {
    one.assign(sz(nu), 0.0);
    one[sz(i)] = 0.01;
    task.action_to_ctrl(1, 9, one.data(), c1.data());
    if (c[sz(i)] > m.actuator_ctrlrange[sz(2 * i)] + 0.01 && c[sz(i)] < m.actuator_ctrlrange[sz(2 * i + 1)] - 0.01)
      EXPECT_NEAR(c1[sz(i)] - c[sz(i)], 0.0025, 1e-12) << i;
  }
  // TaskOptions::action_scale sets the step per unit action (kernel description included)
  {
    stiffgrad::learn::TaskOptions o2 = o;
    o2.action_scale = 0.6;
    G1ImitateTask scaled("run1_subject2", o2);
    scaled.resize(2);
    scaled.set_start_time(1, 0.0);
    std::vector<double> cs(sz(nu)), cs1(sz(nu));
    scaled.action_to_ctrl(1, 9, a.data(), cs.data());
    int moved_by_scale = 0;
    for (int i = 0; i < nu; ++i) {
      EXPECT_EQ(cs[sz(i)], c[sz(i)]) << "a zero action does not depend on the scale";
      one.assign(sz(nu), 0.0);
      one[sz(i)] = 0.01;
      scaled.action_to_ctrl(1, 9, one.data(), cs1.data());
      if (c[sz(i)] > m.actuator_ctrlrange[sz(2 * i)] + 0.01 && c[sz(i)] < m.actuator_ctrlrange[sz(2 * i + 1)] - 0.01) {
        EXPECT_NEAR(cs1[sz(i)] - cs[sz(i)], 0.006, 1e-12) << i;
        ++moved_by_scale;
      }
    }
    EXPECT_GT(moved_by_scale, nu / 2);
    EXPECT_EQ(scaled.kernel_desc().action_scale, 0.6);
    EXPECT_EQ(task.kernel_desc().action_scale, G1ImitateTask::kActionScale);
  }
  // the home map differs (the reference moves; home does not)
  const auto home = make();
  home->resize(2);
  std::vector<double> ch(sz(nu));
  home->action_to_ctrl(1, 9, a.data(), ch.data());
  double moved = 0;
  for (int i = 0; i < nu; ++i) moved = std::max(moved, std::fabs(ch[sz(i)] - c[sz(i)]));
  EXPECT_GT(moved, 0.05);
  // adjoint against central differences, with clamped entries
  std::mt19937_64 g(4);
  std::normal_distribution<double> N(0.0, 3.0);
  for (double& x : a) x = N(g);
  const int clamped = expect_action_adjoint_matches_central_differences(task, 1, 9, a, g);
  EXPECT_GT(clamped, 0) << "the test should reach the clamp";
  EXPECT_LT(clamped, nu) << "the test should leave some targets unclamped";
  // the backend kernel's description names the same map and the joints' qpos entries
  const auto desc = task.kernel_desc();
  EXPECT_EQ(desc.action_map, stiffgrad::kern::tasks::kActionServoReference);
  ASSERT_EQ(desc.ctrl_ref_index.size(), sz(nu));
  for (int i = 0; i < nu; ++i) EXPECT_EQ(desc.ctrl_ref_index[sz(i)], m.jnt_qposadr[sz(m.actuator_trnid[sz(i)])]);
  EXPECT_EQ(home->kernel_desc().action_map, stiffgrad::kern::tasks::kActionServo);
}

// ------------------------------------------------------------------------ Task: behaviour

TEST(G1ImitateTask, Setup) {
  REQUIRE_G1_DATA();
  auto task = make();
  EXPECT_EQ(task->name(), "g1-imitate:run1_subject2");
  EXPECT_EQ(task->model()->opt.timestep, 0.005);
  const auto so = task->sim_options();
  EXPECT_EQ(so.substeps, 4);
  EXPECT_EQ(so.contact_model, stiffgrad::ContactModel::Impulse);
  EXPECT_EQ(so.impulse.kappa, 300.0);
  // the servos' velocity gains implicit (bench_shac_open_loop_growth: explicit, the gradient
  // grows ~1.8x per control step); explicit only on request, with the Impulse model
  EXPECT_EQ(so.integrator, stiffgrad::Integrator::ImplicitDampingEuler);
  {
    stiffgrad::learn::TaskOptions e;
    e.data_dir = sgtest::data_dir();
    e.explicit_servos = true;
    EXPECT_EQ(stiffgrad::learn::make_g1_imitate("run1_subject2", e)->sim_options().integrator,
              stiffgrad::Integrator::SemiImplicitEuler);
    e.contact = stiffgrad::ContactModel::Soft;
    EXPECT_EQ(stiffgrad::learn::make_g1_imitate("run1_subject2", e)->sim_options().integrator,
              stiffgrad::Integrator::ImplicitDampingEuler);
  }
  EXPECT_NEAR(task->control_dt(), 0.02, 1e-15);
  EXPECT_EQ(task->obs_dim(), 134);
  EXPECT_EQ(task->max_episode_steps(), 300);
  const auto feet = task->foot_geoms();
  EXPECT_EQ(feet.size(), 6u);
  for (const auto& f : feet)
    EXPECT_NE(std::find(task->model()->geom_name.begin(), task->model()->geom_name.end(), f),
              task->model()->geom_name.end())
        << f;
  stiffgrad::learn::TaskOptions o;
  o.data_dir = sgtest::data_dir();
  try {
    stiffgrad::learn::make_g1_imitate("no_such_clip", o);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_clip.csv"), std::string::npos) << e.what();
  }
}

TEST(G1ImitateTask, ClipWindowBoundsTheStartTimesAndTheEpisodeLength) {
  // TaskOptions::clip_begin / clip_end: every episode starts and runs inside [B, E] of the clip,
  // its length is min(300, window steps - 1), and its reset state is the clip's there
  REQUIRE_G1_DATA();
  const double dt = 0.02;
  struct Case {
    double begin, end;
    int steps;
  };
  // 10 s: the full 300 steps; 3 s: 150 window steps, 149 episode steps, one start time (B);
  // end 0: the clip's end
  for (const Case c : {Case{95, 105, 300}, Case{95, 98, 149}, Case{230, 0, 300}}) {
    stiffgrad::learn::TaskOptions o;
    o.data_dir = sgtest::data_dir();
    o.clip_begin = c.begin;
    o.clip_end = c.end;
    G1ImitateTask task("run1_subject2", o);
    const double end = c.end > 0 ? c.end : task.clip().duration();
    EXPECT_EQ(task.window_begin(), c.begin);
    EXPECT_EQ(task.window_end(), end);
    EXPECT_EQ(task.max_episode_steps(), c.steps) << c.begin << ":" << c.end;
    const int nenv = 64;
    task.resize(nenv);
    std::mt19937_64 g(11);
    const int nq = task.model()->nq, nv = task.model()->nv;
    std::vector<double> q(sz(nq)), v(sz(nv)), rq(sz(nq)), rv(sz(nv));
    double lowest = 1e9, highest = -1e9;
    for (int e = 0; e < nenv; ++e) {
      task.reset_env(e, g, q.data(), v.data());
      const double s0 = task.start_time(e);
      lowest = std::min(lowest, s0);
      highest = std::max(highest, s0);
      EXPECT_GE(s0, c.begin);
      EXPECT_LE(s0 + (task.max_episode_steps() + 1) * dt, end + 1e-9);
      task.clip().qpos(s0, rq.data());
      task.clip().qvel(s0, rv.data());
      for (int i = 0; i < nq; ++i) EXPECT_EQ(q[sz(i)], rq[sz(i)]);
      for (int i = 0; i < nv; ++i) EXPECT_EQ(v[sz(i)], rv[sz(i)]);
    }
    // the starts spread over the window's room (64 uniform draws)
    const double room = end - (task.max_episode_steps() + 1) * dt - c.begin;
    EXPECT_LE(lowest - c.begin, 0.2 * room + 1e-12) << c.begin << ":" << c.end;
    EXPECT_GE(highest - c.begin, 0.8 * room - 1e-12) << c.begin << ":" << c.end;
  }
  // windows outside the clip or too short are refused, naming the clip and the window
  for (const Case c : {Case{-1, 5, 0}, Case{0, 1e4, 0}, Case{10, 10.03, 0}, Case{300, 0, 0}}) {
    stiffgrad::learn::TaskOptions o;
    o.data_dir = sgtest::data_dir();
    o.clip_begin = c.begin;
    o.clip_end = c.end;
    try {
      G1ImitateTask task("run1_subject2", o);
      ADD_FAILURE() << "window " << c.begin << ":" << c.end << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("g1-imitate:run1_subject2: clip window"), std::string::npos) << e.what();
    }
  }
}

TEST(G1ImitateTask, ResetTracksReferenceAndPerturbationsLowerReward) {
  REQUIRE_G1_DATA();
  for (const char* clip : {"run1_subject2", "jumps1_subject1"}) {
    auto task = make(clip);
    const int nenv = 4;
    task->resize(nenv);
    std::mt19937_64 g(5);
    const int nq = task->model()->nq, nv = task->model()->nv;
    const double dt = 0.02;
    for (int e = 0; e < nenv; ++e) {
      std::vector<double> q(sz(nq)), v(sz(nv)), zero(29, 0.0);
      task->reset_env(e, g, q.data(), v.data());
      const double s0 = task->start_time(e);
      EXPECT_GE(s0, 0.0);
      EXPECT_LE(s0 + (task->max_episode_steps() + 1) * dt, task->clip().duration() + 1e-9);
      // the reset state is the clip's reference at the start time
      std::vector<double> rq(sz(nq)), rv(sz(nv));
      task->clip().qpos(s0, rq.data());
      task->clip().qvel(s0, rv.data());
      for (int i = 0; i < nq; ++i) EXPECT_EQ(q[sz(i)], rq[sz(i)]);
      for (int i = 0; i < nv; ++i) EXPECT_EQ(v[sz(i)], rv[sz(i)]);
      const double r0 = task->reward(e, 0, q.data(), v.data(), zero.data());
      const double err0 = task->tracking_error(e, 0, q.data(), v.data());
      std::printf("[g1] %s env %d start %.2f s: reward at reset %.15f, tracking error %.2e m\n", clip, e, s0, r0,
                  err0);
      EXPECT_NEAR(r0, 1.0, 1e-12);
      EXPECT_LT(err0, 1e-12);
      EXPECT_FALSE(task->terminated(e, 0, q.data(), v.data()));
      // dropped by 10 cm
      auto qd = q;
      qd[2] -= 0.1;
      const double rd = task->reward(e, 0, qd.data(), v.data(), zero.data());
      EXPECT_LT(rd, r0 - 0.05);
      EXPECT_NEAR(task->tracking_error(e, 0, qd.data(), v.data()), 0.1, 1e-9);
      // bent joints, moving
      auto qj = q;
      auto vj = v;
      for (int j = 7; j < nq; ++j) qj[sz(j)] += 0.2;
      for (int j = 6; j < nv; ++j) vj[sz(j)] += 1.0;
      const double rj = task->reward(e, 0, qj.data(), vj.data(), zero.data());
      EXPECT_LT(rj, r0 - 0.3);
      // fallen
      auto qf = q;
      qf[2] = 0.2;
      EXPECT_TRUE(task->terminated(e, 0, qf.data(), v.data()));
      EXPECT_TRUE(task->fallen(e, 0, qf.data(), v.data()));
      // far from the reference (1 m sideways) but upright: training stops, evaluation goes on
      auto qs = q;
      qs[1] += 1.0;
      EXPECT_TRUE(task->terminated(e, 0, qs.data(), v.data()));
      EXPECT_FALSE(task->fallen(e, 0, qs.data(), v.data()));
      EXPECT_FALSE(task->fallen(e, 0, q.data(), v.data()));
      // the observation: root height, unit gravity, next-step targets close to the state
      std::vector<double> obs(sz(task->obs_dim()));
      task->observe(e, 0, q.data(), v.data(), obs.data());
      EXPECT_EQ(obs[0], q[2]);
      EXPECT_NEAR(obs[1] * obs[1] + obs[2] * obs[2] + obs[3] * obs[3], 1.0, 1e-12);
      EXPECT_LT(obs[3], -0.5);  // roughly upright
      double dmax = 0;
      for (int j = 0; j < 29; ++j) dmax = std::max(dmax, std::fabs(obs[sz(3 * 3 + 1 + 58 + j)]));
      EXPECT_LT(dmax, 0.5);  // the reference moves less than 0.5 rad per joint in 0.02 s
      for (double x : obs) EXPECT_TRUE(std::isfinite(x));
    }
  }
}

}  // namespace

namespace {

// The task's simulator settings step the G1 from a reference start under servos that follow
// the reference joint angles (open loop): finite states, no fall within 0.2 s.
TEST(G1ImitateTask, SimulatesFromReset) {
  REQUIRE_G1_DATA();
  auto task = make();
  task->resize(1);
  stiffgrad::SimulatorOptions so = task->sim_options();
  so.nenv = 1;
  so.threads = 1;
  stiffgrad::Simulator sim(task->model(), so);
  std::mt19937_64 g(2);
  const int nq = task->model()->nq, nv = task->model()->nv, nu = task->act_dim();
  std::vector<double> q(sz(nq)), v(sz(nv)), rq(sz(nq)), rv(sz(nv)), action(sz(nu)), ctrl(sz(nu));
  task->reset_env(0, g, q.data(), v.data());
  sim.set_state(q.data(), v.data());
  const auto& m = *task->model();
  for (int t = 1; t <= 10; ++t) {
    task->reference_state(0, t, rq.data(), rv.data());
    for (int i = 0; i < nu; ++i) {
      const int jnt = m.actuator_trnid[sz(i)];
      action[sz(i)] = (rq[sz(m.jnt_qposadr[sz(jnt)])] - task->default_ctrl()[sz(i)]) / G1ImitateTask::kActionScale;
    }
    task->action_to_ctrl(0, t - 1, action.data(), ctrl.data());
    sim.step(ctrl.data());
    sim.get_state(q.data(), v.data());
    for (double x : q) ASSERT_TRUE(std::isfinite(x)) << "step " << t;
    for (double x : v) ASSERT_TRUE(std::isfinite(x)) << "step " << t;
  }
  const double err = task->tracking_error(0, 10, q.data(), v.data());
  const double r = task->reward(0, 10, q.data(), v.data(), action.data());
  std::printf("[g1] open-loop servo tracking after 0.2 s: key-body error %.3f m, reward %.3f, root z %.3f m\n", err, r,
              q[2]);
  EXPECT_FALSE(task->terminated(0, 10, q.data(), v.data()));
}

}  // namespace

namespace {

// The adjoints keep scratch in per-environment workspace: calls must not leak into each other
// (a trainer calls them for many states and steps of one environment in turn).
TEST(G1ImitateTask, AdjointsDoNotDependOnEarlierCalls) {
  auto task = make();
  task->resize(1);
  const int nq = task->model()->nq, nv = task->model()->nv, no = task->obs_dim();
  std::mt19937_64 g(21);
  std::vector<double> q1(nq), v1(nv), q2(nq), v2(nv), w(no);
  task->reset_env(0, g, q1.data(), v1.data());
  task->reset_env(0, g, q2.data(), v2.data());
  q1[2] -= 0.05;
  v2[8] += 0.7;
  std::normal_distribution<double> n(0.0, 1.0);
  for (double& x : w) x = n(g);
  const auto grads = [&](const std::vector<double>& q, const std::vector<double>& v) {
    std::vector<double> out(nq + nv, 0.0);
    task->adj_observe(0, 3, q.data(), v.data(), w.data(), out.data(), out.data() + nq);
    task->adj_reward(0, 4, q.data(), v.data(), nullptr, 0.7, out.data(), out.data() + nq, nullptr);
    return out;
  };
  const std::vector<double> first = grads(q1, v1);
  grads(q2, v2);  // a different state in between
  EXPECT_EQ(grads(q1, v1), first);
}

}  // namespace
