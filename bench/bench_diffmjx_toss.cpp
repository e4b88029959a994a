// DiffMJX experiment 2, "Toss" (Paulus et al. 2025; shared/facts/bcg-diffmjx-shac.md): a cube,
// ball, capsule, cylinder and ellipsoid, each a free body, dropped from z0 = 0.2 m with horizontal
// velocity vy = −0.1 m/s and initial vertical velocity vz; after 1 s at model timestep h = 0.01 the
// loss is the horizontal distance travelled. The gradient dL/dvz over a sweep vz ∈ [−3, −1], from
//   - euler (semi-implicit, MuJoCo's default) and rk4 (MuJoCo's) at the fixed step h,
//   - tsit5, dopri5, bosh3: adaptive inside each timestep h, at the paper's tolerances for this
//     experiment (rtol = atol = 1e-8; max_steps raised to 1024 steps per timestep), and tsit5 at
//     DiffMJX's defaults (rtol 1e-3, atol 1e-6, 16 steps per timestep) for comparison,
// against ground truth: central differences in vz of Tsit5 at rtol 1e-12, atol 1e-14 (FD step
// checked against 10x the step). Beside it a second reference: the step-through gradient of that
// same tight Tsit5 run ("dto-ref"), the analogue of the paper's reference (an adjoint solve at
// tolerance 1e-10). The two differ by a floor that no integrator removes: MuJoCo clamps the
// impedance to >= 1e-4 (mjMINIMP), so with solimp dmin = 0 the contact force still jumps by 1e-4
// of its scale at touchdown and lift-off, and a gradient through the steps never sees a jump
// (measured: that floor scales linearly with dmin: 1.5e-3 at the clamp, ~1.5e-2 at dmin 1e-3,
// ~1.5e-1 at dmin 1e-2, for the cube).
//
//   bench_diffmjx_toss [--quick] [--out DIR] [--samples N] [--shapes cube,ball,...]
//
// Goal (issue): adaptive median relative gradient error <= 1e-3 where fixed-step euler is >= 0.5.
// Writes <out>/toss.csv (every shape, method and vz), toss_summary.csv (medians) and toss.png.
// Contact parameters and the scene are in diffmjx_common.hpp (toss::xml): solref (0.005, 1),
// solimp (0, 0.95, 0.001, 0.5, 2) on every geom, refsafe disabled so that the time constant 0.005
// stays below 2h (stiff: what the fixed steps cannot resolve).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/diffmjx_common.hpp"
#include "bench/experiment_io.hpp"

using namespace stiffgrad;
using namespace stiffgrad::bench;

namespace {

struct Method {
  std::string name;
  Integrator integrator;
  double rtol = 1e-8, atol = 1e-8;
  int max_steps = 1024;
  bool adaptive_goal = false;  // counts for the goal's "adaptive" side
};

const std::vector<Method>& methods() {
  static const std::vector<Method> m = {
      {"euler", Integrator::SemiImplicitEuler},
      {"rk4", Integrator::RK4},
      {"tsit5", Integrator::Tsit5, 1e-8, 1e-8, 1024, true},
      {"dopri5", Integrator::Dopri5, 1e-8, 1e-8, 1024, true},
      {"bosh3", Integrator::Bosh3, 1e-8, 1e-8, 1024, true},
      {"tsit5-default", Integrator::Tsit5, 1e-3, 1e-6, 16},
  };
  return m;
}

using toss::kTruthAtol;
using toss::kTruthMaxSteps;
using toss::kTruthRtol;
constexpr double kEps = toss::kTruthEps;

struct Cell {  // one shape x method
  std::vector<double> grad, err;
  double median_err = 0, median_err_ref = 0, evals = 0, seconds = 0;
  double median_dL = 0;  // forward accuracy: median |L − L_true| (m)
  int capped = 0, failed = 0;
  bool bitwise = true;
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string out_dir = "results";
  int samples = 0;
  std::vector<std::string> only;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string k = argv[i];
      if (k == "--quick") quick = true;
      else if (parse_out_flag(argc, argv, i, &out_dir)) {}
      else if (k == "--samples" && i + 1 < argc) samples = std::stoi(argv[++i]);
      else if (k == "--shapes" && i + 1 < argc) only = split(argv[++i], ',');
      else throw std::invalid_argument("unknown argument '" + k + "'");
    }
    if (samples == 0) samples = quick ? 3 : 21;
    if (samples < 2) throw std::invalid_argument("--samples must be >= 2");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\nusage: bench_diffmjx_toss [--quick] [--out DIR] [--samples N] [--shapes cube,ball,...]\n",
                 e.what());
    return 2;
  }
  std::vector<toss::Shape> shapes;
  for (const auto& s : toss::shapes())
    if (only.empty() || std::find(only.begin(), only.end(), s.name) != only.end()) shapes.push_back(s);
  if (shapes.empty()) {
    std::fprintf(stderr, "no such shape (cube, ball, capsule, cylinder, ellipsoid)\n");
    return 2;
  }
  const std::vector<double> vz = linspace(-3.0, -1.0, samples);

  std::printf("bench_diffmjx_toss: DiffMJX experiment 2 (objects tossed onto a stiff floor)%s\n", quick ? ", quick" : "");
  std::printf("machine: %s, load average %s at start; one thread\n", cpu_model().c_str(), load_average().c_str());
  std::printf("scene: free body at z0 %.1f m, vy %.1f m/s, vz in [%.0f, %.0f] (%d samples), %.0f s at h %.2f s,\n"
              "solref 0.005 1, solimp 0 0.95 0.001 0.5 2, refsafe off; L = horizontal distance travelled\n",
              toss::kZ0, toss::kVy, vz.front(), vz.back(), samples, toss::kDuration, toss::kH);
  std::printf("methods: euler, rk4 (fixed h); tsit5, dopri5, bosh3 at rtol = atol = 1e-8, <= 1024 steps per timestep;\n"
              "tsit5-default at rtol 1e-3, atol 1e-6, <= 16 steps per timestep\n");
  std::printf("ground truth: central FD (eps %.0e in vz) of tsit5 rtol %.0e atol %.0e, <= %d steps per timestep\n"
              "relative error: |g - g_true| / max(|g_true|, 1%% of the shape's largest |g_true|)\n",
              kEps, kTruthRtol, kTruthAtol, kTruthMaxSteps);

  const auto t_all = Clock::now();
  std::unique_ptr<CsvWriter> csv;
  ExperimentOutput out(out_dir);
  try {
    out.create();
    csv = std::make_unique<CsvWriter>(out.path("toss.csv"), std::vector<std::string>{"shape", "method", "vz", "grad",
                                                                                       "ground_truth", "rel_err"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }

  std::map<std::string, std::map<std::string, Cell>> cells;  // shape -> method -> results
  std::vector<std::string> notes;
  std::map<std::string, double> ref_floor;  // shape -> median error of dto-ref against FD
  for (const auto& shape : shapes) {
    const auto model = model_with_timestep(toss::xml(shape), toss::kH);
    const toss::GroundTruth gt = toss::ground_truth(model, vz);
    const toss::Truth& truth = gt.truth;
    const double floor = gt.floor, fd_worst = gt.fd_worst;
    const std::vector<double>& ref_err = gt.ref_err;
    ref_floor[shape.name] = median(ref_err);
    std::printf("\n== %s: ground truth %.1f s, FD check (eps vs 10 eps) worst %.1e, capped %d, failed %d; "
                "L in [%.4f, %.4f] m;\n   dto-ref (step-through gradient of the same run) vs FD: median %.1e\n",
                shape.name.c_str(), truth.seconds, fd_worst, truth.capped, truth.failed,
                *std::min_element(truth.L.begin(), truth.L.end()), *std::max_element(truth.L.begin(), truth.L.end()),
                ref_floor[shape.name]);
    if (truth.capped || truth.failed)
      notes.push_back(shape.name + ": the ground truth run hit the step cap or failed");
    for (const Method& me : methods()) {
      const auto o = integrator_options(me.integrator, samples, me.rtol, me.atol, me.max_steps);
      const auto g = toss::gradients(model, o, vz);
      Cell c;
      c.grad = g.dL_dvz;
      for (int e = 0; e < samples; ++e) {
        c.err.push_back(rel_err(c.grad[uz(e)], truth.grad[uz(e)], floor));
        csv->row({shape.name, me.name, CsvWriter::num(vz[uz(e)]), CsvWriter::num(c.grad[uz(e)]),
                  CsvWriter::num(truth.grad[uz(e)]), CsvWriter::num(c.err.back())});
      }
      c.median_err = median(c.err);
      std::vector<double> dL;
      for (int e = 0; e < samples; ++e) dL.push_back(std::abs(g.L[uz(e)] - truth.L[uz(e)]));
      c.median_dL = median(dL);
      std::vector<double> err_ref;
      for (int e = 0; e < samples; ++e) err_ref.push_back(rel_err(c.grad[uz(e)], gt.ref_grad[uz(e)], floor));
      c.median_err_ref = median(err_ref);
      c.evals = mean(g.run.evals_per_step);
      c.seconds = g.run.seconds + g.run.backward_seconds;
      for (int s : g.run.status) {
        c.capped += (s & 4) ? 1 : 0;
        c.failed += (s & 1) ? 1 : 0;
      }
      c.bitwise = g.run.bitwise;
      if (c.capped) notes.push_back(shape.name + "/" + me.name + ": " + std::to_string(c.capped) + " env(s) hit the step cap");
      if (c.failed) notes.push_back(shape.name + "/" + me.name + ": " + std::to_string(c.failed) + " env(s) non-finite");
      if (!c.bitwise) notes.push_back(shape.name + "/" + me.name + ": replay not bitwise");
      cells[shape.name][me.name] = c;
    }
    // per-sample table for this shape
    std::printf("%6s %11s %11s", "vz", "truth (FD)", "dto-ref");
    for (const Method& me : methods()) std::printf(" %13s", me.name.c_str());
    std::printf("\n");
    for (int e = 0; e < samples; ++e) {
      std::printf("%6.2f %11.4e %11.4e", vz[uz(e)], truth.grad[uz(e)], gt.ref_grad[uz(e)]);
      for (const Method& me : methods()) std::printf(" %13.4e", cells[shape.name][me.name].grad[uz(e)]);
      std::printf("\n");
    }
  }
  csv.reset();

  // summary tables, rows: shape, columns: method; `extra` adds a last column (header, value)
  const auto table = [&](const char* title, auto&& cell, const char* extra_header = nullptr,
                         const std::map<std::string, double>* extra = nullptr) {
    std::printf("\n%s\n%-10s", title, "");
    for (const Method& me : methods()) std::printf(" %13s", me.name.c_str());
    if (extra_header) std::printf(" %13s", extra_header);
    std::printf("\n");
    for (const auto& shape : shapes) {
      std::printf("%-10s", shape.name.c_str());
      for (const Method& me : methods()) cell(cells[shape.name][me.name]);
      if (extra) std::printf(" %13.2e", extra->at(shape.name));
      std::printf("\n");
    }
  };
  table("median relative gradient error (rows: shape; columns: method)",
        [](const Cell& c) { std::printf(" %13.2e", c.median_err); });
  table("median relative gradient error against dto-ref (the converged step-through gradient)",
        [](const Cell& c) { std::printf(" %13.2e", c.median_err_ref); }, "dto-ref vs FD", &ref_floor);
  table("forward accuracy: median |L - L_true| (m)", [](const Cell& c) { std::printf(" %13.1e", c.median_dL); });
  table("dynamics evaluations per control step (mean over the sweep) / seconds forward+backward",
        [](const Cell& c) { std::printf(" %7.1f/%5.2f", c.evals, c.seconds); });
  for (const auto& n : notes) std::printf("note: %s\n", n.c_str());
  if (notes.empty()) std::printf("no environment hit the step cap or failed; every replay was bitwise\n");

  // goal: per shape, every adaptive method (paper tolerances) <= 1e-3 and euler >= 0.5
  std::printf("\ngoal (issue): adaptive median relative gradient error <= 1e-3 where fixed-step euler is >= 0.5\n"
              "(against the FD ground truth; in brackets the worst adaptive against dto-ref)\n");
  bool all = true;
  for (const auto& shape : shapes) {
    const auto& row = cells[shape.name];
    double worst_adaptive = 0, worst_vs_ref = 0;
    for (const Method& me : methods())
      if (me.adaptive_goal) {
        worst_adaptive = std::max(worst_adaptive, row.at(me.name).median_err);
        worst_vs_ref = std::max(worst_vs_ref, row.at(me.name).median_err_ref);
      }
    const double euler = row.at("euler").median_err;
    const bool met = worst_adaptive <= 1e-3 && euler >= 0.5;
    all = all && met;
    std::printf("measured %-10s: worst adaptive (tsit5/dopri5/bosh3) %.2e [%.2e], euler %.2e -> %s\n",
                shape.name.c_str(), worst_adaptive, worst_vs_ref, euler, met ? "MET" : "MISSED");
  }
  std::printf("overall: %s; total %.1f s\n", all ? "MET" : "MISSED", seconds_since(t_all));

  // per shape x method summary (the figure's last panel)
  try {
    CsvWriter sum(out.path("toss_summary.csv"), {"shape_index", "shape", "method", "median_rel_err",
                                                 "median_rel_err_vs_dto_ref", "dto_ref_vs_fd", "evals_per_step",
                                                 "capped_envs"});
    for (std::size_t i = 0; i < shapes.size(); ++i)
      for (const Method& me : methods()) {
        const Cell& c = cells[shapes[i].name][me.name];
        sum.row({std::to_string(i), shapes[i].name, me.name, CsvWriter::num(c.median_err),
                 CsvWriter::num(c.median_err_ref), CsvWriter::num(ref_floor[shapes[i].name]), CsvWriter::num(c.evals),
                 std::to_string(c.capped)});
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }

  // figure: one panel per shape (relative error against vz, one curve per method, log scale),
  // then the medians per shape with the goal's two thresholds; the last panel's key holds for all
  const std::string file = out.path("toss.csv"), summary = out.path("toss_summary.csv");
  std::string gp = out.terminal("toss", 1500, 900) + "set datafile separator ','\nset logscale y\n"
                   "set format y '10^{%L}'\nset ylabel 'relative gradient error'\nset multiplot layout 2,3\n";
  const char* colours[] = {"#d62728", "#9467bd", "#2ca02c", "#1f77b4", "#17becf", "#ff7f0e"};
  gp += "unset key\nset xlabel 'initial v_z (m/s)'\n";
  for (const auto& shape : shapes) {
    gp += "set title '" + shape.name + ": dL/dv_z error vs FD ground truth'\nplot ";
    for (std::size_t k = 0; k < methods().size(); ++k) {
      const std::string& m = methods()[k].name;
      gp += std::string(k ? ", " : "") + "'" + file + "' u 3:((strcol(1) eq '" + shape.name + "' && strcol(2) eq '" +
            m + "') ? ($6 > 1e-16 ? $6 : 1e-16) : NaN) w lp pt 7 ps 0.5 lc rgb '" + colours[k] + "' t '" + m + "'";
    }
    gp += "\n";
  }
  gp += "set title 'median relative error per shape (key for all panels)'\nset xlabel ''\n"
        "set xrange [-0.5:" + std::to_string(shapes.size()) + "-0.5]\nset yrange [1e-4:1e14]\nset xtics rotate by 30 right\n"
        "set key top left font ',7' maxrows 4\nplot ";
  for (std::size_t k = 0; k < methods().size(); ++k) {
    const std::string& m = methods()[k].name;
    gp += std::string(k ? ", " : "") + "'" + summary + "' u 1:(strcol(3) eq '" + m +
          "' ? $4 : NaN):xtic(2) w p pt 7 ps 1.2 lc rgb '" + colours[k] + "' t '" + m + "'";
  }
  gp += ", 1e-3 w l dt 2 lc rgb 'black' t 'goal: adaptive <= 1e-3', 0.5 w l dt 3 lc rgb 'black' t "
        "'goal: euler >= 0.5'\nunset multiplot\n";
  out.plot("toss", gp);
  return 0;
}
