// Cost of the integrators (issue 8, "Performance"): per control step (one substep of the
// model's timestep) of the humanoid lying on its floor and the G1 standing at `home`, both in
// contact, for euler, rk4 and the adaptive tsit5, dopri5, bosh3 at their default tolerances:
// dynamics evaluations and integrator steps per control step, wall time per control step and
// its ratio to euler (measured side by side: the integrators take turns segment by segment),
// backward/forward of a Rollout (T = 16), bytes per environment of the simulator and of the
// Rollout, and environments that reached max_steps.
//   bench_integrators [--quick] [--nenv 64] [--threads 1]
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"

using namespace stiffgrad;
using namespace stiffgrad::bench;

namespace {

std::size_t uz(int i) { return static_cast<std::size_t>(i); }

struct Scene {
  std::string name;
  std::string path;
  const char* key;  // keyframe, or nullptr: qpos0
  int settle;       // Euler steps to reach the benchmark state (in contact)
};

struct Batch {
  std::vector<double> qpos, qvel, ctrl;
};

// nenv copies of the settled state with velocity noise N(0, 0.05^2), environment-major.
Batch settled_batch(const std::shared_ptr<const Model>& model, const Scene& sc, int nenv) {
  SimulatorOptions o;
  Simulator sim(model, o);
  if (sc.key) sim.reset_keyframe(sc.key);
  for (int t = 0; t < sc.settle; ++t) sim.step();
  const int nq = model->nq, nv = model->nv, nu = model->nu;
  std::vector<double> q(uz(nq)), v(uz(nv)), u(uz(nu) + 1);
  sim.get_state(q.data(), v.data());
  sim.get_ctrl(u.data());
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01;
  Batch b;
  for (int e = 0; e < nenv; ++e) {
    b.qpos.insert(b.qpos.end(), q.begin(), q.end());
    for (int i = 0; i < nv; ++i) b.qvel.push_back(v[uz(i)] + 0.05 * n01(rng));
    b.ctrl.insert(b.ctrl.end(), u.begin(), u.begin() + nu);
  }
  return b;
}

struct Method {
  const char* name;
  Integrator integrator;
};
const Method kMethods[] = {{"euler", Integrator::SemiImplicitEuler},
                           {"rk4", Integrator::RK4},
                           {"tsit5", Integrator::Tsit5},
                           {"dopri5", Integrator::Dopri5},
                           {"bosh3", Integrator::Bosh3}};
constexpr int kNumMethods = 5;

struct Row {
  double seconds = 0, evals = 0, steps = 0, fwd = 0, fwd_bwd = 0;
  int capped = 0;
  std::size_t sim_bytes = 0, rollout_bytes = 0;
};

}  // namespace

int main(int argc, char** argv) {
  namespace opt = stiffgrad::options;
  constexpr const char* kUsage = "usage: bench_integrators [--quick] [--nenv 64] [--threads 1]\n";
  bool quick = false;
  int nenv = 64, threads = 1;
  const auto read_options = [&](const opt::Args& a) {
    quick = a.has("quick");
    nenv = int_option(a, "nenv", nenv, 1, 1 << 24);
    threads = int_option(a, "threads", threads, 0, 4096);  // 0: OpenMP's default
  };
  if (const auto status = read_command_line(argc, argv, "bench_integrators", kUsage, {"quick"},
                                            {"nenv", "threads"}, read_options))
    return *status;
  const int segments = quick ? 2 : 6, segment = 25, T = 16;
  std::printf("bench_integrators: one control step = one substep of the model timestep, double, CPU, %d thread(s),\n"
              "nenv %d; machine: %s, load average %s at start. Adaptive methods at rtol 1e-3, atol 1e-6,\n"
              "max_steps 16. evals: dynamics evaluations per control step (rejected trials included); steps:\n"
              "integrator steps; ms/step: wall time per control step of the whole batch; x euler: ratio measured\n"
              "side by side; bwd/fwd: Rollout backward over forward, T = %d; bytes: per environment.\n\n",
              threads, nenv, cpu_model().c_str(), load_average().c_str(), T);
  const std::vector<Scene> scenes = {{"humanoid", model_path("humanoid"), nullptr, 300},
                                     {"g1", model_path("g1"), "home", 50}};
  std::printf("%-9s %-7s %8s %7s %10s %8s %8s %10s %12s %7s\n", "model", "method", "evals", "steps", "ms/step",
              "x euler", "bwd/fwd", "sim B/env", "rollout B/e", "capped");
  for (const Scene& sc : scenes) {
    const auto model = load_mjcf(sc.path);
    const Batch b = settled_batch(model, sc, nenv);
    std::vector<std::unique_ptr<Simulator>> sims;
    Row rows[kNumMethods];
    for (const Method& me : kMethods) {
      SimulatorOptions o;
      o.nenv = nenv;
      o.threads = threads;
      o.integrator = me.integrator;
      sims.push_back(std::make_unique<Simulator>(model, o));
      sims.back()->set_ctrl(b.ctrl.data());
    }
    // the methods take turns segment by segment, so that a slow spell of this shared machine
    // falls on all of them alike
    for (int s = 0; s < segments; ++s)
      for (int k = 0; k < kNumMethods; ++k) {
        Simulator& sim = *sims[uz(k)];
        sim.set_state(b.qpos.data(), b.qvel.data());
        for (int t = 0; t < segment; ++t) {
          const auto t0 = Clock::now();
          sim.step();
          rows[k].seconds += seconds_since(t0);
          const auto st = sim.contact_stats();
          for (int e = 0; e < nenv; ++e) {
            rows[k].steps += st[uz(Simulator::kStepStats * e + 4)];
            rows[k].evals += st[uz(Simulator::kStepStats * e + 5)];
          }
        }
        const auto status = sim.status();
        for (int e = 0; e < nenv; ++e) rows[k].capped += (status[uz(e)] & 4) != 0;
      }
    for (int k = 0; k < kNumMethods; ++k) {
      Simulator& sim = *sims[uz(k)];
      Row& r = rows[k];
      r.sim_bytes = sim.bytes() / uz(nenv);
      Rollout ro(sim, T);
      r.rollout_bytes = ro.bytes_per_env();
      sim.set_state(b.qpos.data(), b.qvel.data());
      auto t0 = Clock::now();
      for (int t = 0; t < T; ++t) sim.step();
      r.fwd = seconds_since(t0);
      std::vector<double> dq(uz((T + 1) * nenv * model->nq), 0.0), dv(uz((T + 1) * nenv * model->nv), 0.0);
      for (std::size_t i = uz(T * nenv * model->nv); i < dv.size(); ++i) dv[i] = 1.0;
      std::vector<double> gq(uz(nenv * model->nv)), gv(gq.size()), gu(uz(T * nenv * model->nu));
      sim.set_state(b.qpos.data(), b.qvel.data());
      t0 = Clock::now();
      ro.begin();
      for (int t = 0; t < T; ++t) ro.step();
      ro.backward(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
      r.fwd_bwd = seconds_since(t0);
      if (!ro.replay_bitwise()) std::fprintf(stderr, "warning: %s replay not bitwise\n", kMethods[k].name);
      const double per_env_step = 1.0 / (static_cast<double>(segments) * segment * nenv);
      std::printf("%-9s %-7s %8.2f %7.2f %10.3f %7.2fx %7.2fx %10zu %12zu %7d\n", sc.name.c_str(), kMethods[k].name,
                  r.evals * per_env_step, r.steps * per_env_step, 1e3 * r.seconds / (segments * segment),
                  r.seconds / rows[0].seconds, (r.fwd_bwd - r.fwd) / r.fwd, r.sim_bytes, r.rollout_bytes, r.capped);
    }
  }
  std::printf("\nload average %s at the end\n", load_average().c_str());
  return 0;
}
