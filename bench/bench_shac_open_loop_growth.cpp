// Why SHAC's gradient exploded on the G1's Impulse floor: the open-loop sensitivity of the G1 to
// its own start, with the servo targets held at the home pose (no policy), for the contact
// model and the integrator of the servos' velocity gain. Per horizon H (control steps of 4 × 5
// ms), the geometric mean over 8 reference-state starts (g1-imitate:run1_subject2's
// initialization) of ‖∂(w · x_H)/∂x_0‖ for one random w, by Rollout::backward:
//   impulse_explicit  the Impulse model at κ 300, the servos' kv explicit (SemiImplicitEuler;
//                     the g1-imitate setting of the earlier training runs)
//   impulse_implicit  the same with the velocity gains implicit (ImplicitDampingEuler, now the
//                     task's setting)
//   soft_explicit     MuJoCo 2.2.2's soft contact, kv explicit
//   soft_implicit     soft contact, kv implicit
// and the six velocity coordinates that carry the largest share of the gradient at H = 32.
// Writes DIR/g1_open_loop_growth.csv and prints the table.
//   bench_shac_open_loop_growth [--out DIR]   (DIR: out/experiments/shac_open_loop_growth)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "bench/experiment_io.hpp"
#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/rollout.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::learn;

struct Setting {
  const char* name;
  ContactModel contact;
  Integrator integrator;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  if (const auto status =
          bench::read_out_only_command_line(argc, argv, "shac_open_loop_growth", &out_dir))
    return *status;
  try {
    const Setting settings[] = {{"impulse_explicit", ContactModel::Impulse, Integrator::SemiImplicitEuler},
                                {"impulse_implicit", ContactModel::Impulse, Integrator::ImplicitDampingEuler},
                                {"soft_explicit", ContactModel::Soft, Integrator::SemiImplicitEuler},
                                {"soft_implicit", ContactModel::Soft, Integrator::ImplicitDampingEuler}};
    const std::vector<int> horizons{1, 2, 4, 8, 12, 16, 20, 24, 28, 32};
    const int N = 8;
    bench::ExperimentOutput out(out_dir);
    out.create();
    bench::CsvWriter csv(out.path("g1_open_loop_growth.csv"), {"setting", "H", "geomean_norm", "max_norm"});
    std::printf("G1 open loop (servo targets at home, 8 reference starts): geometric mean of |d(w.x_H)/dx_0|\n");
    std::printf("%-18s", "H");
    for (int H : horizons) std::printf(" %9d", H);
    std::printf("\n");
    for (const Setting& s : settings) {
      TaskOptions to;
      to.data_dir = bench::data_dir();
      to.contact = s.contact;
      auto task = make_task("g1-imitate:run1_subject2", to);
      auto model = task->model();
      SimulatorOptions so = task->sim_options();
      so.integrator = s.integrator;
      so.nenv = N;
      so.threads = 1;
      Simulator sim(model, so);
      task->resize(N);
      std::mt19937_64 rng(1);
      const int nq = model->nq, nv = model->nv, nu = model->nu;
      std::vector<double> q(static_cast<std::size_t>(N) * nq), v(static_cast<std::size_t>(N) * nv),
          ctrl(static_cast<std::size_t>(N) * nu), zero(static_cast<std::size_t>(nu), 0.0);
      for (int e = 0; e < N; ++e) {
        task->reset_env(e, rng, q.data() + e * nq, v.data() + e * nv);
        task->action_to_ctrl(e, 0, zero.data(), ctrl.data() + e * nu);
      }
      std::normal_distribution<double> normal(0, 1);
      std::vector<double> wq(nq), wv(nv);
      for (double& x : wq) x = normal(rng);
      for (double& x : wv) x = normal(rng);
      std::printf("%-18s", s.name);
      std::vector<std::pair<double, int>> top;
      for (int H : horizons) {
        sim.set_state(q.data(), v.data());
        Rollout r(sim, H);
        r.begin();
        for (int t = 0; t < H; ++t) r.step(ctrl.data());
        std::vector<double> dq(static_cast<std::size_t>(H + 1) * N * nq, 0), dv(static_cast<std::size_t>(H + 1) * N * nv, 0);
        for (int e = 0; e < N; ++e) {
          std::copy(wq.begin(), wq.end(), dq.begin() + (static_cast<std::ptrdiff_t>(H) * N + e) * nq);
          std::copy(wv.begin(), wv.end(), dv.begin() + (static_cast<std::ptrdiff_t>(H) * N + e) * nv);
        }
        std::vector<double> gq(static_cast<std::size_t>(N) * nv), gv(gq.size());
        r.backward(dq.data(), dv.data(), gq.data(), gv.data(), nullptr);
        double log_sum = 0, largest = 0;
        int worst = 0;
        for (int e = 0; e < N; ++e) {
          double n2 = 0;
          for (int i = 0; i < nv; ++i) n2 += gq[e * nv + i] * gq[e * nv + i] + gv[e * nv + i] * gv[e * nv + i];
          log_sum += 0.5 * std::log(n2) / N;
          if (std::sqrt(n2) > largest) { largest = std::sqrt(n2); worst = e; }
        }
        std::printf(" %9.3g", std::exp(log_sum));
        csv.row({s.name, std::to_string(H), bench::CsvWriter::num(std::exp(log_sum)), bench::CsvWriter::num(largest)});
        if (H == horizons.back()) {
          top.clear();
          for (int i = 0; i < nv; ++i) top.push_back({std::abs(gv[worst * nv + i]), i});
          std::sort(top.rbegin(), top.rend());
        }
      }
      std::printf("   largest dL/dqvel0 at H 32 (dof: value):");
      for (int k = 0; k < 6; ++k) std::printf(" %d: %.2g", top[k].second, top[k].first);
      std::printf("\n");
    }
    std::printf("dofs: 0-5 root (linear, angular), 6-11 left leg, 12-17 right leg, 18-20 waist, 21-27 left arm, "
                "28-34 right arm (shoulder pitch, roll, yaw, elbow, wrist roll, pitch, yaw)\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_shac_open_loop_growth: %s\n", e.what());
    return 1;
  }
}
