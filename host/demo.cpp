// `stiffgrad demo`: the main job of scripts/run.sh. Throughput of the batched smooth step on
// one model with random controls, in double and float, plus a same-kernels check of the
// batched backend against the single-state host path. Parity with MuJoCo is deliberately not
// here (the library does not depend on MuJoCo): run.sh runs the Parity tests after the demo.
#include "host/demo.hpp"

#include "host/cli.hpp"
#include "host/dynamics_host.hpp"
#include "host/progress.hpp"
#include "stiffgrad/sampling.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stiffgrad/dynamics.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

namespace {

struct DemoArgs {
  std::string model = "/usr/share/mujoco/model/humanoid/humanoid.xml";
  int nenv = 1024;
  int steps = 300;
  int threads = 0;
  Backend backend = Backend::Cpu;
  Integrator integrator = Integrator::SemiImplicitEuler;
  unsigned seed = 1;
};

// The CPU backend runs the single-state host path's code and should agree bit for bit; this
// bound allows for rounding amplified by the dynamics, but a real mismatch fails.
constexpr double kHostCheckTolerance = 1e-6;

void print_usage(std::FILE* f) {
  std::fprintf(f,
               "usage: stiffgrad demo [--model PATH] [--nenv N] [--steps N] [--threads T]\n"
               "                      [--backend cpu|cuda] [--seed S] [--implicit-actuators]\n"
               "Steps N environments (default 1024) of a model (default MuJoCo's humanoid.xml) for\n"
               "N control steps (default 300) with random controls, in double then float, and prints\n"
               "environment-steps per second. Then checks environment 0 of the double run against\n"
               "the single-state host rollout: on the CPU backend max |difference| must be <= %g.\n"
               "Fails (exit 1) if an environment turns non-finite: there are no contacts yet, so\n"
               "bodies fall through the floor, and stiff position servos at a large timestep (the\n"
               "G1 at 4 ms) need --implicit-actuators (Integrator::ImplicitDampingEuler, as for\n"
               "`rollout`). %s",
               kHostCheckTolerance, cli::kStepsRule);
}

bool parse_int(const std::string& s, long lo, long hi, long* out) {
  try {
    std::size_t used = 0;
    const long v = std::stol(s, &used);
    if (used != s.size() || v < lo || v > hi) return false;
    *out = v;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Returns -1 on success, else the exit status to return.
int parse_args(int argc, char** argv, DemoArgs* a) {
  int i = 1;
  if (i < argc && std::string(argv[i]) == "demo") ++i;
  for (; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "-h" || key == "--help") {
      print_usage(stdout);
      return 0;
    }
    if (key == "--implicit-actuators") {
      a->integrator = Integrator::ImplicitDampingEuler;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "stiffgrad demo: %s needs a value (or is unknown)\n", key.c_str());
      print_usage(stderr);
      return 2;
    }
    const std::string val = argv[++i];
    long v = 0;
    if (key == "--model") {
      a->model = val;
    } else if (key == "--nenv" && parse_int(val, 1, 1L << 24, &v)) {
      a->nenv = static_cast<int>(v);
    } else if (key == "--steps" && parse_int(val, cli::kMinSteps, cli::kMaxSteps, &v)) {
      a->steps = static_cast<int>(v);
    } else if (key == "--threads" && parse_int(val, 0, 4096, &v)) {
      a->threads = static_cast<int>(v);
    } else if (key == "--seed" && parse_int(val, 0, 0xffffffffL, &v)) {
      a->seed = static_cast<unsigned>(v);
    } else if (key == "--backend" && (val == "cpu" || val == "cuda")) {
      a->backend = val == "cpu" ? Backend::Cpu : Backend::Cuda;
    } else {
      std::fprintf(stderr, "stiffgrad demo: bad option or value: %s %s\n", key.c_str(),
                   val.c_str());
      print_usage(stderr);
      return 2;
    }
  }
  return -1;
}

struct RunResult {
  double seconds = 0.0;
  int failed = 0;
  double mean_contacts = 0.0;  // active contacts per environment and step (untimed pass)
  std::vector<double> qpos, qvel;  // final states, environment-major
};

// Controls are drawn before the clock starts: `ctrl_bank` holds `nbank` control sets of
// nenv x nu, used cyclically, so the timing covers set_ctrl + step only.
RunResult run_one(const std::shared_ptr<const Model>& model, const DemoArgs& a, Precision prec,
                  const std::vector<double>& qpos0, const std::vector<double>& qvel0,
                  const std::vector<double>& ctrl_bank, int nbank) {
  SimulatorOptions opt;
  opt.backend = a.backend;
  opt.precision = prec;
  opt.nenv = a.nenv;
  opt.substeps = 1;
  opt.threads = a.threads;
  opt.integrator = a.integrator;
  opt.constraints = true;  // contacts, limits, friction loss unless the model's flags disable them
  Simulator sim(model, opt);
  const std::size_t ctrl_size = static_cast<std::size_t>(a.nenv) * model->nu;

  // Warm-up step (first touch of the workspace, thread start), then restore the state.
  sim.set_state(qpos0.data(), qvel0.data());
  sim.step(ctrl_bank.data());
  sim.synchronize();
  sim.set_state(qpos0.data(), qvel0.data());

  Progress progress(std::string("demo ") + (prec == Precision::Double ? "double" : "float"), a.steps);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < a.steps; ++s) {
    sim.step(ctrl_bank.data() + (s % nbank) * ctrl_size);
    progress.update(s + 1);  // a clock read per batched step: negligible beside nenv steps
  }
  sim.synchronize();
  const auto t1 = std::chrono::steady_clock::now();
  progress.finish();

  RunResult r;
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.failed = sim.num_failed();
  r.qpos.resize(static_cast<std::size_t>(a.nenv) * model->nq);
  r.qvel.resize(static_cast<std::size_t>(a.nenv) * model->nv);
  sim.get_state(r.qpos.data(), r.qvel.data());
  // contacts per step from a second, untimed pass (reading the statistics every step would
  // put a host copy, and on CUDA a sync, inside the timed loop)
  if (sim.capacity().rows > 0) {
    sim.set_state(qpos0.data(), qvel0.data());
    double sum = 0;
    for (int s = 0; s < a.steps; ++s) {
      sim.step(ctrl_bank.data() + (s % nbank) * ctrl_size);
      const auto stats = sim.contact_stats();
      for (int e = 0; e < a.nenv; ++e) sum += stats[static_cast<std::size_t>(Simulator::kStepStats * e)];
    }
    r.mean_contacts = sum / (static_cast<double>(a.nenv) * a.steps);
  }
  return r;
}

// Says why a run failed: a user who sees only "non-finite" cannot tell a missing feature
// (contacts) from a too-stiff explicit integration.
int report_failures(const DemoArgs& a, int failed_double, int failed_float, bool mismatch, double diff) {
  if (failed_double > 0 || failed_float > 0) {
    const bool explicit_servos = a.integrator == Integrator::SemiImplicitEuler;
    std::fprintf(stderr,
                 "stiffgrad demo: FAILED: environments became non-finite (double: %d, float: %d of %d).\n"
                 "  Why: random controls spin free limbs up over long runs, and a model whose flags\n"
                 "  disable contacts lets bodies fall through the floor and keep accelerating.%s\n"
                 "  Try: %s--steps below %d, or another --model.\n",
                 failed_double, failed_float, a.nenv,
                 explicit_servos ? "\n  Stiff position servos integrated explicitly diverge at large timesteps\n"
                                   "  (the Unitree G1 at its 4 ms step needs --implicit-actuators)."
                                 : "",
                 explicit_servos ? "--implicit-actuators, " : "", a.steps);
  }
  if (mismatch)
    std::fprintf(stderr,
                 "stiffgrad demo: FAILED: the batched CPU run differs from the single-state host rollout by "
                 "%.3g (> %g)\n",
                 diff, kHostCheckTolerance);
  return failed_double > 0 || failed_float > 0 || mismatch ? 1 : 0;
}

}  // namespace

int run_demo(int argc, char** argv) {
  DemoArgs a;
  if (const int rc = parse_args(argc, argv, &a); rc >= 0) return rc;

  try {
    LoadNotes notes;
    const std::shared_ptr<const Model> model = load_mjcf(a.model, &notes);
    const Model& m = *model;
    for (const std::string& n : notes.notes) std::printf("%s\n", n.c_str());
    if (a.backend == Backend::Cuda && !cuda_available()) {
      std::fprintf(stderr,
                   "stiffgrad demo: the CUDA backend is unavailable (built without CUDA or no "
                   "device); use --backend cpu\n");
      return 1;
    }
    const int threads = a.threads > 0 ? a.threads : omp_get_max_threads();

    std::printf("stiffgrad demo: batched smooth dynamics (no contacts), semi-implicit Euler\n");
    std::printf("  model    %s\n", a.model.c_str());
    std::printf("           \"%s\": nq %d, nv %d, nu %d, bodies %d, timestep %g s\n",
                m.name.c_str(), m.nq, m.nv, m.nu, m.nbody, m.opt.timestep);
    if (a.backend == Backend::Cpu)
      std::printf("  backend  cpu, %d thread%s\n", threads, threads == 1 ? "" : "s");
    else
      std::printf("  backend  cuda\n");
    std::printf("  integr.  %s\n", a.integrator == Integrator::ImplicitDampingEuler
                                         ? "semi-implicit Euler, joint damping and actuator velocity gains implicit"
                                         : "semi-implicit Euler, joint damping implicit (MuJoCo's Euler)");
    std::printf(
        "  run      %d environments x %d control steps (1 substep each), random initial\n"
        "           states, random controls: a new set every step, cycling through %d\n"
        "           pre-drawn sets (seed %u)\n",
        a.nenv, a.steps, std::min(a.steps, 16), a.seed);

    std::mt19937_64 rng(a.seed);
    std::vector<double> qpos0, qvel0;
    sample_states_near_qpos0(m, a.nenv, rng, 0.1, 0.1, &qpos0, &qvel0);
    const int nbank = std::min(a.steps, 16);
    const std::size_t ctrl_size = static_cast<std::size_t>(a.nenv) * m.nu;
    std::vector<double> ctrl_bank(ctrl_size * nbank + 1, 0.0);
    for (int k = 0; k < nbank; ++k)
      sample_controls(m, a.nenv, rng, ctrl_bank.data() + k * ctrl_size);

    std::printf("\n  %-9s %15s %15s %10s %12s\n", "precision", "env-steps/s",
                a.backend == Backend::Cpu ? "per thread" : "", "wall s", "failed envs");
    int failed_double = 0, failed_float = 0;
    RunResult dbl;
    for (Precision prec : {Precision::Double, Precision::Float}) {
      RunResult r = run_one(model, a, prec, qpos0, qvel0, ctrl_bank, nbank);
      const double rate = static_cast<double>(a.nenv) * a.steps / r.seconds;
      char per_thread[32] = "";
      if (a.backend == Backend::Cpu)
        std::snprintf(per_thread, sizeof per_thread, "%.4g", rate / threads);
      std::printf("  %-9s %15.4g %15s %10.3f %12d\n",
                  prec == Precision::Double ? "double" : "float", rate, per_thread, r.seconds,
                  r.failed);
      std::fflush(stdout);
      (prec == Precision::Double ? failed_double : failed_float) = r.failed;
      if (prec == Precision::Double) dbl = std::move(r);
    }

    // Same kernels, same numbers: replay environment 0 on the single-state host path with the
    // same controls and compare with the batched double run.
    std::vector<double> q(qpos0.begin(), qpos0.begin() + m.nq);
    std::vector<double> v(qvel0.begin(), qvel0.begin() + m.nv);
    for (int s = 0; s < a.steps; ++s)
      rollout_host(m, q.data(), v.data(), ctrl_bank.data() + (s % nbank) * ctrl_size, 1, a.integrator,
                   /*constraints=*/true);
    double diff = 0.0;
    for (int i = 0; i < m.nq; ++i) diff = std::max(diff, std::abs(q[i] - dbl.qpos[i]));
    for (int i = 0; i < m.nv; ++i) diff = std::max(diff, std::abs(v[i] - dbl.qvel[i]));
    std::printf("\n  mean contacts per step: %.3g\n", dbl.mean_contacts);
    std::printf(
        "\n  check: environment 0 of the batched double run vs the single-state host\n"
        "         rollout over %d steps: max |difference| = %.3g%s\n",
        a.steps, diff, diff == 0.0 ? " (bitwise equal)" : "");
    // CUDA (fused multiply-adds) is only reported.
    const bool mismatch = a.backend == Backend::Cpu && !(diff <= kHostCheckTolerance);
    return report_failures(a, failed_double, failed_float, mismatch, diff);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stiffgrad demo: %s\n", e.what());
    return 1;
  }
}

}  // namespace stiffgrad
