// The forward half of Bundled Contact Gradients on the CUDA backend
// (backends/cuda/bundle_cuda.cuh), included by bundle_step_float.cu and bundle_step_double.cu only:
// the per-environment kernels of run_bundled_step (core/staged_schedule.hpp) around the launches of
// the nominal step. No physics here: each kernel binds one environment's views and calls one kern::
// function (kernels/bundle/bundle_step.hpp). A bundle's branch b is the nominal control step (the
// staged pipeline) launched over branch b's states of the bundled
// environments, so no kernel runs a control step per thread for the branches (before 2026-12-07 one
// did: bundle_step_kernel, 255 registers and 9.6 KB of stack in double).
#pragma once

#include "backends/cuda/bundle_cuda.cuh"
#include "kernels/bundle/bundle_step_adjoint.hpp"

namespace stiffgrad {
namespace cuda_detail {

namespace {

using L = kern::Strided;
template <class Real>
using V = kern::View<Real, L>;

// Step t's flags: a bundle starts where the environment is free, finite and over τ; then the
// bundled environments (in_bundle: the nominal step skips them), those that start a bundle
// (start_skip clear: the contact search and bundle_start run for them) and those whose branches
// step (branch_skip clear: bundled and finite; an environment that turned non-finite inside its
// bundle stays bundled until the bundle ends, with nothing stepped).
template <class Real>
__global__ void __launch_bounds__(kBlockSize)
bundle_trigger_kernel(const BundlePool<Real> p, const Real* stats, const int* status, int t, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv) return;
  const std::size_t te = static_cast<std::size_t>(t) * nenv + e;
  const bool finite = (status[e] & kern::kEnvNonFinite) == 0;
  char first = 0;
  if (p.left[e] == 0 && finite &&
      static_cast<double>(stats[static_cast<std::size_t>(p.trigger_row) * nenv + e]) > p.tau) {
    p.left[e] = p.steps;
    ++p.count[e];
    first = 1;
  }
  p.in_bundle[e] = p.left[e] > 0;
  p.start_skip[e] = !first;
  p.branch_skip[e] = !(p.left[e] > 0 && finite);
  p.step_in[te] = static_cast<char>(p.left[e] > 0);
  p.step_first[te] = first;
  p.step_out[te] = static_cast<char>(!(p.left[e] > 0));
}

// After the contact search at the environment's state: its perturbations and branch starts.
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    bundle_start_kernel(const __grid_constant__ kern::ModelView<Real> m, const BundlePool<Real> p,
                        Real* qpos, Real* qvel, Real* warm, Real* workspace,
                        const __grid_constant__ kern::DataLayout layout, int t, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv || p.start_skip[e]) return;
  const L s{nenv};
  const int B = p.B, nq = m.nq, nv = m.nv;
  const BundleScratch<Real> sc(m, p.scratch, e, nenv);
  kern::bundle_start_from_contacts(
      m, p.params, e, t, V<Real>{qpos + e, s}, V<Real>{qvel + e, s}, V<Real>{warm + e, s},
      kern::Data<Real, L>::bind(V<Real>{workspace + e, s}, layout),
      branch_view(p.dq, t, B, nv, e, nenv), branch_view(p.dv, t, B, nv, e, nenv),
      branch_view(p.start_q, 0, B, nq, e, nenv), branch_view(p.start_v, 0, B, nv, e, nenv),
      branch_view(p.start_w, 0, B, nv, e, nenv), sc.perturbation);
}

// Every branch's start copied to time index t + 1, where its step leaves its end: from the
// bundle's starts at its first step, else from time index t.
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    bundle_branches_begin_kernel(const __grid_constant__ kern::ModelView<Real> m,
                                 const BundlePool<Real> p, const int* status, Real* contact_stats,
                                 int t, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv || p.branch_skip[e]) return;
  const int B = p.B, nq = m.nq, nv = m.nv;
  const bool first = !p.start_skip[e];
  kern::bundle_branches_begin_env(
      m, B, status + e, V<Real>{contact_stats + e, L{nenv}},
      first ? branch_view(p.start_q, 0, B, nq, e, nenv) : branch_view(p.q, t, B, nq, e, nenv),
      first ? branch_view(p.start_v, 0, B, nv, e, nenv) : branch_view(p.v, t, B, nv, e, nenv),
      first ? branch_view(p.start_w, 0, B, nv, e, nenv) : branch_view(p.w, t, B, nv, e, nenv),
      branch_view(p.q, t + 1, B, nq, e, nenv), branch_view(p.v, t + 1, B, nv, e, nenv),
      branch_view(p.w, t + 1, B, nv, e, nenv), p.branch_status + e, nenv);
}

// After every branch's step: the environment's state, warm start, status and statistics from
// its branches; one bundle step less to go.
template <class Real>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    bundle_branches_finish_kernel(const __grid_constant__ kern::ModelView<Real> m,
                                  const BundlePool<Real> p, Real* qpos, Real* qvel, Real* warm,
                                  Real* workspace, const __grid_constant__ kern::DataLayout layout,
                                  int* status, Real* contact_stats, int t, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv || !p.in_bundle[e]) return;
  const L s{nenv};
  const int B = p.B, nq = m.nq, nv = m.nv;
  kern::bundle_branches_finish_env(
      m, B, V<Real>{qpos + e, s}, V<Real>{qvel + e, s}, V<Real>{warm + e, s},
      kern::Data<Real, L>::bind(V<Real>{workspace + e, s}, layout), status + e,
      V<Real>{contact_stats + e, s}, branch_view(p.q, t + 1, B, nq, e, nenv),
      branch_view(p.v, t + 1, B, nv, e, nenv), branch_view(p.w, t + 1, B, nv, e, nenv),
      p.branch_status + e, nenv, V<Real>{p.branch_stats + e, s});
  --p.left[e];
}

// The thread's environment when it is bundled in step t, else -1.
template <class Real>
__device__ SG_INLINE int bundled_env(const BundlePool<Real>& p, int t, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  return e < nenv && p.step_in[static_cast<std::size_t>(t) * nenv + e] ? e : -1;
}

// Environment e's column of an environment-minor array (a null view for a null array).
template <class Real>
__device__ SG_INLINE V<Real> env_column(const Real* x, int e, int nenv) {
  return x ? V<Real>{const_cast<Real*>(x) + e, L{nenv}} : V<Real>{};
}

// The adjoint's begin (End false: kern::adj_bundle_branches_begin_env; the branch checkpoints go
// to the start arrays, which the forward pass no longer needs) or end (End true:
// kern::adj_bundle_branches_end_env) for the environments bundled in step t.
template <class Real, bool End>
__global__ void __launch_bounds__(kBlockSize, kBlocksAt128Registers)
    bundle_adjoint_kernel(const __grid_constant__ kern::ModelView<Real> m, const BundlePool<Real> p,
                          const __grid_constant__ StagedAdjointArgs<Real> a, int t, int nenv) {
  const int e = bundled_env(p, t, nenv);
  if (e < 0) return;
  const int B = p.B, nq = m.nq, nv = m.nv;
  const bool first = p.step_first[static_cast<std::size_t>(t) * nenv + e] != 0;
  const BundleScratch<Real> sc(m, p.scratch, e, nenv);
  const auto env = [&](const Real* x) { return env_column(x, e, nenv); };
  if constexpr (End)
    kern::adj_bundle_branches_end_env(
        m, p.params, first, env(a.q0), branch_view(p.dq, t, B, nv, e, nenv), env(a.adj_q),
        env(a.adj_v), env(a.adj_u), branch_view(p.branch_adj_u, 0, B, m.nu, e, nenv),
        branch_view(p.adj_q, 0, B, nq, e, nenv), branch_view(p.adj_v, 0, B, nv, e, nenv), sc.tq,
        sc.sink, env(a.dl_q), env(a.dl_v));
  else
    kern::adj_bundle_branches_begin_env(
        m, p.params, first, env(a.q0), env(a.v0), env(a.w0), env(a.u),
        branch_view(p.q, t, B, nq, e, nenv), branch_view(p.v, t, B, nv, e, nenv),
        branch_view(p.w, t, B, nv, e, nenv), branch_view(p.start_q, 0, B, nq, e, nenv),
        branch_view(p.start_v, 0, B, nv, e, nenv), branch_view(p.start_w, 0, B, nv, e, nenv),
        branch_view(p.q, t + 1, B, nq, e, nenv), branch_view(p.dq, t, B, nv, e, nenv),
        branch_view(p.dv, t, B, nv, e, nenv), env(a.adj_q), env(a.adj_v), env(a.adj_u),
        branch_view(p.adj_q, 0, B, nq, e, nenv), branch_view(p.adj_v, 0, B, nv, e, nenv), sc.u,
        sc.tq, sc.tv);
}

// The launches of run_bundled_step on one stream (member functions, not std::function: nothing
// is allocated per step).
template <class Real>
struct BundleLauncher {
  const kern::ModelView<Real>& m;
  const BundlePool<Real>& p;
  const kern::DataLayout& layout;
  Real *qpos, *qvel, *ctrl, *warm, *workspace;
  int* status;
  Real* contact_stats;
  int t, nenv, substeps;
  StagedStep<Real>& staged;
  cudaStream_t stream;

  unsigned blocks() const { return static_cast<unsigned>((nenv + kBlockSize - 1) / kBlockSize); }
  static void check() { SG_CUDA_CHECK(cudaGetLastError()); }
  void trigger() const {
    bundle_trigger_kernel<Real>
        <<<blocks(), kBlockSize, 0, stream>>>(p, contact_stats, status, t, nenv);
    check();
  }
  // One control step over (q, v, w) with statistics and status bits st, of every environment not
  // flagged in skip: the staged pipeline (a graph per set of arrays, captured at its first use,
  // a Rollout's first pass).
  void step(Real* q, Real* v, Real* w, Real* stats, int* st, const int* skip) const {
    staged.launch(stream, q, v, ctrl, w, workspace, stats, st, skip, substeps);
  }
  void nominal_step() const { step(qpos, qvel, warm, contact_stats, status, p.in_bundle); }
  void contact_search() const {
    staged.launch_contact_search(stream, qpos, qvel, workspace, p.start_skip);
  }
  void bundle_start() const {
    bundle_start_kernel<Real>
        <<<blocks(), kBlockSize, 0, stream>>>(m, p, qpos, qvel, warm, workspace, layout, t, nenv);
    check();
  }
  void branches_begin() const {
    bundle_branches_begin_kernel<Real>
        <<<blocks(), kBlockSize, 0, stream>>>(m, p, status, contact_stats, t, nenv);
    check();
  }
  // branch b's states at time index t + 1: environment-minor arrays of stride nenv, like the
  // backend's
  void branch_step(int b) const {
    const std::size_t n = static_cast<std::size_t>(nenv),
                      tb = static_cast<std::size_t>(t + 1) * p.B + b;
    step(p.q + tb * m.nq * n, p.v + tb * m.nv * n, p.w + tb * m.nv * n,
         p.branch_stats + static_cast<std::size_t>(b) * kern::kContactStats * n,
         p.branch_status + b * n, p.branch_skip);
  }
  void branches_finish() const {
    bundle_branches_finish_kernel<Real><<<blocks(), kBlockSize, 0, stream>>>(
        m, p, qpos, qvel, warm, workspace, layout, status, contact_stats, t, nenv);
    check();
  }
};

// The launches of run_bundled_adjoint_step on one stream.
template <class Real>
struct BundleAdjointLauncher {
  const kern::ModelView<Real>& m;
  const BundlePool<Real>& p;
  StagedAdjoint<Real>& adjoint;
  StagedStep<Real>& step;
  const StagedAdjointArgs<Real>& a;
  int t, nenv;
  cudaStream_t stream;

  unsigned blocks() const { return static_cast<unsigned>((nenv + kBlockSize - 1) / kBlockSize); }
  void nominal_adjoint() const { adjoint.launch(stream, step, a); }
  void bundle_adjoint_begin() const {
    bundle_adjoint_kernel<Real, false><<<blocks(), kBlockSize, 0, stream>>>(m, p, a, t, nenv);
    SG_CUDA_CHECK(cudaGetLastError());
  }
  void branch_adjoint(int b) const {
    const std::size_t n = static_cast<std::size_t>(nenv),
                      tb = static_cast<std::size_t>(t + 1) * p.B + b;
    StagedAdjointArgs<Real> ab = a;
    ab.q0 = p.start_q + b * m.nq * n;
    ab.v0 = p.start_v + b * m.nv * n;
    ab.w0 = p.start_w + b * m.nv * n;
    ab.q1 = p.q + tb * m.nq * n;
    ab.v1 = p.v + tb * m.nv * n;
    ab.adj_q = p.adj_q + b * m.nq * n;
    ab.adj_v = p.adj_v + b * m.nv * n;
    ab.adj_u = p.branch_adj_u + b * m.nu * n;
    ab.dl_q = nullptr;
    ab.dl_v = nullptr;
    ab.skip = p.step_out + static_cast<std::size_t>(t) * n;
    adjoint.launch(stream, step, ab);
  }
  void bundle_adjoint_end() const {
    bundle_adjoint_kernel<Real, true><<<blocks(), kBlockSize, 0, stream>>>(m, p, a, t, nenv);
    SG_CUDA_CHECK(cudaGetLastError());
  }
};

}  // namespace

template <class Real>
void launch_bundled_adjoint_step(const kern::ModelView<Real>& m, const BundlePool<Real>& p,
                                 StagedAdjoint<Real>& adjoint, StagedStep<Real>& step,
                                 const StagedAdjointArgs<Real>& a, int t, int nenv,
                                 cudaStream_t stream) {
  const BundleAdjointLauncher<Real> x{m, p, adjoint, step, a, t, nenv, stream};
  run_bundled_adjoint_step(x, p.B);
}

template <class Real>
void launch_bundled_step(const kern::ModelView<Real>& m, const BundlePool<Real>& p,
                         const kern::DataLayout& layout, Real* qpos, Real* qvel, Real* ctrl,
                         Real* warm, Real* workspace, int* status, Real* contact_stats, int t,
                         int nenv, int substeps, StagedStep<Real>& staged, cudaStream_t stream) {
  const BundleLauncher<Real> x{m,    p,    layout,    qpos,   qvel,
                               ctrl, warm, workspace, status, contact_stats,
                               t,    nenv, substeps,  staged, stream};
  run_bundled_step(x, p.B);
}

}  // namespace cuda_detail
}  // namespace stiffgrad
