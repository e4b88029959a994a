// The Impulse contact model's substep (issue 9 part 1; kernels/impulse/impulse_step.hpp) and its adjoint
// (kernels/impulse/impulse_step_adjoint.hpp): dot-product tests against the dual-number forward mode of
// the same kernels (exact: the model is an explicit computation, no iterative convergence), and
// central finite differences at smooth points, on contact-rich states.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "adjoint_support.hpp"
#include "kernels/impulse/impulse_step_adjoint.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/simulator.hpp"

namespace {

using namespace sgadj;
using stiffgrad::Model;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

std::shared_ptr<const Model> load_xml_text(const std::string& xml, const std::string& name) {
  const std::string path = "/tmp/sg_impulse_step_" + std::to_string(::getpid()) + "_" + name + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(xml.c_str(), f);
  std::fclose(f);
  auto m = stiffgrad::load_mjcf(path);
  std::remove(path.c_str());
  return m;
}

// The Model, capacities and view a Simulator with contact_model Impulse builds
// (core/impulse_contact.cpp, core/constraint_capacity.cpp, core/model_arrays.hpp).
stiffgrad::ImpulseContact impulse_params(double kappa, int sweeps = 10) {
  stiffgrad::ImpulseContact c;
  c.kappa = kappa;
  c.sweeps = sweeps;
  return c;
}

stiffgrad::ConstraintCapacity impulse_capacity(const Model& base) {
  stiffgrad::SimulatorOptions o;
  o.contact_model = stiffgrad::ContactModel::Impulse;
  return stiffgrad::constraint_capacity(base, o);
}

template <class Real>
kern::ModelView<Real> impulse_view(kern::ModelView<Real> v, double kappa, int sweeps) {
  return stiffgrad::with_contact_model(v, stiffgrad::ContactModel::Impulse, impulse_params(kappa, sweeps));
}

struct ImpulseKit {
  std::shared_ptr<const Model> model;
  stiffgrad::ConstraintCapacity cap;
  stiffgrad::ModelArrays<double> arr_d;
  kern::ModelView<double> m;
  kern::DataLayout o;
  double kappa;
  ImpulseKit(const Model& base, double kappa_, int sweeps = 10)
      : model(std::make_shared<Model>(stiffgrad::impulse_contact_model(base, impulse_params(kappa_, sweeps)))),
        cap(impulse_capacity(base)), arr_d(*model, cap),
        m(impulse_view(arr_d.host_view(), kappa_, sweeps)), o(kern::DataLayout::make(m)), kappa(kappa_) {}
};

// States (qpos, qvel, ctrl) along the Impulse model's own simulation in these kernels.
std::vector<std::vector<double>> impulse_states(const ImpulseKit& k, const std::vector<double>& q0, int steps, int every,
                                                double ctrl_spread, std::uint64_t seed) {
  Buf<double> d(k.o);
  const auto& m = k.m;
  for (int i = 0; i < m.nq; ++i) d.d.qpos()[i] = q0[sz(i)];
  Rng rng(seed);
  std::vector<std::vector<double>> out;
  for (int s = 1; s <= steps; ++s) {
    for (int i = 0; i < m.nu; ++i) d.d.ctrl()[i] = ctrl_spread * rng.normal();
    kern::substep(m, d.d);
    if (s % every) continue;
    std::vector<double> x(d.v.begin() + k.o.qpos, d.v.begin() + k.o.qpos + m.nq + m.nv + m.nu);
    out.push_back(x);
  }
  return out;
}

// The dot-product test of `nsub` Impulse substeps from state x in scalar R: forward mode
// (Dual<R>) against adj_impulse_substep, random directions from `seed`. Returns the relative
// residual |w·Ju − Jᵀw·u| / scale (adjoint_support.hpp); `count` gets the blocks and contacts seen.
template <class R>
double impulse_dot_test(const ImpulseKit& k, const std::vector<double>& x, int nsub, std::uint64_t seed, int* blocks,
                        int* contacts) {
  using DR = kern::Dual<R, 1>;
  stiffgrad::ModelArrays<R> arr(*k.model, k.cap);
  stiffgrad::ModelArrays<DR> arrD(*k.model, k.cap);
  const kern::ModelView<R> m = impulse_view(arr.host_view(), k.kappa, k.m.impulse_sweeps);
  const kern::ModelView<DR> mD = impulse_view(arrD.host_view(), k.kappa, k.m.impulse_sweeps);
  const kern::DataLayout o = kern::DataLayout::make(m);
  Rng rng(seed);
  const auto uq = rng.normals(m.nq), uv = rng.normals(m.nv), uc = rng.normals(m.nu);
  const auto wq = rng.normals(m.nq), wv = rng.normals(m.nv);
  Buf<DR> bD(o);
  for (int i = 0; i < m.nq; ++i) {
    bD.d.qpos()[i] = DR(R(x[sz(i)]));
    bD.d.qpos()[i].d[0] = R(uq[sz(i)]);
  }
  for (int i = 0; i < m.nv; ++i) {
    bD.d.qvel()[i] = DR(R(x[sz(m.nq + i)]));
    bD.d.qvel()[i].d[0] = R(uv[sz(i)]);
  }
  for (int i = 0; i < m.nu; ++i) {
    bD.d.ctrl()[i] = DR(R(x[sz(m.nq + m.nv + i)]));
    bD.d.ctrl()[i].d[0] = R(uc[sz(i)]);
  }
  for (int s = 0; s < nsub; ++s) kern::substep(mD, bD.d);
  Buf<R> d(o), a(o);
  for (int i = 0; i < m.nq + m.nv + m.nu; ++i) d[o.qpos + i] = R(x[sz(i)]);
  std::vector<std::vector<R>> before;
  for (int s = 0; s < nsub; ++s) {
    before.emplace_back(d.v.begin() + o.qpos, d.v.begin() + o.qpos + m.nq + m.nv);
    EXPECT_EQ(kern::substep(m, d.d), 0) << "capacity overflow";
    *blocks += static_cast<int>(d.d.nefc()[0]) / 3;
    *contacts += static_cast<int>(d.d.ncon()[0]);
  }
  for (int i = 0; i < m.nv; ++i)
    EXPECT_EQ(d.d.qvel()[i], bD.d.qvel()[i].v) << "Dual value parts differ";
  for (int i = 0; i < m.nq; ++i) a.d.qpos()[i] = R(wq[sz(i)]);
  for (int i = 0; i < m.nv; ++i) a.d.qvel()[i] = R(wv[sz(i)]);
  for (int s = nsub - 1; s >= 0; --s) {
    std::copy(before[sz(s)].begin(), before[sz(s)].end(), d.v.begin() + o.qpos);
    kern::adj_impulse_substep(m, o, d.d, a.d, a.view());
  }
  long double lhs = 0, rhs = 0, scale = 0;
  const auto out = [&](double w, R ju) { lhs += w * static_cast<long double>(ju); scale += std::fabs(w * static_cast<long double>(ju)); };
  const auto in = [&](R g, double u) { rhs += static_cast<long double>(g) * u; scale += std::fabs(static_cast<long double>(g) * u); };
  for (int i = 0; i < m.nq; ++i) out(wq[sz(i)], bD.d.qpos()[i].d[0]);
  for (int i = 0; i < m.nv; ++i) out(wv[sz(i)], bD.d.qvel()[i].d[0]);
  for (int i = 0; i < m.nq; ++i) in(a.d.qpos()[i], uq[sz(i)]);
  for (int i = 0; i < m.nv; ++i) in(a.d.qvel()[i], uv[sz(i)]);
  for (int i = 0; i < m.nu; ++i) in(a.d.ctrl()[i], uc[sz(i)]);
  return static_cast<double>(std::fabs(lhs - rhs) / scale);
}

std::vector<double> qpos0_of(const Model& md, const char* key) {
  if (!key) return md.qpos0;
  const int id = md.keyframe_id(key);
  EXPECT_GE(id, 0) << key;
  return id >= 0 ? md.keyframes[sz(id)].qpos : md.qpos0;
}

// A chain on a floor with hinge and slide limits and friction loss (the Impulse model's 1-D
// blocks) whose tip strikes the floor.
const char* kLimitedChainOnFloor = R"(<mujoco><option timestep="0.002"/>
<default><joint limited="true" damping="0.05" frictionloss="0.3"/><geom friction="0.7"/></default>
<worldbody><geom type="plane" size="2 2 0.1"/>
<body pos="0 0 0.35"><joint name="shoulder" type="hinge" axis="0 1 0" range="-40 50"/><geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.04"/>
 <body pos="0.25 0 0"><joint type="hinge" axis="0 1 0" range="-10 20"/><geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.04"/>
  <body pos="0.2 0 0"><joint type="slide" axis="1 0 0" range="-0.05 0.05"/><geom type="sphere" size="0.05"/></body>
 </body></body></worldbody>
<actuator><motor joint="shoulder" gear="5"/></actuator>
</mujoco>)";

std::string pile(int condim) {
  return std::string(R"(<mujoco><option timestep="0.002"/>
<default><geom condim=")") + std::to_string(condim) + R"(" friction="0.8 0.02 0.001"/></default>
<worldbody><geom type="plane" size="5 5 0.1"/>
<body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.08 0.06"/></body>
<body pos="0.05 0.02 0.3" euler="10 20 30"><freejoint/><geom type="box" size="0.07 0.07 0.07"/></body>
<body pos="0.4 0 0.1"><freejoint/><geom type="sphere" size="0.08"/></body>
<body pos="-0.4 0 0.1" euler="0 80 0"><freejoint/><geom type="capsule" size="0.05 0.12"/></body>
</worldbody></mujoco>)";
}

struct Case {
  const char* name;
  std::shared_ptr<const Model> model;
  const char* key;
  int steps, every;
  double ctrl_spread;
};

std::vector<Case> cases() {
  return {{"humanoid", stiffgrad::load_mjcf(sgtest::humanoid_xml()), nullptr, 300, 100, 0.3},
          {"g1_home", stiffgrad::load_mjcf(shared_model("unitree_g1/g1_mjx_mujoco222.xml")), "home", 120, 40, 0.0},
          {"pile_condim3", load_xml_text(pile(3), "pile3"), nullptr, 300, 100, 0.0},
          {"pile_condim1", load_xml_text(pile(1), "pile1"), nullptr, 300, 100, 0.0},
          {"limited_chain", load_xml_text(kLimitedChainOnFloor, "chain"), nullptr, 400, 100, 1.0}};
}

// adj_impulse_substep over 1 and 3 substeps against the Dual substeps, κ = 300 and 50: kDotTol in
// long double, 1e-9 in double (rounding amplified by the Delassus matrix's conditioning;
// docs/testing.md, "Dot-product tests").
TEST(ImpulseStep, SubstepDotProduct) {
  for (const Case& c : cases()) {
    for (double kappa : {300.0, 50.0}) {
      ImpulseKit k(*c.model, kappa);
      Worst worst_d, worst_ld;
      int blocks = 0, contacts = 0, dummy = 0;
      const auto states = impulse_states(k, qpos0_of(*k.model, c.key), c.steps, c.every, c.ctrl_spread, 11);
      for (std::size_t si = 0; si < states.size(); ++si)
        for (int nsub : {1, 3}) {
          const std::uint64_t seed = 9000 + 10 * si + static_cast<std::uint64_t>(nsub);
          const double rd = impulse_dot_test<double>(k, states[si], nsub, seed, &blocks, &contacts);
          const double rld = impulse_dot_test<long double>(k, states[si], nsub, seed, &dummy, &dummy);
          worst_d.add(rd);
          worst_ld.add(rld);
          EXPECT_LE(rld, kDotTol) << c.name << " kappa " << kappa << " state " << si << ", " << nsub << " substeps";
          EXPECT_LE(rd, 1e-9) << c.name << " kappa " << kappa << " state " << si << ", " << nsub << " substeps";
        }
      std::printf("[impulse adjoint] %-14s kappa %3.0f: %zu states x (1, 3 substeps), %d blocks, %d contacts in all: "
                  "worst dot-product rel residual %.2e (double), %.2e (long double)\n",
                  c.name, kappa, states.size(), blocks, contacts, worst_d.v, worst_ld.v);
      EXPECT_GT(contacts, 0) << c.name;
    }
  }
}

// impulse_delassus takes a unit row's (friction loss, limit) products with its one non-zero
// alone (unit_row_dot); that must be bit for bit row_dot over the row's whole chain, which is
// what the Delassus matrix was before, and the adjoint's unit-row branch rests on the same
// argument. Checked on every live entry of G and c after substeps of the G1 (29 friction-loss
// rows beside its contacts) and of a limited chain with friction loss, at κ 300 and 50.
TEST(ImpulseStep, UnitRowProductsEqualTheFullChainLoopBitwise) {
  for (const Case& c : cases()) {
    if (std::string(c.name) != "g1_home" && std::string(c.name) != "limited_chain") continue;
    for (double kappa : {300.0, 50.0}) {
      ImpulseKit k(*c.model, kappa);
      const auto& m = k.m;
      int unit_rows = 0, entries = 0;
      for (const auto& x : impulse_states(k, qpos0_of(*k.model, c.key), c.steps, c.every, c.ctrl_spread, 12)) {
        Buf<double> d(k.o);
        for (int i = 0; i < m.nq + m.nv + m.nu; ++i) d[k.o.qpos + i] = x[sz(i)];
        ASSERT_EQ(kern::substep(m, d.d), 0);
        const auto w = kern::impulse_workspace(m, d.d);
        const int n = static_cast<int>(d.d.nefc()[0]);
        for (int r = 0; r < n; ++r) {
          const int chain = kern::row_chain(d.d, r);
          if (chain == kern::kChainEmpty) continue;
          if (kern::impulse_row_is_unit(d.d, r)) ++unit_rows;
          const auto full = [&](kern::View<double, kern::Contiguous> v) {
            return kern::row_dot(m, d.d.efc_J(), r, chain, v);
          };
          for (int s = 0; s < n; ++s) {
            if (kern::row_chain(d.d, s) == kern::kChainEmpty || s > r) continue;
            const double g = full(w.Y.at(s * m.nv));
            EXPECT_TRUE(g == w.G[r * n + s] && std::signbit(g) == std::signbit(w.G[r * n + s]))
                << c.name << " kappa " << kappa << " G(" << r << ", " << s << ")";
            ++entries;
          }
          const double cr = full(w.v0) + m.timestep * full(d.d.qacc_smooth());
          EXPECT_TRUE(cr == w.c[r] && std::signbit(cr) == std::signbit(w.c[r])) << c.name << " c " << r;
        }
      }
      std::printf("[unit rows] %-14s kappa %3.0f: %d unit rows, %d entries of G compared\n", c.name, kappa, unit_rows,
                  entries);
      EXPECT_GT(unit_rows, 0) << c.name;
    }
  }
}

}  // namespace

namespace {

// ------------------------------------------------------------------------ physical checks
// A body simulated with the Impulse kernels: `steps` substeps, `probe` after each.
template <class F>
void simulate(const ImpulseKit& k, Buf<double>& d, int steps, F&& probe) {
  for (int s = 1; s <= steps; ++s) {
    ASSERT_EQ(kern::substep(k.m, d.d), 0);
    probe(s);
  }
}

const char* kSphereDrop = R"(<mujoco><option timestep="0.005"/>
<worldbody><geom type="plane" size="2 2 0.1"/>
<body pos="0 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body></worldbody></mujoco>)";

// A sphere dropped on a plane: no bounce, then at rest at a depth that shrinks as κ grows. At
// rest each substep's impulse is σ(κ d) of the one that would stop the sphere, so it sinks at
// ḋ = g h (1 − σ)/σ = g h e^{−κ d}: d(t) = ln(e^{κ d_0} + κ g h (t − t_0)) / κ, a slow logarithmic
// creep (the model has no position correction). The measured depth follows it.
TEST(ImpulsePhysics, SphereDropIsInelasticAndRestsDeeperForSofterKappa) {
  const auto base = load_xml_text(kSphereDrop, "sphere");
  double previous_depth = 1e9;
  for (double kappa : {50.0, 100.0, 300.0}) {
    ImpulseKit k(*base, kappa);
    Buf<double> d(k.o);
    for (int i = 0; i < k.m.nq; ++i) d.d.qpos()[i] = k.model->qpos0[sz(i)];
    const double h = k.m.timestep, g = 9.81, r = 0.1;
    // the soft activation brakes the sphere before it touches: the impact speed is its largest
    double impact_speed = 0, max_rebound = 0, depth_at_1s = 0;
    simulate(k, d, 600, [&](int s) {
      const double vz = d.d.qvel()[2];
      impact_speed = std::max(impact_speed, -vz);
      if (impact_speed > 0.5) max_rebound = std::max(max_rebound, vz);
      if (s == 200) depth_at_1s = r - d.d.qpos()[2];
    });
    const double depth = r - d.d.qpos()[2], speed = -d.d.qvel()[2];
    // closed form from the 1 s state to the 3 s state, and the creep speed there
    const double predicted = std::log(std::exp(kappa * depth_at_1s) + kappa * g * h * 2.0) / kappa;
    const double creep = g * h * std::exp(-kappa * depth);
    std::printf("[impulse physics] sphere drop kappa %3.0f: largest speed %.2f m/s, largest rebound %.1e m/s; depth %.2f mm "
                "at 3 s (closed form from 1 s: %.2f mm), sinking at %.2e m/s (closed form %.2e)\n",
                kappa, impact_speed, max_rebound, 1e3 * depth, 1e3 * predicted, speed, creep);
    EXPECT_GT(impact_speed, 1.0);
    EXPECT_LE(max_rebound, 0.0) << "bounced";
    EXPECT_NEAR(depth, predicted, 0.01 * predicted);
    EXPECT_NEAR(speed, creep, 0.05 * creep);
    EXPECT_LT(speed, 1e-2 * impact_speed) << "not at rest";
    EXPECT_LT(depth, previous_depth) << "a stiffer kappa must rest shallower";
    previous_depth = depth;
  }
}

// A box on a plane under gravity tilted by θ (the same as an incline of angle θ): it sticks for
// tan θ < μ and slides with a = g (sin θ − μ cos θ) otherwise.
std::string box_on_incline(double theta_deg, double mu) {
  const double t = theta_deg * M_PI / 180, g = 9.81;
  char xml[600];
  std::snprintf(xml, sizeof xml, R"(<mujoco><option timestep="0.005" gravity="%.17g 0 %.17g"/>
<worldbody><geom type="plane" size="20 20 0.1" friction="%g 0.005 0.0001"/>
<body pos="0 0 0.05"><freejoint/><geom type="box" size="0.1 0.1 0.05" mass="1" friction="%g 0.005 0.0001"/></body>
</worldbody></mujoco>)", g * std::sin(t), -g * std::cos(t), mu, mu);
  return xml;
}

TEST(ImpulsePhysics, BoxOnInclineSticksBelowAndSlidesAboveTheFrictionAngle) {
  const double mu = 0.5, g = 9.81, kappa = 300;
  for (double theta : {15.0, 20.0, 35.0, 45.0}) {
    const auto base = load_xml_text(box_on_incline(theta, mu), "incline");
    ImpulseKit k(*base, kappa);
    Buf<double> d(k.o);
    for (int i = 0; i < k.m.nq; ++i) d.d.qpos()[i] = k.model->qpos0[sz(i)];
    double x_half = 0, v_half = 0;
    simulate(k, d, 400, [&](int s) {
      if (s == 100) {
        x_half = d.d.qpos()[0];
        v_half = d.d.qvel()[0];
      }
    });
    const double t = theta * M_PI / 180;
    const double slide = d.d.qpos()[0] - x_half, accel = (d.d.qvel()[0] - v_half) / 1.5;
    const double expected = std::tan(t) < mu ? 0.0 : g * (std::sin(t) - mu * std::cos(t));
    std::printf("[impulse physics] box on a %2.0f deg incline, mu %.1f: moved %.2e m in the last 1.5 s, acceleration %.4f "
                "m/s^2 (closed form %.4f)\n", theta, mu, slide, accel, expected);
    if (expected == 0.0) {
      // sticking: no acceleration; a slow constant creep remains (each substep's impulse
      // removes only a fraction of the slip: σ < 1 and ten unconverged sweeps)
      EXPECT_LT(std::fabs(accel), 1e-3 * g * std::sin(t)) << theta << " deg: must stick";
      EXPECT_LT(std::fabs(slide), 1e-2) << theta << " deg: creeps too fast";
    } else {
      EXPECT_NEAR(accel, expected, 0.02 * expected) << theta << " deg";
    }
  }
}

// Without actuation the total energy (kinetic + gravitational) never increases, substep by
// substep, for a pile of free bodies falling and settling (contacts, friction) and for the
// unactuated G1 falling over (limits, friction loss, damping, many contacts).
double total_energy(const ImpulseKit& k, const Buf<double>& state) {
  Buf<double> e(k.o);
  std::copy(state.v.begin() + k.o.qpos, state.v.begin() + k.o.qpos + k.m.nq + k.m.nv, e.v.begin() + k.o.qpos);
  kern::fwd_position(k.m, e.d);
  double kinetic = 0, potential = 0;
  for (int i = 0; i < k.m.nv; ++i)
    for (int j = 0; j < k.m.nv; ++j)
      if (i == j || kern::dof_on_chain(k.m, i, j) || kern::dof_on_chain(k.m, j, i))
        kinetic += 0.5 * e.d.qvel()[i] * e.d.qM()[i * k.m.nv + j] * e.d.qvel()[j];
  for (int b = 1; b < k.m.nbody; ++b)
    for (int c = 0; c < 3; ++c)
      potential -= k.m.body_mass[b] * k.m.gravity[c] *
                   (e.d.xipos()[3 * b + c] + e.d.tree_origin()[3 * b + c]);
  return kinetic + potential;
}

// The model with its actuators' gains and biases zeroed (the G1's position servos store energy).
std::shared_ptr<const Model> unactuated(const Model& base) {
  auto m = std::make_shared<Model>(base);
  for (double& x : m->actuator_gainprm) x = 0;
  for (double& x : m->actuator_biasprm) x = 0;
  return m;
}

TEST(ImpulsePhysics, EnergyNeverIncreasesWithoutActuation) {
  struct Scene { const char* name; std::shared_ptr<const Model> model; int steps; };
  const std::vector<Scene> scenes = {
      {"pile", load_xml_text(pile(3), "pile_energy"), 600},
      {"g1", unactuated(*stiffgrad::load_mjcf(shared_model("unitree_g1/g1_mjx_mujoco222.xml"))), 600}};
  for (const Scene& sc : scenes)
    for (double kappa : {50.0, 300.0}) {
      ImpulseKit k(*sc.model, kappa);
      Buf<double> d(k.o);
      for (int i = 0; i < k.m.nq; ++i) d.d.qpos()[i] = k.model->qpos0[sz(i)];
      const double e0 = total_energy(k, d);
      double previous = e0, worst_rise = 0, scale = 0;
      simulate(k, d, sc.steps, [&](int) {
        const double e = total_energy(k, d);
        worst_rise = std::max(worst_rise, e - previous);
        scale = std::max(scale, std::fabs(e));
        previous = e;
      });
      std::printf("[impulse physics] %s kappa %3.0f: energy %.4g J -> %.4g J over %d substeps; largest one-substep "
                  "rise %.2e J (%.1e of |E|)\n", sc.name, kappa, e0, previous, sc.steps, worst_rise, worst_rise / scale);
      EXPECT_LT(previous, e0);
      EXPECT_LE(worst_rise, 1e-9 * scale) << sc.name << " kappa " << kappa;
    }
}

}  // namespace
