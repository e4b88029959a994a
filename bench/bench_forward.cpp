// bench_forward: environment-steps per second of the smooth control step (1 substep of the
// model timestep, no contacts) on stiffgrad's backends, measured side by side with MuJoCo
// 2.2.2's mj_step on the same model (constraint solver off, Euler integrator, same timestep).
//
//   bench_forward [--backend cpu|cuda] [--quick] [--models humanoid,g1[,PATH.xml]]
//                 [--min-time S] [--threads T]
//
// CPU: nenv 1, 64, 1024, 4096; threads 1 and all cores; float and double. MuJoCo steps nenv
// mjData copies, on one thread or with OpenMP over the copies. Every point is the best of a
// few rounds, each at least --min-time seconds, with stiffgrad and MuJoCo rounds interleaved
// so that machine noise hits both alike. States are reset to the same seeded random initial
// states every kSegment steps (untimed), so long measurements never drift into a regime
// (free fall for minutes, runaway joints) that neither engine is meant for.
// CUDA: nenv 1024 .. 65536, float and double, synchronize() before the clock stops; MuJoCo
// on all cores at nenv 1024 is given as a reference.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
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

constexpr int kSegment = 100;  // control steps between (untimed) state resets

// ---------------------------------------------------------------- options

struct Args {
  Backend backend = Backend::Cpu;
  bool quick = false;
  std::vector<std::string> models = {"humanoid", "g1"};
  double min_time = -1.0;  // per round; default depends on --quick
  int rounds = 3;
  int threads_all = 0;  // "all cores" thread count; 0: OpenMP's default
};

constexpr const char* kUsage =
    "usage: bench_forward [--backend cpu|cuda] [--quick] [--models humanoid,g1[,PATH.xml]]\n"
    "                     [--min-time SECONDS] [--threads T]\n";

// ---------------------------------------------------------------- workload

// Timed loop shared by every engine: segments of at most kSegment batch steps, each started
// from the workload's initial states (reset untimed), in growing chunks of `step_n(k)` (which
// must finish its work, i.e. synchronize, before returning), until `min_time` of stepping has
// been timed. Returns batch steps per second.
template <class Reset, class StepN>
double measure(double min_time, Reset reset, StepN step_n) {
  double elapsed = 0.0;
  long long steps = 0;
  int chunk = 1;
  while (elapsed < min_time) {
    reset();
    for (int done = 0; done < kSegment && elapsed < min_time;) {
      const int n = std::min(chunk, kSegment - done);
      const auto t0 = Clock::now();
      step_n(n);
      elapsed += seconds_since(t0);
      steps += n;
      done += n;
      chunk = std::min(chunk * 2, kSegment);
    }
  }
  return static_cast<double>(steps) / elapsed;
}

// ---------------------------------------------------------------- engines

class SgRunner {
 public:
  SgRunner(const std::shared_ptr<const Model>& model, const Workload& w, Backend backend,
           Precision prec, int threads)
      : w_(w), sim_(model, options(w, backend, prec, threads)) {
    reset();
    sim_.step();  // warm-up: first touch of the workspace, thread pool start
    sim_.synchronize();
  }
  double rate(double min_time) {
    const double r = measure(
        min_time, [&] { reset(); },
        [&](int n) {
          for (int i = 0; i < n; ++i) sim_.step();
          sim_.synchronize();
        });
    failed_ = std::max(failed_, sim_.num_failed());
    return r * w_.nenv;
  }
  int failed() const { return failed_; }

 private:
  static stiffgrad::SimulatorOptions options(const Workload& w, Backend backend, Precision prec,
                                             int threads) {
    stiffgrad::SimulatorOptions o;
    o.backend = backend;
    o.precision = prec;
    o.nenv = w.nenv;
    o.substeps = 1;
    o.constraints = false;  // the smooth step, as MuJoCo with mjDSBL_CONSTRAINT beside it
    o.threads = threads;
    return o;
  }
  void reset() {
    sim_.set_state(w_.qpos.data(), w_.qvel.data());
    sim_.set_ctrl(w_.ctrl.data());
    sim_.synchronize();
  }
  const Workload& w_;
  stiffgrad::Simulator sim_;
  int failed_ = 0;
};

#ifdef SG_HAVE_MUJOCO
using sb::MjModelPtr;

class MjRunner {
 public:
  MjRunner(const mjModel* m, const Workload& w) : m_(m), w_(w) {
    for (int e = 0; e < w.nenv; ++e) d_.push_back(mj_makeData(m));
    reset();
    step_n(1, 1);  // warm-up
  }
  ~MjRunner() {
    for (mjData* d : d_) mj_deleteData(d);
  }
  MjRunner(const MjRunner&) = delete;
  MjRunner& operator=(const MjRunner&) = delete;

  double rate(double min_time, int threads) {
    return measure(
               min_time, [&] { reset(); }, [&](int n) { step_n(n, threads); }) *
           w_.nenv;
  }
  int failed() const {
    int n = 0;
    for (const mjData* d : d_)
      n += d->warning[mjWARN_BADQACC].number + d->warning[mjWARN_BADQVEL].number +
               d->warning[mjWARN_BADQPOS].number >
           0;
    return n;
  }

 private:
  void reset() {
    const int nq = m_->nq, nv = m_->nv, nu = m_->nu;
    for (int e = 0; e < w_.nenv; ++e) {
      mjData* d = d_[e];
      d->time = 0.0;
      std::memcpy(d->qpos, &w_.qpos[static_cast<std::size_t>(e) * nq], sizeof(mjtNum) * nq);
      std::memcpy(d->qvel, &w_.qvel[static_cast<std::size_t>(e) * nv], sizeof(mjtNum) * nv);
      if (nu) std::memcpy(d->ctrl, &w_.ctrl[static_cast<std::size_t>(e) * nu], sizeof(mjtNum) * nu);
    }
  }
  void step_n(int n, int threads) {
    const int nenv = w_.nenv;
    for (int i = 0; i < n; ++i) {
      if (threads <= 1) {
        for (int e = 0; e < nenv; ++e) mj_step(m_, d_[e]);
      } else {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int e = 0; e < nenv; ++e) mj_step(m_, d_[e]);
      }
    }
  }
  const mjModel* m_;
  const Workload& w_;
  std::vector<mjData*> d_;
};
#endif

// ---------------------------------------------------------------- table

std::string fmt_rate(double r) {
  if (r <= 0.0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", r);
  return buf;
}

void print_header(bool cuda) {
  std::printf("%-10s %-7s %-6s %7s %7s %16s %16s %8s  %s\n", "model", "backend", "prec", "threads",
              "nenv", "stiffgrad env/s", "MuJoCo env/s", cuda ? "ratio" : "ratio/core",
              cuda ? "(vs MuJoCo, all cores, nenv 1024)" : "target (1 thread)");
}

void print_row(const std::string& model, const char* backend, Precision prec,
               const std::string& threads, int nenv, double sg, double mj, bool with_target,
               int failed, int mj_failed = 0) {
  const bool dbl = prec == Precision::Double;
  char ratio[32] = "n/a";
  std::string target;
  if (sg > 0.0 && mj > 0.0) {
    const double r = sg / mj;
    std::snprintf(ratio, sizeof ratio, "%.2fx", r);
    if (with_target) {
      const double goal = dbl ? 1.0 : 1.5;
      char buf[48];
      std::snprintf(buf, sizeof buf, ">=%.1fx %s", goal, r >= goal ? "met" : "MISSED");
      target = buf;
    }
  }
  if (failed > 0) target += " (stiffgrad: " + std::to_string(failed) + " envs non-finite!)";
  if (mj_failed > 0) target += " (MuJoCo: " + std::to_string(mj_failed) + " envs unstable!)";
  std::printf("%-10s %-7s %-6s %7s %7d %16s %16s %8s  %s\n", model.c_str(), backend,
              dbl ? "double" : "float", threads.c_str(), nenv, fmt_rate(sg).c_str(),
              fmt_rate(mj).c_str(), ratio, target.c_str());
  std::fflush(stdout);
}

struct Case {
  std::string key, path;
  std::shared_ptr<const Model> sg;
#ifdef SG_HAVE_MUJOCO
  MjModelPtr mj;
#endif
};

// ---------------------------------------------------------------- CPU

void bench_cpu(Case& c, const Args& a) {
  const std::vector<int> nenvs =
      a.quick ? std::vector<int>{1, 64, 1024} : std::vector<int>{1, 64, 1024, 4096};
  std::vector<int> thread_counts = {1};
  if (a.threads_all > 1) thread_counts.push_back(a.threads_all);
  for (int threads : thread_counts) {
    for (int nenv : nenvs) {
      const Workload w = sb::make_workload(*c.sg, nenv, 12345u + static_cast<unsigned>(nenv));
      SgRunner sg_d(c.sg, w, Backend::Cpu, Precision::Double, threads);
      SgRunner sg_f(c.sg, w, Backend::Cpu, Precision::Float, threads);
      double best_d = 0.0, best_f = 0.0, best_mj = 0.0;
      int mj_failed = 0;
#ifdef SG_HAVE_MUJOCO
      MjRunner mj(c.mj.get(), w);
#endif
      // Interleaved rounds; each figure is the best round (the least disturbed by the machine).
      for (int r = 0; r < a.rounds; ++r) {
        best_d = std::max(best_d, sg_d.rate(a.min_time));
#ifdef SG_HAVE_MUJOCO
        best_mj = std::max(best_mj, mj.rate(a.min_time, threads));
#endif
        best_f = std::max(best_f, sg_f.rate(a.min_time));
      }
#ifdef SG_HAVE_MUJOCO
      mj_failed = mj.failed();
#endif
      const std::string t = std::to_string(threads);
      print_row(c.key, "cpu", Precision::Double, t, nenv, best_d, best_mj, threads == 1,
                sg_d.failed(), mj_failed);
      print_row(c.key, "cpu", Precision::Float, t, nenv, best_f, best_mj, threads == 1,
                sg_f.failed());
    }
  }
}

// ---------------------------------------------------------------- CUDA

void bench_cuda(Case& c, const Args& a) {
  double mj_ref = 0.0;
#ifdef SG_HAVE_MUJOCO
  {
    const Workload w = sb::make_workload(*c.sg, 1024, 12345u + 1024u);
    MjRunner mj(c.mj.get(), w);
    for (int r = 0; r < a.rounds; ++r)
      mj_ref = std::max(mj_ref, mj.rate(a.min_time, a.threads_all));
  }
#endif
  const std::vector<int> nenvs =
      a.quick ? std::vector<int>{1024, 16384, 65536} : std::vector<int>{1024, 4096, 16384, 65536};
  for (int nenv : nenvs) {
    const Workload w = sb::make_workload(*c.sg, nenv, 12345u + static_cast<unsigned>(nenv));
    for (Precision prec : {Precision::Float, Precision::Double}) {
      SgRunner sg(c.sg, w, Backend::Cuda, prec, 0);
      double best = 0.0;
      for (int r = 0; r < a.rounds; ++r) best = std::max(best, sg.rate(a.min_time));
      print_row(c.key, "cuda", prec, "-", nenv, best, mj_ref, false, sg.failed());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const auto read_options = [&](const opt::Args& o) {
    a.quick = o.has("quick");
    a.backend = sb::backend_option(o);
    a.models = sb::name_list_option(o, "models", a.models);
    a.min_time = sb::double_option(o, "min-time", a.quick ? 0.15 : 0.3, 1e-3, 3600.0);
    if (a.quick) a.rounds = 2;
    a.threads_all = sb::int_option(o, "threads", 0, 0, 4096);  // 0: OpenMP's default
    if (a.threads_all == 0) a.threads_all = omp_get_max_threads();
  };
  if (const auto status =
          sb::read_command_line(argc, argv, "bench_forward", kUsage, {"quick"},
                                {"backend", "models", "min-time", "threads"}, read_options))
    return *status;
  if (a.backend == Backend::Cuda && !stiffgrad::cuda_available()) {
    std::fprintf(stderr,
                 "bench_forward: the CUDA backend is unavailable (this build has no CUDA backend, "
                 "or no CUDA device is present); run with --backend cpu\n");
    return 1;
  }

  std::printf(
      "bench_forward: smooth control step (1 substep, no contacts), env-steps per second\n");
  std::printf(
      "machine: %s, %u logical cores, %d OpenMP threads for the all-cores rows, "
      "load average %s at start\n",
      sb::cpu_model().c_str(), std::thread::hardware_concurrency(), a.threads_all,
      sb::load_average().c_str());
  // libgomp's default is to spin before sleeping: on a machine whose cores are busy with other
  // work, a spinning worker keeps the master off a core and every parallel step waits a
  // scheduler slice (measured on 2 cores, load ~1.5: 83 env-steps/s instead of 5e4 at nenv 1).
  const char* wait_policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("OMP_WAIT_POLICY=%s (both engines)%s\n", wait_policy ? wait_policy : "unset",
              wait_policy ? ""
                          : "; on a busy machine rerun with OMP_WAIT_POLICY=passive, else the "
                            "all-cores rows measure scheduler waits");
#ifdef SG_HAVE_MUJOCO
  std::printf(
      "MuJoCo %s: mj_step on nenv mjData copies (1 thread: a loop; all cores: OpenMP over\n"
      "  them), constraint solver off (mjDSBL_CONSTRAINT), Euler, same timestep,\n"
      "  njmax = nconmax = 0 (arrays mj_step then never touches)\n",
      mj_versionString());
#else
  std::printf("MuJoCo: not found at configure time; MuJoCo columns are n/a\n");
#endif
  std::printf(
      "each figure: best of %d interleaved rounds of >= %.2f s; states reset every %d steps "
      "(untimed)%s\n\n",
      a.rounds, a.min_time, kSegment, a.quick ? "; --quick" : "");

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
      if (!header) {
        print_header(a.backend == Backend::Cuda);
        header = true;
      }
      if (a.backend == Backend::Cuda)
        bench_cuda(c, a);
      else
        bench_cpu(c, a);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_forward: %s: %s\n", key.c_str(), e.what());
      status = 1;
    }
  }
  return status;
}
