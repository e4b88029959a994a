// Helpers shared by the DiffMJX reproductions (bench_diffmjx_bounce, _toss, _tolerance): a batch
// of environments run forward to its final state (for finite differences) or recorded and
// differentiated (Rollout), with the cost of each, and small statistics.
//
// Every experiment here differentiates a loss of the final state only, with respect to the
// initial state, so one Simulator with nenv = number of samples handles a whole sweep.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::bench {

inline std::size_t uz(int i) { return static_cast<std::size_t>(i); }

// A model from MJCF text with its timestep replaced (the experiments sweep it).
inline std::shared_ptr<const Model> model_with_timestep(const std::string& xml, double timestep) {
  auto m = std::make_shared<Model>(*load_mjcf_string(xml, "experiment.xml"));
  m->opt.timestep = timestep;
  return m;
}

inline SimulatorOptions integrator_options(Integrator integrator, int nenv, double rtol = 1e-3, double atol = 1e-6,
                                           int max_steps = 16, double event_step = 0, bool event_gradients = false) {
  SimulatorOptions o;
  o.nenv = nenv;
  // One thread: an environment of these one-body models costs microseconds per step, so OpenMP's
  // per-step synchronisation would dominate, and on a busy machine a descheduled worker stalls
  // every step (measured: 100x slower with 2 threads while another process ran).
  o.threads = 1;
  o.integrator = integrator;
  o.adaptive.rtol = rtol;
  o.adaptive.atol = atol;
  o.adaptive.max_steps = max_steps;
  o.adaptive.event_step = event_step;
  o.adaptive.event_gradients = event_gradients;
  return o;
}

// What a run of T control steps produced and cost, per environment where it varies.
struct RunResult {
  std::vector<double> qpos, qvel;        // final state, nenv x nq and nenv x nv
  std::vector<int> status;               // Simulator::status() at the end
  std::vector<double> evals_per_step;    // mean dynamics evaluations per control step (stats [5])
  std::vector<double> steps_per_step;    // mean integrator steps per control step (stats [4])
  double seconds = 0;                    // wall time of the forward steps (whole batch)
  bool bitwise = true;                   // Rollout replay reproduced the recording (gradient runs)
};

namespace detail {
inline void accumulate_stats(const Simulator& sim, RunResult* r) {
  const auto s = sim.contact_stats();
  for (int e = 0; e < sim.nenv(); ++e) {
    r->steps_per_step[uz(e)] += s[uz(Simulator::kStepStats * e + 4)];
    r->evals_per_step[uz(e)] += s[uz(Simulator::kStepStats * e + 5)];
  }
}
inline void start(const Simulator& sim, RunResult* r) {
  r->evals_per_step.assign(uz(sim.nenv()), 0.0);
  r->steps_per_step.assign(uz(sim.nenv()), 0.0);
}
inline void finish(Simulator& sim, int T, RunResult* r) {
  const Model& m = sim.model();
  r->qpos.resize(uz(sim.nenv() * m.nq));
  r->qvel.resize(uz(sim.nenv() * m.nv));
  sim.get_state(r->qpos.data(), r->qvel.data());
  r->status = sim.status();
  for (auto& x : r->evals_per_step) x /= T;
  for (auto& x : r->steps_per_step) x /= T;
}
}  // namespace detail

// T control steps (no actuators) from the given initial states.
inline RunResult simulate(const std::shared_ptr<const Model>& model, const SimulatorOptions& o,
                          const std::vector<double>& qpos0, const std::vector<double>& qvel0, int T) {
  Simulator sim(model, o);
  sim.set_state(qpos0.data(), qvel0.data());
  RunResult r;
  detail::start(sim, &r);
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < T; ++t) {
    sim.step();
    detail::accumulate_stats(sim, &r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  detail::finish(sim, T, &r);
  return r;
}

// The same run recorded, then differentiated: given dL/dqpos_T (nenv x nq, raw coordinates) and
// dL/dqvel_T (nenv x nv), returns dL/dqpos_0 (raw, nenv x nq) and dL/dqvel_0 (nenv x nv).
// `seconds` is the forward recording alone; `backward_seconds` the backward pass.
struct GradResult : RunResult {
  std::vector<double> g_qpos0, g_qvel0;
  double backward_seconds = 0;
};

inline GradResult gradient(const std::shared_ptr<const Model>& model, const SimulatorOptions& o,
                           const std::vector<double>& qpos0, const std::vector<double>& qvel0, int T,
                           const std::vector<double>& dL_dqposT, const std::vector<double>& dL_dqvelT) {
  Simulator sim(model, o);
  const Model& m = *model;
  const int n = o.nenv;
  sim.set_state(qpos0.data(), qvel0.data());
  Rollout ro(sim, T);
  GradResult r;
  detail::start(sim, &r);
  auto t0 = std::chrono::steady_clock::now();
  ro.begin();
  for (int t = 0; t < T; ++t) {
    ro.step(nullptr);
    detail::accumulate_stats(sim, &r);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  detail::finish(sim, T, &r);
  // the loss sees the final state only: rows 0..T-1 of the per-step partials are zero
  std::vector<double> dq(uz((T + 1) * n * m.nq), 0.0), dv(uz((T + 1) * n * m.nv), 0.0);
  std::copy(dL_dqposT.begin(), dL_dqposT.end(), dq.begin() + static_cast<std::ptrdiff_t>(uz(T * n * m.nq)));
  std::copy(dL_dqvelT.begin(), dL_dqvelT.end(), dv.begin() + static_cast<std::ptrdiff_t>(uz(T * n * m.nv)));
  r.g_qpos0.assign(uz(n * m.nq), 0.0);
  r.g_qvel0.assign(uz(n * m.nv), 0.0);
  t0 = std::chrono::steady_clock::now();
  ro.backward_raw(dq.data(), dv.data(), r.g_qpos0.data(), r.g_qvel0.data(), nullptr);
  r.backward_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.bitwise = ro.replay_bitwise();
  return r;
}

// ---------------------------------------------------------------- statistics

inline double median(std::vector<double> x) {
  if (x.empty()) return NAN;
  std::sort(x.begin(), x.end());
  const std::size_t k = x.size() / 2;
  return x.size() % 2 ? x[k] : 0.5 * (x[k - 1] + x[k]);
}

inline double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return x.empty() ? NAN : s / static_cast<double>(x.size());
}

// |g − truth| / |truth|, with a floor on the denominator so that a true zero gradient does not
// turn a tiny absolute error into an infinite relative one.
inline double rel_err(double g, double truth, double floor) {
  return std::abs(g - truth) / std::max(std::abs(truth), floor);
}

// Evenly spaced samples, both ends included.
inline std::vector<double> linspace(double a, double b, int n) {
  std::vector<double> x(uz(n));
  for (int i = 0; i < n; ++i) x[uz(i)] = n == 1 ? a : a + (b - a) * i / (n - 1);
  return x;
}

}  // namespace stiffgrad::bench

// ---------------------------------------------------------------- the toss scene (experiments 2, 4)

namespace stiffgrad::bench::toss {

// DiffMJX's objects, each a free body of ~5 cm above a plane. The capsule and the cylinder lie
// with their axis along x, so that the initial velocity along y rolls them rather than tipping
// them over. Contact: solref (0.005, 1), solimp (0, 0.95, 0.001, 0.5, 2) on every geom (a
// <default>, so that MuJoCo's mixing of the two geoms' parameters changes nothing; xml() takes
// another solimp). refsafe is
// disabled: with it MuJoCo would raise the time constant 0.005 to 2h = 0.02 and the contact
// would no longer be the stiff one of the paper.
struct Shape {
  std::string name, geom;
};

inline const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = {
      {"cube", R"(type="box" size="0.05 0.05 0.05")"},
      {"ball", R"(type="sphere" size="0.05")"},
      {"capsule", R"(type="capsule" size="0.03 0.06" euler="0 90 0")"},
      {"cylinder", R"(type="cylinder" size="0.05 0.05" euler="0 90 0")"},
      {"ellipsoid", R"(type="ellipsoid" size="0.06 0.05 0.04")"},
  };
  return s;
}

constexpr double kZ0 = 0.2;     // initial height of the body's origin (m)
constexpr double kVy = -0.1;    // initial horizontal velocity (m/s)
constexpr double kH = 0.01;     // model timestep (s)
constexpr double kDuration = 1.0;
constexpr int kSteps = 100;     // kDuration / kH

// The paper's impedance (dmin 0: the force starts from zero at touch) and MuJoCo's default (dmin
// 0.9: it jumps there).
constexpr const char* kPaperSolimp = "0 0.95 0.001 0.5 2";
constexpr const char* kDefaultSolimp = "0.9 0.95 0.001 0.5 2";

inline std::string xml(const Shape& s, const std::string& solimp = kPaperSolimp) {
  return R"(<mujoco model="toss_)" + s.name + R"(">
  <option timestep="0.01"><flag refsafe="disable"/></option>
  <default><geom solref="0.005 1" solimp=")" + solimp + R"("/></default>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="object" pos="0 0 0.2">
      <joint type="free"/>
      <geom )" + s.geom + R"(/>
    </body>
  </worldbody>
</mujoco>)";
}

// Initial states: the body at (0, 0, kZ0), upright, velocity (0, kVy, vz), no spin.
inline void initial_states(const std::vector<double>& vz, std::vector<double>* qpos, std::vector<double>* qvel) {
  qpos->clear();
  qvel->clear();
  for (double v : vz) {
    qpos->insert(qpos->end(), {0.0, 0.0, kZ0, 1.0, 0.0, 0.0, 0.0});
    qvel->insert(qvel->end(), {0.0, kVy, v, 0.0, 0.0, 0.0});
  }
}

// L = horizontal distance travelled, |(x_T, y_T) − (x_0, y_0)|, per environment.
inline double loss(const double* qposT) { return std::hypot(qposT[0], qposT[1]); }

struct Gradients {
  std::vector<double> L, dL_dvz;  // per environment
  GradResult run;
};

// dL/dvz for every vz through a recorded rollout (one environment each).
inline Gradients gradients(const std::shared_ptr<const Model>& model, const SimulatorOptions& o,
                           const std::vector<double>& vz) {
  std::vector<double> q0, v0;
  initial_states(vz, &q0, &v0);
  const int n = static_cast<int>(vz.size());
  // dL/dqpos_T needs the final position: a forward run first (the same steps the recording takes)
  SimulatorOptions of = o;
  of.nenv = n;
  const RunResult fwd = simulate(model, of, q0, v0, kSteps);
  std::vector<double> dq(uz(7 * n), 0.0), dv(uz(6 * n), 0.0);
  Gradients g;
  for (int e = 0; e < n; ++e) {
    const double* q = fwd.qpos.data() + 7 * e;
    const double d = loss(q);
    g.L.push_back(d);
    if (d > 0) {
      dq[uz(7 * e)] = q[0] / d;
      dq[uz(7 * e + 1)] = q[1] / d;
    }
  }
  g.run = gradient(model, of, q0, v0, kSteps, dq, dv);
  for (int e = 0; e < n; ++e) g.dL_dvz.push_back(g.run.g_qvel0[uz(6 * e + 2)]);
  return g;
}

// Ground truth by central differences in vz of a (very accurate) simulation: the quotient with
// step eps, and with 10 eps as a convergence check. One batch of 5 n environments.
struct Truth {
  std::vector<double> L, grad, grad_eps10;
  int capped = 0, failed = 0;
  double seconds = 0;
};

inline Truth finite_differences(const std::shared_ptr<const Model>& model, const SimulatorOptions& o,
                                const std::vector<double>& vz, double eps) {
  const int n = static_cast<int>(vz.size());
  std::vector<double> all;
  for (const double s : {0.0, 1.0, -1.0, 10.0, -10.0})
    for (double v : vz) all.push_back(v + s * eps);
  std::vector<double> q0, v0;
  initial_states(all, &q0, &v0);
  SimulatorOptions of = o;
  of.nenv = 5 * n;
  const RunResult r = simulate(model, of, q0, v0, kSteps);
  Truth t;
  const auto L = [&](int block, int e) { return loss(r.qpos.data() + 7 * (block * n + e)); };
  for (int e = 0; e < n; ++e) {
    t.L.push_back(L(0, e));
    t.grad.push_back((L(1, e) - L(2, e)) / (2 * eps));
    t.grad_eps10.push_back((L(3, e) - L(4, e)) / (20 * eps));
  }
  for (int s : r.status) {
    t.capped += (s & 4) ? 1 : 0;
    t.failed += (s & 1) ? 1 : 0;
  }
  t.seconds = r.seconds;
  return t;
}

// The references of a toss sweep, both from Tsit5 at rtol 1e-12 / atol 1e-14 with event location
// (kTruthEventStep), over vz:
//   - central FD of that run (checked against 10x the FD step): the derivative of the simulated
//     flow, events included;
//   - the step-through gradient of that same run ("dto-ref"): DiffMJX's kind of ground truth
//     (an adjoint at tight tolerance), without the contact events' saltation terms;
//   - optionally (cross_check) the step-through gradient of Dopri5 at the same tolerance, which
//     must agree with dto-ref where dto-ref has converged.
// With `event_gradients` both step-through gradients add the saltation terms at the located
// events (AdaptiveTolerances::event_gradients), and then differ from the FD of the flow by the
// integration's error alone.
// The two kinds differ by the event bias: with MuJoCo's impedance clamp (>= 1e-4) a contact row
// switches on with a jump of the force, which a derivative of the flow sees and a gradient
// through the steps does not.
struct GroundTruth {
  Truth truth;                     // FD of the flow
  double floor = 0;                // relative errors divide by max(|reference|, floor)
  double fd_worst = 0;             // FD step check: eps vs 10 eps, worst relative difference
  std::vector<double> ref_grad;    // dto-ref: the step-through gradient of the truth's run, per vz
  std::vector<double> ref_err;     // dto-ref against the FD truth, per vz
  std::vector<double> cross_grad;  // Dopri5 at the same tolerance, step-through (cross_check)
  std::vector<double> cross_err;   // Dopri5 against dto-ref, per vz (cross_check)
};
constexpr double kTruthRtol = 1e-12, kTruthAtol = 1e-14, kTruthEps = 1e-5;
constexpr int kTruthMaxSteps = 4000;
// Event location for the references (AdaptiveTolerances::event_step): every contact row switching
// on or off falls inside an accepted step of at most 1 ns, so that the step-through gradient is
// the converged one and not that of a large step straddling a jump of force.
constexpr double kTruthEventStep = 1e-9;

// The reference runs locate events at kTruthEventStep.
inline GroundTruth ground_truth(const std::shared_ptr<const Model>& model, const std::vector<double>& vz,
                                bool cross_check = false, bool event_gradients = false) {
  const double event_step = kTruthEventStep;
  const int samples = static_cast<int>(vz.size());
  const SimulatorOptions o = integrator_options(Integrator::Tsit5, samples, kTruthRtol, kTruthAtol, kTruthMaxSteps,
                                                event_step, event_gradients);
  GroundTruth g;
  g.truth = finite_differences(model, o, vz, kTruthEps);
  double scale = 0;
  for (double x : g.truth.grad) scale = std::max(scale, std::abs(x));
  g.floor = 1e-2 * scale;
  for (int e = 0; e < samples; ++e)
    g.fd_worst = std::max(g.fd_worst, rel_err(g.truth.grad_eps10[uz(e)], g.truth.grad[uz(e)], g.floor));
  g.ref_grad = gradients(model, o, vz).dL_dvz;
  for (int e = 0; e < samples; ++e) g.ref_err.push_back(rel_err(g.ref_grad[uz(e)], g.truth.grad[uz(e)], g.floor));
  if (cross_check) {
    const SimulatorOptions od = integrator_options(Integrator::Dopri5, samples, kTruthRtol, kTruthAtol, kTruthMaxSteps,
                                                   event_step, event_gradients);
    g.cross_grad = gradients(model, od, vz).dL_dvz;
    for (int e = 0; e < samples; ++e) g.cross_err.push_back(rel_err(g.cross_grad[uz(e)], g.ref_grad[uz(e)], g.floor));
  }
  return g;
}

}  // namespace stiffgrad::bench::toss

// ---------------------------------------------------------------- the bounce scene (experiment 1)

namespace stiffgrad::bench::bounce {

// A point mass on a vertical slide joint above a plane (bench_diffmjx_bounce has the story).
// The sphere's centre is R above the body origin, so the slide coordinate q is the height of the
// sphere's lowest point: the contact distance itself. Contact solref "-50 -1" (a_ref = −v − 50 q)
// on both geoms, condim 1; `solimp` picks the variant: "0.99 0.99 0.001 0.5 2" (jump: the force
// jumps at touchdown) or "0 0.99 0.01 0.5 2" (continuous).
inline std::string xml(const std::string& solimp) {
  const std::string contact = R"(condim="1" solref="-50 -1" solimp=")" + solimp + R"(")";
  return R"(<mujoco model="bounce">
  <option timestep="0.1" gravity="0 0 -9.81"/>
  <worldbody>
    <geom name="floor" type="plane" size="10 10 0.1" )" + contact + R"(/>
    <body name="mass" pos="0 0 0">
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="sphere" size="0.01" pos="0 0 0.01" mass="1" )" + contact + R"(/>
    </body>
  </worldbody>
</mujoco>)";
}

constexpr const char* kJumpSolimp = "0.99 0.99 0.001 0.5 2";
constexpr const char* kContinuousSolimp = "0 0.99 0.01 0.5 2";

}  // namespace stiffgrad::bench::bounce
