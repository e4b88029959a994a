// Definitions of StagedAdjoint (backends/cuda/staged_adjoint.cuh), included by
// staged_adjoint_float.cu and staged_adjoint_double.cu only.
#pragma once

#include "backends/cuda/staged_adjoint.cuh"
#include "backends/cuda/warp_team.cuh"
#include "kernels/step/staged_adjoint.hpp"

namespace stiffgrad::cuda_detail {

namespace staged_adjoint {

using L = kern::Strided;
template <class Real> using V = kern::View<Real, L>;

// The environment of this thread, or -1: past nenv, or skipped (a.skip) in a stage past the
// replay. The replay (ReplayBegin, the staged step's substeps, ReplayCarry) runs for every
// environment, so that each tape slot holds a state the staged step computed, never stale data.
template <class Real>
__device__ SG_INLINE bool env_skipped(const StagedAdjointArgs<Real>& a, int e) {
  return a.skip != nullptr && a.skip[e] != 0;
}
template <class Real>
__device__ SG_INLINE int env_of_thread(const StagedAdjointArgs<Real>& a, bool replay = false) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  return e < a.nenv && (replay || !env_skipped(a, e)) ? e : -1;
}

template <class Real>
__device__ SG_INLINE V<Real> env_view(const Real* base, const StagedAdjointArgs<Real>& a, int e) {
  return V<Real>{const_cast<Real*>(base) + e, L{a.nenv}};
}

// tape slot s of environment e
template <class Real>
__device__ SG_INLINE kern::Data<Real, L> slot(const StagedAdjointArgs<Real>& a, int s, int e) {
  const std::size_t stride = static_cast<std::size_t>(a.layout.size) * static_cast<std::size_t>(a.nenv);
  return kern::Data<Real, L>::bind(V<Real>{a.tape + s * stride + e, L{a.nenv}}, a.layout);
}

// A Runge–Kutta round's stage (round >= 0) skips the environments without an accepted step of
// that index in substep s (kern::staged_rk_adjoint_active); round -1: every environment.
template <class Real>
__device__ SG_INLINE bool outside_round(const StagedAdjointArgs<Real>& a, int s, int e, int round) {
  return round >= 0 && !kern::staged_rk_adjoint_active(slot(a, s, e), round);
}

template <class Real>
__device__ SG_INLINE kern::Data<Real, L> adjoint_data(const StagedAdjointArgs<Real>& a, int e) {
  return kern::Data<Real, L>::bind(env_view(a.adjoint_ws, a, e), a.layout);
}

// The replay's own stages, which run on skipped environments too (env_of_thread).
template <class Stage>
constexpr bool stage_is_replay = false;

// The per-environment stages: Stage::run(a, e, s, round, i) for environment e (thread e) at
// substep s (-1 for the per-step stages), in Runge–Kutta round `round` (-1: none; the stage then
// runs for every environment) at stage i. One kernel template, one instantiation per stage, all
// under the occupancy bound of 128 registers (every stage fits it without spills, sm_90:
// scripts/kernel_resources.sh).
template <class Real, class Stage>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    stage_kernel(const __grid_constant__ StagedAdjointArgs<Real> a, int s, int round, int i) {
  const int e = env_of_thread(a, stage_is_replay<Stage>);
  if (e < 0) return;
  if (!stage_is_replay<Stage> && outside_round(a, s, e, round)) return;
  Stage::run(a, e, s, round, i);
}

// The warp-per-environment stages: warp w of the grid runs environment w with a WarpTeam (uniform
// across the warp, so a warp leaves or stays whole: its team operations need every lane).
template <class Real, class Stage>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    warp_stage_kernel(const __grid_constant__ StagedAdjointArgs<Real> a, int s, int round) {
  const int thread = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  const int e = thread / kern::kMaxTeamWidth;
  if (e >= a.nenv || env_skipped(a, e) || outside_round(a, s, e, round)) return;
  Stage::run(a, e, s, round, -1);
}

// The stages, each one kern:: call (kernels/step/staged_adjoint.hpp, the adjoint functions).
struct ReplayBegin {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int, int, int) {
    kern::staged_replay_begin(a.m, env_view(a.q0, a, e), env_view(a.v0, a, e), env_view(a.u, a, e),
                              env_view(a.w0, a, e), slot(a, 0, e), env_view(a.replay, a, e));
  }
};
struct ReplayCarry {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::staged_replay_carry(a.m, slot(a, s, e), slot(a, s + 1, e), env_view(a.replay, a, e), s);
  }
};
template <>
constexpr bool stage_is_replay<ReplayBegin> = true;
template <>
constexpr bool stage_is_replay<ReplayCarry> = true;
struct ReplayCheck {  // s: the last substep
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    if (!kern::staged_replay_matches(a.m, slot(a, s, e), env_view(a.q1, a, e), env_view(a.v1, a, e)) &&
        a.status[e] == kern::kEnvOk)
      a.replay_ok[e] = 0;
  }
};
struct GradientRestore {  // contacts from distance: slot s back to the state before substep s
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::staged_gradient_restore(a.m, env_view(a.replay, a, e), s, slot(a, s, e));
  }
};
struct AdjointBegin {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int, int, int) {
    kern::staged_adjoint_begin(a.m, env_view(a.adj_q, a, e), env_view(a.adj_v, a, e), adjoint_data(a, e));
  }
};
struct AdjointState {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::staged_adjoint_state(a.m, a.layout, env_view(a.replay, a, e), s, slot(a, s, e), adjoint_data(a, e),
                               env_view(a.adjoint_ws, a, e));
  }
};
struct AdjointHessian {  // warp_stage_kernel
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_constraint_solve_begin(WarpTeam{}, a.m, slot(a, s, e));
  }
};
struct AdjointSolve {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_constraint_solve_end<true>(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
struct AdjointRows {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_constraint_forces_rows(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
struct AdjointCollision {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::staged_adjoint_collision(a.m, slot(a, s, e), adjoint_data(a, e), env_view(a.pair_slots, a, e));
  }
};
struct AdjointFinish {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::staged_adjoint_finish(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
struct ImpulseAdjointBegin {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_impulse_begin(a.m, a.layout, slot(a, s, e), adjoint_data(a, e), env_view(a.adjoint_ws, a, e));
  }
};
struct ImpulseAdjointSolve {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_impulse_solve_out(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
struct ImpulseAdjointDelassus {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_impulse_delassus(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
struct ImpulseAdjointRows {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_impulse_rows(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
struct ImpulseAdjointFinish {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    kern::adj_impulse_end(a.m, slot(a, s, e), adjoint_data(a, e));
  }
};
// The Runge–Kutta rounds (kernels/step/staged_adjoint.hpp). The round's begin, the event's begin
// and the output run for every environment: they mark in the evaluating staged step's
// controllers (a.rk) the environments the next evaluations run for (StagedStep::launch_evaluation).
template <class Real>
__device__ SG_INLINE bool in_round(const StagedAdjointArgs<Real>& a, int s, int e, int n) {
  return !env_skipped(a, e) && kern::staged_rk_adjoint_active(slot(a, s, e), n);
}
struct RkAdjointStepBegin {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int n, int) {
    kern::RkControl& c = a.rk[e];
    const bool active = in_round(a, s, e, n);
    c.phase = active ? kern::kRkStage : kern::kRkDone;
    if (active) kern::staged_rk_adjoint_step_begin(a.m, slot(a, s, e), adjoint_data(a, e), n, c);
  }
};
struct RkAdjointRecord {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int n, int i) {
    kern::staged_rk_adjoint_record(a.m, slot(a, s, e), n, i, a.rk[e]);
  }
};
struct RkAdjointEventBegin {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int n, int) {
    kern::RkControl& c = a.rk[e];
    const bool located =
        in_round(a, s, e, n) && kern::staged_rk_adjoint_located(a.m, slot(a, s, e), n, c);
    c.phase = located ? kern::kRkStage : kern::kRkDone;
    if (located) kern::staged_rk_adjoint_event_begin(a.m, slot(a, s, e), c);
  }
};
// after the event's evaluations: the environments its begin marked
struct RkAdjointEventEnd {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    if (a.rk[e].phase == kern::kRkStage)
      kern::staged_rk_adjoint_event_end(a.m, slot(a, s, e), a.rk[e]);
  }
};
struct RkAdjointEventStart {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    if (a.rk[e].phase == kern::kRkStage)
      kern::staged_rk_adjoint_event_start(a.m, slot(a, s, e), a.rk[e]);
  }
};
struct RkAdjointEventFinish {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int) {
    if (a.rk[e].phase == kern::kRkStage)
      kern::staged_rk_adjoint_event_finish(a.m, slot(a, s, e), adjoint_data(a, e), a.rk[e]);
  }
};
struct RkAdjointOutput {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int n, int) {
    const bool active = in_round(a, s, e, n);
    a.rk[e].phase = active ? kern::kRkStage : kern::kRkDone;
    if (active) kern::staged_rk_adjoint_output(a.m, slot(a, s, e), adjoint_data(a, e), n);
  }
};
template <>
constexpr bool stage_is_replay<RkAdjointStepBegin> = true;
template <>
constexpr bool stage_is_replay<RkAdjointEventBegin> = true;
template <>
constexpr bool stage_is_replay<RkAdjointOutput> = true;
struct RkAdjointStageBegin {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int, int i) {
    kern::staged_rk_adjoint_stage_begin(a.m, a.layout, slot(a, s, e), adjoint_data(a, e),
                                        env_view(a.adjoint_ws, a, e), i);
  }
};
struct RkAdjointStageEnd {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int s, int n, int i) {
    kern::staged_rk_adjoint_stage_end(a.m, slot(a, s, e), adjoint_data(a, e), n, i);
  }
};
// the adjoints out, then the loss gradient of the state at the step's start (as the CPU
// backend's sweep adds it after adj_control_step_env)
struct AdjointEnd {
  template <class Real>
  __device__ static void run(const StagedAdjointArgs<Real>& a, int e, int, int, int) {
    const V<Real> adj_q = env_view(a.adj_q, a, e), adj_v = env_view(a.adj_v, a, e);
    kern::staged_adjoint_end(a.m, adjoint_data(a, e), adj_q, adj_v, env_view(a.adj_u, a, e));
    if (a.dl_q)
      for (int i = 0; i < a.m.nq; ++i) adj_q[i] += a.dl_q[i * a.nenv + e];
    if (a.dl_v)
      for (int i = 0; i < a.m.nv; ++i) adj_v[i] += a.dl_v[i * a.nenv + e];
  }
};

// The pairs stage: blockIdx.y is the pair a.pairs[first + blockIdx.y], all of routine R (as the
// staged step's narrow_kernel: the routine, the pair and its model data warp-uniform), blockIdx.z
// the pass (kern::pair_adjoint_chunks: a share of the 24 pose directions each), and only that
// routine's Dual narrow phase in the kernel.
// The occupancy bound of adjoint_pair_kernel<Real, R>: 128 registers, but for box-box and the
// general convex (MPR), whose Dual passes need 145 to 255 registers even at one direction per
// pass and keep the block size alone rather than spill (kern::pair_adjoint_directions).
template <class Real, int R>
constexpr int adjoint_pair_min_blocks() {
  return R == kern::kRoutineBoxBox || R == kern::kRoutineConvex ? 1 : kBlocksAt128Registers;
}
template <class Real, int R>
__global__ void __launch_bounds__(kBlockSize, (adjoint_pair_min_blocks<Real, R>()))
    adjoint_pair_kernel(const __grid_constant__ StagedAdjointArgs<Real> a, int s, int first,
                        int round) {
  const int e = env_of_thread(a);
  if (e < 0 || outside_round(a, s, e, round)) return;
  const int c = a.pairs[first + static_cast<int>(blockIdx.y)];
  kern::staged_adjoint_pair<R>(a.m, slot(a, s, e), adjoint_data(a, e), c,
                               static_cast<int>(blockIdx.z), env_view(a.pair_slots, a, e));
}

// The launches of run_staged_adjoint_step on one stream.
template <class Real>
struct Launcher {
  const StagedAdjointArgs<Real>& a;
  StagedStep<Real>& step;
  Real* stats;
  int substeps;
  cudaStream_t stream;
  unsigned blocks;
  StagedStep<Real>* gradient_step;  // contacts from distance: the staged step in the gradient model
  template <class Stage>
  void launch(int s = -1, int round = -1, int i = -1) const {
    stage_kernel<Real, Stage><<<blocks, kBlockSize, 0, stream>>>(a, s, round, i);
    SG_CUDA_CHECK(cudaGetLastError());
  }
  template <class Stage>
  void launch_warps(int s, int round) const {
    const std::size_t threads = static_cast<std::size_t>(a.nenv) * kern::kMaxTeamWidth;
    const unsigned warp_blocks = static_cast<unsigned>((threads + kBlockSize - 1) / kBlockSize);
    warp_stage_kernel<Real, Stage><<<warp_blocks, kBlockSize, 0, stream>>>(a, s, round);
    SG_CUDA_CHECK(cudaGetLastError());
  }
  Real* tape_slot(int s) const {
    return a.tape + static_cast<std::size_t>(s) * static_cast<std::size_t>(a.layout.size) *
                        static_cast<std::size_t>(a.nenv);
  }
  void replay_begin() const { launch<ReplayBegin>(); }
  void replay_substep(int s) const { step.launch_substep(stream, tape_slot(s), stats); }
  void replay_carry(int s) const { launch<ReplayCarry>(s); }
  void replay_check() const { launch<ReplayCheck>(substeps - 1); }
  void gradient_restore(int s) const { launch<GradientRestore>(s); }
  void gradient_substep(int s) const { gradient_step->launch_substep(stream, tape_slot(s), stats); }
  void adjoint_begin() const { launch<AdjointBegin>(); }
  void adjoint_state(int s) const { launch<AdjointState>(s); }
  void adjoint_hessian(int s, int round) const { launch_warps<AdjointHessian>(s, round); }
  void adjoint_solve(int s, int round) const { launch<AdjointSolve>(s, round); }
  void adjoint_rows(int s, int round) const { launch<AdjointRows>(s, round); }
  void adjoint_pairs(int s, int routine, int first, int count, int round) const {
    kern::with_pair_routine(routine, [&](auto r) {
      constexpr int R = decltype(r)::value;
      for (int done = 0; done < count; done += 65535) {  // gridDim.y <= 65535
        const unsigned n = static_cast<unsigned>(count - done < 65535 ? count - done : 65535);
        constexpr unsigned chunks = kern::pair_adjoint_chunks<Real>(R);
        adjoint_pair_kernel<Real, R>
            <<<dim3(blocks, n, chunks), kBlockSize, 0, stream>>>(a, s, first + done, round);
        SG_CUDA_CHECK(cudaGetLastError());
      }
    });
  }
  void adjoint_collision(int s, int round) const { launch<AdjointCollision>(s, round); }
  void adjoint_finish(int s, int round) const { launch<AdjointFinish>(s, round); }
  void rk_adjoint_step_begin(int s, int n) const { launch<RkAdjointStepBegin>(s, n); }
  // in the differentiated model: the gradient model's staged step with contacts from distance
  void rk_adjoint_evaluate(int s) const {
    (gradient_step ? *gradient_step : step).launch_evaluation(stream, tape_slot(s));
  }
  void rk_adjoint_record(int s, int n, int i) const { launch<RkAdjointRecord>(s, n, i); }
  void rk_adjoint_event_begin(int s, int n) const { launch<RkAdjointEventBegin>(s, n); }
  void rk_adjoint_event_end(int s, int n) const { launch<RkAdjointEventEnd>(s, n); }
  void rk_adjoint_event_start(int s, int n) const { launch<RkAdjointEventStart>(s, n); }
  void rk_adjoint_event_finish(int s, int n) const { launch<RkAdjointEventFinish>(s, n); }
  void rk_adjoint_output(int s, int n) const { launch<RkAdjointOutput>(s, n); }
  void rk_adjoint_stage_begin(int s, int n, int i) const { launch<RkAdjointStageBegin>(s, n, i); }
  void rk_adjoint_stage_end(int s, int n, int i) const { launch<RkAdjointStageEnd>(s, n, i); }
  void impulse_adjoint_begin(int s) const { launch<ImpulseAdjointBegin>(s); }
  void impulse_adjoint_solve(int s) const { launch<ImpulseAdjointSolve>(s); }
  void impulse_adjoint_delassus(int s) const { launch<ImpulseAdjointDelassus>(s); }
  void impulse_adjoint_rows(int s) const { launch<ImpulseAdjointRows>(s); }
  void impulse_adjoint_finish(int s) const { launch<ImpulseAdjointFinish>(s); }
  void adjoint_end() const { launch<AdjointEnd>(); }
};

}  // namespace staged_adjoint

template <class Real>
StagedAdjoint<Real>::StagedAdjoint(const kern::ModelView<Real>& m, const kern::DataLayout& layout,
                                   int nenv, int substeps, StagedStep<Real>* gradient_step)
    : m_(m), layout_(layout), nenv_(nenv), substeps_(substeps), gradient_step_(gradient_step) {
  if (m.cfd && !gradient_step)
    throw std::logic_error(
        "StagedAdjoint: contacts from distance need the staged step in the gradient model");
  const std::size_t n = static_cast<std::size_t>(nenv);
  tape_ = DeviceArray<Real>(static_cast<std::size_t>(substeps) * static_cast<std::size_t>(layout.size) * n,
                            "the staged adjoint's tape (a Data per substep)");
  pair_slots_ = DeviceArray<Real>(static_cast<std::size_t>(m.ncpair > 0 ? kern::adjoint_pair_slots_size(m) : 1) * n,
                                  "the staged adjoint's pair slots");
  stats_ = DeviceArray<Real>(static_cast<std::size_t>(kern::kContactStats) * n, "the staged replay's statistics");
}

template <class Real>
StagedAdjoint<Real>::~StagedAdjoint() {
  for (auto& kv : graphs_) cudaGraphExecDestroy(kv.second);
}

template <class Real>
void StagedAdjoint<Real>::enqueue(cudaStream_t stream, StagedStep<Real>& step,
                                  const StagedAdjointArgs<Real>& a) const {
  const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
  const staged_adjoint::Launcher<Real> x{a,      step,   stats_.get(),  substeps_,
                                         stream, blocks, gradient_step_};
  run_staged_adjoint_step(x, step.groups(), make_staged_plan(m_), substeps_,
                          /*gradient_model=*/m_.cfd != 0);
}

template <class Real>
cudaGraphExec_t StagedAdjoint<Real>::graph(cudaStream_t stream, StagedStep<Real>& step,
                                           const StagedAdjointArgs<Real>& a) {
  if (!use_graphs_) return nullptr;
  const GraphKey key = {a.q0,     a.v0,     a.u,         a.w0,   a.q1,   a.v1,
                        a.adj_q,  a.adj_v,  a.adj_u,     a.dl_q, a.dl_v, a.adjoint_ws,
                        a.replay, a.status, a.replay_ok, a.skip, &step};
  const auto it = graphs_.find(key);
  if (it != graphs_.end()) return it->second;
  // A full cache captures nothing more: the sets past it launch plainly (emptying it instead
  // would recapture, and allocate, on every step of a rollout longer than the cache).
  if (graphs_.size() >= kMaxGraphs) return nullptr;
  // Capture once; a stream that cannot be captured falls back to plain launches for good.
  const cudaGraphExec_t exec = capture_graph(stream, [&] { enqueue(stream, step, a); });
  if (!exec) {
    use_graphs_ = false;
    return nullptr;
  }
  graphs_.emplace(key, exec);
  return exec;
}

template <class Real>
void StagedAdjoint<Real>::launch(cudaStream_t stream, StagedStep<Real>& step, StagedAdjointArgs<Real> a) {
  a.m = m_;
  a.layout = layout_;
  a.nenv = nenv_;
  a.tape = tape_.get();
  a.pair_slots = pair_slots_.get();
  a.pairs = step.pairs();
  a.rk = (gradient_step_ ? *gradient_step_ : step).rk_controls();  // rk_adjoint_evaluate's
  if (const cudaGraphExec_t exec = graph(stream, step, a)) {
    SG_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    return;
  }
  enqueue(stream, step, a);
}

}  // namespace stiffgrad::cuda_detail
