// Definitions of StagedStep (backends/cuda/staged_step.cuh), included by staged_step_float.cu and
// staged_step_double.cu only.
#pragma once

#include <algorithm>

#include "backends/cuda/staged_step.cuh"
#include "backends/cuda/warp_team.cuh"

namespace stiffgrad::cuda_detail {

namespace staged {

using L = kern::Strided;
template <class Real> using V = kern::View<Real, L>;

// e, or -1 when there is no environment e or it is skipped: stepped elsewhere (a bundle) or
// already non-finite (its status only changes in `end`).
template <class Real>
__device__ SG_INLINE int stage_env_if_live(const StagedArgs<Real>& a, int e) {
  if (e >= a.nenv) return -1;
  if (a.skip && a.skip[e]) return -1;
  if (a.status && (a.status[e] & kern::kEnvNonFinite)) return -1;
  return e;
}

// The environment of a per-environment stage: one per thread.
template <class Real>
__device__ SG_INLINE int stage_env(const StagedArgs<Real>& a) {
  return stage_env_if_live(a, static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x));
}

// The environment of a warp-per-environment stage (warp w of the grid has environment w):
// uniform across the warp, so a warp leaves or stays whole (its team operations need every lane).
template <class Real>
__device__ SG_INLINE int stage_env_of_warp(const StagedArgs<Real>& a) {
  const int thread = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  return stage_env_if_live(a, thread / kern::kMaxTeamWidth);
}

// An evaluation stage of the Runge–Kutta methods skips the environments whose substep is done
// (kern::RkControl::phase; warp-uniform in a warp-per-environment stage). a.rk is null for the
// other integrators.
template <class Real>
__device__ SG_INLINE bool rk_done(const StagedArgs<Real>& a, int e) {
  return a.rk != nullptr && a.rk[e].phase == kern::kRkDone;
}

template <class Real>
__device__ SG_INLINE kern::Data<Real, L> env_data(const StagedArgs<Real>& a, int e) {
  return kern::Data<Real, L>::bind(V<Real>{a.workspace + e, L{a.nenv}}, a.layout);
}

template <class Real>
__device__ SG_INLINE V<Real> env_view(Real* base, const StagedArgs<Real>& a, int e) {
  return V<Real>{base + e, L{a.nenv}};
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize) begin_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  a.raised[e] = 0;
  kern::control_step_begin(a.m, env_view(a.qpos, a, e), env_view(a.qvel, a, e), env_view(a.ctrl, a, e),
                           env_view(a.warm, a, e), env_data(a, e), a.status + e, env_view(a.stats, a, e));
}

// The occupancy bound (128 registers) is here to stop a ptxas heuristic: with the block size
// alone, the float kernel was given 64 registers and spilled 36 B once Data became a base view
// and an offset table (issue 38, item 6); with the bound it takes 110 and no spills (sm_90).
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    smooth_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::staged_smooth(a.m, env_data(a, e));
}

// The occupancy bound of narrow_kernel<Real, R>: 128 registers (kBlocksAt128Registers), but for
// the routines whose double narrow phase needs more (box-box 160 registers, the convex MPR 200,
// and the run-time dispatch that holds both), which keep the block size alone rather than spill.
template <class Real, int R>
constexpr int narrow_min_blocks() {
  const bool wide = sizeof(Real) == 8 && (R == kern::kRoutineBoxBox || R == kern::kRoutineConvex);
  return wide || R == kern::kRoutineNone ? 1 : kBlocksAt128Registers;
}

// blockIdx.y: the pair a.pairs[first + blockIdx.y], all of routine R
template <class Real, int R>
__global__ void __launch_bounds__(kBlockSize, (narrow_min_blocks<Real, R>())) narrow_kernel(
    const __grid_constant__ StagedArgs<Real> a, int first) {
  const int e = stage_env(a);
  if (e < 0 || rk_done(a, e)) return;
  const int c = a.pairs[first + static_cast<int>(blockIdx.y)];
  kern::staged_narrow<R>(a.m, env_data(a, e), c, env_view(a.slots, a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) constraint_rows_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0 || rk_done(a, e)) return;
  a.raised[e] |= kern::staged_constraint_rows(a.m, env_data(a, e), env_view(a.slots, a, e));
}

// a warp per environment (kBlockSize / 32 environments per block)
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) constraint_solve_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env_of_warp(a);
  if (e < 0 || rk_done(a, e)) return;
  kern::constraint_solve(WarpTeam{}, a.m, env_data(a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) constraint_finish_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::staged_constraint_finish(a.m, env_data(a, e), env_view(a.stats, a, e));
}

// The Runge–Kutta controller's stages (kern::staged_rk_smooth, kern::staged_rk_finish).
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    rk_begin_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::RkControl c;
  kern::rk_substep_begin(a.m, env_data(a, e), c);
  a.rk[e] = c;
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    rk_smooth_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0 || rk_done(a, e)) return;
  kern::staged_rk_smooth(a.m, env_data(a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    rk_finish_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0 || rk_done(a, e)) return;
  kern::RkControl c = a.rk[e];
  a.raised[e] |= kern::staged_rk_finish(a.m, env_data(a, e), c, env_view(a.stats, a, e));
  a.rk[e] = c;
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) impulse_half_step_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::impulse_substep_half_step(a.m, env_data(a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) impulse_smooth_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::staged_impulse_smooth(a.m, env_data(a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) impulse_rows_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  a.raised[e] |= kern::staged_impulse_rows(a.m, env_data(a, e), env_view(a.slots, a, e));
}

// A warp per environment, in two launches (Launcher::impulse_solve): kShared, the environments
// whose working set fits a.solve_scratch_reals, each solving in its block's dynamic shared memory
// (one warp per block); else the others, in the workspace (kBlockSize / 32 per block, no shared
// memory). The test is warp-uniform (the environment's live row count).
template <class Real, bool kShared>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    impulse_solve_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env_of_warp(a);
  if (e < 0) return;
  const kern::Data<Real, L> d = env_data(a, e);
  if (kern::impulse_solve_fits(kern::sg_int(d.nefc()[0]), a.m.nv, a.solve_scratch_reals) != kShared)
    return;
  if constexpr (kShared) {
    extern __shared__ __align__(16) unsigned char solve_shared[];
    kern::impulse_substep_solve_scratch(
        WarpTeam{}, a.m, d,
        kern::View<Real, kern::Contiguous>{reinterpret_cast<Real*>(solve_shared)});
  } else {
    kern::impulse_substep_solve(WarpTeam{}, a.m, d);
  }
}

// The Impulse solve's shared memory per environment in Reals: its working set at the row
// capacity (kern::impulse_solve_set_size), capped by `requested_bytes` (< 0: no cap) and by
// what a block may have on this device; 0 when it could not hold even one block's rows (or the
// model is not the Impulse model). Sets the kernel's dynamic shared-memory limit to it.
template <class Real>
int impulse_solve_scratch_reals(const kern::ModelView<Real>& m, int requested_bytes) {
  if (!kern::staged_step_is_impulse(m) || m.nefc_max < kern::kImpulseBlockRows ||
      requested_bytes == 0)
    return 0;
  int device = 0, optin = 0;
  SG_CUDA_CHECK(cudaGetDevice(&device));
  SG_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const long long limit = requested_bytes < 0 ? optin : std::min(requested_bytes, optin);
  const long long reals = std::min<long long>(kern::impulse_solve_set_size(m.nefc_max, m.nv),
                                              limit / static_cast<long long>(sizeof(Real)));
  if (reals < kern::impulse_solve_set_size(kern::kImpulseBlockRows, m.nv)) return 0;
  SG_CUDA_CHECK(cudaFuncSetAttribute(
      impulse_solve_kernel<Real, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
      static_cast<int>(reals * static_cast<long long>(sizeof(Real)))));
  return static_cast<int>(reals);
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers) impulse_finish_kernel(
    const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::staged_impulse_finish(a.m, env_data(a, e), env_view(a.stats, a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize) end_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::control_step_end(a.m, env_data(a, e), env_view(a.qpos, a, e), env_view(a.qvel, a, e),
                         env_view(a.warm, a, e), a.raised[e], a.status + e);
}

// The contact search alone (a bundle's start): run_staged_contact_search's per-environment stages.
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    contacts_begin_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::staged_contacts_begin(a.m, env_view(a.qpos, a, e), env_view(a.qvel, a, e), env_data(a, e));
}

template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    contacts_gather_kernel(const __grid_constant__ StagedArgs<Real> a) {
  const int e = stage_env(a);
  if (e < 0) return;
  kern::staged_gather_contacts(a.m, env_data(a, e), env_view(a.slots, a, e));
}

// The launches of run_staged_control_step on one stream.
template <class Real>
struct Launcher {
  const StagedArgs<Real>& a;
  cudaStream_t stream;
  unsigned blocks;
  void check() const { SG_CUDA_CHECK(cudaGetLastError()); }
  void begin() const { begin_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void smooth() const { smooth_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void narrow(int routine, int first, int count) const {
    kern::with_pair_routine(routine, [&](auto r) {
      constexpr int R = decltype(r)::value;
      // gridDim.y is at most 65535: a longer group goes in chunks
      for (int done = 0; done < count; done += 65535) {
        const unsigned n = static_cast<unsigned>(count - done < 65535 ? count - done : 65535);
        narrow_kernel<Real, R><<<dim3(blocks, n), kBlockSize, 0, stream>>>(a, first + done);
        check();
      }
    });
  }
  unsigned warp_blocks() const {
    return static_cast<unsigned>((static_cast<long long>(a.nenv) * kern::kMaxTeamWidth + kBlockSize - 1) /
                                 kBlockSize);
  }
  void constraint_rows() const { constraint_rows_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void constraint_solve() const {
    constraint_solve_kernel<Real><<<warp_blocks(), kBlockSize, 0, stream>>>(a);
    check();
  }
  void constraint_finish() const {
    constraint_finish_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
  void rk_begin() const {
    rk_begin_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
  void rk_smooth() const {
    rk_smooth_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
  void rk_finish() const {
    rk_finish_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
  void impulse_half_step() const {
    impulse_half_step_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
  void impulse_smooth() const { impulse_smooth_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void impulse_rows() const { impulse_rows_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void impulse_solve() const {
    if (a.solve_scratch_reals > 0) {
      impulse_solve_kernel<Real, true>
          <<<static_cast<unsigned>(a.nenv), kern::kMaxTeamWidth,
             sizeof(Real) * static_cast<std::size_t>(a.solve_scratch_reals), stream>>>(a);
      check();
    }
    impulse_solve_kernel<Real, false><<<warp_blocks(), kBlockSize, 0, stream>>>(a);
    check();
  }
  void impulse_finish() const { impulse_finish_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void end() const { end_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a); check(); }
  void contacts_begin() const {
    contacts_begin_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
  void contacts_gather() const {
    contacts_gather_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(a);
    check();
  }
};

}  // namespace staged

template <class Real>
StagedStep<Real>::StagedStep(const Model& model, const kern::ModelView<Real>& m,
                             const kern::DataLayout& layout, int nenv, int solve_shared_bytes)
    : m_(m),
      layout_(layout),
      nenv_(nenv),
      groups_(make_pair_groups(model)),
      plan_(make_staged_plan(m)),
      solve_scratch_reals_(staged::impulse_solve_scratch_reals(m, solve_shared_bytes)) {
  const std::size_t n = static_cast<std::size_t>(nenv);
  int slots = 0;  // pair_slots_size(m) reads device memory: from the host model instead
  for (int c = 0; c < model.ncpair; ++c) slots += model.cpair_maxcon[static_cast<std::size_t>(c)];
  slots = model.ncpair + kern::kSlotReals * slots;
  slots_ = DeviceArray<Real>(static_cast<std::size_t>(slots > 0 ? slots : 1) * n, "the narrow phase's pair slots");
  raised_ = DeviceArray<int>(n, "staged step status bits");
  pairs_ = DeviceArray<int>(groups_.pairs.empty() ? 1 : groups_.pairs.size(), "pairs by routine");
  if (plan_.rk_evaluations > 0)
    rk_ = DeviceArray<kern::RkControl>(n, "the Runge-Kutta controllers");
  if (!groups_.pairs.empty())
    SG_CUDA_CHECK(cudaMemcpy(pairs_.get(), groups_.pairs.data(), sizeof(int) * groups_.pairs.size(),
                             cudaMemcpyHostToDevice));
}

template <class Real>
StagedStep<Real>::~StagedStep() {
  for (auto& kv : graphs_) cudaGraphExecDestroy(kv.second);
}

template <class Real>
void StagedStep<Real>::enqueue(cudaStream_t stream, const StagedArgs<Real>& a, int substeps) const {
  const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
  const staged::Launcher<Real> x{a, stream, blocks};
  run_staged_control_step(x, groups_, plan_, substeps);
}

template <class Real>
void StagedStep<Real>::launch_substep(cudaStream_t stream, Real* workspace, Real* stats) {
  const StagedArgs<Real> a = args(nullptr, nullptr, nullptr, nullptr, workspace, stats, nullptr, nullptr);
  const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
  const staged::Launcher<Real> x{a, stream, blocks};
  run_staged_substep(x, groups_, plan_);
}

template <class Real>
void StagedStep<Real>::launch_evaluation(cudaStream_t stream, Real* workspace) {
  const StagedArgs<Real> a =
      args(nullptr, nullptr, nullptr, nullptr, workspace, nullptr, nullptr, nullptr);
  const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
  const staged::Launcher<Real> x{a, stream, blocks};
  run_staged_evaluation(x, groups_, plan_);
}

template <class Real>
void StagedStep<Real>::launch_contact_search(cudaStream_t stream, Real* qpos, Real* qvel,
                                             Real* workspace, const int* skip) {
  StagedArgs<Real> a = args(qpos, qvel, nullptr, nullptr, workspace, nullptr, nullptr, skip);
  a.rk = nullptr;  // every environment's narrow phase: the controllers of a substep do not apply
  const unsigned blocks = static_cast<unsigned>((nenv_ + kBlockSize - 1) / kBlockSize);
  const staged::Launcher<Real> x{a, stream, blocks};
  run_staged_contact_search(x, groups_, m_.contact_enabled != 0);
}

template <class Real>
StagedArgs<Real> StagedStep<Real>::args(Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace, Real* stats,
                                        int* status, const int* skip) const {
  StagedArgs<Real> a{};
  a.m = m_;
  a.layout = layout_;
  a.qpos = qpos; a.qvel = qvel; a.ctrl = ctrl; a.warm = warm; a.workspace = workspace; a.stats = stats;
  a.slots = slots_.get();
  a.status = status;
  a.raised = raised_.get();
  a.skip = skip;
  a.pairs = pairs_.get();
  a.rk = rk_.get();
  a.nenv = nenv_;
  a.solve_scratch_reals = solve_scratch_reals_;
  return a;
}

template <class Real>
cudaGraphExec_t StagedStep<Real>::graph(cudaStream_t stream, const StagedArgs<Real>& a, int substeps) {
  if (!use_graphs_) return nullptr;
  // A graph bakes in its kernels' arguments: one per set (the backend's arrays; with bundles,
  // each control step's and branch's arrays of a Rollout), kept while the cache stays under
  // kMaxGraphs.
  const GraphKey key = {reinterpret_cast<const void*>(static_cast<std::intptr_t>(substeps)),
                        a.skip,
                        a.qpos,
                        a.qvel,
                        a.ctrl,
                        a.warm,
                        a.workspace,
                        a.stats,
                        a.status};
  const auto it = graphs_.find(key);
  if (it != graphs_.end()) return it->second;
  // A full cache captures nothing more: the sets past it launch plainly (emptying it instead
  // would recapture, and allocate, on every step of a rollout longer than the cache).
  if (graphs_.size() >= kMaxGraphs) return nullptr;
  // Capture once; a stream that cannot be captured falls back to plain launches for good.
  const cudaGraphExec_t exec = capture_graph(stream, [&] { enqueue(stream, a, substeps); });
  if (!exec) {
    use_graphs_ = false;
    return nullptr;
  }
  graphs_.emplace(key, exec);
  return exec;
}

template <class Real>
void StagedStep<Real>::prepare(cudaStream_t stream, Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace,
                               Real* stats, int* status, const int* skip, int substeps) {
  graph(stream, args(qpos, qvel, ctrl, warm, workspace, stats, status, skip), substeps);
}

template <class Real>
void StagedStep<Real>::launch(cudaStream_t stream, Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace,
                              Real* stats, int* status, const int* skip, int substeps) {
  const StagedArgs<Real> a = args(qpos, qvel, ctrl, warm, workspace, stats, status, skip);
  if (const cudaGraphExec_t exec = graph(stream, a, substeps)) {
    SG_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    return;
  }
  enqueue(stream, a, substeps);
}

}  // namespace stiffgrad::cuda_detail
