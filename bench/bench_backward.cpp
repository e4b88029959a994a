// bench_backward: cost of exact reverse-mode gradients of a whole rollout (Rollout: checkpoints
// at control boundaries, backward() replays each control step's substeps and runs the adjoint
// substeps in reverse) against the forward rollout alone, and against MuJoCo 2.2.2's
// finite-difference transition Jacobian (mjd_transitionFD) for getting a gradient through one
// step.
//
//   bench_backward [--backend cpu|cuda] [--quick] [--models humanoid,g1[,PATH.xml]]
//                  [--nenv N1,N2,..] [--horizon T] [--substeps S] [--min-time S]
//                  [--rounds R] [--threads T]
//
// CPU: nenv 1, 64, 1024, 4096; one thread and all cores; float and double; T = 32 control
// steps of S = 4 substeps each. Per point:
//   forward      Simulator::step() T times (the rollout a simulator alone would run);
//   fwd+bwd      Rollout::begin(), Rollout::step() T times, the loss gradient assembled from the
//                checkpoints, Rollout::backward() for dL/dqpos_0, dL/dqvel_0 and dL/dctrl_0..T-1.
// The loss is L = 1/2 |qpos_T - qpos0|^2 + c/2 sum_{t=1..T} |qvel_t|^2 (a final-state term and a
// per-step velocity term), c = 1e-2. Every rollout starts from the same seeded random states
// (reset untimed); every figure is the best of a few rounds (each at least --min-time
// seconds), stiffgrad's float and double and MuJoCo's rounds interleaved.
// MuJoCo: mjd_transitionFD(m, d, 1e-6, centered, A, B, NULL, NULL) on one mjData, one thread,
// constraint solver off, Euler, stiffgrad's timestep; the cost per call is compared with ours
// per substep (see print_preamble()).
// --quick: nenv 1, 64, 256, 2 rounds of >= 0.1 s (about 1 minute on 2 idle cores). The full run
// is dominated by nenv 4096 (T S nenv = 524288 environment-substeps per rollout, about 25 s
// per fwd+bwd on one core): roughly 10 minutes on 2 idle cores.
// CUDA: the same rows at nenv 1024 .. 16384, or a clear message when the CUDA backend has no
// Rollout yet.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_common.hpp"
#include "stiffgrad/stiffgrad.hpp"

namespace {

using stiffgrad::Backend;
using stiffgrad::Model;
using stiffgrad::Precision;
namespace sb = stiffgrad::bench;
namespace opt = stiffgrad::options;
using sb::Clock;
using sb::seconds_since;
using sb::Workload;

constexpr double kVelWeight = 1e-2;         // c in the loss
constexpr double kFdEps = 1e-6;             // mjd_transitionFD's eps
constexpr double kRatioTarget = 3.0;        // fwd+bwd <= 3x forward
constexpr double kFdTarget = 30.0;          // MuJoCo FD Jacobian / our gradient >= 30x
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- options

struct Args {
  Backend backend = Backend::Cpu;
  bool quick = false;
  std::vector<std::string> models = {"humanoid", "g1"};
  std::vector<int> nenvs;  // default depends on backend and --quick
  int horizon = 32;
  int substeps = 4;
  double min_time = -1.0;  // per round; default depends on --quick
  int rounds = 0;          // default depends on --quick
  int threads_all = 0;     // "all cores" thread count; 0: OpenMP's default
};

constexpr const char* kUsage =
    "usage: bench_backward [--backend cpu|cuda] [--quick] [--models humanoid,g1[,PATH.xml]]\n"
    "                      [--nenv N1,N2,..] [--horizon T] [--substeps S]\n"
    "                      [--min-time SECONDS] [--rounds R] [--threads T]\n";

// Seconds per call of fn(), each call preceded by reset() (untimed); calls are repeated until
// `min_time` has been timed (at least one call).
template <class Reset, class Fn>
double time_per_call(double min_time, Reset reset, Fn fn) {
  double elapsed = 0.0;
  long long calls = 0;
  do {
    reset();
    const auto t0 = Clock::now();
    fn();
    elapsed += seconds_since(t0);
    ++calls;
  } while (elapsed < min_time);
  return elapsed / static_cast<double>(calls);
}

// ---------------------------------------------------------------- stiffgrad

// One Simulator and its Rollout on one precision / thread count, with the loss-gradient and
// output buffers sized once.
class SgCase {
 public:
  SgCase(const std::shared_ptr<const Model>& model, const Workload& w, Backend backend,
         Precision prec, int threads, int horizon, int substeps)
      : m_(*model), w_(w), T_(horizon) {
    stiffgrad::SimulatorOptions o;
    o.backend = backend;
    o.precision = prec;
    o.nenv = w.nenv;
    o.substeps = substeps;
    o.constraints = false;  // the smooth step, as MuJoCo with mjDSBL_CONSTRAINT beside it
    o.threads = threads;
    sim_ = std::make_unique<stiffgrad::Simulator>(model, o);
    // Throws where the backend has no gradients yet (the caller reports it).
    rollout_ = std::make_unique<stiffgrad::Rollout>(*sim_, horizon);
    const std::size_t n = static_cast<std::size_t>(w.nenv);
    dL_dqpos_.assign((T_ + 1) * n * m_.nq, 0.0);
    dL_dqvel_.assign((T_ + 1) * n * m_.nv, 0.0);
    qpos_scratch_.resize(n * m_.nq);
    g_qpos0_.resize(n * m_.nv);
    g_qvel0_.resize(n * m_.nv);
    g_ctrl_.resize(T_ * n * m_.nu + 1);
    // warm-up: first touch of the workspace and checkpoints, thread pool start
    reset();
    forward();
    reset();
    forward_backward();
  }

  void reset() {
    sim_->set_state(w_.qpos.data(), w_.qvel.data());
    sim_->set_ctrl(w_.ctrl.data());
    sim_->synchronize();
  }
  void forward() {
    for (int t = 0; t < T_; ++t) sim_->step();
    sim_->synchronize();
  }
  void forward_backward() {
    rollout_->begin();
    for (int t = 0; t < T_; ++t) rollout_->step();
    loss_gradient();
    rollout_->backward(dL_dqpos_.data(), dL_dqvel_.data(), g_qpos0_.data(), g_qvel0_.data(),
                       g_ctrl_.data());
    sim_->synchronize();
  }

  double time_forward(double min_time) {
    return time_per_call(min_time, [&] { reset(); }, [&] { forward(); });
  }
  double time_forward_backward(double min_time) {
    const double s = time_per_call(min_time, [&] { reset(); }, [&] { forward_backward(); });
    check();
    return s;
  }

  std::size_t bytes_per_env() const { return rollout_->bytes_per_env(); }
  // Problems seen in any timed call: non-finite states or gradients, replay not bitwise.
  std::string problems() const {
    std::string p;
    if (failed_ > 0) p += " " + std::to_string(failed_) + " envs non-finite!";
    if (!finite_) p += " non-finite gradient!";
    if (!bitwise_) p += " replay not bitwise!";
    return p;
  }

 private:
  // dL/dqpos_T = qpos_T - qpos0 (raw coordinates), dL/dqvel_t = c qvel_t for t = 1..T, read
  // from the checkpoints as a training loop would; rows of dL_dqpos before T stay zero.
  void loss_gradient() {
    const std::size_t n = static_cast<std::size_t>(w_.nenv);
    const std::size_t nq = m_.nq, nv = m_.nv;
    for (int t = 1; t <= T_; ++t) {
      double* qpos = t == T_ ? &dL_dqpos_[T_ * n * nq] : qpos_scratch_.data();
      double* qvel = &dL_dqvel_[t * n * nv];
      rollout_->checkpoint(t, qpos, qvel);
      for (std::size_t i = 0; i < n * nv; ++i) qvel[i] *= kVelWeight;
    }
    double* q = &dL_dqpos_[T_ * n * nq];
    for (std::size_t e = 0; e < n; ++e)
      for (std::size_t i = 0; i < nq; ++i) q[e * nq + i] -= m_.qpos0[i];
  }
  void check() {
    failed_ = std::max(failed_, sim_->num_failed());
    bitwise_ = bitwise_ && rollout_->replay_bitwise();
    auto finite = [](const std::vector<double>& v) {
      return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
    };
    finite_ = finite_ && finite(g_qpos0_) && finite(g_qvel0_) && finite(g_ctrl_);
  }

  const Model& m_;
  const Workload& w_;
  int T_;
  std::unique_ptr<stiffgrad::Simulator> sim_;
  std::unique_ptr<stiffgrad::Rollout> rollout_;
  std::vector<double> dL_dqpos_, dL_dqvel_;  // (T+1) x nenv x nq, (T+1) x nenv x nv
  std::vector<double> qpos_scratch_;         // nenv x nq
  std::vector<double> g_qpos0_, g_qvel0_;    // nenv x nv
  std::vector<double> g_ctrl_;               // T x nenv x nu
  int failed_ = 0;
  bool finite_ = true, bitwise_ = true;
};

// ---------------------------------------------------------------- MuJoCo

#ifdef SG_HAVE_MUJOCO
// mjd_transitionFD on one mjData holding environment 0 of a workload: A is (2nv+na)^2 and B
// (2nv+na) x nu, row-major, A[i][j] = d x_next_i / d x_j with x = (qpos in the tangent
// convention, qvel, act).
class MjFd {
 public:
  MjFd(const mjModel* m, const Workload& w) : m_(m), d_(mj_makeData(m)) {
    if (!d_) throw std::runtime_error("mj_makeData failed");
    nx_ = 2 * m->nv + m->na;
    A_.resize(static_cast<std::size_t>(nx_) * nx_);
    B_.resize(static_cast<std::size_t>(nx_) * m->nu + 1);
    std::memcpy(d_->qpos, w.qpos.data(), sizeof(mjtNum) * m->nq);
    std::memcpy(d_->qvel, w.qvel.data(), sizeof(mjtNum) * m->nv);
    if (m->nu) std::memcpy(d_->ctrl, w.ctrl.data(), sizeof(mjtNum) * m->nu);
    mj_forward(m, d_.get());
    jacobian();  // warm-up
  }
  void jacobian() { mjd_transitionFD(m_, d_.get(), kFdEps, 1, A_.data(), B_.data(), nullptr, nullptr); }
  double time_per_call(double min_time) {
    return ::time_per_call(min_time, [] {}, [&] { jacobian(); });
  }
  int nx() const { return nx_; }
  const std::vector<mjtNum>& A() const { return A_; }
  const std::vector<mjtNum>& B() const { return B_; }

 private:
  const mjModel* m_;
  sb::MjDataPtr d_;
  int nx_ = 0;
  std::vector<mjtNum> A_, B_;
};

// What the two sides compute is the same thing: for one environment, one substep (T = S = 1,
// double) and a random w on qvel_1, our gradient (dL/dqpos_0 tangent, dL/dqvel_0, dL/dctrl_0)
// must equal w^T [A_qvel-rows, B_qvel-rows] from MuJoCo's finite differences. Returns the
// largest difference relative to the largest entry.
double check_against_fd(const std::shared_ptr<const Model>& model, const Workload& w, MjFd& fd) {
  const Model& m = *model;
  const int nv = m.nv, nu = m.nu, nx = fd.nx();
  Workload one;
  one.nenv = 1;
  one.qpos.assign(w.qpos.begin(), w.qpos.begin() + m.nq);
  one.qvel.assign(w.qvel.begin(), w.qvel.begin() + nv);
  one.ctrl.assign(w.ctrl.begin(), w.ctrl.begin() + nu + 1);
  stiffgrad::SimulatorOptions o;
  o.precision = Precision::Double;
  o.constraints = false;  // the smooth step, as MuJoCo with mjDSBL_CONSTRAINT beside it
  o.substeps = 1;
  o.threads = 1;
  stiffgrad::Simulator sim(model, o);
  stiffgrad::Rollout ro(sim, 1);
  sim.set_state(one.qpos.data(), one.qvel.data());
  sim.set_ctrl(one.ctrl.data());
  ro.begin();
  ro.step();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> dqvel(2 * static_cast<std::size_t>(nv), 0.0), gq(nv), gv(nv), gu(nu + 1);
  for (int i = 0; i < nv; ++i) dqvel[nv + i] = u(rng);  // row 1: w
  ro.backward(nullptr, dqvel.data(), gq.data(), gv.data(), gu.data());

  fd.jacobian();
  double diff = 0.0, scale = 0.0;
  auto compare = [&](double ours, double theirs) {
    diff = std::max(diff, std::abs(ours - theirs));
    scale = std::max(scale, std::abs(theirs));
  };
  for (int j = 0; j < 2 * nv + nu; ++j) {
    double vjp = 0.0;
    for (int i = 0; i < nv; ++i) {
      const double wi = dqvel[nv + i];
      vjp += j < 2 * nv ? wi * fd.A()[static_cast<std::size_t>(nv + i) * nx + j]
                        : wi * fd.B()[static_cast<std::size_t>(nv + i) * nu + (j - 2 * nv)];
    }
    compare(j < nv ? gq[j] : j < 2 * nv ? gv[j - nv] : gu[j - 2 * nv], vjp);
  }
  return scale > 0.0 ? diff / scale : diff;
}
#endif

// ---------------------------------------------------------------- table

struct Row {
  Precision prec = Precision::Double;
  std::string threads;
  int nenv = 0;
  double fwd = kInf, fb = kInf;  // seconds per rollout (best round)
  std::size_t bytes = 0;
  bool one_thread = false;
  std::string problems;
};

void print_preamble(const Args& a) {
  const int T = a.horizon, S = a.substeps;
  std::printf("bench_backward: exact gradients of a whole rollout vs the forward rollout alone\n");
  std::printf(
      "machine: %s, %u logical cores, %d OpenMP threads for the all-cores rows, "
      "load average %s at start\n",
      sb::cpu_model().c_str(), std::thread::hardware_concurrency(), a.threads_all,
      sb::load_average().c_str());
  std::printf(
      "rollout: T = %d control steps of S = %d substeps (model timestep each), held random\n"
      "  controls near mid-range, seeded random initial states; loss L = 1/2|qpos_T - qpos0|^2\n"
      "  + %g/2 sum_t |qvel_t|^2; gradients dL/dqpos_0, dL/dqvel_0, dL/dctrl_0..T-1\n",
      T, S, kVelWeight);
  std::printf(
      "  forward    = Simulator::step() x T\n"
      "  fwd+bwd    = Rollout::begin, Rollout::step() x T, loss gradient from the checkpoints,\n"
      "               Rollout::backward (replays each control step, then adjoint substeps)\n"
      "  fb/fwd     = fwd+bwd / forward (the cost of a gradient-carrying rollout; no target)\n"
      "  bwd/fwd    = (fwd+bwd - forward) / forward: the backward pass alone, replay included\n"
      "               (target: backward <= %.0fx forward)\n"
      "  bytes/env  = Rollout::bytes_per_env() (checkpoints + adjoint workspace)\n",
      kRatioTarget);
  if (a.backend == Backend::Cpu) {
    std::printf(
        "gradient through one step, one thread (1-thread rows only):\n"
        "  ours       = (fwd+bwd - forward) / (T S nenv): the whole extra cost of the gradient\n"
        "               per environment per substep (replay + adjoint), i.e. one vector-Jacobian\n"
        "               product (VJP) through one step of the model timestep\n");
#ifdef SG_HAVE_MUJOCO
    std::printf(
        "  MuJoCo FD  = one mjd_transitionFD(m, d, eps=%g, centered) call (MuJoCo %s, double,\n"
        "               constraint solver off, Euler, same timestep): the full transition\n"
        "               Jacobians A ((2nv+na)^2) and B ((2nv+na) x nu) of one step\n"
        "  FD/ours    = MuJoCo FD / ours (target >= %.0fx). A full Jacobian gives every VJP of\n"
        "               that step at once, but training needs only one VJP per step (the adjoint\n"
        "               of the loss): this compares the cost of getting the gradient through\n"
        "               one step both ways. Ours in float is compared with MuJoCo's double.\n",
        kFdEps, mj_versionString(), kFdTarget);
#else
    std::printf("  MuJoCo: not found at configure time; MuJoCo columns are n/a\n");
#endif
  }
  std::printf("each figure: best of %d interleaved rounds of >= %.2f s (at least one rollout)%s\n\n",
              a.rounds, a.min_time, a.quick ? "; --quick" : "");
}

void print_header(bool cpu) {
  std::printf("%-10s %-6s %7s %6s %11s %11s %7s %7s %-8s %9s", "model", "prec", "threads", "nenv",
              "forward ms", "fwd+bwd ms", "fb/fwd", "bwd/fwd", "(<=3x)", "bytes/env");
  if (cpu)
    std::printf(" %10s %10s %8s %-8s", "ours us", "MJ FD us", "FD/ours", "(>=30x)");
  std::printf("\n");
}

void print_row(const std::string& model, const Row& r, const Args& a, double fd_seconds, bool cpu) {
  const double ratio = r.fb / r.fwd, backward = ratio - 1.0;
  std::printf("%-10s %-6s %7s %6d %11.4g %11.4g %6.2fx %6.2fx %-8s %9zu", model.c_str(),
              r.prec == Precision::Double ? "double" : "float", r.threads.c_str(), r.nenv,
              1e3 * r.fwd, 1e3 * r.fb, ratio, backward, backward <= kRatioTarget ? "met" : "MISSED",
              r.bytes);
  if (cpu) {
    if (r.one_thread) {
      const double per_step =
          (r.fb - r.fwd) / (static_cast<double>(a.horizon) * a.substeps * r.nenv);
      std::printf(" %10.4g", 1e6 * per_step);
      if (fd_seconds < kInf && per_step > 0.0) {
        const double fr = fd_seconds / per_step;
        std::printf(" %10.4g %7.1fx %-8s", 1e6 * fd_seconds, fr, fr >= kFdTarget ? "met" : "MISSED");
      } else {
        std::printf(" %10s %8s %-8s", "n/a", "n/a", "");
      }
    } else {
      std::printf(" %10s %10s %8s %-8s", "-", "-", "-", "");
    }
  }
  if (!r.problems.empty()) std::printf(" (%s)", r.problems.c_str() + 1);
  std::printf("\n");
}

struct Case {
  std::string key, path;
  std::shared_ptr<const Model> sg;
#ifdef SG_HAVE_MUJOCO
  sb::MjModelPtr mj;
#endif
};

// ---------------------------------------------------------------- CPU

void bench_cpu(Case& c, const Args& a) {
  const Model& m = *c.sg;
  std::printf("%s: nq %d, nv %d, nu %d, timestep %g s", c.key.c_str(), m.nq, m.nv, m.nu,
              m.opt.timestep);
  double fd_best = kInf;
#ifdef SG_HAVE_MUJOCO
  const Workload w1 = sb::make_workload(m, 1, 12345u + 1u);
  MjFd fd(c.mj.get(), w1);
  std::printf("; MuJoCo FD: A %dx%d, B %dx%d; check: our one-step VJP vs w^T[A B] rows, "
              "max rel. diff %.1e\n",
              fd.nx(), fd.nx(), fd.nx(), m.nu, check_against_fd(c.sg, w1, fd));
#else
  std::printf("\n");
#endif
  std::fflush(stdout);

  std::vector<int> thread_counts = {1};
  if (a.threads_all > 1) thread_counts.push_back(a.threads_all);
  std::vector<Row> rows;
  for (int threads : thread_counts) {
    for (int nenv : a.nenvs) {
      std::fprintf(stderr, "  [%s: %d thread%s, nenv %d ...]\n", c.key.c_str(), threads,
                   threads > 1 ? "s" : "", nenv);
      const Workload w = sb::make_workload(m, nenv, 12345u + static_cast<unsigned>(nenv));
      SgCase sg_d(c.sg, w, Backend::Cpu, Precision::Double, threads, a.horizon, a.substeps);
      SgCase sg_f(c.sg, w, Backend::Cpu, Precision::Float, threads, a.horizon, a.substeps);
      Row rd, rf;
      rd.prec = Precision::Double;
      rf.prec = Precision::Float;
      // Interleaved rounds; each figure is the best round (the least disturbed by the machine).
      for (int r = 0; r < a.rounds; ++r) {
        rd.fwd = std::min(rd.fwd, sg_d.time_forward(a.min_time));
        rd.fb = std::min(rd.fb, sg_d.time_forward_backward(a.min_time));
#ifdef SG_HAVE_MUJOCO
        if (threads == 1) fd_best = std::min(fd_best, fd.time_per_call(a.min_time));
#endif
        rf.fwd = std::min(rf.fwd, sg_f.time_forward(a.min_time));
        rf.fb = std::min(rf.fb, sg_f.time_forward_backward(a.min_time));
      }
      for (auto [row, sg] : {std::pair<Row*, SgCase*>{&rd, &sg_d}, {&rf, &sg_f}}) {
        row->threads = std::to_string(threads);
        row->nenv = nenv;
        row->one_thread = threads == 1;
        row->bytes = sg->bytes_per_env();
        row->problems = sg->problems();
        rows.push_back(*row);
      }
    }
  }
  // Printed once the model is done, so that every 1-thread row uses the best FD round.
  print_header(true);
  for (const Row& r : rows) print_row(c.key, r, a, fd_best, true);
  std::printf("\n");
  std::fflush(stdout);
}

// ---------------------------------------------------------------- CUDA

// Returns false (after saying so) when the CUDA backend has no Rollout yet.
bool bench_cuda(Case& c, const Args& a) {
  for (int nenv : a.nenvs) {
    const Workload w = sb::make_workload(*c.sg, nenv, 12345u + static_cast<unsigned>(nenv));
    for (Precision prec : {Precision::Float, Precision::Double}) {
      std::unique_ptr<SgCase> sg;
      try {
        sg = std::make_unique<SgCase>(c.sg, w, Backend::Cuda, prec, 0, a.horizon, a.substeps);
      } catch (const std::exception& e) {
        std::printf(
            "%-10s CUDA Rollout NOT IMPLEMENTED YET: creating a Rollout on the CUDA backend "
            "threw: %s\n",
            c.key.c_str(), e.what());
        std::fflush(stdout);
        return false;
      }
      Row r;
      r.prec = prec;
      r.threads = "-";
      r.nenv = nenv;
      for (int k = 0; k < a.rounds; ++k) {
        r.fwd = std::min(r.fwd, sg->time_forward(a.min_time));
        r.fb = std::min(r.fb, sg->time_forward_backward(a.min_time));
      }
      r.bytes = sg->bytes_per_env();
      r.problems = sg->problems();
      print_row(c.key, r, a, kInf, false);
      std::fflush(stdout);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const auto read_options = [&](const opt::Args& o) {
    a.quick = o.has("quick");
    a.backend = sb::backend_option(o);
    a.models = sb::name_list_option(o, "models", a.models);
    if (a.backend == Backend::Cuda)
      a.nenvs = a.quick ? std::vector<int>{1024, 16384} : std::vector<int>{1024, 4096, 16384};
    else
      a.nenvs = a.quick ? std::vector<int>{1, 64, 256} : std::vector<int>{1, 64, 1024, 4096};
    a.nenvs = sb::int_list_option(o, "nenv", a.nenvs, 1, 1 << 24);
    a.horizon = sb::int_option(o, "horizon", a.horizon, 1, 1000000);
    a.substeps = sb::int_option(o, "substeps", a.substeps, 1, 1000000);
    a.min_time = sb::double_option(o, "min-time", a.quick ? 0.1 : 0.3, 1e-3, 3600.0);
    a.rounds = sb::int_option(o, "rounds", a.quick ? 2 : 3, 1, 1000);
    a.threads_all = sb::int_option(o, "threads", 0, 0, 4096);  // 0: OpenMP's default
    if (a.threads_all == 0) a.threads_all = omp_get_max_threads();
  };
  if (const auto status = sb::read_command_line(
          argc, argv, "bench_backward", kUsage, {"quick"},
          {"backend", "models", "nenv", "horizon", "substeps", "min-time", "rounds", "threads"},
          read_options))
    return *status;
  if (a.backend == Backend::Cuda && !stiffgrad::cuda_available()) {
    std::fprintf(stderr,
                 "bench_backward: the CUDA backend is unavailable (this build has no CUDA "
                 "backend, or no CUDA device is present); run with --backend cpu\n");
    return 1;
  }
  print_preamble(a);

  int status = 0;
  bool header = false;
  for (const std::string& key : a.models) {
    Case c;
    c.key = key;
    try {
      c.path = sb::model_path(key);
      if (!std::ifstream(c.path).good()) {
        std::printf("%-10s skipped: %s not found\n", key.c_str(), c.path.c_str());
        continue;
      }
      c.sg = stiffgrad::load_mjcf(c.path);
#ifdef SG_HAVE_MUJOCO
      c.mj = sb::load_mujoco(c.path, *c.sg);
#endif
      if (a.backend == Backend::Cuda) {
        if (!header) print_header(false);
        header = true;
        if (!bench_cuda(c, a)) break;  // the same for every model
      } else {
        bench_cpu(c, a);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_backward: %s: %s\n", key.c_str(), e.what());
      status = 1;
    }
  }
  // Other processes on the machine distort the all-cores rows most (an OpenMP barrier per
  // control step waits for a descheduled thread), then the 1-thread rows.
  const std::string load = sb::load_average();
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf("load average %s at the end", load.c_str());
  if (cores > 0 && std::atof(load.c_str()) > 0.75 * cores)
    std::printf(": the machine was busy; the all-cores rows in particular are unreliable");
  std::printf("\n");
  return status;
}
