// DiffMJX experiment 4, "Tolerance sweep" (Paulus et al. 2025;
// docs/references/bcg-diffmjx-shac.md):
// gradient accuracy against cost for the adaptive integrators. Scene: the cube of the toss
// experiment (bench_diffmjx_toss; diffmjx_common.hpp toss::xml), L = horizontal distance after
// 1 s, gradient dL/dvz over several initial vertical velocities vz ∈ [−3, −1]. For tsit5, dopri5
// and bosh3 at rtol ∈ {1e-2, ..., 1e-8} (full run: down to 1e-10, to show where the error stops
// falling) and atol = 1e-3·rtol (DiffMJX's default ratio, 1e-3 / 1e-6: the absolute term only
// matters for components near zero, e.g. the velocity of the resting cube):
//   error = median over vz of |g − g_true| / |g_true|, g_true DiffMJX's kind of ground truth (an
//           adjoint at tight tolerance, as in bench_diffmjx_toss): the step-through gradient of
//           Tsit5 at rtol 1e-12, atol 1e-14 with event location at 1 ns; each method also with
//           event location at 1e-8 s (-ev: AdaptiveTolerances::event_step); the derivative of the
//           flow (central differences of the reference run) differs from every step-through
//           gradient by the event bias, drawn as a line;
//   cost  = dynamics evaluations per control step (Simulator::contact_stats row 5, rejected trials
//           included) and wall time per control step and environment (forward only, one thread).
// max_steps is 4096 per timestep so that the cap does not bend the cost curve (environments that
// still hit it are reported).
//
//   bench_diffmjx_tolerance [--quick] [--out DIR] [--samples N] [--shape cube|ball|...]
//                           [--event-gradients]   (DIR: out/experiments/diffmjx_tolerance)
//
// --event-gradients: the located methods (-eg) and the ground truth add the saltation term at each
// located event (AdaptiveTolerances::event_gradients): the sweep then measures the distance to
// the derivative of the flow itself, which the ground truth meets to the integration's error.
// Writes tolerance_eg.* instead of tolerance.*.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/diffmjx_common.hpp"
#include "bench/experiment_io.hpp"

using namespace stiffgrad;
using namespace stiffgrad::bench;

namespace {

constexpr int kMaxSteps = 4096;
constexpr double kEventStep = 1e-8;  // the -ev methods' event location (s)
using toss::kTruthAtol;
using toss::kTruthRtol;
constexpr double kEps = toss::kTruthEps;

struct Point {
  std::string method;
  double rtol = 0, atol = 0;
  double median_err = 0, max_err = 0;
  double evals = 0, steps = 0;    // per control step (mean over environments)
  double us_per_step = 0;         // forward wall time per control step and environment (µs)
  double us_per_step_grad = 0;    // recording + backward, per control step and environment (µs)
  int capped = 0;
};

}  // namespace

int main(int argc, char** argv) {
  namespace opt = stiffgrad::options;
  constexpr const char* kUsage =
      "usage: bench_diffmjx_tolerance [--quick] [--out DIR] [--samples N] [--shape NAME]\n"
      "                               [--event-gradients]\n"
      "DIR defaults to out/experiments/diffmjx_tolerance; N >= 1 (default 9, --quick 3); NAME:\n"
      "cube (default), ball, capsule, cylinder or ellipsoid\n";
  bool quick = false, event_gradients = false;
  std::string out_dir;
  int samples = 0;
  const toss::Shape* shape = nullptr;
  const auto read_options = [&](const opt::Args& a) {
    quick = a.has("quick");
    event_gradients = a.has("event-gradients");
    out_dir = out_option(a, "diffmjx_tolerance");
    samples = int_option(a, "samples", quick ? 3 : 9, 1, 100000);
    const std::string shape_name = a.get_or("shape", "cube");
    for (const auto& s : toss::shapes())
      if (s.name == shape_name) shape = &s;
    if (!shape)
      throw opt::UsageError("--shape must be cube, ball, capsule, cylinder or ellipsoid, got '" +
                            shape_name + "'");
  };
  if (const auto status = read_command_line(argc, argv, "bench_diffmjx_tolerance", kUsage,
                                            {"quick", "event-gradients"},
                                            {"out", "samples", "shape"}, read_options))
    return *status;
  const std::vector<double> vz = linspace(-3.0, -1.0, samples);
  std::vector<double> rtols;
  if (quick) rtols = {1e-2, 1e-4, 1e-6, 1e-8};
  else
    for (int k = 2; k <= 10; ++k) rtols.push_back(std::pow(10.0, -k));
  // each method plain and with event location (event_step)
  struct SweepMethod {
    std::string name;
    Integrator integrator;
    double event_step;
  };
  const std::string located = event_gradients ? "-eg" : "-ev";  // -eg: with event gradients
  const std::vector<SweepMethod> methods = {{"tsit5", Integrator::Tsit5, 0.0},
                                            {"dopri5", Integrator::Dopri5, 0.0},
                                            {"bosh3", Integrator::Bosh3, 0.0},
                                            {"tsit5" + located, Integrator::Tsit5, kEventStep},
                                            {"dopri5" + located, Integrator::Dopri5, kEventStep},
                                            {"bosh3" + located, Integrator::Bosh3, kEventStep}};
  const std::string prefix = event_gradients ? "tolerance_eg" : "tolerance";
  const char* bias_label = event_gradients ? "the integration's error, with event gradients" : "the event bias";

  std::printf("bench_diffmjx_tolerance: DiffMJX experiment 4 (gradient error vs cost of adaptive integration)%s\n",
              quick ? ", quick" : "");
  std::printf("machine: %s, load average %s at start; one thread\n", cpu_model().c_str(), load_average().c_str());
  std::printf("scene: toss %s (z0 %.1f m, vy %.1f m/s, %.0f s at model timestep %.2f s), vz in [%.0f, %.0f], %d samples\n"
              "tolerances: rtol 1e-2 .. 1e-%d, atol = 1e-3 rtol, <= %d steps per timestep; -ev: event location at %.0e s\n"
              "(-eg: with event gradients too)\n"
              "ground truth: the step-through gradient of tsit5 at rtol %.0e atol %.0e with event location at %.0e s\n"
              "(dto-ref); beside it central FD (eps %.0e in vz) of that run, the derivative of the flow\n",
              shape->name.c_str(), toss::kZ0, toss::kVy, toss::kDuration, toss::kH, vz.front(), vz.back(), samples,
              static_cast<int>(std::lround(-std::log10(rtols.back()))), kMaxSteps, kEventStep, kTruthRtol, kTruthAtol,
              toss::kTruthEventStep, kEps);

  const auto t_all = Clock::now();
  const auto model = model_with_timestep(toss::xml(*shape), toss::kH);
  const toss::GroundTruth gt = toss::ground_truth(model, vz, /*cross_check=*/false, event_gradients);
  const std::vector<double>& truth = gt.ref_grad;
  double scale = 0;
  for (double x : truth) scale = std::max(scale, std::abs(x));
  const double floor = 1e-2 * scale;
  std::vector<double> bias;  // FD of the flow against the ground truth: the event bias
  for (int e = 0; e < samples; ++e) bias.push_back(rel_err(gt.truth.grad[uz(e)], truth[uz(e)], floor));
  std::printf("references: %.1f s, FD check (eps vs 10 eps) worst %.1e, capped %d; FD of the flow vs the ground\n"
              "truth (%s): median %.1e\n\n",
              gt.truth.seconds, gt.fd_worst, gt.truth.capped, bias_label, median(bias));

  std::vector<Point> points;
  std::printf("%-7s %7s %11s %11s %11s %11s %12s %14s %s\n", "method", "rtol", "median err", "max err", "evals/step",
              "steps/step", "us/step fwd", "us/step grad", "notes");
  for (const SweepMethod& me : methods) {
    const std::string& name = me.name;
    for (double rtol : rtols) {
      Point p;
      p.method = name;
      p.rtol = rtol;
      p.atol = 1e-3 * rtol;
      const auto o = integrator_options(me.integrator, samples, p.rtol, p.atol, kMaxSteps, me.event_step,
                                        event_gradients && me.event_step > 0);
      // cost: a plain forward run (what a rollout without gradient pays)
      std::vector<double> q0, v0;
      toss::initial_states(vz, &q0, &v0);
      const RunResult fwd = simulate(model, o, q0, v0, toss::kSteps);
      const double env_steps = static_cast<double>(toss::kSteps) * samples;
      p.us_per_step = 1e6 * fwd.seconds / env_steps;
      // accuracy: the gradient through the recorded steps
      const auto g = toss::gradients(model, o, vz);
      p.us_per_step_grad = 1e6 * (g.run.seconds + g.run.backward_seconds) / env_steps;
      std::vector<double> err;
      for (int e = 0; e < samples; ++e) err.push_back(rel_err(g.dL_dvz[uz(e)], truth[uz(e)], floor));
      p.median_err = median(err);
      p.max_err = *std::max_element(err.begin(), err.end());
      p.evals = mean(fwd.evals_per_step);
      p.steps = mean(fwd.steps_per_step);
      for (int s : fwd.status) p.capped += (s & 4) ? 1 : 0;
      std::string notes;
      if (p.capped) notes += std::to_string(p.capped) + " env(s) hit the step cap; ";
      if (!g.run.bitwise) notes += "replay NOT bitwise; ";
      std::printf("%-7s %7.0e %11.2e %11.2e %11.1f %11.2f %12.1f %14.1f %s\n", name.c_str(), rtol, p.median_err,
                  p.max_err, p.evals, p.steps, p.us_per_step, p.us_per_step_grad, notes.c_str());
      points.push_back(p);
    }
  }
  // the cheapest tolerance per method reaching a given median error
  std::printf("\ncheapest setting per method reaching median rel err <= 1e-1 / 1e-2 / 1e-3 (evals per control step):\n");
  for (const SweepMethod& me : methods) {
    const std::string& name = me.name;
    std::printf("%-9s", name.c_str());
    for (double target : {1e-1, 1e-2, 1e-3}) {
      const Point* best = nullptr;
      for (const Point& p : points)
        if (p.method == name && p.median_err <= target && (!best || p.evals < best->evals)) best = &p;
      if (best) std::printf("   <= %.0e: rtol %.0e, %.1f evals", target, best->rtol, best->evals);
      else std::printf("   <= %.0e: not reached", target);
    }
    std::printf("\n");
  }
  std::printf("total %.1f s\n", seconds_since(t_all));

  // files
  ExperimentOutput out(out_dir);
  try {
    out.create();
    CsvWriter csv(out.path(prefix + ".csv"),
                  {"shape", "method", "rtol", "atol", "median_rel_err", "max_rel_err", "evals_per_step",
                   "steps_per_step", "us_per_step_forward", "us_per_step_gradient", "capped_envs", "event_bias_median"});
    for (const Point& p : points)
      csv.row({shape->name, p.method, CsvWriter::num(p.rtol), CsvWriter::num(p.atol), CsvWriter::num(p.median_err),
               CsvWriter::num(p.max_err), CsvWriter::num(p.evals), CsvWriter::num(p.steps),
               CsvWriter::num(p.us_per_step), CsvWriter::num(p.us_per_step_grad), std::to_string(p.capped),
               CsvWriter::num(median(bias))});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error writing the output: %s\n", e.what());
    return 1;
  }
  const std::string file = out.path(prefix + ".csv");
  const std::string bias_line = CsvWriter::num(std::max(median(bias), 1e-16));
  const std::string bias_legend = std::string(event_gradients ? "integration error" : "event bias") +
                                  ": FD of the flow vs the ground truth";
  std::string gp = out.terminal(prefix, 1300, 550) +
                   "set datafile separator ','\nset logscale xy\nset format y '10^{%L}'\n"
                   "set ylabel 'median relative error of dL/dv_z'\nset key top right font ',9'\nset grid\n"
                   "set multiplot layout 1,2\n";
  const char* colours[] = {"#98df8a", "#aec7e8", "#9edae5", "#2ca02c", "#1f77b4", "#17becf"};
  for (int panel = 0; panel < 2; ++panel) {
    const int xcol = panel == 0 ? 7 : 9;
    gp += panel == 0 ? "set xlabel 'dynamics evaluations per control step'\n"
                       "set title '" + shape->name + " toss: gradient error vs evaluations (labels: rtol)'\n"
                     : "set xlabel 'forward wall time per control step and environment (us)'\n"
                       "set title '" + shape->name + " toss: gradient error vs wall time'\n";
    gp += "plot ";
    for (std::size_t k = 0; k < methods.size(); ++k) {
      const std::string sel = "(strcol(2) eq '" + methods[k].name + "' ? ";
      gp += std::string(k ? ", " : "") + "'" + file + "' u " + std::to_string(xcol) + ":" + sel +
            "$5 : NaN) w lp pt 7 ps 0.7 lc rgb '" + colours[k] + "' t '" + methods[k].name + "'";
      if (panel == 0 && k == 3)
        gp += ", '' u " + std::to_string(xcol) + ":" + sel + "$5 : NaN):(sprintf('%.0e', $3)) w labels offset 0,1 "
              "font ',7' notitle";
    }
    gp += ", " + bias_line + " w l dt 2 lc rgb 'gray' t '" + bias_legend + "'\n";
  }
  gp += "unset multiplot\n";
  out.plot(prefix, gp);
  return 0;
}
