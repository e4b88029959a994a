// Bundled Contact Gradients, the cost experiment (issue 9): time and memory of a Rollout with
// bundles against the same Rollout without, side by side in one run, as the fraction of
// environments that trigger grows.
//
// The G1 (scene_mjx.xml, `home`, position servos holding the keyframe) with the Impulse contact
// model (κ = 300), N = 32 control steps of 0.02 s (4 substeps of 0.005 s), every environment
// dropped from 0.10 m onto the floor. Bundles B = 10, H = 2 with
//   τ = ∞ (never triggered: the scheduler's own overhead),
//   τ = 400 N (the default: the landing triggers),
//   τ = 0 (every step with any contact force, self-contacts included, wants a bundle) with a pool
//   of nenv/4, nenv/2 and nenv slots: the fraction bundled follows the pool.
// Forward + backward wall time (the better of `--reps` alternating pairs), bundled over plain,
// against the fraction of environment-steps bundled, and Rollout::bytes_per_env for both.
//
//   bench_bcg_cost [--quick] [--out DIR] [--nenv N] [--reps R]   (DIR: out/experiments/bcg_cost)
//
// Writes <out>/bcg_cost.csv and bcg_cost.png.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/experiment_io.hpp"
#include "stiffgrad/stiffgrad.hpp"

namespace {

using namespace stiffgrad;
using bench::CsvWriter;
using bench::ExperimentOutput;

constexpr int kSteps = 32, kSubsteps = 4;

struct Timing {
  double seconds = 0;
  double bytes_per_env = 0;
  double bundled_fraction = 0;  // bundled environment-steps / environment-steps
};

Timing time_rollout(const std::shared_ptr<const Model>& m, const std::vector<double>& q, const std::vector<double>& u,
                    int nenv, const BundleOptions& b) {
  SimulatorOptions o;
  o.nenv = nenv;
  o.substeps = kSubsteps;
  o.contact_model = ContactModel::Impulse;
  Simulator sim(m, o);
  const std::vector<double> v(static_cast<std::size_t>(nenv) * m->nv, 0.0);
  sim.set_state(q.data(), v.data());
  sim.set_ctrl(u.data());
  Rollout ro(sim, kSteps, b);
  std::vector<double> dv(static_cast<std::size_t>(kSteps + 1) * nenv * m->nv, 0.0);
  for (int e = 0; e < nenv; ++e) dv[(static_cast<std::size_t>(kSteps) * nenv + e) * m->nv + 2] = 1.0;
  std::vector<double> gq(static_cast<std::size_t>(nenv) * m->nv), gv(gq.size());
  const auto t0 = bench::Clock::now();
  ro.begin();
  for (int t = 0; t < kSteps; ++t) ro.step();
  ro.backward(nullptr, dv.data(), gq.data(), gv.data(), nullptr);
  Timing r;
  r.seconds = bench::seconds_since(t0);
  r.bytes_per_env = static_cast<double>(ro.bytes_per_env());
  r.bundled_fraction = static_cast<double>(ro.bundles_started()) * b.steps / (static_cast<double>(nenv) * kSteps);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  namespace opt = stiffgrad::options;
  constexpr const char* kUsage =
      "usage: bench_bcg_cost [--quick] [--out DIR] [--nenv N] [--reps R]\n"
      "DIR defaults to out/experiments/bcg_cost; N >= 4 (pools of N/4)\n";
  bool quick = false;
  std::string out_dir;
  int nenv = 16, reps = 2;
  const auto read_options = [&](const opt::Args& a) {
    quick = a.has("quick");
    out_dir = bench::out_option(a, "bcg_cost");
    nenv = bench::int_option(a, "nenv", nenv, 4, 1 << 24);  // >= 4: pools of nenv/4
    reps = bench::int_option(a, "reps", reps, 1, 1000);
    if (quick) {
      nenv = std::min(nenv, 4);
      reps = 1;
    }
  };
  if (const auto status = bench::read_command_line(argc, argv, "bench_bcg_cost", kUsage, {"quick"},
                                                   {"out", "nenv", "reps"}, read_options))
    return *status;
  const ExperimentOutput out(out_dir);
  out.create();
  auto model = std::make_shared<Model>(*load_mjcf(bench::data_dir() + "/models/unitree_g1/scene_mjx.xml"));
  model->opt.timestep = 0.005;
  const Keyframe& home = model->keyframes[static_cast<std::size_t>(model->keyframe_id("home"))];
  const int nq = model->nq, nu = model->nu;
  std::printf("BCG cost: G1 scene_mjx home + 0.10 m, Impulse kappa 300, %d envs, %d steps x %d substeps, B 10, H 2; "
              "forward + backward, best of %d\nmachine: %s, load %s, threads: all cores\n",
              nenv, kSteps, kSubsteps, reps, bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("%5s %5s %17s %10s %10s %8s %14s %14s\n", "tau", "pool", "bundled fraction", "plain s", "bundled s",
              "ratio", "plain B/env", "bundled B/env");
  auto csv = std::make_unique<CsvWriter>(
      out.path("bcg_cost.csv"), std::vector<std::string>{"tau", "pool", "bundled_fraction", "plain_s", "bundled_s",
                                                         "time_ratio", "plain_bytes_per_env", "bundled_bytes_per_env"});
  std::vector<double> q(static_cast<std::size_t>(nenv) * nq), u(static_cast<std::size_t>(nenv) * nu);
  for (int e = 0; e < nenv; ++e) {
    std::copy(home.qpos.begin(), home.qpos.end(), q.begin() + static_cast<std::ptrdiff_t>(e) * nq);
    q[static_cast<std::size_t>(e) * nq + 2] += 0.10;
    std::copy(home.ctrl.begin(), home.ctrl.end(), u.begin() + static_cast<std::ptrdiff_t>(e) * nu);
  }
  const double inf = std::numeric_limits<double>::infinity();
  struct Row {
    double tau;
    int pool;
  };
  for (const Row& row : {Row{inf, nenv}, Row{400, nenv}, Row{0, nenv / 4}, Row{0, nenv / 2}, Row{0, nenv}}) {
    BundleOptions b;
    b.enabled = true;
    b.tau = row.tau;
    b.pool = row.pool;
    Timing plain, bundled;
    plain.seconds = bundled.seconds = 1e30;
    for (int r = 0; r < reps; ++r) {  // alternating, the better of each
      const Timing p = time_rollout(model, q, u, nenv, BundleOptions{});
      const Timing c = time_rollout(model, q, u, nenv, b);
      if (p.seconds < plain.seconds) plain = p;
      if (c.seconds < bundled.seconds) bundled = c;
    }
    std::printf("%5.0f %5d %17.3f %10.3f %10.3f %8.2f %14.0f %14.0f\n", row.tau, row.pool, bundled.bundled_fraction,
                plain.seconds, bundled.seconds, bundled.seconds / plain.seconds, plain.bytes_per_env,
                bundled.bytes_per_env);
    csv->row({CsvWriter::num(row.tau), std::to_string(row.pool), CsvWriter::num(bundled.bundled_fraction),
              CsvWriter::num(plain.seconds), CsvWriter::num(bundled.seconds),
              CsvWriter::num(bundled.seconds / plain.seconds), CsvWriter::num(plain.bytes_per_env),
              CsvWriter::num(bundled.bytes_per_env)});
  }
  csv.reset();
  const std::string csv_path = "'" + out.path("bcg_cost.csv") + "'";
  out.plot("bcg_cost", out.terminal("bcg_cost", 900, 500) +
                           "set datafile separator ','\nset title 'Bundling cost (B = 10, H = 2): forward + backward'\n"
                           "set xlabel 'fraction of environment-steps bundled'\nset ylabel 'time, bundled / plain'\n"
                           "set key top left\nplot " + csv_path +
                           " every ::1 using 3:6 with points pt 7 ps 1.5 title 'measured', 1 + 10 * x - x with lines "
                           "dt 2 title '1 + (B - 1) x (branches only)'\n");
  return 0;
}
