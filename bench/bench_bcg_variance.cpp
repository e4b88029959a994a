// Bundled Contact Gradients, the variance experiment (issue 9; BCG's Fig. 4 at this machine's
// scale): the Unitree G1 (scene_mjx.xml) at its `home` keyframe under its position servos (ctrl
// = the keyframe's), dropped from `--drop` (default 0.10 m) above it onto the floor with the
// Impulse contact model, N = 32 control steps of 0.02 s with 4 substeps of 0.005 s.
//
// The estimate is g = ∂v_z,T/∂p_z,0: the root's final vertical velocity with respect to its
// initial height (Rollout::backward). With bundles (τ = 400 N on the largest contact normal
// force, H = 2, σp = 1 cm, σv = 2 cm/s, λ = 1e-4) every environment of a batch of identical
// starts draws its own perturbations (Philox keyed by the environment), so the batch is a
// sample of independent draws of the estimator. B = 1 is a single perturbed branch per
// bundle; the reduction factor is Var(g | B = 1) / Var(g | B). The plain (unbundled) gradient of
// the same start is printed beside it. Each κ runs with the default trigger τ = 400 N (at soft
// κ the forces stay below it and nothing is bundled: the scheduler's purpose) and with τ = 0
// (every step in contact bundled), which gives the reduction at every κ.
//
//   bench_bcg_variance [--quick] [--out DIR] [--draws N] [--drop M]
//   (DIR: out/experiments/bcg_variance)
//
// Goal (issue): >= 5x lower variance of the bundled estimate at kappa = 300, B = 10.
// Writes <out>/bcg_variance.csv and bcg_variance.png.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
constexpr double kTimestep = 0.005;

struct Estimate {
  double mean = 0, var = 0;
  double bundles_per_env = 0;
  double max_force = 0;  // largest contact normal force over the rollout and the draws (N)
  int skipped = 0, failed = 0;
  std::vector<double> g;
};

// g over `draws` identical starts; bundles disabled when B == 0.
Estimate estimate(const std::shared_ptr<const Model>& m, const std::vector<double>& q0, const std::vector<double>& ctrl,
                  int draws, double kappa, int B, double tau) {
  SimulatorOptions o;
  o.nenv = draws;
  o.substeps = kSubsteps;
  o.contact_model = ContactModel::Impulse;
  o.impulse.kappa = kappa;
  Simulator sim(m, o);
  const int nq = m->nq, nv = m->nv, nu = m->nu;
  std::vector<double> q(static_cast<std::size_t>(draws) * nq), v(static_cast<std::size_t>(draws) * nv, 0.0),
      u(static_cast<std::size_t>(draws) * nu);
  for (int e = 0; e < draws; ++e) {
    std::copy(q0.begin(), q0.end(), q.begin() + static_cast<std::ptrdiff_t>(e) * nq);
    std::copy(ctrl.begin(), ctrl.end(), u.begin() + static_cast<std::ptrdiff_t>(e) * nu);
  }
  sim.set_state(q.data(), v.data());
  sim.set_ctrl(u.data());
  BundleOptions b;
  b.enabled = B > 0;
  b.branches = std::max(B, 1);
  b.tau = tau;
  Rollout ro(sim, kSteps, b);
  ro.begin();
  Estimate est;
  for (int t = 0; t < kSteps; ++t) {
    ro.step();
    const std::vector<double> stats = sim.contact_stats();
    for (int e = 0; e < draws; ++e)
      est.max_force = std::max(est.max_force, stats[static_cast<std::size_t>(e) * Simulator::kStepStats + 1]);
  }
  std::vector<double> dv(static_cast<std::size_t>(kSteps + 1) * draws * nv, 0.0);
  for (int e = 0; e < draws; ++e) dv[(static_cast<std::size_t>(kSteps) * draws + e) * nv + 2] = 1.0;  // v_z,T
  std::vector<double> gq(static_cast<std::size_t>(draws) * nv), gv(gq.size());
  ro.backward(nullptr, dv.data(), gq.data(), gv.data(), nullptr);
  est.failed = sim.num_failed();
  est.skipped = ro.bundles_skipped();
  est.bundles_per_env = static_cast<double>(ro.bundles_started()) / draws;
  for (int e = 0; e < draws; ++e) est.g.push_back(gq[static_cast<std::size_t>(e) * nv + 2]);  // p_z,0
  for (double x : est.g) est.mean += x / draws;
  for (double x : est.g) est.var += (x - est.mean) * (x - est.mean) / std::max(draws - 1, 1);
  return est;
}

}  // namespace

int main(int argc, char** argv) {
  namespace opt = stiffgrad::options;
  constexpr const char* kUsage =
      "usage: bench_bcg_variance [--quick] [--out DIR] [--draws N] [--drop M]\n"
      "DIR defaults to out/experiments/bcg_variance; N >= 2 draws, M the drop height (m)\n";
  bool quick = false;
  std::string out_dir;
  int draws = 32;
  double drop = 0.10;
  const auto read_options = [&](const opt::Args& a) {
    quick = a.has("quick");
    out_dir = bench::out_option(a, "bcg_variance");
    draws = bench::int_option(a, "draws", draws, 2, 1 << 20);  // a variance needs two
    drop = bench::double_option(a, "drop", drop, 0.0, 10.0);
    if (quick) draws = std::min(draws, 16);
  };
  if (const auto status =
          bench::read_command_line(argc, argv, "bench_bcg_variance", kUsage, {"quick"},
                                   {"out", "draws", "drop"}, read_options))
    return *status;
  const ExperimentOutput out(out_dir);
  out.create();
  auto model = std::make_shared<Model>(*load_mjcf(bench::data_dir() + "/models/unitree_g1/scene_mjx.xml"));
  model->opt.timestep = kTimestep;
  const int key = model->keyframe_id("home");
  if (key < 0) {
    std::fprintf(stderr, "bench_bcg_variance: scene_mjx.xml has no 'home' keyframe\n");
    return 1;
  }
  std::vector<double> q0 = model->keyframes[static_cast<std::size_t>(key)].qpos;
  const std::vector<double> ctrl = model->keyframes[static_cast<std::size_t>(key)].ctrl;
  q0[2] += drop;
  std::printf("BCG variance: G1 scene_mjx home + %.3f m, Impulse contact, %d steps x %d x %.3f s, tau 400 N, H 2, "
              "sigma_p 0.01 m, sigma_v 0.02 m/s; %d draws; g = dv_z,T/dp_z,0\nmachine: %s, load %s\n",
              drop, kSteps, kSubsteps, kTimestep, draws, bench::cpu_model().c_str(), bench::load_average().c_str());
  std::printf("%6s %5s %3s %14s %14s %12s %11s %8s %7s\n", "kappa", "tau", "B", "mean g", "std g", "var(B=1)/var",
              "bundles/env", "skipped", "failed");
  auto csv = std::make_unique<CsvWriter>(out.path("bcg_variance.csv"),
                                         std::vector<std::string>{"kappa", "tau", "B", "mean", "std", "reduction",
                                                                  "bundles_per_env", "plain_gradient", "max_force"});
  const std::vector<double> kappas = {50, 100, 300};
  const std::vector<int> Bs = quick ? std::vector<int>{1, 10} : std::vector<int>{1, 4, 10};
  double goal_reduction = 0;
  for (double kappa : kappas) {
    const Estimate plain = estimate(model, q0, ctrl, 2, kappa, 0, 0);
    std::printf("%6.0f %5s %3s %14.6e %14s   largest contact force %.0f N\n", kappa, "-", "-", plain.mean, "(plain)",
                plain.max_force);
    for (double tau : {400.0, 0.0}) {
      double var1 = 0;
      for (int B : Bs) {
        const Estimate e = estimate(model, q0, ctrl, draws, kappa, B, tau);
        if (B == 1) var1 = e.var;
        // 0: nothing bundled (the draws then differ only by the mean's rounding)
        const double reduction = e.bundles_per_env > 0 && e.var > 0 ? var1 / e.var : 0;
        if (kappa == 300 && B == 10 && tau == 400) goal_reduction = reduction;
        char red[32] = "-";
        if (reduction > 0) std::snprintf(red, sizeof red, "%.2f", reduction);
        std::printf("%6.0f %5.0f %3d %14.6e %14.6e %12s %11.2f %8d %7d\n", kappa, tau, B, e.mean, std::sqrt(e.var), red,
                    e.bundles_per_env, e.skipped, e.failed);
        csv->row({CsvWriter::num(kappa), CsvWriter::num(tau), std::to_string(B), CsvWriter::num(e.mean),
                  CsvWriter::num(std::sqrt(e.var)), CsvWriter::num(reduction), CsvWriter::num(e.bundles_per_env),
                  CsvWriter::num(plain.mean), CsvWriter::num(plain.max_force)});
      }
    }
  }
  csv.reset();  // written out before gnuplot reads it
  std::printf("goal: variance reduction >= 5x at kappa 300, B 10; measured %.2fx: %s\n", goal_reduction,
              goal_reduction >= 5 ? "MET" : "MISSED");
  const std::string csv_path = "'" + out.path("bcg_variance.csv") + "'";
  out.plot("bcg_variance",
           out.terminal("bcg_variance", 1100, 500) +
               "set datafile separator ','\nset multiplot layout 1,2\n"
               "set title 'Spread of dv_z,T/dp_z,0 over draws (tau = 0: every contact step bundled)'\n"
               "set xlabel 'branches B'\nset ylabel 'std over draws'\nset logscale y\nset xtics (1, 4, 10)\n"
               "set key top right\n"
               "plot for [k in '50 100 300'] " + csv_path +
               " every ::1 using ($1==k && $2==0 ? $3 : 1/0):5 with linespoints lw 2 title 'kappa '.k, " + csv_path +
               " every ::1 using ($1==300 && $2==400 ? $3 : 1/0):5 with linespoints dt 3 lw 2 title 'kappa 300, tau 400 N'\n"
               "set title 'Variance reduction Var(B=1) / Var(B)'\nset ylabel 'reduction'\n"
               "plot for [k in '50 100 300'] " + csv_path +
               " every ::1 using ($1==k && $2==0 ? $3 : 1/0):6 with linespoints lw 2 title 'kappa '.k, " + csv_path +
               " every ::1 using ($1==300 && $2==400 ? $3 : 1/0):6 with linespoints dt 3 lw 2 title 'kappa 300, tau 400 N', "
               "x with lines dt 2 title 'B (independent branches)'\n"
               "unset multiplot\n");
  return 0;
}
