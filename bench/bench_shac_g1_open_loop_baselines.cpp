// The baselines a trained g1-imitate policy must beat: the G1 under two fixed, state-blind
// action sequences, evaluated as `stiffgrad eval` evaluates a policy (episodes of at most 300
// control steps that end at a fall, root below 0.3 m; eval's initial states, seed 1):
//   home        the servo targets held at the home pose (action 0)
//   reference   the servo targets set to the reference clip's joint angles of the next control
//               step (a perfect feed-forward, no feedback)
// on the Impulse floor (κ 300) and on soft contact, with the task's simulator settings.
// Prints, per baseline, the mean episode length to a fall, the mean step at which a training
// episode would have ended (tracking error above 0.5 m), falls and the mean tracking error, over
// the first 5 episodes (eval's default) and over 40. Writes
// DIR/g1_open_loop_baselines.csv.
//   bench_shac_g1_open_loop_baselines [--out DIR]
//   (DIR: out/experiments/shac_g1_open_loop_baselines)
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/experiment_io.hpp"
#include "learn/task_g1_imitate.hpp"
#include "stiffgrad/simulator.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

struct Summary {
  double length = 0, track_lost = 0, tracking = 0;
  int falls = 0, episodes = 0;
};

// Per-episode records of one baseline, then their means over the first n episodes.
struct Episodes {
  std::vector<int> length, track_lost, fell;
  std::vector<double> tracking;
  Summary over(int n) const {
    Summary s;
    s.episodes = n;
    for (int e = 0; e < n; ++e) {
      s.length += static_cast<double>(length[e]) / n;
      s.track_lost += static_cast<double>(track_lost[e]) / n;
      s.tracking += tracking[e] / n;
      s.falls += fell[e];
    }
    return s;
  }
};

Episodes run(G1ImitateTask& task, bool follow_reference, int N) {
  const Model& m = *task.model();
  const int nq = m.nq, nv = m.nv, nu = m.nu;
  task.resize(N);
  SimulatorOptions so = task.sim_options();
  so.nenv = N;
  so.threads = 1;
  Simulator sim(task.model(), so);
  std::mt19937_64 rng(1);  // evaluate_in_stiffgrad's default seed: the same initial states
  std::vector<double> q(static_cast<std::size_t>(N) * nq), v(static_cast<std::size_t>(N) * nv), rq(nq), rv(nv),
      action(static_cast<std::size_t>(N) * nu, 0.0), ctrl(static_cast<std::size_t>(N) * nu);
  for (int e = 0; e < N; ++e) task.reset_env(e, rng, q.data() + e * nq, v.data() + e * nv);
  sim.set_state(q.data(), v.data());
  Episodes out;
  out.length.assign(N, 0);
  out.track_lost.assign(N, -1);
  out.fell.assign(N, 0);
  out.tracking.assign(N, 0.0);
  std::vector<char> alive(N, 1);
  for (int t = 0; t < task.max_episode_steps(); ++t) {
    for (int e = 0; e < N; ++e) {
      double* a = action.data() + e * nu;
      if (follow_reference) {
        task.reference_state(e, t + 1, rq.data(), rv.data());
        for (int i = 0; i < nu; ++i)
          a[i] = (rq[m.jnt_qposadr[m.actuator_trnid[i]]] - task.default_ctrl()[i]) / G1ImitateTask::kActionScale;
      }
      task.action_to_ctrl(e, t, a, ctrl.data() + e * nu);
    }
    sim.step(ctrl.data());
    sim.get_state(q.data(), v.data());
    for (int e = 0; e < N; ++e) {
      if (!alive[e]) continue;
      const double* qe = q.data() + e * nq;
      const double* ve = v.data() + e * nv;
      ++out.length[e];
      out.tracking[e] += task.tracking_error(e, t + 1, qe, ve);
      if (out.track_lost[e] < 0 && task.terminated(e, t + 1, qe, ve)) out.track_lost[e] = t + 1;
      if (task.fallen(e, t + 1, qe, ve)) alive[e] = 0, out.fell[e] = 1;
    }
  }
  for (int e = 0; e < N; ++e) {
    out.tracking[e] /= out.length[e];
    if (out.track_lost[e] < 0) out.track_lost[e] = out.length[e];
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  if (const auto status =
          bench::read_out_only_command_line(argc, argv, "shac_g1_open_loop_baselines", &out_dir))
    return *status;
  try {
    bench::ExperimentOutput out(out_dir);
    out.create();
    bench::CsvWriter csv(out.path("g1_open_loop_baselines.csv"),
                         {"contact", "baseline", "episodes", "length_to_fall", "steps_to_track_lost", "falls",
                          "tracking_error_m"});
    std::printf("g1-imitate:run1_subject2 under state-blind servo targets, episodes to a fall (eval's initial states)\n");
    std::printf("%-8s %-10s %8s %15s %20s %7s %14s\n", "contact", "baseline", "episodes", "length to fall",
                "steps to track lost", "falls", "tracking (m)");
    for (const ContactModel contact : {ContactModel::Impulse, ContactModel::Soft}) {
      TaskOptions to;
      to.data_dir = bench::data_dir();
      to.contact = contact;
      G1ImitateTask task("run1_subject2", to);
      for (const bool reference : {false, true}) {
        const Episodes ep = run(task, reference, 40);
        for (const int n : {5, 40}) {
          const Summary s = ep.over(n);
          const char* cname = contact == ContactModel::Impulse ? "impulse" : "soft";
          const char* bname = reference ? "reference" : "home";
          std::printf("%-8s %-10s %8d %15.1f %20.1f %4d/%-2d %14.4f\n", cname, bname, n, s.length, s.track_lost, s.falls,
                      n, s.tracking);
          csv.row({cname, bname, std::to_string(n), bench::CsvWriter::num(s.length), bench::CsvWriter::num(s.track_lost),
                   std::to_string(s.falls), bench::CsvWriter::num(s.tracking)});
        }
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_shac_g1_open_loop_baselines: %s\n", e.what());
    return 1;
  }
}
