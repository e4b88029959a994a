// Why SHAC does not learn the G1 on the Impulse floor: the norm of SHAC's actor-loss gradient
// (learn/shac.cpp, the whole horizon through the simulator with the policy in the loop) on
// g1-imitate:run1_subject2 against the horizon H, for the contact settings of the training runs:
//   impulse_k300_explicit  the Impulse model at κ = 300 with the servos' velocity gains
//                   explicit (TaskOptions::explicit_servos: the setting of the earlier runs)
//   impulse_k300    the Impulse model at κ = 300 (the default, gains implicit), plain SHAC
//   impulse_k50     the same at κ = 50
//   impulse_k300_bcg  κ = 300 with Bundled Contact Gradients (B 10, H 2, τ 400 N)
//   impulse_k300_bcg_all  the same with τ = 0: every step in contact starts a bundle
//   soft            MuJoCo 2.2.2's soft constraints (--contact soft)
//   free            constraints off and no termination (the robot falls through the floor: the
//                   servos and the policy alone)
// Same seeds, start states and initial networks in every row (8 environments, action std 0.3,
// the tracking reward, one critic). The loss is normalized by H N, so a well-behaved gradient
// does not grow with H. Writes DIR/g1_gradient_vs_horizon.csv and a figure (DIR: --out, default
// out/experiments/shac_gradient).
// With --fd instead: on the Impulse floor (κ 300; servos explicit, then implicit) at H = 8, 16, 32, the adjoint's directional
// derivative of the actor loss along one random unit direction against central differences of
// the loss at steps h = 1e-1 .. 1e-3 (4 environments, a [64] actor): where the loss is smooth the
// differences converge to the adjoint; where contact makes it rough they do not converge at all.
// With --variance: the minibatch-to-minibatch consistency of the gradient at H = 8 and 32 for a
// policy trained K iterations on the soft floor, or with --train-on impulse on the Impulse floor
// (see variance_table).
//   bench_shac_gradient [--quick] [--out DIR] [--seeds N] [--fd]
//                       [--variance [--samples R] [--train-iterations K] [--train-on soft|impulse]]
// (the CSV is g1_gradient_variance_itK.csv, or g1_gradient_variance_itK_impulse.csv)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/experiment_io.hpp"
#include "learn/shac.hpp"
#include "stiffgrad/learn/train.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

// A task with constraints off and no early termination, otherwise the wrapped one.
class WithoutContact final : public Task {
 public:
  explicit WithoutContact(std::unique_ptr<Task> t) : t_(std::move(t)) {}
  std::string name() const override { return t_->name(); }
  std::shared_ptr<const Model> model() const override { return t_->model(); }
  SimulatorOptions sim_options() const override {
    SimulatorOptions o = t_->sim_options();
    o.constraints = false;
    o.contact_model = ContactModel::Soft;
    o.integrator = Integrator::ImplicitDampingEuler;
    return o;
  }
  int obs_dim() const override { return t_->obs_dim(); }
  int act_dim() const override { return t_->act_dim(); }
  int max_episode_steps() const override { return t_->max_episode_steps(); }
  void resize(int n) override { t_->resize(n); }
  void reset_env(int e, std::mt19937_64& r, double* q, double* v) override { t_->reset_env(e, r, q, v); }
  void observe(int e, int t, const double* q, const double* v, double* o) const override { t_->observe(e, t, q, v, o); }
  void adj_observe(int e, int t, const double* q, const double* v, const double* a, double* aq, double* av) const override {
    t_->adj_observe(e, t, q, v, a, aq, av);
  }
  void action_to_ctrl(int e, int t, const double* a, double* c) const override { t_->action_to_ctrl(e, t, a, c); }
  void adj_action_to_ctrl(int e, int t, const double* a, const double* ac, double* aa) const override {
    t_->adj_action_to_ctrl(e, t, a, ac, aa);
  }
  double reward(int e, int t, const double* q, const double* v, const double* a) const override {
    return t_->reward(e, t, q, v, a);
  }
  void adj_reward(int e, int t, const double* q, const double* v, const double* a, double r, double* aq, double* av,
                  double* aa) const override {
    t_->adj_reward(e, t, q, v, a, r, aq, av, aa);
  }
  bool terminated(int, int, const double*, const double*) const override { return false; }

 private:
  std::unique_ptr<Task> t_;
};

struct Setting {
  const char* name;
  ContactModel contact;
  double kappa;
  bool bundles;
  bool free;
  double tau = 400.0;  // bundle trigger (N)
  bool explicit_servos = false;  // TaskOptions::explicit_servos (the earlier runs' setting)
};

// The --fd table (see the header comment).
int finite_difference_table() {
  const std::string spec = "g1-imitate:run1_subject2";
  for (const bool explicit_servos : {true, false}) {
  std::printf("adjoint vs central differences of SHAC's actor loss on %s, Impulse floor, kappa 300, servos' kv %s\n",
              spec.c_str(), explicit_servos ? "explicit" : "implicit");
  std::printf("%4s %14s %12s %12s %12s %12s %12s\n", "H", "adjoint", "h=1e-1", "h=3e-2", "h=1e-2", "h=3e-3",
              "h=1e-3");
  for (int H : {8, 16, 32}) {
    TaskOptions t;
    t.data_dir = bench::data_dir();
    t.explicit_servos = explicit_servos;
    auto task = make_task(spec, t);
    TrainOptions o = defaults_for(spec, Algorithm::Shac);
    o.nenv = 4;
    o.horizon = H;
    o.critic_ensemble = 1;
    o.action_rate_penalty = 0;
    o.init_log_std = std::log(0.3);
    o.actor_hidden = {64};
    o.critic_hidden = {32};
    TrainerCore core(*task, spec, o);
    std::vector<double> q(static_cast<std::size_t>(core.sizes.nenv) * core.sizes.nq), v(static_cast<std::size_t>(core.sizes.nenv) * core.sizes.nv);
    core.sim->get_state(q.data(), v.data());
    const std::mt19937_64 rng0 = core.rng;
    const auto restore = [&] {
      core.sim->set_state(q.data(), v.data());
      core.rng = rng0;
    };
    Shac shac(core);
    restore();
    shac.actor_pass(true);
    const std::vector<float> g = shac.grad();
    const std::size_t n_actor = core.net.actor.num_params();
    const std::vector<float> theta(core.net.actor.params(), core.net.actor.params() + n_actor), log_std = core.net.log_std;
    std::mt19937_64 r(3);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> u(g.size());
    double norm = 0, gu = 0;
    for (double& x : u) { x = normal(r); norm += x * x; }
    for (std::size_t i = 0; i < u.size(); ++i) gu += g[i] * (u[i] /= std::sqrt(norm));
    std::printf("%4d %14.4e", H, gu);
    for (double h : {1e-1, 3e-2, 1e-2, 3e-3, 1e-3}) {
      const auto loss_at = [&](double step) {
        for (std::size_t i = 0; i < n_actor; ++i) core.net.actor.params()[i] = static_cast<float>(theta[i] + step * u[i]);
        for (int k = 0; k < core.sizes.na; ++k) core.net.log_std[k] = static_cast<float>(log_std[k] + step * u[n_actor + k]);
        restore();
        return shac.actor_pass(false);
      };
      std::printf(" %12.4e", (loss_at(h) - loss_at(-h)) / (2 * h));
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  }
  return 0;
}

// The --variance table: how consistent SHAC's actor gradient is from one minibatch to the next
// on each floor. A policy is first trained for `train_iterations` SHAC iterations on the soft
// floor, or on the Impulse floor at κ 300 with `train_on_impulse` (the same policy then serves
// every setting, so the rows differ only by the contact model); then, per setting and horizon, R independent minibatches (16 environments, fresh
// reference-state starts and fresh action noise per minibatch, the same R start sets in every
// row) each give one gradient g_r of the actor loss. Reported: the mean of |g_r|, |mean g|, the
// mean pairwise cosine of the g_r, and SNR = |E g|^2 / tr Cov g, the signal-to-noise ratio of one
// minibatch's gradient (1: signal as large as the noise), estimated without bias as
// |mean g|^2 / s^2 - 1/R with s^2 = sum_r |g_r - mean g|^2 / (R - 1).
// Stochastic-gradient steps make progress only where this ratio is not small.
int variance_table(const std::string& out_dir, int samples, int train_iterations, const std::vector<int>& horizons,
                   bool train_on_impulse) {
  const std::string spec = "g1-imitate:run1_subject2";
  const auto options_for = [&](ContactModel contact, double kappa) {
    TaskOptions t;
    t.data_dir = bench::data_dir();
    t.contact = contact;
    t.kappa = kappa;
    return t;
  };
  TrainOptions base = defaults_for(spec, Algorithm::Shac);
  base.nenv = 16;
  base.critic_ensemble = 1;
  base.action_rate_penalty = 0;
  base.iterations = std::max(train_iterations, 1);
  // the shared policy: SHAC on the soft floor (the setting that trains fastest) or, with
  // --train-on impulse, on the Impulse floor at κ 300, as in training
  const char* train_floor = train_on_impulse ? "Impulse (kappa 300)" : "soft";
  auto train_task = make_task(spec, options_for(train_on_impulse ? ContactModel::Impulse : ContactModel::Soft, 300));
  TrainerCore trained(*train_task, spec, base);
  {
    Shac shac(trained);
    TrainResult result;
    for (int it = 0; it < train_iterations; ++it) trained.finish_iteration(shac.iterate(it), result, {});
    std::printf("policy: %d SHAC iterations on the %s floor (%d envs, seed 0), mean return %.2f, "
                "mean episode length %.1f\n",
                train_iterations, train_floor, base.nenv, result.log.empty() ? 0.0 : result.log.back().mean_return,
                result.log.empty() ? 0.0 : result.log.back().mean_episode_length);
  }
  const std::vector<Setting> settings = {
      {"impulse_k300", ContactModel::Impulse, 300, false, false},
      {"impulse_k300_bcg", ContactModel::Impulse, 300, true, false},
      {"impulse_k100", ContactModel::Impulse, 100, false, false},
      {"impulse_k50", ContactModel::Impulse, 50, false, false},
      {"soft", ContactModel::Soft, 300, false, false},
  };
  const bench::ExperimentOutput out(out_dir);
  out.create();
  const std::string csv_file = out.path("g1_gradient_variance_it" + std::to_string(train_iterations) +
                                        (train_on_impulse ? "_impulse" : "") + ".csv");
  bench::CsvWriter csv(csv_file, {"setting", "horizon", "train_iterations", "samples", "mean_norm",
                                  "norm_of_mean", "mean_cosine", "snr", "snr_uncorrected",
                                  "max_over_median_norm"});
  std::printf("SHAC actor gradient over %d independent minibatches (%d envs each) on %s\n", samples, base.nenv,
              spec.c_str());
  std::printf("%-18s %4s %12s %12s %12s %10s %14s\n", "setting", "H", "mean |g|", "|mean g|", "mean cos",
              "SNR", "max/median |g|");
  for (const Setting& s : settings) {
    for (int H : horizons) {
      auto task = make_task(spec, options_for(s.contact, s.kappa));
      TrainOptions o = base;
      o.horizon = H;
      if (s.bundles) {
        const TrainOptions b = defaults_for(spec, Algorithm::ShacBcg);
        o.algorithm = Algorithm::ShacBcg;
        o.bundles = b.bundles;
      }
      TrainerCore core(*task, spec, o);
      core.net.actor = trained.net.actor;
      core.net.log_std = trained.net.log_std;
      core.net.obs_rms = trained.net.obs_rms;
      core.net.ret_rms = trained.net.ret_rms;
      core.net.critics = trained.net.critics;
      core.net.target_critics = trained.net.target_critics;
      Shac shac(core);
      std::vector<std::vector<double>> g(static_cast<std::size_t>(samples));
      std::vector<double> q(static_cast<std::size_t>(core.sizes.nenv) * core.sizes.nq), v(static_cast<std::size_t>(core.sizes.nenv) * core.sizes.nv);
      for (int r = 0; r < samples; ++r) {
        core.rng.seed(1000 + static_cast<std::uint64_t>(r));
        for (int e = 0; e < core.sizes.nenv; ++e) {
          task->reset_env(e, core.rng, q.data() + static_cast<std::size_t>(e) * core.sizes.nq,
                          v.data() + static_cast<std::size_t>(e) * core.sizes.nv);
          core.episodes.step[static_cast<std::size_t>(e)] = 0;
        }
        core.sim->set_state(q.data(), v.data());
        shac.actor_pass(true);
        g[static_cast<std::size_t>(r)].assign(shac.grad().begin(), shac.grad().end());
      }
      const std::size_t n = g[0].size();
      std::vector<double> mean(n, 0.0), norms;
      for (const auto& gr : g)
        for (std::size_t i = 0; i < n; ++i) mean[i] += gr[i] / samples;
      const auto dot = [n](const std::vector<double>& a, const std::vector<double>& b) {
        double d = 0;
        for (std::size_t i = 0; i < n; ++i) d += a[i] * b[i];
        return d;
      };
      double spread = 0, mean_norm = 0, cos_sum = 0;
      int pairs = 0;
      for (int r = 0; r < samples; ++r) {
        const auto& gr = g[static_cast<std::size_t>(r)];
        norms.push_back(std::sqrt(dot(gr, gr)));
        mean_norm += norms.back() / samples;
        for (std::size_t i = 0; i < n; ++i) spread += (gr[i] - mean[i]) * (gr[i] - mean[i]);
        for (int k = 0; k < r; ++k) {
          const auto& gk = g[static_cast<std::size_t>(k)];
          cos_sum += dot(gr, gk) / std::max(1e-300, norms.back() * norms[static_cast<std::size_t>(k)]);
          ++pairs;
        }
      }
      const double norm_of_mean = std::sqrt(dot(mean, mean));
      // |mean g|^2 overestimates |E g|^2 by tr Σ / R; s^2 = spread / (R - 1) estimates tr Σ, so
      // |mean g|^2 / s^2 - 1 / R is the unbiased ratio (near 0, or below, where there is no signal)
      const double snr_raw = norm_of_mean * norm_of_mean / std::max(1e-300, spread / (samples - 1));
      const double snr = snr_raw - 1.0 / samples;
      const double mean_cos = pairs ? cos_sum / pairs : 1.0;
      std::vector<double> sorted = norms;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sorted.size() / 2];
      const double max_over_median = sorted.back() / std::max(1e-300, median);
      std::printf("%-18s %4d %12.4e %12.4e %12.4f %10.4f %14.2f\n", s.name, H, mean_norm, norm_of_mean, mean_cos,
                  snr, max_over_median);
      std::fflush(stdout);
      csv.row({s.name, std::to_string(H), std::to_string(train_iterations), std::to_string(samples),
               bench::CsvWriter::num(mean_norm), bench::CsvWriter::num(norm_of_mean), bench::CsvWriter::num(mean_cos),
               bench::CsvWriter::num(snr), bench::CsvWriter::num(snr_raw), bench::CsvWriter::num(max_over_median)});
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace opt = stiffgrad::options;
  constexpr const char* kUsage =
      "usage: bench_shac_gradient [--quick] [--out DIR] [--seeds N] [--fd]\n"
      "                           [--variance [--samples R] [--train-iterations K]\n"
      "                                       [--train-on soft|impulse]]\n"
      "DIR defaults to out/experiments/shac_gradient; N >= 1 (default 3), R >= 2 (default 8),\n"
      "K >= 0 (default 60)\n";
  bool quick = false, fd = false, variance = false, train_on_impulse = false;
  std::string out_dir;
  int seeds = 3, samples = 8, train_iterations = 60;
  const auto read_options = [&](const opt::Args& a) {
    quick = a.has("quick");
    fd = a.has("fd");
    variance = a.has("variance");
    out_dir = bench::out_option(a, "shac_gradient");
    seeds = bench::int_option(a, "seeds", seeds, 1, 1000);
    samples = bench::int_option(a, "samples", samples, 2, 100000);  // the spread divides by R - 1
    train_iterations = bench::int_option(a, "train-iterations", train_iterations, 0, 1000000);
    const std::string train_on = a.get_or("train-on", "soft");
    if (train_on != "soft" && train_on != "impulse")
      throw opt::UsageError("--train-on must be soft or impulse, got '" + train_on + "'");
    train_on_impulse = train_on == "impulse";
  };
  if (const auto status = bench::read_command_line(
          argc, argv, "bench_shac_gradient", kUsage, {"quick", "fd", "variance"},
          {"out", "seeds", "samples", "train-iterations", "train-on"}, read_options))
    return *status;
  if (fd) return finite_difference_table();
  if (variance)
    return variance_table(out_dir, quick ? 3 : samples, quick ? 1 : train_iterations,
                          quick ? std::vector<int>{4} : std::vector<int>{8, 32}, train_on_impulse);
  const std::vector<Setting> settings = {
      {"impulse_k300_explicit", ContactModel::Impulse, 300, false, false, 400.0, true},
      {"impulse_k300", ContactModel::Impulse, 300, false, false},
      {"impulse_k50", ContactModel::Impulse, 50, false, false},
      {"impulse_k300_bcg", ContactModel::Impulse, 300, true, false},
      {"impulse_k300_bcg_all", ContactModel::Impulse, 300, true, false, 0.0},
      {"soft", ContactModel::Soft, 300, false, false},
      {"free", ContactModel::Soft, 300, false, true},
  };
  const std::vector<int> horizons = quick ? std::vector<int>{4, 16} : std::vector<int>{1, 2, 4, 8, 16, 32};
  if (quick) seeds = 1;
  const bench::ExperimentOutput out(out_dir);
  out.create();
  const std::string spec = "g1-imitate:run1_subject2";
  std::vector<std::string> header{"horizon"};
  for (const Setting& s : settings) header.push_back(s.name);
  const std::string csv_file = out.path("g1_gradient_vs_horizon.csv");
  {
    bench::CsvWriter csv(csv_file, header);
    std::printf("SHAC actor-gradient norm on %s (8 environments, geometric mean over %d seeds)\n", spec.c_str(), seeds);
    std::printf("%8s", "horizon");
    for (const Setting& s : settings) std::printf(" %21s", s.name);
    std::printf("\n");
    for (int H : horizons) {
      std::vector<std::string> row{std::to_string(H)};
      std::printf("%8d", H);
      for (const Setting& s : settings) {
        double log_sum = 0;
        for (int seed = 0; seed < seeds; ++seed) {
          TaskOptions t;
          t.data_dir = bench::data_dir();
          t.contact = s.contact;
          t.kappa = s.kappa;
          t.explicit_servos = s.explicit_servos;
          std::unique_ptr<Task> task = make_task(spec, t);
          if (s.free) task = std::make_unique<WithoutContact>(std::move(task));
          TrainOptions o = defaults_for(spec, s.bundles ? Algorithm::ShacBcg : Algorithm::Shac);
          o.bundles.tau = s.tau;
          o.nenv = 8;
          o.horizon = H;
          o.seed = static_cast<std::uint64_t>(seed);
          o.critic_ensemble = 1;
          o.action_rate_penalty = 0;
          o.init_log_std = std::log(0.3);
          TrainerCore core(*task, spec, o);
          Shac shac(core);
          shac.actor_pass(true);
          double n2 = 0;
          for (float g : shac.grad()) n2 += static_cast<double>(g) * g;
          log_sum += 0.5 * std::log(std::max(n2, 1e-300));
        }
        const double norm = std::exp(log_sum / seeds);
        row.push_back(bench::CsvWriter::num(norm));
        std::printf(" %21.3e", norm);
        std::fflush(stdout);
      }
      std::printf("\n");
      csv.row(row);
    }
  }  // the CSV is complete before gnuplot reads it
  std::string gp = out.terminal("g1_gradient_vs_horizon") +
                   "set termoption noenhanced\nset datafile separator ','\nset logscale xy\nset grid\nset key left top\n"
                   "set xlabel 'horizon H (control steps)'\nset ylabel '|dL/dtheta| (SHAC actor loss, normalized by H N)'\n"
                   "set title 'SHAC gradient on g1-imitate:run1_subject2'\nplot ";
  for (std::size_t k = 0; k < settings.size(); ++k)
    gp += (k ? ", " : "") + std::string("'") + csv_file + "' using 1:" + std::to_string(k + 2) +
          " skip 1 with linespoints lw 2 title '" + settings[k].name + "'";
  gp += "\n";
  out.plot("g1_gradient_vs_horizon", gp);
  return 0;
}
