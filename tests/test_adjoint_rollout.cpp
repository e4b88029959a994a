// Whole-substep, control-step and rollout gradients (docs/architecture.md, "How gradients are computed"
// and "How we know it is right", item 2):
//   - dot-product tests of adj_substep, adj_control_step_env and the public Rollout API
//     against forward-mode Dual<double> runs of the same kernels (1e-12 of the term scale,
//     adjoint_support.hpp);
//   - whole-rollout gradients against 4-point central finite differences in double, with
//     qpos gradients in MuJoCo's tangent convention (free and ball joints);
//   - bitwise replay of the checkpointed forward pass, and a case where it must fail;
//   - float rollouts against double ones;
//   - the memory bound of the checkpointing scheme;
//   - per-step loss rows versus the sum of single-step losses.
#include <ostream>

#include "adjoint_support.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"

namespace {

using namespace sgadj;
using stiffgrad::Model;
using stiffgrad::Precision;
using stiffgrad::Rollout;
using stiffgrad::Simulator;
using stiffgrad::SimulatorOptions;

std::size_t sz(int n) { return static_cast<std::size_t>(n); }

// ------------------------------------------------------------------------ models
struct RolloutModel {
  const char* name;
  std::string key;
  int nenv;               // environments in the batched rollouts of this model (1..3)
  std::string smooth_key{};  // model for the finite-difference tests, when not `key`
  const std::string& fd_key() const { return smooth_key.empty() ? key : smooth_key; }
};

// The G1's explicit wrist-servo damping is past the Euler stability limit at its 4 ms step
// (h kv (M^-1)_ii = 2.01 > 2): finite differences are meaningless there, so the FD and float
// tests run it at a 1 ms substep (docs/testing.md, "Finite differences").
const char* kG1Smooth = "#timestep=0.001";

void PrintTo(const RolloutModel& m, std::ostream* os) { *os << m.name; }

std::vector<RolloutModel> rollout_models() {
  const std::string g1s = shared_model("unitree_g1/scene_mjx.xml"), g1m = shared_model("unitree_g1/g1_mjx_mujoco222.xml");
  return {
      {"humanoid", sgtest::humanoid_xml(), 2},
      {"g1_scene", g1s, 1, g1s + kG1Smooth},
      {"g1_mujoco222", g1m, 2, g1m + kG1Smooth},
      {"cartpole", shared_model("dm_control/cartpole.xml"), 3},
      {"hopper", shared_model("gymnasium/hopper.xml"), 2},
      {"ant", shared_model("brax/ant.xml"), 3},
      {"humanoid_CMU", shared_model("dm_control/humanoid_CMU.xml"), 1},
      {"gym_humanoid", shared_model("gymnasium/humanoid.xml"), 2},
      {"ball_chain", "inline:ball_chain", 2},
      {"features", "inline:features", 3},
  };
}

// ------------------------------------------------------------------------ inputs
// Initial states (nenv x nq, nenv x nv) and controls (T x nenv x nu), environment-major as
// the public API takes them.
struct Inputs {
  int nenv = 0, T = 0;
  std::vector<double> qpos, qvel, ctrl;  // ctrl has one spare element (nu may be 0)
  int saturated = -1;     // moderate inputs: an actuator whose control is beyond its ctrlrange
  int sat_t0 = 0, sat_t1 = 0;  // during control steps [sat_t0, sat_t1)
};

// A servo (affine position actuator): force = gain (ctrl - gear q) - kv gear qdot.
bool is_servo(const Model& md, int u) {
  return md.actuator_biastype[sz(u)] == stiffgrad::BiasType::Affine && md.actuator_biasprm[sz(3 * u + 1)] != 0.0;
}

// `moderate`: hinge offsets ~0.2, velocities ~0.3, rotations ~0.3 rad, controls ~0.3 of the
// half-range inside ctrlrange, servo targets within ~0.05 of the initial joint position, so
// that no clamp switches under small perturbations (finite differences); one ctrl-limited
// non-servo actuator is held 10% of its range above ctrlrange for 5 control steps (a clamp
// that is active but does not switch under the perturbations: the gradient with respect to
// those controls must be exactly zero). Otherwise: hinge
// offsets ~1, random unit quaternions, qvel N(0,1), controls spread one half-range (some
// beyond ctrlrange).
Inputs make_inputs(const Model& md, Rng& rng, int nenv, int T, bool moderate) {
  Inputs in;
  in.nenv = nenv;
  in.T = T;
  in.qpos.resize(sz(nenv * md.nq));
  in.qvel.resize(sz(nenv * md.nv));
  in.ctrl.resize(sz(T) * sz(nenv) * sz(md.nu) + 1);
  StateScales s;
  if (moderate) {
    s.sq = 0.2; s.sv = 0.3; s.rot = 0.3;
  }
  for (int e = 0; e < nenv; ++e) random_state(md, rng, s, in.qpos.data() + e * md.nq, in.qvel.data() + e * md.nv);
  if (moderate)  // start limited hinge/slide joints inside their range (less 10% each side)
    for (int e = 0; e < nenv; ++e)
      for (int j = 0; j < md.njnt; ++j) {
        const auto type = md.jnt_type[sz(j)];
        if (!md.jnt_limited[sz(j)] || type == stiffgrad::JointType::Free || type == stiffgrad::JointType::Ball) continue;
        const double lo = md.jnt_range[sz(2 * j)], hi = md.jnt_range[sz(2 * j + 1)];
        double& q = in.qpos[sz(e * md.nq + md.jnt_qposadr[sz(j)])];
        q = std::clamp(q, lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo));
      }
  std::vector<double> target(sz(nenv * md.nu) + 1);
  for (int e = 0; e < nenv; ++e)
    for (int u = 0; u < md.nu; ++u) {
      const int j = md.actuator_trnid[sz(u)];
      target[sz(e * md.nu + u)] = md.actuator_gear[sz(u)] * in.qpos[sz(e * md.nq + md.jnt_qposadr[sz(j)])] + 0.05 * rng.normal();
    }
  if (moderate)
    for (int u = 0; u < md.nu && in.saturated < 0; ++u)
      if (md.actuator_ctrllimited[sz(u)] && !is_servo(md, u)) in.saturated = u;
  in.sat_t0 = T / 4;
  in.sat_t1 = std::min(T, in.sat_t0 + 5);
  for (int t = 0; t < T; ++t)
    for (int e = 0; e < nenv; ++e) {
      double* c = in.ctrl.data() + (sz(t) * sz(nenv) + sz(e)) * sz(md.nu);
      random_ctrl(md, rng, moderate ? 0.3 : 1.0, c);
      if (in.saturated >= 0 && t >= in.sat_t0 && t < in.sat_t1) {
        const int u = in.saturated;
        const double lo = md.actuator_ctrlrange[sz(2 * u)], hi = md.actuator_ctrlrange[sz(2 * u + 1)];
        c[u] = hi + 0.1 * (hi - lo);
      }
      if (moderate)
        for (int u = 0; u < md.nu; ++u)
          if (is_servo(md, u)) {
            double x = target[sz(e * md.nu + u)] + 0.02 * rng.normal();
            if (md.actuator_ctrllimited[sz(u)]) {
              const double lo = md.actuator_ctrlrange[sz(2 * u)], hi = md.actuator_ctrlrange[sz(2 * u + 1)];
              x = std::clamp(x, lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo));
            }
            c[u] = x;
          }
    }
  return in;
}

const double* ctrl_of(const Inputs& in, const Model& md, int t, int e) {
  return in.ctrl.data() + (sz(t) * sz(in.nenv) + sz(e)) * sz(md.nu);
}

// ------------------------------------------------------------------------ Dual rollout
// Forward-mode run of T control steps of S substeps for one environment, from the env-major
// inputs with directions u (raw qpos nq, qvel nv, ctrl T x nu). Records values and
// derivatives of the state at every control boundary, (T + 1) x nq and (T + 1) x nv.
struct DualTrajectory {
  std::vector<double> qpos_v, qpos_d, qvel_v, qvel_d;
};

DualTrajectory dual_rollout(Kit& k, const Inputs& in, int e, int S, const std::vector<double>& uq,
                            const std::vector<double>& uv, const std::vector<double>& uc) {
  const auto& m = k.m;
  Buf<D> b(k.o);
  const auto& d = b.d;
  DualTrajectory tr;
  const int T = in.T;
  tr.qpos_v.resize(sz((T + 1) * m.nq)); tr.qpos_d.resize(tr.qpos_v.size());
  tr.qvel_v.resize(sz((T + 1) * m.nv)); tr.qvel_d.resize(tr.qvel_v.size());
  for (int i = 0; i < m.nq; ++i) {
    d.qpos()[i] = D(in.qpos[sz(e * m.nq + i)]);
    d.qpos()[i].d[0] = uq[sz(i)];
  }
  for (int i = 0; i < m.nv; ++i) {
    d.qvel()[i] = D(in.qvel[sz(e * m.nv + i)]);
    d.qvel()[i].d[0] = uv[sz(i)];
  }
  auto record = [&](int t) {
    for (int i = 0; i < m.nq; ++i) {
      tr.qpos_v[sz(t * m.nq + i)] = d.qpos()[i].v;
      tr.qpos_d[sz(t * m.nq + i)] = d.qpos()[i].d[0];
    }
    for (int i = 0; i < m.nv; ++i) {
      tr.qvel_v[sz(t * m.nv + i)] = d.qvel()[i].v;
      tr.qvel_d[sz(t * m.nv + i)] = d.qvel()[i].d[0];
    }
  };
  record(0);
  for (int t = 0; t < T; ++t) {
    const double* c = ctrl_of(in, *k.model, t, e);
    for (int i = 0; i < m.nu; ++i) {
      d.ctrl()[i] = D(c[i]);
      d.ctrl()[i].d[0] = uc[sz(t * m.nu + i)];
    }
    for (int s = 0; s < S; ++s) kern::substep(k.mD, d);
    record(t + 1);
  }
  return tr;
}

// ------------------------------------------------------------------------ simulator helpers
// Most tests here exercise the smooth pipeline's adjoint machinery on wild, unphysical inputs
// (random unit quaternions, offsets of ~1 m: a G1 starting under its floor blows up under
// contact, in MuJoCo too), so constraints are off unless asked for; the constrained variants
// below use moderate inputs. Contact gradients in persistent contact against finite
// differences: test_constraint_adjoint.cpp.
SimulatorOptions sim_options(int nenv, int S, Precision p = Precision::Double, bool constraints = false) {
  SimulatorOptions o;
  o.nenv = nenv;
  o.substeps = S;
  o.threads = 1;
  o.precision = p;
  o.constraints = constraints;
  return o;
}

// Records the rollout of `in` (T steps) into `ro` on `sim`.
void record(Simulator& sim, Rollout& ro, const Inputs& in) {
  sim.set_state(in.qpos.data(), in.qvel.data());
  ro.begin();
  const std::size_t stride = sz(in.nenv) * sz(sim.model().nu);
  for (int t = 0; t < in.T; ++t) ro.step(stride ? in.ctrl.data() + sz(t) * stride : nullptr);
}

struct Grad {
  std::vector<double> qpos0, qvel0, ctrl;  // nenv x (nv | nq), nenv x nv, T x nenv x nu
};

Grad run_backward(Rollout& ro, const Model& md, int nenv, int T, const std::vector<double>& dq,
                  const std::vector<double>& dv, bool raw) {
  Grad g;
  g.qpos0.assign(sz(nenv) * sz(raw ? md.nq : md.nv), 0.0);
  g.qvel0.assign(sz(nenv * md.nv), 0.0);
  g.ctrl.assign(sz(T) * sz(nenv) * sz(md.nu) + 1, 0.0);
  if (raw)
    ro.backward_raw(dq.empty() ? nullptr : dq.data(), dv.empty() ? nullptr : dv.data(), g.qpos0.data(), g.qvel0.data(),
                    g.ctrl.data());
  else
    ro.backward(dq.empty() ? nullptr : dq.data(), dv.empty() ? nullptr : dv.data(), g.qpos0.data(), g.qvel0.data(),
                g.ctrl.data());
  g.ctrl.pop_back();
  return g;
}

class AdjointRollout : public ::testing::TestWithParam<RolloutModel> {};

std::string param_name(const ::testing::TestParamInfo<RolloutModel>& info) { return info.param.name; }

// ======================================================================== a. dot products

// adj_substep over n substeps against the Dual substep: inputs (qpos raw, qvel, ctrl),
// outputs (qpos raw, qvel) after the n substeps.
TEST_P(AdjointRollout, SubstepDotProduct) {
  const RolloutModel& pm = GetParam();
  Kit k(load_cached(pm.key));
  const auto& m = k.m;
  const auto& o = k.o;
  Worst worst;
  for (int nsub : {1, 3, 10}) {
    for (int seed = 0; seed < 2; ++seed) {
      Rng rng(5000 + 10 * nsub + seed);
      const Inputs in = make_inputs(*k.model, rng, 1, 1, /*moderate=*/false);
      const auto uq = rng.normals(m.nq), uv = rng.normals(m.nv), uc = rng.normals(m.nu);
      const auto wq = rng.normals(m.nq), wv = rng.normals(m.nv);
      // forward, Dual
      Buf<D> bD(k.o);
      for (int i = 0; i < m.nq; ++i) {
        bD.d.qpos()[i] = D(in.qpos[sz(i)]);
        bD.d.qpos()[i].d[0] = uq[sz(i)];
      }
      for (int i = 0; i < m.nv; ++i) {
        bD.d.qvel()[i] = D(in.qvel[sz(i)]);
        bD.d.qvel()[i].d[0] = uv[sz(i)];
      }
      for (int i = 0; i < m.nu; ++i) {
        bD.d.ctrl()[i] = D(in.ctrl[sz(i)]);
        bD.d.ctrl()[i].d[0] = uc[sz(i)];
      }
      for (int s = 0; s < nsub; ++s) kern::substep(k.mD, bD.d);
      // forward, double, keeping the state before every substep
      Buf<double> d(o), a(o);
      for (int i = 0; i < m.nq; ++i) d.d.qpos()[i] = in.qpos[sz(i)];
      for (int i = 0; i < m.nv; ++i) d.d.qvel()[i] = in.qvel[sz(i)];
      for (int i = 0; i < m.nu; ++i) d.d.ctrl()[i] = in.ctrl[sz(i)];
      std::vector<std::vector<double>> before;
      for (int s = 0; s < nsub; ++s) {
        before.emplace_back(d.v.begin() + o.qpos, d.v.begin() + o.qpos + m.nq + m.nv);
        kern::substep(m, d.d);
      }
      for (int i = 0; i < m.nq; ++i)
        EXPECT_EQ(d.d.qpos()[i], bD.d.qpos()[i].v) << "Dual value parts differ from the primal";
      for (int i = 0; i < m.nv; ++i)
        EXPECT_EQ(d.d.qvel()[i], bD.d.qvel()[i].v) << "Dual value parts differ from the primal";
      // reverse
      const DotTest t = reverse_substeps_dot_test(m, o, d, a, bD, before, wq, wv, uq, uv, uc);
      worst.add(t.rel());
      EXPECT_TRUE(t.ok()) << pm.name << " " << nsub << " substeps seed " << seed << ": " << t.str();
    }
  }
  std::printf("[adjoint] %-13s adj_substep (1, 3, 10 substeps)        worst dot-product rel residual %.2e\n", pm.name, worst.v);
}

// adj_control_step_env (S = 4) on environment-minor batched arrays (3 environments, the
// middle one), against the Dual substeps; it must also report a bitwise replay.
TEST_P(AdjointRollout, ControlStepDotProduct) {
  const RolloutModel& pm = GetParam();
  Kit k(load_cached(pm.key));
  const auto& m = k.m;
  const auto& o = k.o;
  const int S = 4, nb = 3, e = 1;
  using LS = kern::Strided;
  using VS = kern::View<double, LS>;
  Worst worst;
  for (int seed = 0; seed < 3; ++seed) {
    Rng rng(5100 + seed);
    const Inputs in = make_inputs(*k.model, rng, nb, 1, /*moderate=*/false);
    const auto uq = rng.normals(m.nq), uv = rng.normals(m.nv), uc = rng.normals(m.nu);
    const auto wq = rng.normals(m.nq), wv = rng.normals(m.nv);
    // batched arrays, environment-minor
    std::vector<double> q(sz(nb * m.nq)), v(sz(nb * m.nv)), c(sz(nb * m.nu) + 1), q1, v1;
    for (int b = 0; b < nb; ++b) {
      for (int i = 0; i < m.nq; ++i) q[sz(i * nb + b)] = in.qpos[sz(b * m.nq + i)];
      for (int i = 0; i < m.nv; ++i) v[sz(i * nb + b)] = in.qvel[sz(b * m.nv + i)];
      for (int i = 0; i < m.nu; ++i) c[sz(i * nb + b)] = in.ctrl[sz(b * m.nu + i)];
    }
    q1 = q;
    v1 = v;
    const LS env_minor{nb};
    Buf<double> d(o), d_keep(o), a(o);
    int status = kern::kEnvOk;
    kern::control_step_env(m, VS{q1.data() + e, env_minor}, VS{v1.data() + e, env_minor}, VS{c.data() + e, env_minor}, VS{},
                           d.d, S, &status);
    ASSERT_EQ(status, kern::kEnvOk);
    // Dual
    Buf<D> bD(o);
    for (int i = 0; i < m.nq; ++i) {
      bD.d.qpos()[i] = D(in.qpos[sz(e * m.nq + i)]);
      bD.d.qpos()[i].d[0] = uq[sz(i)];
    }
    for (int i = 0; i < m.nv; ++i) {
      bD.d.qvel()[i] = D(in.qvel[sz(e * m.nv + i)]);
      bD.d.qvel()[i].d[0] = uv[sz(i)];
    }
    for (int i = 0; i < m.nu; ++i) {
      bD.d.ctrl()[i] = D(in.ctrl[sz(e * m.nu + i)]);
      bD.d.ctrl()[i].d[0] = uc[sz(i)];
    }
    for (int s = 0; s < S; ++s) kern::substep(k.mD, bD.d);
    // adjoint
    std::vector<double> aq(sz(nb * m.nq)), av(sz(nb * m.nv)), ac(sz(nb * m.nu) + 1, 0.0);
    for (int i = 0; i < m.nq; ++i) aq[sz(i * nb + e)] = wq[sz(i)];
    for (int i = 0; i < m.nv; ++i) av[sz(i * nb + e)] = wv[sz(i)];
    std::vector<double> replay(sz(kern::replay_size(m, S)) + 1);
    const bool same = kern::adj_control_step_env(
        m, m, o, VS{q.data() + e, env_minor}, VS{v.data() + e, env_minor}, VS{c.data() + e, env_minor}, VS{},
        VS{q1.data() + e, env_minor}, VS{v1.data() + e, env_minor}, VS{aq.data() + e, env_minor},
        VS{av.data() + e, env_minor}, VS{ac.data() + e, env_minor}, d.d, d_keep.d, a.d, a.view(),
        kern::View<double, LC>{replay.data(), LC{}}, S);
    EXPECT_TRUE(same) << "replay of the control step is not bitwise identical";
    DotTest t;
    for (int i = 0; i < m.nq; ++i) t.out(wq[sz(i)], bD.d.qpos()[i].d[0]);
    for (int i = 0; i < m.nv; ++i) t.out(wv[sz(i)], bD.d.qvel()[i].d[0]);
    for (int i = 0; i < m.nq; ++i) t.in(aq[sz(i * nb + e)], uq[sz(i)]);
    for (int i = 0; i < m.nv; ++i) t.in(av[sz(i * nb + e)], uv[sz(i)]);
    for (int i = 0; i < m.nu; ++i) t.in(ac[sz(i * nb + e)], uc[sz(i)]);
    worst.add(t.rel());
    EXPECT_TRUE(t.ok()) << pm.name << " seed " << seed << ": " << t.str();
    // the other environments' adjoint slots are untouched
    for (int i = 0; i < m.nq; ++i) EXPECT_EQ(aq[sz(i * nb)], 0.0);
  }
  std::printf("[adjoint] %-13s adj_control_step_env (S=4)            worst dot-product rel residual %.2e\n", pm.name, worst.v);
}

// Raw qpos direction of a tangent direction ut (nv) at qpos q (nq): d/de integrate_pos(q, e ut, 1)
// at e = 0, MuJoCo's tangent convention, by forward mode.
std::vector<double> tangent_to_raw(Kit& k, const double* q, const std::vector<double>& ut) {
  std::vector<D> qd(sz(k.m.nq) + 1), vd(sz(k.m.nv) + 1);
  for (int i = 0; i < k.m.nq; ++i) qd[sz(i)] = D(q[i]);
  for (int i = 0; i < k.m.nv; ++i) { vd[sz(i)] = D(0.0); vd[sz(i)].d[0] = ut[sz(i)]; }
  kern::integrate_pos(k.mD, kern::View<D, LC>{qd.data(), LC{}}, kern::View<D, LC>{vd.data(), LC{}}, D(1.0));
  std::vector<double> r(sz(k.m.nq));
  for (int i = 0; i < k.m.nq; ++i) r[sz(i)] = qd[sz(i)].d[0];
  return r;
}

// The public API over T = 20 control steps of S = 4 substeps, with a random loss row for every
// recorded state (L = sum_t a_t . qpos_t + b_t . qvel_t, raw coordinates), against Dual forward
// rollouts of the same kernels, per environment: Rollout::backward_raw (initial qpos in raw
// coordinates) and Rollout::backward (tangent convention; the Dual run starts along the raw
// image of a tangent direction). The Dual value parts must reproduce the recorded checkpoints
// bit for bit.
// With `constraints`, contacts, limits and friction loss are on (moderate inputs): the same
// test through the constraint solve's implicit adjoint and the contact geometry.
void public_rollout_dot_product(const RolloutModel& pm, bool constraints) {
  auto md = load_cached(pm.key);
  const int T = 20, S = 4, nenv = pm.nenv;
  Kit k(md, stiffgrad::constraint_capacity(*md, sim_options(nenv, S, Precision::Double, constraints)));
  const auto& m = k.m;
  Worst worst_raw, worst_tan;
  for (int seed = 0; seed < 2; ++seed) {
    Rng rng(5200 + seed);
    const Inputs in = make_inputs(*md, rng, nenv, T, /*moderate=*/constraints);
    Simulator sim(md, sim_options(nenv, S, Precision::Double, constraints));
    Rollout ro(sim, T);
    record(sim, ro, in);
    ASSERT_EQ(sim.num_failed(), 0);
    const auto dq = rng.normals((T + 1) * nenv * m.nq), dv = rng.normals((T + 1) * nenv * m.nv);
    const Grad graw = run_backward(ro, *md, nenv, T, dq, dv, /*raw=*/true);
    EXPECT_TRUE(ro.replay_bitwise());
    const Grad gtan = run_backward(ro, *md, nenv, T, dq, dv, /*raw=*/false);
    for (int e = 0; e < nenv; ++e) {
      for (bool tangent : {false, true}) {
        const Grad& g = tangent ? gtan : graw;
        const auto ut = rng.normals(tangent ? m.nv : m.nq), uv = rng.normals(m.nv), uc = rng.normals(T * m.nu);
        const auto uq = tangent ? tangent_to_raw(k, in.qpos.data() + e * m.nq, ut) : ut;
        const DualTrajectory tr = dual_rollout(k, in, e, S, uq, uv, uc);
        DotTest t;
        std::vector<double> cq(sz(nenv * m.nq)), cv(sz(nenv * m.nv));
        int mismatches = 0;
        for (int s = 0; s <= T; ++s) {
          ro.checkpoint(s, cq.data(), cv.data());
          for (int i = 0; i < m.nq; ++i) {
            t.out(dq[sz((s * nenv + e) * m.nq + i)], tr.qpos_d[sz(s * m.nq + i)]);
            mismatches += cq[sz(e * m.nq + i)] != tr.qpos_v[sz(s * m.nq + i)];
          }
          for (int i = 0; i < m.nv; ++i) {
            t.out(dv[sz((s * nenv + e) * m.nv + i)], tr.qvel_d[sz(s * m.nv + i)]);
            mismatches += cv[sz(e * m.nv + i)] != tr.qvel_v[sz(s * m.nv + i)];
          }
        }
        EXPECT_EQ(mismatches, 0) << "Dual value parts differ from the recorded double trajectory";
        const int nqg = tangent ? m.nv : m.nq;
        for (int i = 0; i < nqg; ++i) t.in(g.qpos0[sz(e * nqg + i)], ut[sz(i)]);
        for (int i = 0; i < m.nv; ++i) t.in(g.qvel0[sz(e * m.nv + i)], uv[sz(i)]);
        for (int s = 0; s < T; ++s)
          for (int i = 0; i < m.nu; ++i) t.in(g.ctrl[sz((s * nenv + e) * m.nu + i)], uc[sz(s * m.nu + i)]);
        (tangent ? worst_tan : worst_raw).add(t.rel());
        EXPECT_TRUE(t.ok()) << pm.name << (tangent ? " backward (tangent)" : " backward_raw") << " seed " << seed
                            << " env " << e << ": " << t.str();
      }
    }
  }
  std::printf("[adjoint] %-13s Rollout T=20 S=4 nenv=%d%s worst dot-product rel residual: backward_raw %.2e, "
              "backward (tangent) %.2e\n",
              pm.name, nenv, constraints ? " constrained" : "", worst_raw.v, worst_tan.v);
}

TEST_P(AdjointRollout, PublicRolloutDotProduct) { public_rollout_dot_product(GetParam(), false); }
TEST_P(AdjointRollout, PublicRolloutDotProductConstrained) { public_rollout_dot_product(GetParam(), true); }

// ======================================================================== b, c. finite differences

// Loss of one environment: L_e = wq . qpos_T + wv . qvel_T + sum_{t=0..T} v . qvel_t.
struct Loss {
  std::vector<double> wq, wv, v;  // nq, nv, nv
};

// Rows of dL/dqpos and dL/dqvel, (T + 1) x nenv x n, for per-environment losses.
void loss_rows(const Model& md, const std::vector<Loss>& loss, int T, std::vector<double>& dq, std::vector<double>& dv) {
  const int nenv = static_cast<int>(loss.size());
  dq.assign(sz(T + 1) * sz(nenv) * sz(md.nq), 0.0);
  dv.assign(sz(T + 1) * sz(nenv) * sz(md.nv), 0.0);
  for (int e = 0; e < nenv; ++e) {
    for (int t = 0; t <= T; ++t)
      for (int i = 0; i < md.nv; ++i) dv[(sz(t) * sz(nenv) + sz(e)) * sz(md.nv) + sz(i)] = loss[sz(e)].v[sz(i)];
    for (int i = 0; i < md.nq; ++i) dq[(sz(T) * sz(nenv) + sz(e)) * sz(md.nq) + sz(i)] = loss[sz(e)].wq[sz(i)];
    for (int i = 0; i < md.nv; ++i) dv[(sz(T) * sz(nenv) + sz(e)) * sz(md.nv) + sz(i)] += loss[sz(e)].wv[sz(i)];
  }
}

// Evaluates L for one environment's inputs on a single-environment simulator.
double eval_loss(Simulator& sim1, const Model& md, const Loss& loss, const double* qpos0, const double* qvel0,
                 const std::vector<double>& ctrl /* T x nu */, int T) {
  sim1.reset();
  sim1.set_state(qpos0, qvel0);
  std::vector<double> q(sz(md.nq)), v(sz(md.nv));
  double L = 0;
  for (int i = 0; i < md.nv; ++i) L += loss.v[sz(i)] * qvel0[i];
  for (int t = 0; t < T; ++t) {
    sim1.step(md.nu ? ctrl.data() + sz(t) * sz(md.nu) : nullptr);
    sim1.get_state(q.data(), v.data());
    for (int i = 0; i < md.nv; ++i) L += loss.v[sz(i)] * v[sz(i)];
  }
  for (int i = 0; i < md.nq; ++i) L += loss.wq[sz(i)] * q[sz(i)];
  for (int i = 0; i < md.nv; ++i) L += loss.wv[sz(i)] * v[sz(i)];
  EXPECT_EQ(sim1.num_failed(), 0);
  return L;
}

// Minimum clamp margin (relative to the clamp's range) along the recorded double trajectory
// of environment e, at every substep; and whether any clamp is active somewhere.
ClampStats trajectory_clamps(Kit& k, const Inputs& in, int e, int S) {
  Buf<double> b(k.o);
  const auto& d = b.d;
  const auto& m = k.m;
  for (int i = 0; i < m.nq; ++i) d.qpos()[i] = in.qpos[sz(e * m.nq + i)];
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] = in.qvel[sz(e * m.nv + i)];
  ClampStats s;
  for (int t = 0; t < in.T; ++t) {
    const double* c = ctrl_of(in, *k.model, t, e);
    for (int i = 0; i < m.nu; ++i) d.ctrl()[i] = c[i];
    for (int j = 0; j < S; ++j) {
      s.merge(clamp_stats(m, d));
      kern::substep(m, d);
    }
  }
  return s;
}

// Moderate inputs (make_inputs) whose recorded trajectories keep every clamp input at least
// kClampMargin of the clamp's range away from its bounds at every substep, so that no clamp
// switches under the +-2h perturbations of the finite differences (with h = 1e-4 a switch would
// need a sensitivity of the clamped quantity of ~1e2 range widths per unit input). Redraws up to
// 20 times.
constexpr double kClampMargin = 1e-2;

Inputs smooth_inputs(Kit& k, Rng& rng, int nenv, int T, int S, ClampStats& clamps) {
  Inputs in;
  for (int attempt = 0; attempt < 20; ++attempt) {
    in = make_inputs(*k.model, rng, nenv, T, /*moderate=*/true);
    clamps = ClampStats{};
    for (int e = 0; e < nenv; ++e) clamps.merge(trajectory_clamps(k, in, e, S));
    if (clamps.margin >= kClampMargin) break;
  }
  return in;
}

// Input to differentiate: kind 0 = qpos0 tangent dof, 1 = qvel0 dof, 2 = ctrl (t, actuator).
struct Probe {
  int env, kind, t, index;
  std::string str(const Model& md) const {
    const char* kinds[] = {"qpos0(tangent)", "qvel0", "ctrl"};
    std::string s = std::string(kinds[kind]) + "[" + std::to_string(index) + "]";
    if (kind == 0) {
      const int j = md.dof_jntid[sz(index)];
      const char* types[] = {"free", "ball", "slide", "hinge"};
      s += std::string(" (") + types[static_cast<int>(md.jnt_type[sz(j)])] + ")";
    }
    if (kind == 2) s += " t=" + std::to_string(t);
    return s + " env " + std::to_string(env);
  }
};

std::vector<Probe> choose_probes(const Model& md, Rng& rng, int nenv, int T, const Inputs& in) {
  std::vector<Probe> p;
  auto env = [&] { return rng.index(nenv); };
  // qpos tangent dofs: every rotational (quaternion) dof group gets one, then random ones
  std::vector<int> rot_dofs, other_dofs;
  for (int j = 0; j < md.njnt; ++j) {
    const auto type = md.jnt_type[sz(j)];
    const int da = md.jnt_dofadr[sz(j)];
    if (type == stiffgrad::JointType::Free) {
      other_dofs.push_back(da + rng.index(3));
      rot_dofs.push_back(da + 3 + rng.index(3));
    } else if (type == stiffgrad::JointType::Ball) {
      rot_dofs.push_back(da + rng.index(3));
    }
  }
  for (int dof : rot_dofs) p.push_back({env(), 0, 0, dof});
  for (int dof : other_dofs) p.push_back({env(), 0, 0, dof});
  while (p.size() < 4) p.push_back({env(), 0, 0, rng.index(md.nv)});
  for (int i = 0; i < 4; ++i) p.push_back({env(), 1, 0, rng.index(md.nv)});
  if (md.nu > 0) {
    const int ts[] = {0, T / 2, T - 1, rng.index(T)};
    for (int t : ts) p.push_back({env(), 2, t, rng.index(md.nu)});
    if (in.saturated >= 0) {  // inside the saturated window (gradient 0) and just after it
      p.push_back({env(), 2, in.sat_t0 + rng.index(in.sat_t1 - in.sat_t0), in.saturated});
      if (in.sat_t1 < T) p.push_back({env(), 2, in.sat_t1, in.saturated});
    }
  } else {
    for (int i = 0; i < 4; ++i) p.push_back({env(), 1, 0, rng.index(md.nv)});
  }
  return p;
}

// Whole-rollout gradient (public Rollout::backward, tangent convention) versus 4-point central
// differences of the double simulator: T = 50, S = 4, nenv = 1..3, loss with a final-state
// term and a per-step velocity term. h = 1e-4 (SG_ADJOINT_FD_H overrides it and prints every
// probe); per probe |adj - fd| <= 1e-6 |fd| + 10 x the FD's own error estimate, no absolute
// floor (docs/testing.md, "Finite differences").
constexpr double kFdRel = 1e-6;

TEST_P(AdjointRollout, FiniteDifferences) {
  const RolloutModel& pm = GetParam();
  auto md = load_cached(pm.fd_key());
  Kit k(md);
  const auto& m = k.m;
  const int T = 50, S = 4, nenv = pm.nenv;
  const double h = std::getenv("SG_ADJOINT_FD_H") ? std::atof(std::getenv("SG_ADJOINT_FD_H")) : 1e-4;
  Rng rng(6000);
  ClampStats clamps;
  const Inputs in = smooth_inputs(k, rng, nenv, T, S, clamps);
  // the finite differences are only meaningful if no clamp switches within +-4h (the error
  // estimate's stencil at 2h; a switch there would only loosen that probe's bound)
  ASSERT_GE(clamps.margin, kClampMargin) << "no input draw kept the clamps away from switching";
  std::vector<Loss> loss(sz(nenv));
  for (auto& l : loss) {
    l.wq = rng.normals(m.nq);
    l.wv = rng.normals(m.nv);
    l.v = rng.normals(m.nv, 0.3);
  }
  Simulator sim(md, sim_options(nenv, S));
  Rollout ro(sim, T);
  record(sim, ro, in);
  ASSERT_EQ(sim.num_failed(), 0);
  std::vector<double> dq, dv;
  loss_rows(*md, loss, T, dq, dv);
  const Grad g = run_backward(ro, *md, nenv, T, dq, dv, /*raw=*/false);
  EXPECT_TRUE(ro.replay_bitwise());


  Simulator sim1(md, sim_options(1, S));
  double worst = 0, worst_floor = 0;
  const auto probes = choose_probes(*md, rng, nenv, T, in);
  EXPECT_GE(probes.size(), 10u);
  for (const Probe& p : probes) {
    const int e = p.env;
    auto eval = [&](double delta) {
      std::vector<double> q(in.qpos.begin() + e * m.nq, in.qpos.begin() + (e + 1) * m.nq);
      std::vector<double> v(in.qvel.begin() + e * m.nv, in.qvel.begin() + (e + 1) * m.nv);
      std::vector<double> c(sz(T * m.nu) + 1);
      for (int t = 0; t < T; ++t) std::copy_n(ctrl_of(in, *md, t, e), m.nu, c.begin() + t * m.nu);
      if (p.kind == 0) {
        // MuJoCo's tangent convention: qpos <- mj_integratePos(qpos, delta e_i, 1)
        std::vector<double> dlt(sz(m.nv), 0.0);
        dlt[sz(p.index)] = delta;
        kern::integrate_pos(m, kern::View<double, LC>{q.data(), LC{}}, kern::View<double, LC>{dlt.data(), LC{}}, 1.0);
      } else if (p.kind == 1) {
        v[sz(p.index)] += delta;
      } else {
        c[sz(p.t * m.nu + p.index)] += delta;
      }
      return eval_loss(sim1, *md, loss[sz(e)], q.data(), v.data(), c, T);
    };
    const FiniteDifference fd = central_difference(eval, h);
    double adj = 0;
    if (p.kind == 0) adj = g.qpos0[sz(e * m.nv + p.index)];
    if (p.kind == 1) adj = g.qvel0[sz(e * m.nv + p.index)];
    if (p.kind == 2) adj = g.ctrl[(sz(p.t) * sz(nenv) + sz(e)) * sz(m.nu) + sz(p.index)];
    const double tol = fd.tolerance(kFdRel);
    const double used = std::fabs(adj - fd.value) / tol;  // fraction of the bound used
    if (std::getenv("SG_ADJOINT_FD_H"))
      std::printf("  probe %-40s adj %.12e fd %.12e fd(2h) %.12e |adj-fd| %.2e bound %.2e\n", p.str(*md).c_str(), adj,
                  fd.value, fd.at_2h, std::fabs(adj - fd.value), tol);
    worst = std::max(worst, used);
    worst_floor = std::max(worst_floor, fd.error);
    EXPECT_LE(std::fabs(adj - fd.value), tol) << pm.name << " " << p.str(*md) << ": adjoint " << adj
                                              << " finite difference " << fd.value << " (at 2h " << fd.at_2h << ")";
  }
  std::printf("[adjoint] %-13s FD T=50 S=4 nenv=%d h=%.0e %2zu inputs   worst |adj-fd| / bound %.2e  "
              "(bound %.0e |fd| + %.0f x FD error; largest FD error %.1e; min clamp margin %.2e, active "
              "clamp-substeps %d)\n",
              pm.name, nenv, h, probes.size(), worst, kFdRel, kFdErrorFactor, worst_floor, clamps.margin,
              clamps.ctrl_active + clamps.force_active + clamps.jnt_active);
}

INSTANTIATE_TEST_SUITE_P(AdjointModels, AdjointRollout, ::testing::ValuesIn(rollout_models()), param_name);

// ======================================================================== d. replay

std::vector<RolloutModel> replay_models() {
  return {{"humanoid", sgtest::humanoid_xml(), 3},
          {"g1_scene", shared_model("unitree_g1/scene_mjx.xml"), 2},
          {"features", "inline:features", 3}};
}

TEST(AdjointReplay, BitwiseInBothPrecisions) {
  for (const auto& pm : replay_models()) {
    auto md = load_cached(pm.key);
    for (Precision p : {Precision::Double, Precision::Float})
      for (bool constraints : {false, true}) {  // constrained: moderate inputs (see sim_options)
        Rng rng(7000);
        const int T = 10, S = 4;
        const Inputs in = make_inputs(*md, rng, pm.nenv, T, /*moderate=*/constraints);
        Simulator sim(md, sim_options(pm.nenv, S, p, constraints));
        Rollout ro(sim, T);
        record(sim, ro, in);
        const std::string what = pm.name + std::string(p == Precision::Float ? " float" : " double") +
                                 (constraints ? " constrained" : "");
        ASSERT_EQ(sim.num_failed(), 0) << what;
        const auto dv = rng.normals((T + 1) * pm.nenv * md->nv);
        run_backward(ro, *md, pm.nenv, T, {}, dv, false);
        EXPECT_TRUE(ro.replay_bitwise()) << what;
      }
  }
}

// The replay check can fail: adj_control_step_env against a next checkpoint that is off by
// one ulp, and from a start checkpoint that was perturbed, reports false (and true for the
// untouched checkpoints).
template <class Real>
void replay_detects(const RolloutModel& pm) {
  auto md = load_cached(pm.key);
  stiffgrad::ModelArrays<Real> arr(*md);
  const auto m = arr.host_view();
  const auto o = kern::DataLayout::make(m);
  const int S = 4;
  Rng rng(7100);
  const Inputs in = make_inputs(*md, rng, 1, 1, false);
  using V = kern::View<Real, LC>;
  std::vector<Real> q(in.qpos.begin(), in.qpos.end()), v(in.qvel.begin(), in.qvel.end()),
      c(in.ctrl.begin(), in.ctrl.end());
  c.push_back(Real(0));
  std::vector<Real> ws(sz(3 * o.size + kern::replay_size(m, S)) + 1);
  const auto d = kern::Data<Real, LC>::bind(V{ws.data(), LC{}}, o);
  const auto d_keep = kern::Data<Real, LC>::bind(V{ws.data() + o.size, LC{}}, o);
  const auto a = kern::Data<Real, LC>::bind(V{ws.data() + 2 * o.size, LC{}}, o);
  const V adj_buffer{ws.data() + 2 * o.size, LC{}}, replay{ws.data() + 3 * o.size, LC{}};
  std::vector<Real> q1 = q, v1 = v;
  int status = kern::kEnvOk;
  kern::control_step_env(m, V{q1.data(), LC{}}, V{v1.data(), LC{}}, V{c.data(), LC{}}, V{}, d, S, &status);
  ASSERT_EQ(status, kern::kEnvOk);
  auto run = [&](std::vector<Real> q0, std::vector<Real> v0, std::vector<Real> qn, std::vector<Real> vn) {
    std::vector<Real> aq(sz(m.nq), Real(1)), av(sz(m.nv), Real(1)), ac(sz(m.nu) + 1);
    return kern::adj_control_step_env(m, m, o, V{q0.data(), LC{}}, V{v0.data(), LC{}}, V{c.data(), LC{}}, V{},
                                      V{qn.data(), LC{}}, V{vn.data(), LC{}}, V{aq.data(), LC{}}, V{av.data(), LC{}},
                                      V{ac.data(), LC{}}, d, d_keep, a, adj_buffer, replay, S);
  };
  EXPECT_TRUE(run(q, v, q1, v1)) << pm.name;
  for (int i : {0, m.nv - 1}) {  // next velocity one ulp off
    auto vn = v1;
    vn[sz(i)] = std::nextafter(vn[sz(i)], Real(10));
    EXPECT_FALSE(run(q, v, q1, vn)) << pm.name << " next qvel[" << i << "] one ulp off";
  }
  {  // next position one ulp off
    auto qn = q1;
    qn[sz(m.nq - 1)] = std::nextafter(qn[sz(m.nq - 1)], Real(10));
    EXPECT_FALSE(run(q, v, qn, v1)) << pm.name << " next qpos one ulp off";
  }
  {  // perturbed start checkpoint (last hinge/slide coordinate, relative 1e-5)
    auto q0 = q;
    q0[sz(m.nq - 1)] += Real(1e-5) * (Real(1) + std::fabs(q0[sz(m.nq - 1)]));
    EXPECT_FALSE(run(q0, v, q1, v1)) << pm.name << " perturbed start qpos";
    auto v0 = v;
    v0[0] += Real(1e-5) * (Real(1) + std::fabs(v0[0]));
    EXPECT_FALSE(run(q, v0, q1, v1)) << pm.name << " perturbed start qvel";
  }
}

TEST(AdjointReplay, DetectsMismatch) {
  for (const auto& pm : replay_models()) {
    replay_detects<double>(pm);
    replay_detects<float>(pm);
  }
}

// ======================================================================== e. float

// Float rollouts (Precision::Float) against double ones from the same initial state, T = 10,
// S = 4, on moderate inputs whose clamps stay away from switching (a clamp switching at a
// different substep in float than in double would change the gradient by O(1), legitimately).
// The error of a gradient block is max_i |g_f,i - g_d,i| / max_i |g_d,i| (entries far below the
// block's largest are not meaningful relative to themselves in float).
// Tolerance 1e-3 (measured worst block 3e-5; docs/testing.md, "Float against double").
constexpr double kFloatTol = 1e-3;

double block_err(const std::vector<double>& f, const std::vector<double>& d) {
  double num = 0;
  for (std::size_t i = 0; i < f.size(); ++i) num = std::max(num, std::fabs(f[i] - d[i]));
  const double den = max_abs(d);
  return den > 0 ? num / den : num;
}

TEST(AdjointFloat, MatchesDoubleAdjoint) {
  for (const auto& pm : rollout_models()) {
    auto md = load_cached(pm.fd_key());
    Kit k(md);
    const int T = 10, S = 4, nenv = pm.nenv;
    Rng rng(8000);
    ClampStats clamps;  // no clamp may switch between the float and the double trajectory
    const Inputs in = smooth_inputs(k, rng, nenv, T, S, clamps);
    ASSERT_GE(clamps.margin, kClampMargin) << pm.name;
    std::vector<Loss> loss(sz(nenv));
    for (auto& l : loss) {
      l.wq = rng.normals(md->nq);
      l.wv = rng.normals(md->nv);
      l.v = rng.normals(md->nv, 0.3);
    }
    std::vector<double> dq, dv;
    loss_rows(*md, loss, T, dq, dv);
    Grad g[2];
    bool bitwise[2];
    for (int p = 0; p < 2; ++p) {
      Simulator sim(md, sim_options(nenv, S, p ? Precision::Float : Precision::Double));
      Rollout ro(sim, T);
      record(sim, ro, in);
      ASSERT_EQ(sim.num_failed(), 0);
      g[p] = run_backward(ro, *md, nenv, T, dq, dv, /*raw=*/false);
      bitwise[p] = ro.replay_bitwise();
    }
    EXPECT_TRUE(bitwise[0] && bitwise[1]) << pm.name;
    const double eq = block_err(g[1].qpos0, g[0].qpos0), ev = block_err(g[1].qvel0, g[0].qvel0),
                 ec = md->nu ? block_err(g[1].ctrl, g[0].ctrl) : 0.0;
    std::printf("[adjoint] %-13s float vs double adjoint T=10 S=4: qpos0 %.2e qvel0 %.2e ctrl %.2e (tol %.0e)\n",
                pm.name, eq, ev, ec, kFloatTol);
    EXPECT_LE(eq, kFloatTol) << pm.name;
    EXPECT_LE(ev, kFloatTol) << pm.name;
    EXPECT_LE(ec, kFloatTol) << pm.name;
  }
}

// The float adjoint against central differences of the double simulator (the exact gradient
// to ~1e-9 here), with the same tolerance relative to the largest gradient entry.
TEST(AdjointFloat, FiniteDifferences) {
  for (const auto& pm : rollout_models()) {
    auto md = load_cached(pm.fd_key());
    Kit k(md);
    const auto& m = k.m;
    const int T = 10, S = 4, nenv = pm.nenv;
    const double h = 1e-4;
    Rng rng(8100);
    ClampStats clamps;
    const Inputs in = smooth_inputs(k, rng, nenv, T, S, clamps);
    ASSERT_GE(clamps.margin, kClampMargin) << pm.name;
    std::vector<Loss> loss(sz(nenv));
    for (auto& l : loss) {
      l.wq = rng.normals(m.nq);
      l.wv = rng.normals(m.nv);
      l.v = rng.normals(m.nv, 0.3);
    }
    std::vector<double> dq, dv;
    loss_rows(*md, loss, T, dq, dv);
    Simulator sim(md, sim_options(nenv, S, Precision::Float));
    Rollout ro(sim, T);
    record(sim, ro, in);
    const Grad g = run_backward(ro, *md, nenv, T, dq, dv, false);
    const double gmax = std::max({max_abs(g.qpos0), max_abs(g.qvel0), max_abs(g.ctrl)});
    Simulator sim1(md, sim_options(1, S));
    double worst = 0;
    for (const Probe& p : choose_probes(*md, rng, nenv, T, in)) {
      const int e = p.env;
      auto eval = [&](double delta) {
        std::vector<double> q(in.qpos.begin() + e * m.nq, in.qpos.begin() + (e + 1) * m.nq);
        std::vector<double> v(in.qvel.begin() + e * m.nv, in.qvel.begin() + (e + 1) * m.nv);
        std::vector<double> c(sz(T * m.nu) + 1);
        for (int t = 0; t < T; ++t) std::copy_n(ctrl_of(in, *md, t, e), m.nu, c.begin() + t * m.nu);
        if (p.kind == 0) {
          std::vector<double> dlt(sz(m.nv), 0.0);
          dlt[sz(p.index)] = delta;
          kern::integrate_pos(m, kern::View<double, LC>{q.data(), LC{}}, kern::View<double, LC>{dlt.data(), LC{}}, 1.0);
        } else if (p.kind == 1) {
          v[sz(p.index)] += delta;
        } else {
          c[sz(p.t * m.nu + p.index)] += delta;
        }
        return eval_loss(sim1, *md, loss[sz(e)], q.data(), v.data(), c, T);
      };
      const double fd = (8.0 * (eval(h) - eval(-h)) - (eval(2 * h) - eval(-2 * h))) / (12.0 * h);
      double adj = 0;
      if (p.kind == 0) adj = g.qpos0[sz(e * m.nv + p.index)];
      if (p.kind == 1) adj = g.qvel0[sz(e * m.nv + p.index)];
      if (p.kind == 2) adj = g.ctrl[(sz(p.t) * sz(nenv) + sz(e)) * sz(m.nu) + sz(p.index)];
      const double err = std::fabs(adj - fd) / std::max(1.0, gmax);
      worst = std::max(worst, err);
      EXPECT_LE(err, kFloatTol) << pm.name << " " << p.str(*md) << ": float adjoint " << adj << " fd " << fd;
    }
    std::printf("[adjoint] %-13s float adjoint vs double FD T=10 S=4: worst |adj-fd|/max(1,max|g|) %.2e\n", pm.name,
                worst);
  }
}

// ======================================================================== f. memory

// bytes_per_env() = checkpoints (T + 1)(nq + nv + w) + T nu, plus O(S (nq + nv + w)) replay
// buffer and a fixed workspace, times sizeof(Real), where w = nv with constraints (the solver's
// warm start, part of the recorded state) and 0 without: linear in T with slope exactly
// (nq + nv + w + nu) Reals (up to one Real of rounding from sharing the +1 padding of the
// batched arrays between environments), linear in S with slope at most (nq + nv + w) Reals.
TEST(AdjointMemory, LinearInHorizonAndSubsteps) {
  for (const char* key : {"humanoid", "g1", "features"}) {
    const std::string path = std::string(key) == "humanoid" ? sgtest::humanoid_xml()
                             : std::string(key) == "g1"     ? shared_model("unitree_g1/scene_mjx.xml")
                                                            : std::string("inline:features");
    auto md = load_cached(path);
    const long nq = md->nq, nv = md->nv, nu = md->nu;
    for (Precision p : {Precision::Double, Precision::Float})
      for (bool constraints : {false, true}) {
      const long r = p == Precision::Double ? 8 : 4;
      for (int nenv : {1, 3}) {
        auto bytes = [&](int T, int S) {
          Simulator sim(md, sim_options(nenv, S, p, constraints));
          Rollout ro(sim, T);
          return static_cast<long>(ro.bytes_per_env());
        };
        const long w = constraints ? nv : 0;
        const int Ts[] = {1, 2, 7, 50, 200};
        const long b1 = bytes(1, 4);
        for (int i = 1; i < 5; ++i) {
          const long dT = Ts[i] - Ts[i - 1];
          const long db = bytes(Ts[i], 4) - bytes(Ts[i - 1], 4);
          EXPECT_LE(std::labs(db - dT * (nq + nv + w + nu) * r), r)
              << key << " nenv " << nenv << " T " << Ts[i - 1] << " -> " << Ts[i] << ": " << db << " bytes";
        }
        const int Ss[] = {1, 2, 4, 8, 16};
        for (int i = 1; i < 5; ++i) {
          const long dS = Ss[i] - Ss[i - 1];
          const long db = bytes(10, Ss[i]) - bytes(10, Ss[i - 1]);
          EXPECT_GE(db, 0);
          EXPECT_LE(db, dS * (nq + nv + w) * r + r) << key << " nenv " << nenv << " S " << Ss[i - 1] << " -> " << Ss[i];
        }
        // the fixed part: three Data buffers (the replay's primal, the kept last replayed
        // substep, the adjoint; with constraints sized by the Simulator's capacities) and
        // O(nq + nv + nu) staging, independent of T and S
        stiffgrad::ModelArrays<double> arr(*md, stiffgrad::constraint_capacity(*md, sim_options(nenv, 4, p, constraints)));
        const long layout = kern::DataLayout::make(arr.host_view()).size;
        const long fixed = b1 - r * (2 * (nq + nv + w) + nu + 4 * (nq + nv + w));
        EXPECT_LE(fixed, r * (3 * layout + 8 * (nq + nv + nu) + 8)) << key;
        if (p == Precision::Double && nenv == 1)
          std::printf("[adjoint] memory %-9s nq=%ld nv=%ld nu=%ld%s: bytes_per_env(T=1,S=4)=%ld, +%ld per step, "
                      "+%ld per substep (double)\n",
                      key, nq, nv, nu, constraints ? " constrained" : "", b1, bytes(2, 4) - b1, bytes(1, 5) - b1);
      }
      }
  }
}

// ======================================================================== g. per-step loss rows

// L = sum_t (a_t . qpos_t + b_t . qvel_t): one backward with every row filled equals the sum
// of T + 1 backward calls with one row each.
TEST(AdjointPerStep, RowsEqualSumOfSingleStepLosses) {
  for (const auto& pm : {RolloutModel{"humanoid", sgtest::humanoid_xml(), 2},
                         RolloutModel{"features", "inline:features", 2},
                         RolloutModel{"g1_scene", shared_model("unitree_g1/scene_mjx.xml"), 1}}) {
    auto md = load_cached(pm.key);
    const int T = 10, S = 4, nenv = pm.nenv;
    Rng rng(9000);
    const Inputs in = make_inputs(*md, rng, nenv, T, false);
    Simulator sim(md, sim_options(nenv, S));
    Rollout ro(sim, T);
    record(sim, ro, in);
    for (bool with_qpos : {false, true}) {
      const auto dv = rng.normals((T + 1) * nenv * md->nv);
      const auto dq = with_qpos ? rng.normals((T + 1) * nenv * md->nq) : std::vector<double>{};
      const Grad all = run_backward(ro, *md, nenv, T, dq, dv, false);
      Grad sum;
      sum.qpos0.assign(all.qpos0.size(), 0.0);
      sum.qvel0.assign(all.qvel0.size(), 0.0);
      sum.ctrl.assign(all.ctrl.size(), 0.0);
      for (int t = 0; t <= T; ++t) {
        std::vector<double> dv1(dv.size(), 0.0), dq1(dq.size(), 0.0);
        const std::size_t rv = sz(nenv * md->nv), rq = sz(nenv * md->nq);
        std::copy_n(dv.begin() + static_cast<long>(sz(t) * rv), rv, dv1.begin() + static_cast<long>(sz(t) * rv));
        if (with_qpos)
          std::copy_n(dq.begin() + static_cast<long>(sz(t) * rq), rq, dq1.begin() + static_cast<long>(sz(t) * rq));
        const Grad gt = run_backward(ro, *md, nenv, T, dq1, dv1, false);
        for (std::size_t i = 0; i < sum.qpos0.size(); ++i) sum.qpos0[i] += gt.qpos0[i];
        for (std::size_t i = 0; i < sum.qvel0.size(); ++i) sum.qvel0[i] += gt.qvel0[i];
        for (std::size_t i = 0; i < sum.ctrl.size(); ++i) sum.ctrl[i] += gt.ctrl[i];
      }
      const double e = std::max({block_err(sum.qpos0, all.qpos0), block_err(sum.qvel0, all.qvel0),
                                 md->nu ? block_err(sum.ctrl, all.ctrl) : 0.0});
      std::printf("[adjoint] %-13s per-step rows (%s) vs sum of single-step losses: %.2e\n", pm.name,
                  with_qpos ? "qpos+qvel" : "qvel", e);
      EXPECT_LE(e, 1e-12) << pm.name;
    }
  }
}

}  // namespace
