// Helpers for the adjoint verification suites (tests/test_adjoint_*.cpp), header-only.
//
// The central tool is the dot-product test: for a map y = f(x) with Jacobian J, a forward-mode
// dual number (kernels/base/dual.hpp) running the very same templated kernel gives J u exactly,
// and the hand-written adj_ twin gives J^T w. For random u, w the two scalars
//   lhs = w . (J u)   and   rhs = (J^T w) . u
// agree to rounding. The residual is judged against
//   scale = sum_i |w_i (J u)_i| + sum_j |(J^T w)_j u_j|,
// the sum of the magnitudes of every term in both dot products. Rounding in either side is
// bounded by a few ulps of this sum, while a wrong or missing adjoint term changes one side
// by a whole term (or more) with no counterpart on the other side, which random u, w make a
// non-negligible fraction of the scale. Hence |lhs - rhs| <= 1e-12 * scale.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/model_arrays_impl.hpp"
#include "kernels/step/batch_adjoint.hpp"
#include "kernels/base/dual.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/model.hpp"
#include "test_support.hpp"

namespace sgadj {

namespace kern = stiffgrad::kern;
using D = kern::Dual<double, 1>;
using LC = kern::Contiguous;

// Tolerance of every double-precision dot-product test (see the header comment).
inline constexpr double kDotTol = 1e-12;

// ------------------------------------------------------------------------ random numbers
struct Rng {
  std::mt19937_64 g;
  explicit Rng(std::uint64_t seed) : g(seed) {}
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(g); }
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(g); }
  int index(int n) { return std::uniform_int_distribution<int>(0, n - 1)(g); }
  std::vector<double> normals(int n, double sigma = 1.0) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = sigma * normal();
    return v;
  }
  // uniformly distributed unit quaternion (normalized Gaussian)
  void unit_quat(double q[4]) {
    double n = 0;
    do {
      for (int k = 0; k < 4; ++k) q[k] = normal();
      n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    } while (n < 1e-3);
    for (int k = 0; k < 4; ++k) q[k] /= n;
  }
};

// ------------------------------------------------------------------------ dot-product test
struct DotTest {
  double lhs = 0, rhs = 0, scale = 0;
  // one output component: weight w_i and forward derivative (J u)_i
  void out(double w, double ju) { lhs += w * ju; scale += std::fabs(w * ju); }
  // one input component: adjoint (J^T w)_j and direction u_j
  void in(double jtw, double u) { rhs += jtw * u; scale += std::fabs(jtw * u); }
  double residual() const { return std::fabs(lhs - rhs); }
  double rel() const { return scale > 0 ? residual() / scale : residual(); }
  bool ok(double tol = kDotTol) const { return residual() <= tol * scale; }
  std::string str() const {
    char b[160];
    std::snprintf(b, sizeof b, "w.Ju=%.17g JTw.u=%.17g residual=%.3g scale=%.3g rel=%.3g", lhs, rhs,
                  residual(), scale, rel());
    return b;
  }
};

// Worst value of a family of measurements, printed as an "[adjoint]" line.
struct Worst {
  double v = 0;
  void add(double x) { v = std::max(v, std::isnan(x) ? INFINITY : x); }
};

// ------------------------------------------------------------------------ models
// A ball-joint chain: two ball joints (one with an offset anchor), damping and stiffness, a
// hinge at the tip, motors on the hinge only (ball joints take no joint transmission).
inline constexpr const char* kBallChainXml = R"(
<mujoco model="ball_chain">
  <option timestep="0.004"/>
  <worldbody>
    <body name="l1" pos="0 0 2" quat="0.9 0.1 0.3 0.2">
      <joint name="b1" type="ball" damping="0.05" stiffness="1.5"/>
      <geom type="capsule" fromto="0 0 0 0.4 0.05 -0.1" size="0.05"/>
      <body name="l2" pos="0.4 0.05 -0.1">
        <joint name="b2" type="ball" pos="0.03 0 0.02" damping="0.02"/>
        <geom type="box" size="0.2 0.04 0.03" pos="0.2 0 0" euler="10 20 30"/>
        <body name="l3" pos="0.4 0 0">
          <joint name="h3" type="hinge" axis="0 0.6 0.8" pos="0.01 0.02 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="h3" gear="1.5" ctrlrange="-1 1" ctrllimited="true"/>
  </actuator>
</mujoco>
)";

// Every feature the smooth kernels implement in one model: a free base with stiffness
// (translation and rotation springs), a ball joint with an offset anchor, a body with a hinge
// and a slide, a welded body, non-diagonal inertia frames, a fixed tendon with stiffness and
// damping, hinge springref, motors, an affine (position-servo) actuator with force limits, two
// actuators summed on one joint under an actuatorfrcrange clamp.
inline constexpr const char* kFeaturesXml = R"(
<mujoco model="adjoint_features">
  <option timestep="0.003"/>
  <worldbody>
    <body name="base" pos="0 0 1">
      <joint name="root" type="free" stiffness="2"/>
      <geom type="box" size="0.1 0.08 0.05" mass="2" euler="5 10 15"/>
      <body name="welded" pos="-0.2 0.05 0" euler="0 30 0">
        <geom type="capsule" fromto="0 0 0 -0.2 0 0.1" size="0.03"/>
      </body>
      <body name="b1" pos="0.2 0 0" quat="0.8 0.2 -0.1 0.3">
        <joint name="ball1" type="ball" pos="0.02 -0.01 0.03" stiffness="3" damping="0.3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0.05 0" size="0.04"/>
        <body name="b2" pos="0.3 0.05 0">
          <joint name="h1" type="hinge" axis="0 1 0" pos="0.01 0 0" stiffness="5" springref="10" damping="0.1"/>
          <joint name="s1" type="slide" axis="1 0.2 0" stiffness="4" damping="0.2"/>
          <geom type="sphere" size="0.05" pos="0.1 0 0"/>
          <body name="b3" pos="0.15 0 0" euler="20 0 40">
            <joint name="h2" type="hinge" axis="0 0 1" damping="0.05"
                   actuatorfrclimited="true" actuatorfrcrange="-3 2.5"/>
            <geom type="box" size="0.1 0.03 0.02" pos="0.1 0 0" euler="0 0 20"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t1" stiffness="3" damping="0.5">
      <joint joint="h1" coef="1"/>
      <joint joint="s1" coef="-0.5"/>
      <joint joint="h2" coef="0.3"/>
    </fixed>
  </tendon>
  <actuator>
    <motor name="m_h1" joint="h1" gear="2" ctrlrange="-1 1" ctrllimited="true"/>
    <general name="servo_s1" joint="s1" gainprm="3" biastype="affine" biasprm="0.1 -3 -0.5"
             ctrlrange="-0.8 0.8" ctrllimited="true" forcerange="-4 5" forcelimited="true"/>
    <motor name="m_h2" joint="h2" gear="1" ctrlrange="-2 2" ctrllimited="true"/>
    <general name="servo_h2" joint="h2" gainprm="1.5" biastype="affine" biasprm="0 -1.5 -0.1"/>
  </actuator>
</mujoco>
)";

inline const char* inline_model_xml(const std::string& name) {
  if (name == "ball_chain") return kBallChainXml;
  if (name == "features") return kFeaturesXml;
  return nullptr;
}

// Loads (once per process) a model by key: a path, or "inline:NAME" for the models above;
// either may end in "#timestep=X" for a copy with that substep length.
inline std::shared_ptr<const stiffgrad::Model> load_cached(const std::string& key) {
  static std::map<std::string, std::shared_ptr<const stiffgrad::Model>> cache;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const stiffgrad::Model> m;
  if (const auto at = key.find("#timestep="); at != std::string::npos) {
    // a copy of the model with another substep length
    auto copy = std::make_shared<stiffgrad::Model>(*load_cached(key.substr(0, at)));
    copy->opt.timestep = std::stod(key.substr(at + 10));
    m = copy;
  } else if (key.rfind("inline:", 0) == 0) {
    m = stiffgrad::load_mjcf_string(inline_model_xml(key.substr(7)), "/tmp/" + key.substr(7) + ".xml");
  } else {
    m = stiffgrad::load_mjcf(key);
  }
  cache[key] = m;
  return m;
}

inline std::string shared_model(const std::string& rel) { return sgtest::data_dir() + "/models/" + rel; }

// ------------------------------------------------------------------------ kernels in double and Dual
// The model in double and in Dual<double> (constant model: zero derivative parts), with the
// Data layout and buffers bound contiguously.
struct Kit {
  std::shared_ptr<const stiffgrad::Model> model;
  stiffgrad::ModelArrays<double> arr_d;
  stiffgrad::ModelArrays<D> arr_D;
  kern::ModelView<double> m;
  kern::ModelView<D> mD;
  kern::DataLayout o;

  // `capacity`: the constraint capacities of the Simulator the kernels are compared with
  // (default: none, the smooth pipeline).
  explicit Kit(std::shared_ptr<const stiffgrad::Model> mod, const stiffgrad::ConstraintCapacity& capacity = {})
      : model(std::move(mod)), arr_d(*model, capacity), arr_D(*model, capacity), m(arr_d.host_view()),
        mD(arr_D.host_view()), o(kern::DataLayout::make(m)) {}
  Kit(const Kit&) = delete;
  Kit& operator=(const Kit&) = delete;
};

template <class Real>
struct Buf {
  std::vector<Real> v;
  kern::Data<Real, LC> d;
  explicit Buf(const kern::DataLayout& o) : v(static_cast<std::size_t>(o.size) + 1) {
    d = kern::Data<Real, LC>::bind(kern::View<Real, LC>{v.data(), LC{}}, o);
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  kern::View<Real, LC> view() { return kern::View<Real, LC>{v.data(), LC{}}; }
  Real& operator[](int i) { return v[static_cast<std::size_t>(i)]; }
};

// The dot-product test of nsub substeps: reverse substeps in `d`/`a` from the states before each
// substep (`before`, qpos and qvel), seeded with the output adjoints (wq, wv), against the Dual
// run bD, whose tangents came from the input directions (uq, uv, uc).
inline DotTest reverse_substeps_dot_test(const kern::ModelView<double>& m, const kern::DataLayout& o, Buf<double>& d,
                                         Buf<double>& a, const Buf<D>& bD,
                                         const std::vector<std::vector<double>>& before, const std::vector<double>& wq,
                                         const std::vector<double>& wv, const std::vector<double>& uq,
                                         const std::vector<double>& uv, const std::vector<double>& uc) {
  const auto sz = [](int i) { return static_cast<std::size_t>(i); };
  for (int i = 0; i < m.nq; ++i) a.d.qpos()[i] = wq[sz(i)];
  for (int i = 0; i < m.nv; ++i) a.d.qvel()[i] = wv[sz(i)];
  for (int s = static_cast<int>(before.size()) - 1; s >= 0; --s) {
    std::copy(before[sz(s)].begin(), before[sz(s)].end(), d.v.begin() + o.qpos);
    kern::adj_substep(m, o, d.d, a.d, a.view());
  }
  DotTest t;
  for (int i = 0; i < m.nq; ++i) t.out(wq[sz(i)], bD.d.qpos()[i].d[0]);
  for (int i = 0; i < m.nv; ++i) t.out(wv[sz(i)], bD.d.qvel()[i].d[0]);
  for (int i = 0; i < m.nq; ++i) t.in(a.d.qpos()[i], uq[sz(i)]);
  for (int i = 0; i < m.nv; ++i) t.in(a.d.qvel()[i], uv[sz(i)]);
  for (int i = 0; i < m.nu; ++i) t.in(a.d.ctrl()[i], uc[sz(i)]);
  return t;
}

// A field of the Data buffer: offset and length (in Reals).
struct Field {
  const char* name;
  int off, n;
};

// Random state in raw coordinates: hinge/slide qpos = qpos0 + sq N(0,1), free positions
// qpos0 + sq N(0,1), quaternions uniformly random unit ones (rot >= 1) or, when rot < 1, the
// reference rotated by a random rotation vector of scale rot; qvel sv N(0,1).
struct StateScales {
  double sq = 1.0, sv = 1.0, rot = 1.0;
  double quat_norm = 1.0;  // multiply every quaternion by this (exercises normalization)
};

inline void random_state(const stiffgrad::Model& md, Rng& rng, const StateScales& s, double* qpos, double* qvel) {
  for (int j = 0; j < md.njnt; ++j) {
    int pa = md.jnt_qposadr[j];
    const auto type = md.jnt_type[j];
    if (type == stiffgrad::JointType::Free) {
      for (int c = 0; c < 3; ++c) qpos[pa + c] = md.qpos0[pa + c] + s.sq * rng.normal();
      pa += 3;
    }
    if (type == stiffgrad::JointType::Free || type == stiffgrad::JointType::Ball) {
      double q[4];
      if (s.rot >= 1.0) {
        rng.unit_quat(q);
      } else {
        const double r[3] = {s.rot * rng.normal(), s.rot * rng.normal(), s.rot * rng.normal()};
        double dq[4], q0[4] = {md.qpos0[pa], md.qpos0[pa + 1], md.qpos0[pa + 2], md.qpos0[pa + 3]};
        kern::rotvec_to_quat(dq, r);
        kern::quat_mul(q, q0, dq);
        kern::normalize4(q);
      }
      for (int c = 0; c < 4; ++c) qpos[pa + c] = q[c] * s.quat_norm;
    } else {
      qpos[pa] = md.qpos0[pa] + s.sq * rng.normal();
    }
  }
  for (int i = 0; i < md.nv; ++i) qvel[i] = s.sv * rng.normal();
}

// Controls: `spread` = 0.3 gives mid + 0.3 half-width N(0,1) clipped to 0.9 of the range
// (inside ctrlrange); spread >= 1 puts about a third of the limited controls outside.
inline void random_ctrl(const stiffgrad::Model& md, Rng& rng, double spread, double* ctrl) {
  for (int u = 0; u < md.nu; ++u) {
    if (md.actuator_ctrllimited[u]) {
      const double lo = md.actuator_ctrlrange[2 * u], hi = md.actuator_ctrlrange[2 * u + 1];
      const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
      double x = spread * rng.normal();
      if (spread < 1.0) x = std::clamp(x, -0.9, 0.9);
      ctrl[u] = mid + half * x;
    } else {
      ctrl[u] = spread * rng.normal();
    }
  }
}

// ------------------------------------------------------------------------ clamps
// Distances of every clamp input to its bounds at the current primal d (which must hold
// qpos, qvel, ctrl): min over limited controls of |ctrl - bound| / range width, over limited
// actuator forces and joint actuator-force totals likewise. Counts active / inactive clamps.
struct ClampStats {
  double margin = INFINITY;
  int ctrl_active = 0, ctrl_inactive = 0;
  int force_active = 0, force_inactive = 0;
  int jnt_active = 0, jnt_inactive = 0;
  void merge(const ClampStats& o) {
    margin = std::min(margin, o.margin);
    ctrl_active += o.ctrl_active; ctrl_inactive += o.ctrl_inactive;
    force_active += o.force_active; force_inactive += o.force_inactive;
    jnt_active += o.jnt_active; jnt_inactive += o.jnt_inactive;
  }
};

inline ClampStats clamp_stats(const kern::ModelView<double>& m, const kern::Data<double, LC>& d) {
  ClampStats s;
  std::vector<double> total(static_cast<std::size_t>(m.nv), 0.0);
  // margins from the clamp inputs; active / inactive from the kernels' own rule
  auto note = [&s](double x, int limited, const double* range, int& active, int& inactive) {
    if (!limited) return;
    s.margin = std::min(s.margin, std::min(std::fabs(x - range[0]), std::fabs(x - range[1])) / (range[1] - range[0]));
    bool on;
    kern::actuator_clamp(x, limited, range, &on);
    ++(on ? active : inactive);
  };
  for (int u = 0; u < m.nu; ++u) {
    const int j = m.actuator_trnid[u];
    const double gear = m.actuator_gear[u];
    note(d.ctrl()[u], m.actuator_ctrllimited[u], m.actuator_ctrlrange + 2 * u, s.ctrl_active,
         s.ctrl_inactive);
    bool unused;
    double f =
        m.actuator_gainprm[3 * u] * kern::actuator_clamp(d.ctrl()[u], m.actuator_ctrllimited[u],
                                                         m.actuator_ctrlrange + 2 * u, &unused);
    if (m.actuator_biastype[u] == kern::kBiasAffine) {
      const double* bp = m.actuator_biasprm + 3 * u;
      f += bp[0] + bp[1] * gear * d.qpos()[m.jnt_qposadr[j]] +
           bp[2] * gear * d.qvel()[m.jnt_dofadr[j]];
    }
    note(f, m.actuator_forcelimited[u], m.actuator_forcerange + 2 * u, s.force_active, s.force_inactive);
    total[static_cast<std::size_t>(m.jnt_dofadr[j])] +=
        gear * kern::actuator_clamp(f, m.actuator_forcelimited[u], m.actuator_forcerange + 2 * u, &unused);
  }
  for (int j = 0; j < m.njnt; ++j) {
    const int n = m.jnt_type[j] == kern::kJntFree ? 6 : (m.jnt_type[j] == kern::kJntBall ? 3 : 1);
    for (int k = 0; k < n; ++k)
      note(total[static_cast<std::size_t>(m.jnt_dofadr[j] + k)], m.jnt_actfrclimited[j], m.jnt_actfrcrange + 2 * j,
           s.jnt_active, s.jnt_inactive);
  }
  return s;
}

// ------------------------------------------------------------------------ finite differences
// A central finite difference with an estimate of its own error, so that a probe is judged
// against what the finite difference can resolve rather than a fixed absolute floor (a floor
// of 1e-6 let any adjoint value within 1e-6 of a zero or small gradient pass).
//
// fd(h) = [8(f(h) - f(-h)) - (f(2h) - f(-2h))] / 12h has truncation error c h^4 and rounding
// error ~ r / h; the same stencil at 2h has 16 c h^4 and r / 2h. Their difference is
// ~ 15 c h^4 + r / h: the size of fd(h)'s error or larger (not smaller, short of a chance
// cancellation, against which the rounding floor eps max|f| / h stands: every f is rounded to
// at least an ulp). So |adj - fd| <= rel |fd| + kFdErrorFactor * error is a bound that a zero
// gradient probe cannot escape: there fd, fd(2h) and the bound are all at rounding level.
inline constexpr double kFdErrorFactor = 10.0;

struct FiniteDifference {
  double value = 0;  // fd(h)
  double at_2h = 0;  // fd(2h)
  double error = 0;  // max(|fd(h) - fd(2h)|, eps max|f| / h)
  double tolerance(double rel) const { return rel * std::fabs(value) + kFdErrorFactor * error; }
};

// f(delta) for delta in {+-h, +-2h, +-4h}.
template <class F>
FiniteDifference central_difference(F&& f, double h) {
  const double p1 = f(h), m1 = f(-h), p2 = f(2 * h), m2 = f(-2 * h), p4 = f(4 * h), m4 = f(-4 * h);
  FiniteDifference r;
  r.value = (8.0 * (p1 - m1) - (p2 - m2)) / (12.0 * h);
  r.at_2h = (8.0 * (p2 - m2) - (p4 - m4)) / (24.0 * h);
  const double fmax = std::max({std::fabs(p1), std::fabs(m1), std::fabs(p2), std::fabs(m2), std::fabs(p4), std::fabs(m4)});
  r.error = std::max(std::fabs(r.value - r.at_2h), std::numeric_limits<double>::epsilon() * fmax / h);
  return r;
}

// ------------------------------------------------------------------------ small utilities
inline double max_abs(const std::vector<double>& v) {
  double r = 0;
  for (double x : v) r = std::max(r, std::fabs(x));
  return r;
}

}  // namespace sgadj
