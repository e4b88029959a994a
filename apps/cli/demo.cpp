// `stiffgrad demo`: the main job of scripts/run.sh. Throughput of the batched step with contacts
// (MuJoCo 2.2.2's soft constraints) on one model with random controls, in double and float,
// plus a same-kernels check of the batched backend against the single-state host path. Parity
// with MuJoCo is deliberately not here (the library does not depend on MuJoCo): run.sh runs
// the Parity tests after the demo.
#include "apps/cli/demo.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"
#include "core/dynamics_host.hpp"
#include "apps/cli/progress.hpp"
#include "core/servo_stability.hpp"
#include "stiffgrad/dynamics.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/sampling.hpp"
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

// The CPU backend runs the single-state host path's kernels on the same inputs (state,
// controls and the constraint solve's warm start carried from step to step), so environment 0
// must agree bit for bit. The bound is zero: any difference is a real divergence (a shared
// buffer, a different warm start or summation order), which chaotic dynamics would otherwise
// amplify to any size over the horizon.
constexpr double kHostCheckTolerance = 0.0;

// Pre-drawn control sets the run cycles through (drawn before the clock starts).
constexpr int kControlBank = 16;

const char* const kDemoHelp =
    "usage: stiffgrad demo [--model PATH] [--nenv N] [--steps N] [--threads T]\n"
    "                      [--backend cpu|cuda] [--seed S] [--implicit-actuators]\n"
    "Steps N environments (default 1024) of a model (default MuJoCo's humanoid.xml) for N\n"
    "control steps (default 300) with random controls, with contacts, joint limits and friction\n"
    "loss (MuJoCo 2.2.2's soft constraints, unless the model's <flag> disables them), in double\n"
    "then float, and prints environment-steps per second. Then, untimed, counts the contacts per\n"
    "step and checks environment 0 of the double run against the single-state host rollout\n"
    "(same kernels, same inputs): on the CPU backend they must be bitwise equal.\n"
    "Fails (exit 1) if an environment turns non-finite or the check differs. Stiff position\n"
    "servos integrated explicitly diverge at a large timestep (the Unitree G1 at 4 ms): the demo\n"
    "warns before running when its stability estimate says so; --implicit-actuators\n"
    "(Integrator::ImplicitDampingEuler, as for `rollout`) treats their damping implicitly.\n"
    "A run that needs more memory than is available is refused before allocating.\n";

DemoArgs parse_demo_args(int argc, char** argv) {
  const cli::Args args =
      cli::parse_args(argc, argv, {"implicit-actuators"}, {"model", "nenv", "steps", "threads", "backend", "seed"});
  if (!args.positional.empty())
    throw cli::UsageError("unexpected argument '" + args.positional[0] + "' (the model is --model PATH)");
  DemoArgs a;
  if (args.has("model")) a.model = args.get("model");
  if (args.has("nenv")) a.nenv = static_cast<int>(cli::parse_int_in(args.get("nenv"), "--nenv", 1, 1L << 24));
  if (args.has("steps")) a.steps = cli::parse_steps(args.get("steps"));
  if (args.has("threads")) a.threads = static_cast<int>(cli::parse_int_in(args.get("threads"), "--threads", 0, 4096));
  if (args.has("seed")) a.seed = static_cast<unsigned>(cli::parse_int_in(args.get("seed"), "--seed", 0, 0xffffffffL));
  if (args.has("backend")) {
    const std::string b = args.get("backend");
    if (b != "cpu" && b != "cuda") throw cli::UsageError("--backend must be cpu or cuda, got '" + b + "'");
    a.backend = b == "cpu" ? Backend::Cpu : Backend::Cuda;
  }
  if (args.has("implicit-actuators")) a.integrator = Integrator::ImplicitDampingEuler;
  return a;
}

SimulatorOptions options_for(const DemoArgs& a, Precision prec, int nenv) {
  SimulatorOptions opt;
  opt.backend = a.backend;
  opt.precision = prec;
  opt.nenv = nenv;
  opt.substeps = 1;
  opt.threads = a.threads;
  opt.integrator = a.integrator;
  opt.constraints = true;  // contacts, limits, friction loss unless the model's flags disable them
  return opt;
}

// Memory the demo needs, measured before anything large is allocated: a Simulator's bytes grow
// linearly in nenv (measured at 1 and 2 environments on the CPU backend, in double, the larger
// precision; one Simulator lives at a time), plus the host arrays (initial states, the control
// bank, the final states of both runs, the contact statistics).
double demo_memory(const std::shared_ptr<const Model>& model, const DemoArgs& a) {
  DemoArgs cpu = a;
  cpu.backend = Backend::Cpu;
  cpu.threads = 1;
  const double one = static_cast<double>(Simulator(model, options_for(cpu, Precision::Double, 1)).bytes());
  const double two = static_cast<double>(Simulator(model, options_for(cpu, Precision::Double, 2)).bytes());
  const double per_env_sim = std::max(0.0, two - one), fixed = std::max(0.0, one - per_env_sim);
  const Model& m = *model;
  const double per_env_host = sizeof(double) * (4.0 * (m.nq + m.nv) + kControlBank * m.nu + Simulator::kStepStats);
  return fixed + static_cast<double>(a.nenv) * (per_env_sim + per_env_host);
}

void refuse_beyond_memory(const std::shared_ptr<const Model>& model, const DemoArgs& a) {
  const double need = demo_memory(model, a);
  const cli::MemoryLimit limit = cli::available_memory();
  if (need <= limit.bytes) return;
  char text[320];
  std::snprintf(text, sizeof text,
                "--nenv %d needs about %.1f GiB (%.0f bytes per environment), more than the %.1f GiB available "
                "(%s); use fewer environments",
                a.nenv, need / 1073741824.0, need / a.nenv, limit.bytes / 1073741824.0, limit.source.c_str());
  throw std::runtime_error(text);
}

struct RunResult {
  double seconds = 0.0;
  int failed = 0;
  double mean_contacts = 0.0;      // active contacts per environment and step (untimed pass)
  std::vector<double> qpos, qvel;  // final states, environment-major
};

// Controls are drawn before the clock starts: `ctrl_bank` holds kControlBank control sets of
// nenv x nu, used cyclically, so the timing covers set_ctrl + step only. With `count_contacts`
// a second, untimed pass counts the contacts per step (reading the statistics every step would
// put a host copy, and on CUDA a sync, inside the timed loop).
RunResult run_one(const std::shared_ptr<const Model>& model, const DemoArgs& a, Precision prec,
                  const std::vector<double>& qpos0, const std::vector<double>& qvel0,
                  const std::vector<double>& ctrl_bank, bool count_contacts) {
  Simulator sim(model, options_for(a, prec, a.nenv));
  const std::size_t ctrl_size = static_cast<std::size_t>(a.nenv) * model->nu;
  const char* name = prec == Precision::Double ? "double" : "float";

  // Warm-up step (first touch of the workspace, thread start), then restore the state
  // (set_state also zeroes the constraint solve's warm start).
  sim.set_state(qpos0.data(), qvel0.data());
  sim.step(ctrl_bank.data());
  sim.synchronize();
  sim.set_state(qpos0.data(), qvel0.data());

  Progress progress(std::string("demo ") + name, a.steps);
  const auto t0 = std::chrono::steady_clock::now();
  for (int s = 0; s < a.steps; ++s) {
    sim.step(ctrl_bank.data() + (s % kControlBank) * ctrl_size);
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
  if (count_contacts && sim.capacity().rows > 0) {
    Progress counting(std::string("demo contact count (untimed, ") + name + ")", a.steps);
    sim.set_state(qpos0.data(), qvel0.data());
    double sum = 0;
    for (int s = 0; s < a.steps; ++s) {
      sim.step(ctrl_bank.data() + (s % kControlBank) * ctrl_size);
      const auto stats = sim.contact_stats();
      for (int e = 0; e < a.nenv; ++e) sum += stats[static_cast<std::size_t>(Simulator::kStepStats * e)];
      counting.update(s + 1);
    }
    r.mean_contacts = sum / (static_cast<double>(a.nenv) * a.steps);
  }
  return r;
}

const char* const kImplicitHint =
    "  Stiff position servos integrated explicitly diverge at large timesteps (the Unitree G1\n"
    "  at its 4 ms step): rerun with --implicit-actuators.\n";

// Says why a run failed: a user who sees only "non-finite" cannot tell a too-stiff explicit
// integration from a model without contacts whose bodies fall forever.
int report_failures(const DemoArgs& a, const ServoStability& servos, int failed_double, int failed_float,
                    bool mismatch, double diff) {
  const bool explicit_servos = a.integrator == Integrator::SemiImplicitEuler && servos.actuated_dofs > 0;
  if (failed_double > 0 || failed_float > 0) {
    std::fprintf(stderr,
                 "stiffgrad demo: FAILED: environments became non-finite (double: %d, float: %d of %d).\n"
                 "  Why: random controls spin free limbs up over long runs, and a model whose flags\n"
                 "  disable contacts lets bodies fall through the floor and keep accelerating.\n%s"
                 "  Try: %s--steps below %d, or another --model.\n",
                 failed_double, failed_float, a.nenv, explicit_servos ? kImplicitHint : "",
                 explicit_servos ? "--implicit-actuators, " : "", a.steps);
  }
  if (mismatch) {
    std::fprintf(stderr,
                 "stiffgrad demo: FAILED: environment 0 of the batched CPU run differs from the single-state host "
                 "rollout by %.3g (the same kernels on the same inputs must agree bit for bit)\n",
                 diff);
    if (explicit_servos && servos.unstable_dofs > 0) std::fputs(kImplicitHint, stderr);
  }
  return failed_double > 0 || failed_float > 0 || mismatch ? 1 : 0;
}

}  // namespace

const char* demo_help() { return kDemoHelp; }

const char* float_rate_note(Backend backend, double rate_double, double rate_float) {
  if (rate_float > kFloatFaster * rate_double) return nullptr;
  if (backend == Backend::Cpu)
    return "float is not faster here: the CPU backend runs each environment's step as scalar code\n"
           "  (one environment per thread at a time, no SIMD across environments), where a float and a\n"
           "  double operation cost the same; float only halves the memory an environment touches,\n"
           "  which matters once the environments' workspaces outgrow the caches.";
  return "float is not faster here: with contacts each CUDA thread's step is bound by its local\n"
         "  memory traffic and divergent branches (per-environment contact counts), not by arithmetic\n"
         "  (docs/gpu.md).";
}

int run_demo(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return std::fputs(kDemoHelp, stdout), 0;
  DemoArgs a;
  try {
    a = parse_demo_args(argc, argv);
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "stiffgrad demo: %s\n(stiffgrad demo --help lists the options)\n", e.what());
    return 2;
  }

  try {
    const std::shared_ptr<const Model> model = cli::load_with_notes(a.model);  // notes on stderr
    const Model& m = *model;
    if (a.backend == Backend::Cuda && !cuda_available()) {
      std::fprintf(stderr,
                   "stiffgrad demo: the CUDA backend is unavailable (built without CUDA or no "
                   "device); use --backend cpu\n");
      return 1;
    }
    refuse_beyond_memory(model, a);
    const int threads = a.threads > 0 ? a.threads : omp_get_max_threads();
    const ServoStability servos = explicit_servo_stability(m, m.opt.timestep);

    std::printf("stiffgrad demo: batched dynamics with contacts, joint limits and friction loss\n"
                "                (MuJoCo 2.2.2's soft constraints), random controls\n");
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
        a.nenv, a.steps, std::min(a.steps, kControlBank), a.seed);
    std::fflush(stdout);
    if (a.integrator == Integrator::SemiImplicitEuler && servos.unstable_dofs > 0)
      std::fprintf(stderr,
                   "stiffgrad demo: warning: %d of %d servo-driven degrees of freedom are unstable under explicit\n"
                   "  integration at h = %g s (decoupled estimate at qpos0; worst: joint '%s', %.3g times past\n"
                   "  the bound): expect the run to diverge. --implicit-actuators treats their damping\n"
                   "  implicitly.\n",
                   servos.unstable_dofs, servos.actuated_dofs, m.opt.timestep, servos.worst_joint.c_str(),
                   servos.worst_ratio);

    std::mt19937_64 rng(a.seed);
    std::vector<double> qpos0, qvel0;
    sample_states_near_qpos0(m, a.nenv, rng, 0.1, 0.1, &qpos0, &qvel0);
    const int nbank = std::min(a.steps, kControlBank);
    const std::size_t ctrl_size = static_cast<std::size_t>(a.nenv) * m.nu;
    // kControlBank sets always (run_one indexes s % kControlBank); the sets past nbank stay
    // unused when steps < kControlBank
    std::vector<double> ctrl_bank(ctrl_size * kControlBank + 1, 0.0);
    for (int k = 0; k < nbank; ++k) sample_controls(m, a.nenv, rng, ctrl_bank.data() + k * ctrl_size);

    std::printf("\n  %-9s %15s %15s %10s %12s\n", "precision", "env-steps/s",
                a.backend == Backend::Cpu ? "per thread" : "", "wall s", "failed envs");
    int failed[2] = {0, 0};
    double rate[2] = {0, 0};
    RunResult dbl;
    for (Precision prec : {Precision::Double, Precision::Float}) {
      const bool is_double = prec == Precision::Double;
      RunResult r = run_one(model, a, prec, qpos0, qvel0, ctrl_bank, /*count_contacts=*/false);
      const int k = is_double ? 0 : 1;
      rate[k] = static_cast<double>(a.nenv) * a.steps / r.seconds;
      char per_thread[32] = "";
      if (a.backend == Backend::Cpu) std::snprintf(per_thread, sizeof per_thread, "%.4g", rate[k] / threads);
      std::printf("  %-9s %15.4g %15s %10.3f %12d\n", is_double ? "double" : "float", rate[k], per_thread,
                  r.seconds, r.failed);
      std::fflush(stdout);
      failed[k] = r.failed;
      if (is_double) dbl = std::move(r);
    }
    if (const char* note = float_rate_note(a.backend, rate[0], rate[1])) std::printf("\n  %s\n", note);

    // Untimed: contacts per step (a second double pass) and the single-state check.
    std::printf("\n  untimed: counting contacts (a second double pass) and replaying environment 0 on the\n"
                "  single-state host path\n");
    std::fflush(stdout);
    dbl.mean_contacts = run_one(model, a, Precision::Double, qpos0, qvel0, ctrl_bank, true).mean_contacts;
    std::printf("  mean contacts per environment and step: %.3g\n", dbl.mean_contacts);

    // Same kernels, same numbers: replay environment 0 on the single-state host path with the
    // same controls, carrying the solve's warm start as the batched run does.
    std::vector<double> controls(static_cast<std::size_t>(a.steps) * m.nu);
    for (int s = 0; s < a.steps; ++s)
      std::copy_n(ctrl_bank.data() + (s % kControlBank) * ctrl_size, m.nu, controls.data() + static_cast<std::size_t>(s) * m.nu);
    std::vector<double> q(qpos0.begin(), qpos0.begin() + m.nq);
    std::vector<double> v(qvel0.begin(), qvel0.begin() + m.nv);
    rollout_host_controls(m, q.data(), v.data(), controls.data(), a.steps, a.integrator, /*constraints=*/true);
    double diff = 0.0;
    bool finite = true;
    for (int i = 0; i < m.nq; ++i) diff = std::max(diff, std::abs(q[i] - dbl.qpos[i])), finite &= std::isfinite(q[i]);
    for (int i = 0; i < m.nv; ++i) diff = std::max(diff, std::abs(v[i] - dbl.qvel[i])), finite &= std::isfinite(v[i]);
    const bool bitwise = std::memcmp(q.data(), dbl.qpos.data(), sizeof(double) * m.nq) == 0 &&
                         std::memcmp(v.data(), dbl.qvel.data(), sizeof(double) * m.nv) == 0;
    std::printf(
        "\n  check: environment 0 of the batched double run vs the single-state host\n"
        "         rollout over %d steps: %s",
        a.steps, bitwise ? "bitwise equal" : "max |difference| = ");
    if (!bitwise) std::printf("%.3g%s", diff, finite ? "" : " (non-finite values)");
    std::printf("\n");
    std::fflush(stdout);
    // CUDA (fused multiply-adds) is only reported.
    const bool mismatch = a.backend == Backend::Cpu && !bitwise && !(diff <= kHostCheckTolerance);
    return report_failures(a, servos, failed[0], failed[1], mismatch, diff);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stiffgrad demo: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace stiffgrad
