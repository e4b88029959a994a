// bench_gpu_contact: stepping with contact on the CUDA backend against the CPU backend on all
// cores, side by side in one run (issue 38's targets): the Unitree G1 on its floor
// (scene_mjx.xml at `home`, velocities N(0, 0.05^2), the keyframe's controls held), one substep
// per control step, env-substeps per second.
//
//   bench_gpu_contact [--nenv 1024,4096,16384] [--steps 40] [--rounds 3] [--threads T]
//                     [--precision float,double]
//                     [--contact soft,impulse] [--solve-shared -1,0,...] [--no-cpu]
//                     [--backward]
//
// Rows: contact model (MuJoCo's soft constraints, or the Impulse model at κ 300) x precision x
// nenv, through the staged pipeline (the only one since 2026-12-08); Impulse rows once per
// --solve-shared value (SimulatorOptions::cuda_solve_shared_bytes: the solve's shared memory per
// environment in bytes, -1 as much as a block may have, 0 none; default -1). Each point is the best
// of
// --rounds rounds of --steps control steps after
// one untimed warm-up step (state reset before each round, untimed; synchronize() before the
// clock stops); the CPU backend's rounds (OpenMP, --threads, default all cores) alternate with
// the GPU's so that machine noise hits both alike.
//
// --backward adds the gradient's cost: a Rollout of --steps control steps, forward and then
// Rollout::backward with a random loss gradient on every checkpoint, against the forward
// rollout alone: bwd/fwd = (fwd+bwd - forward) / forward (issue 38's target: <= 3 on the GPU),
// on the CUDA backend (the staged adjoint: a tape and adjoint stages,
// backends/cuda/staged_adjoint.cuh) and the CPU backend on all cores.
// Without a CUDA device it says so and exits 1.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.hpp"
#include "stiffgrad/stiffgrad.hpp"

namespace {

using namespace stiffgrad;
namespace sb = stiffgrad::bench;
namespace opt = stiffgrad::options;

const char* kUsage =
    "usage: bench_gpu_contact [--nenv 1024,4096,16384] [--steps 40] [--rounds 3] [--threads T]\n"
    "                         [--precision float,double]\n"
    "                         [--contact soft,impulse] [--solve-shared -1,0,...]\n"
    "                         [--no-cpu] [--backward]\n";

struct Args {
  std::vector<int> nenv{1024, 4096, 16384};
  int steps = 40, rounds = 3, threads = 0;
  std::vector<std::string> precisions{"float", "double"};
  std::vector<std::string> contacts{"soft", "impulse"};
  std::vector<int> solve_shared{
      -1};  // SimulatorOptions::cuda_solve_shared_bytes of the Impulse rows
  bool cpu = true;
  bool backward = false;
};

struct Start {
  std::vector<double> qpos, qvel, ctrl;
};

Start start_states(const Model& m, int nenv) {
  const Keyframe* home = nullptr;
  for (const Keyframe& k : m.keyframes)
    if (k.name == "home") home = &k;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01(0.0, 1.0);
  Start s;
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < m.nq; ++i) s.qpos.push_back(home ? home->qpos[i] : m.qpos0[i]);
    for (int i = 0; i < m.nv; ++i) s.qvel.push_back(0.05 * n01(rng));
    for (int i = 0; i < m.nu; ++i) s.ctrl.push_back(home ? home->ctrl[i] : 0.0);
  }
  s.ctrl.push_back(0.0);
  return s;
}

SimulatorOptions options_for(const std::string& contact, Backend backend, Precision precision,
                             int nenv, int threads, int solve_shared = -1) {
  SimulatorOptions o;
  o.cuda_solve_shared_bytes = solve_shared;
  o.backend = backend;
  o.precision = precision;
  o.nenv = nenv;
  o.substeps = 1;
  o.threads = threads;
  if (contact == "impulse") o.contact_model = ContactModel::Impulse;
  return o;
}

// Seconds per control step, best of `rounds`.
double time_steps(Simulator& sim, const Start& s, int steps) {
  sim.set_state(s.qpos.data(), s.qvel.data());
  sim.set_ctrl(s.ctrl.data());
  sim.step();  // warm-up: first launches, graph capture of another substep count
  sim.synchronize();
  const auto t0 = sb::Clock::now();
  for (int t = 0; t < steps; ++t) sim.step();
  sim.synchronize();
  return sb::seconds_since(t0) / steps;
}

// Every (contact, precision, nenv, solve shared memory) row: a CUDA simulator and (unless
// --no-cpu) a CPU one; f(contact label, prec, nenv, start, gpu, cpu or null). The label of an
// Impulse row names its shared memory when --solve-shared lists more than one value.
template <class F>
void for_each_row(const std::shared_ptr<const Model>& model, const Args& a, F&& f) {
  for (const std::string& contact : a.contacts)
    for (const std::string& prec : a.precisions)
      for (int nenv : a.nenv)
        for (const int shared : contact == "impulse" ? a.solve_shared : std::vector<int>{-1}) {
          const Precision p = prec == "float" ? Precision::Float : Precision::Double;
          const Start s = start_states(*model, nenv);
          Simulator gpu(model, options_for(contact, Backend::Cuda, p, nenv, a.threads, shared));
          std::unique_ptr<Simulator> cpu;
          if (a.cpu)
            cpu = std::make_unique<Simulator>(
                model, options_for(contact, Backend::Cpu, p, nenv, a.threads));
          std::string label = contact;
          if (contact == "impulse" && a.solve_shared.size() > 1)
            label += shared < 0 ? " (shared: max)" : " (shared: " + std::to_string(shared) + " B)";
          f(label, prec, nenv, s, gpu, cpu.get());
          std::fflush(stdout);
        }
}

// A rollout of `steps` control steps with the gradient of a fixed random loss: forward and
// backward, and the forward rollout alone, seconds each; the gradient (qpos0, qvel0, controls)
// of the last call in `grad`.
struct RolloutTimes {
  double forward = 1e300, forward_backward = 1e300;
  bool bitwise = true;
};
void time_rollout(Simulator& sim, const Model& m, const Start& s, int nenv, int steps, RolloutTimes& out,
                  std::vector<double>& grad) {
  const std::size_t n = static_cast<std::size_t>(nenv);
  Rollout ro(sim, steps);
  std::vector<double> dlq((steps + 1) * n * m.nq), dlv((steps + 1) * n * m.nv);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  for (double& x : dlq) x = 1e-2 * n01(rng);
  for (double& x : dlv) x = 1e-2 * n01(rng);
  std::vector<double> gq(n * m.nv), gv(n * m.nv), gu(steps * n * m.nu + 1);
  const auto reset = [&] {
    sim.set_state(s.qpos.data(), s.qvel.data());
    sim.set_ctrl(s.ctrl.data());
    sim.synchronize();
  };
  for (int pass = 0; pass < 2; ++pass) {  // the first: warm-up (first launches, graph captures)
    reset();
    auto t0 = sb::Clock::now();
    for (int t = 0; t < steps; ++t) sim.step();
    sim.synchronize();
    if (pass) out.forward = std::min(out.forward, sb::seconds_since(t0));
    reset();
    t0 = sb::Clock::now();
    ro.begin();
    for (int t = 0; t < steps; ++t) ro.step();
    ro.backward(dlq.data(), dlv.data(), gq.data(), gv.data(), gu.data());
    if (pass) out.forward_backward = std::min(out.forward_backward, sb::seconds_since(t0));
    out.bitwise = out.bitwise && ro.replay_bitwise();
  }
  grad = gq;
  grad.insert(grad.end(), gv.begin(), gv.end());
  grad.insert(grad.end(), gu.begin(), gu.end());
}

void bench_backward(const std::shared_ptr<const Model>& model, const Args& a) {
  std::printf("\nthe gradient's cost: a Rollout of %d control steps, forward + backward against forward alone, best "
              "of %d\n",
              a.steps, a.rounds);
  std::printf("| contact | precision | nenv | CUDA fwd+bwd env-steps/s | CUDA bwd/fwd | CPU bwd/fwd | replay bitwise |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for_each_row(model, a,
               [&](const std::string& contact, const std::string& prec, int nenv, const Start& s,
                   Simulator& gpu, Simulator* cpu) {
                 RolloutTimes g, c;
                 std::vector<double> grad;
                 for (int r = 0; r < a.rounds; ++r) {
                   time_rollout(gpu, *model, s, nenv, a.steps, g, grad);
                   if (cpu) time_rollout(*cpu, *model, s, nenv, a.steps, c, grad);
                 }
                 std::printf("| %s | %s | %d | %.3g | %.2f | ", contact.c_str(), prec.c_str(), nenv,
                             nenv * a.steps / g.forward_backward,
                             (g.forward_backward - g.forward) / g.forward);
                 if (cpu) std::printf("%.2f", (c.forward_backward - c.forward) / c.forward);
                 std::printf(" | %s |\n", g.bitwise && c.bitwise ? "yes" : "NO");
               });
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const auto read_options = [&](const opt::Args& o) {
    a.nenv = sb::int_list_option(o, "nenv", a.nenv, 1, 1 << 22);
    a.steps = sb::int_option(o, "steps", a.steps, 1, 100000);
    a.rounds = sb::int_option(o, "rounds", a.rounds, 1, 1000);
    a.threads = sb::int_option(o, "threads", 0, 0, 4096);
    a.precisions = sb::name_list_option(o, "precision", a.precisions, {"float", "double"});
    a.contacts = sb::name_list_option(o, "contact", a.contacts, {"soft", "impulse"});
    a.solve_shared = sb::int_list_option(o, "solve-shared", a.solve_shared, -1, 1 << 30);
    a.cpu = !o.has("no-cpu");
    a.backward = o.has("backward");
  };
  if (const auto status = sb::read_command_line(
          argc, argv, "bench_gpu_contact", kUsage, {"no-cpu", "backward"},
          {"nenv", "steps", "rounds", "threads", "precision", "contact", "solve-shared"},
          read_options))
    return *status;
  if (!cuda_available()) {
    std::fprintf(stderr,
                 "bench_gpu_contact: the CUDA backend is unavailable (this build has no CUDA backend, or no "
                 "CUDA device is present): nothing to measure\n");
    return 1;
  }
  if (a.threads == 0) a.threads = omp_get_max_threads();
  const auto model = load_mjcf(sb::data_dir() + "/models/unitree_g1/scene_mjx.xml");
  std::printf("bench_gpu_contact: G1 on its floor (home, N(0, 0.05^2) velocities), 1 substep per step, "
              "%d steps per round, best of %d\n",
              a.steps, a.rounds);
  std::printf("machine: %s, %u logical cores (CPU rows: %d OpenMP threads), load average %s\n",
              sb::cpu_model().c_str(), std::thread::hardware_concurrency(), a.threads, sb::load_average().c_str());
  std::printf("| contact | precision | nenv | CUDA env-substeps/s | CPU env-substeps/s | CUDA / CPU |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for_each_row(model, a,
               [&](const std::string& contact, const std::string& prec, int nenv, const Start& s,
                   Simulator& gpu, Simulator* cpu) {
                 double best_gpu = 1e300, best_cpu = 1e300;
                 for (int r = 0; r < a.rounds; ++r) {
                   best_gpu = std::min(best_gpu, time_steps(gpu, s, a.steps));
                   if (cpu) best_cpu = std::min(best_cpu, time_steps(*cpu, s, a.steps));
                 }
                 const double g = nenv / best_gpu, c = cpu ? nenv / best_cpu : 0.0;
                 if (cpu)
                   std::printf("| %s | %s | %d | %.3g | %.3g | %.2f |\n", contact.c_str(),
                               prec.c_str(), nenv, g, c, g / c);
                 else
                   std::printf("| %s | %s | %d | %.3g | | |\n", contact.c_str(), prec.c_str(), nenv,
                               g);
               });
  if (a.backward) bench_backward(model, a);
  return 0;
}
