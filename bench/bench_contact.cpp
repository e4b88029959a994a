// Constrained stepping against MuJoCo 2.2.2 (issue 7): humanoid.xml lying on its floor and the
// Unitree G1 standing at `home` under its servos, one thread, double.
//
//   bench_contact [--quick] [--nenv 64,256] [--ours-only] [--model humanoid|g1]
//
// --ours-only times stiffgrad's forward step alone (no MuJoCo loop, no gradient): for profiling.
//
// Workload: a state taken from MuJoCo's own simulation (the humanoid after it has fallen; the G1
// after settling at home), copied to every environment with small velocity noise; controls held
// (the keyframe's); every 50 steps the states are reset (untimed). Both engines run their
// default solver settings from the model (warm start on, as MuJoCo ships it, on both sides), and
// beside them both with warm start disabled (cold: every solve starts at qacc_smooth).
// The engines take turns segment by segment (ratios from one run on a shared machine).
// Reported: environment-steps per second of each, the ratios warm/warm (the target, >= 1.5x at
// nenv >= 64) and cold/cold, mean active contacts per step, mean Newton iterations per step of
// each engine and setting, bytes per environment; and the
// gradient's cost: Rollout forward + backward over T = 32 steps against the forward alone
// (target: backward <= 3x forward).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_common.hpp"
#include "stiffgrad/dynamics.hpp"

using namespace stiffgrad;
using namespace stiffgrad::bench;

namespace {

#ifdef SG_HAVE_MUJOCO
struct Scene {
  std::string name, path;
  const char* key;
  int settle;  // MuJoCo steps to reach the benchmark state
};

struct Start {
  std::vector<double> qpos, qvel, ctrl;
};

// The benchmark state, from MuJoCo's own simulation with the model's settings.
Start settle(const mjModel* m, const Scene& s) {
  MjDataPtr d(mj_makeData(m));
  if (s.key) mj_resetDataKeyframe(m, d.get(), mj_name2id(m, mjOBJ_KEY, s.key));
  for (int i = 0; i < s.settle; ++i) mj_step(m, d.get());
  Start st;
  st.qpos.assign(d->qpos, d->qpos + m->nq);
  st.qvel.assign(d->qvel, d->qvel + m->nv);
  st.ctrl.assign(d->ctrl, d->ctrl + m->nu);
  return st;
}

// nenv copies with velocity noise N(0, 0.05^2), environment-major.
Start batch(const Start& s, int nenv, int nq, int nv, int nu) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01(0.0, 1.0);
  Start b;
  for (int e = 0; e < nenv; ++e) {
    b.qpos.insert(b.qpos.end(), s.qpos.begin(), s.qpos.end());
    for (int i = 0; i < nv; ++i) b.qvel.push_back(s.qvel[static_cast<std::size_t>(i)] + 0.05 * n01(rng));
    b.ctrl.insert(b.ctrl.end(), s.ctrl.begin(), s.ctrl.end());
  }
  (void)nq;
  (void)nu;
  return b;
}

constexpr int kSegment = 50;  // steps between (untimed) resets

struct Row {
  double ours = 0, mujoco = 0, contacts_ours = 0, contacts_mj = 0, fwd = 0, fwd_bwd = 0;
  double ours_cold = 0, newton = 0, newton_cold = 0, newton_mj = 0, newton_mj_cold = 0, mujoco_cold = 0;
  std::size_t bytes = 0, rollout_bytes = 0;
};

Row measure(const std::shared_ptr<const Model>& model, const std::shared_ptr<const Model>& model_cold,
            const mjModel* mm, const Start& st, int nenv, int steps, bool ours_only) {
  Row r;
  const int nq = model->nq, nv = model->nv, nu = model->nu;
  const Start b = batch(st, nenv, nq, nv, nu);
  // ours
  SimulatorOptions so;
  so.constraints = true;
  so.nenv = nenv;
  so.threads = 1;
  Simulator sim(model, so), sim_cold(model_cold, so);
  sim.set_ctrl(b.ctrl.data());
  sim_cold.set_ctrl(b.ctrl.data());
  r.bytes = sim.bytes() / static_cast<std::size_t>(nenv);
  // MuJoCo: nenv mjData, a loop; as the model ships (warm start) and with warm start disabled
  // (cold, as ours: the same algorithm side by side)
  MjModelPtr cold(mj_copyModel(nullptr, mm));
  cold->opt.disableflags |= mjDSBL_WARMSTART;
  std::vector<MjDataPtr> ds;
  for (int e = 0; e < nenv; ++e) ds.emplace_back(mj_makeData(mm));
  // one segment of MuJoCo: seconds; adds contacts and solver iterations per environment
  const auto mujoco_segment = [&](const mjModel* mx, double* contacts, double* iterations) {
    for (int e = 0; e < nenv; ++e) {
      mjData* d = ds[static_cast<std::size_t>(e)].get();
      mj_resetData(mx, d);
      std::memcpy(d->qpos, b.qpos.data() + static_cast<std::size_t>(e) * nq, sizeof(double) * nq);
      std::memcpy(d->qvel, b.qvel.data() + static_cast<std::size_t>(e) * nv, sizeof(double) * nv);
      std::memcpy(d->ctrl, b.ctrl.data() + static_cast<std::size_t>(e) * nu, sizeof(double) * nu);
    }
    const auto t0 = Clock::now();
    for (int e = 0; e < nenv; ++e)
      for (int s = 0; s < kSegment; ++s) mj_step(mx, ds[static_cast<std::size_t>(e)].get());
    const double dt = seconds_since(t0);
    for (int e = 0; e < nenv; ++e) {
      *contacts += ds[static_cast<std::size_t>(e)]->ncon;
      *iterations += ds[static_cast<std::size_t>(e)]->solver_iter;
    }
    return dt;
  };
  // the three engines take turns segment by segment, so that a slow spell of this shared
  // machine falls on all of them alike
  double t = 0, to = 0, tw = 0, tc = 0, contacts = 0, unused = 0;
  // one segment of ours: seconds; adds the contacts and solver iterations of its last step per
  // environment (read after the timed loop, as MuJoCo's below)
  const auto ours_segment = [&](Simulator& x, double* contacts_sum, double* iterations) {
    x.set_state(b.qpos.data(), b.qvel.data());
    const auto t0 = Clock::now();
    for (int s = 0; s < kSegment; ++s) x.step();
    const double dt = seconds_since(t0);
    const auto stats = x.contact_stats();
    for (int e = 0; e < nenv; ++e) {
      if (contacts_sum) *contacts_sum += stats[static_cast<std::size_t>(Simulator::kStepStats * e)];
      *iterations += stats[static_cast<std::size_t>(Simulator::kStepStats * e + 6)];
    }
    return dt;
  };
  for (int done = 0; done < steps; done += kSegment) {
    t += ours_segment(sim, &contacts, &r.newton);
    if (ours_only) continue;
    to += ours_segment(sim_cold, nullptr, &r.newton_cold);
    tw += mujoco_segment(mm, &r.contacts_mj, &r.newton_mj);
    tc += mujoco_segment(cold.get(), &unused, &r.newton_mj_cold);
  }
  const double segments_x_nenv = static_cast<double>(steps / kSegment) * nenv;
  r.ours = static_cast<double>(steps) * nenv / t;
  r.contacts_ours = contacts / segments_x_nenv;
  r.newton /= segments_x_nenv;
  if (ours_only) return r;
  r.ours_cold = static_cast<double>(steps) * nenv / to;
  r.newton_cold /= segments_x_nenv;
  r.mujoco = static_cast<double>(steps) * nenv / tw;
  r.mujoco_cold = static_cast<double>(steps) * nenv / tc;
  r.contacts_mj /= segments_x_nenv;
  r.newton_mj /= segments_x_nenv;
  r.newton_mj_cold /= segments_x_nenv;
  // gradient cost: Rollout of T = 32 steps, forward alone vs forward + backward
  constexpr int T = 32;
  Rollout ro(sim, T);
  r.rollout_bytes = ro.bytes_per_env();
  std::vector<double> dq(static_cast<std::size_t>((T + 1) * nenv * nq), 0.0), dv(static_cast<std::size_t>((T + 1) * nenv * nv), 0.0);
  for (std::size_t i = static_cast<std::size_t>(T) * nenv * nv; i < dv.size(); ++i) dv[i] = 1.0;
  std::vector<double> gq(static_cast<std::size_t>(nenv * nv)), gv(gq.size()), gu(static_cast<std::size_t>(T * nenv * nu));
  sim.set_state(b.qpos.data(), b.qvel.data());
  auto t0 = Clock::now();
  for (int s = 0; s < T; ++s) sim.step();
  r.fwd = seconds_since(t0);
  sim.set_state(b.qpos.data(), b.qvel.data());
  t0 = Clock::now();
  ro.begin();
  for (int s = 0; s < T; ++s) ro.step();
  ro.backward(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
  r.fwd_bwd = seconds_since(t0);
  if (!ro.replay_bitwise()) std::fprintf(stderr, "warning: replay not bitwise\n");
  return r;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  namespace opt = stiffgrad::options;
  constexpr const char* kUsage =
      "usage: bench_contact [--quick] [--nenv 64,256] [--ours-only] [--model humanoid|g1]\n";
  bool quick = false, ours_only = false;
  std::string only_model;  // empty: both
  std::vector<int> nenvs;
  const auto read_options = [&](const opt::Args& a) {
    quick = a.has("quick");
    ours_only = a.has("ours-only");
    only_model = a.get_or("model", "");
    if (!only_model.empty() && only_model != "humanoid" && only_model != "g1")
      throw opt::UsageError("--model must be humanoid or g1, got '" + only_model + "'");
    nenvs = int_list_option(a, "nenv", {64, 256}, 1, 1 << 24);
  };
  if (const auto status =
          read_command_line(argc, argv, "bench_contact", kUsage, {"quick", "ours-only"},
                            {"model", "nenv"}, read_options))
    return *status;
#ifndef SG_HAVE_MUJOCO
  (void)quick, (void)ours_only;
  std::fprintf(stderr, "bench_contact: built without MuJoCo 2.2.2; nothing to compare against\n");
  return 2;
#else
  const int steps = quick ? 100 : 300;
  std::printf("bench_contact: constrained control step (1 substep), one thread, double\n");
  std::printf("machine: %s, load average %s at start\n", cpu_model().c_str(), load_average().c_str());
  std::printf("MuJoCo 2.2.2: mj_step on nenv mjData (a loop); stiffgrad: SimulatorOptions::constraints, one\n"
              "Simulator. Both with the model's solver settings (warm start on, as MuJoCo ships: 'warm'),\n"
              "and both with warm start disabled ('cold': every solve starts at qacc_smooth). %d steps per\n"
              "row, reset every %d (untimed). con: mean active contacts per environment and step; newton:\n"
              "mean Newton iterations of the last step of each segment (ours warm / MJ warm / ours cold /\n"
              "MJ cold); bwd/fwd: Rollout backward alone over forward alone (T = 32);\n"
              "target: ours >= 1.5x MJ (warm) and backward <= 3x forward\n\n",
              steps, kSegment);
  std::printf("%-9s %5s %10s %10s %7s %10s %10s %7s %12s %19s %9s %11s %7s %s\n", "model", "nenv", "ours warm",
              "MJ warm", "ratio", "ours cold", "MJ cold", "ratio", "con o/MJ", "newton o/MJ o/MJ", "bytes/env",
              "rollout B/e", "bwd/fwd", "target");
  const std::vector<Scene> scenes = {{"humanoid", model_path("humanoid"), nullptr, 600},
                                     {"g1", model_path("g1"), "home", 200}};
  for (const Scene& sc : scenes) {
    if (!only_model.empty() && sc.name != only_model) continue;
    auto model = load_mjcf(sc.path);
    char error[1024] = "";
    MjModelPtr mm(mj_loadXML(sc.path.c_str(), nullptr, error, sizeof error));
    if (!mm) {
      std::fprintf(stderr, "MuJoCo could not load %s: %s\n", sc.path.c_str(), error);
      return 1;
    }
    const Start st = settle(mm.get(), sc);
    auto cold_model = std::make_shared<Model>(*model);
    cold_model->opt.warmstart_enabled = false;
    const std::shared_ptr<const Model> model_cold = cold_model;
    for (int nenv : nenvs) {
      const Row r = measure(model, model_cold, mm.get(), st, nenv, steps, ours_only);
      const double ratio = r.ours / r.mujoco, ratio_cold = r.ours_cold / r.mujoco_cold,
                   bwd = (r.fwd_bwd - r.fwd) / r.fwd;
      std::printf("%-9s %5d %10.4g %10.4g %6.2fx %10.4g %10.4g %6.2fx %6.2f %5.2f %4.1f %3.1f %4.1f %4.1f %9zu %11zu "
                  "%6.2fx %s\n",
                  sc.name.c_str(), nenv, r.ours, r.mujoco, ratio, r.ours_cold, r.mujoco_cold, ratio_cold,
                  r.contacts_ours, r.contacts_mj, r.newton, r.newton_mj, r.newton_cold, r.newton_mj_cold, r.bytes,
                  r.rollout_bytes, bwd, ratio >= 1.5 && bwd <= 3.0 ? "met" : "MISSED");
      std::fflush(stdout);
    }
  }
  std::printf("\nload average %s at the end\n", load_average().c_str());
  return 0;
#endif
}
