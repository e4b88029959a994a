// Bundled Contact Gradients on the CUDA backend (stiffgrad/bundle.hpp): the bundle pool's
// device pointers and per-environment views, shared by the forward launch
// (backends/cuda/bundle_step_impl.cuh) and the adjoint kernel
// (backends/cuda/adjoint_step_impl.cuh). Every kernel lives in its own translation unit per
// precision so that nvcc compiles them in parallel.
#pragma once

#include <cstddef>

#include "backends/cuda/cuda_support.cuh"
#include "backends/cuda/staged_adjoint.cuh"
#include "backends/cuda/staged_step.cuh"
#include "core/staged_schedule.hpp"
#include "kernels/bundle/bundle_step.hpp"

namespace stiffgrad {
namespace cuda_detail {

// Device pointers of the bundle pool (all environment-minor with stride nenv); null arrays
// mean no bundles. Branch arrays at time index t start at t * B * n * nenv.
template <class Real>
struct BundlePool {
  kern::BundleParams params{};
  int B = 0, steps = 0, trigger_row = 0;
  double tau = 0;
  Real *q = nullptr, *v = nullptr, *w = nullptr;       // (T + 1) x B n x nenv
  Real *dq = nullptr, *dv = nullptr;                   // T x B nv x nenv
  Real *start_q = nullptr, *start_v = nullptr, *start_w = nullptr;  // B n x nenv
  Real *adj_q = nullptr, *adj_v = nullptr;             // B n x nenv
  Real* scratch = nullptr;                             // bundle_scratch_size x nenv
  int* left = nullptr;                                 // nenv  steps left in the current bundle
  int* count = nullptr;                                // nenv  bundles started
  int* in_bundle = nullptr;      // nenv  bundled in this step (the nominal step's skip)
  int* start_skip = nullptr;     // nenv  not starting a bundle in this step
  int* branch_skip = nullptr;    // nenv  no branch to step (the branch steps' skip)
  int* branch_status = nullptr;  // B x nenv  each branch's status bits
  Real* branch_stats = nullptr;  // B kContactStats x nenv  each branch's statistics
  Real* branch_adj_u = nullptr;  // B nu x nenv  each branch's control adjoint
  char* step_in = nullptr;                             // T x nenv  bundled in step t
  char* step_first = nullptr;                          // T x nenv  the bundle's first step
  char* step_out = nullptr;                            // T x nenv  not bundled in step t
};

template <class Real>
SG_HD SG_INLINE int bundle_scratch_size(const kern::ModelView<Real>& m) {
  return kern::bundle_perturbation_scratch_size(m) + 2 * m.nu + m.nq + 2 * m.nv;
}

// Views of environment e's branches in a pool array at time index t (n = nq or nv per branch).
template <class Real>
SG_HD SG_INLINE kern::View<Real, kern::Strided> branch_view(Real* base, int t, int B, int n, int e, int nenv) {
  return kern::View<Real, kern::Strided>{base + static_cast<std::size_t>(t) * B * n * nenv + e, kern::Strided{nenv}};
}

template <class Real>
struct BundleScratch {
  kern::View<Real, kern::Strided> perturbation, u, adj_u, tq, tv, sink;
  BundleScratch() = default;
  SG_HD SG_INLINE BundleScratch(const kern::ModelView<Real>& m, Real* base, int e, int nenv) {
    using V = kern::View<Real, kern::Strided>;
    const kern::Strided s{nenv};
    int k = 0;
    const auto take = [&](int n) { V v{base + static_cast<std::size_t>(k) * nenv + e, s}; k += n; return v; };
    perturbation = take(kern::bundle_perturbation_scratch_size(m));
    u = take(m.nu);
    adj_u = take(m.nu);
    tq = take(m.nq);
    tv = take(m.nv);
    sink = take(m.nv);
  }
};

// Control step t of every environment under the bundle scheduler, on `stream` without a host
// sync (run_bundled_step, core/staged_schedule.hpp): the trigger kernel sets the step's flags, the
// nominal step (the backend's staged step `staged`) advances the environments not bundled, its
// contact search and the start kernel begin the new bundles, and each branch is one
// launch of the nominal step over the bundled environments' branch states at time index t + 1
// (the staged step's graph for those arrays, captured at a Rollout's first pass). Instantiated
// in bundle_step_float.cu and bundle_step_double.cu.
template <class Real>
void launch_bundled_step(const kern::ModelView<Real>& m, const BundlePool<Real>& p,
                         const kern::DataLayout& layout, Real* qpos, Real* qvel, Real* ctrl,
                         Real* warm, Real* workspace, int* status, Real* contact_stats, int t,
                         int nenv, int substeps, StagedStep<Real>& staged, cudaStream_t stream);

// The adjoint of control step t under the bundle scheduler, where the staged adjoint applies
// (run_bundled_adjoint_step, core/staged_schedule.hpp), on `stream` without a host sync: the
// staged adjoint of the environments not bundled in step t (`a`, whose skip must be the step's
// bundle flags p.step_in + t nenv), a begin kernel for the bundled ones (their branches'
// checkpoints into the start arrays, the average's adjoint), the staged adjoint of each branch
// over the bundled environments (checkpoint: the start arrays; next checkpoint: the branch
// states at t + 1; running adjoint: p.adj_q, p.adj_v; control adjoint: p.branch_adj_u), and an
// end kernel (control adjoints summed, the perturbation's adjoint at a bundle's first step, the
// loss gradient of `a`). Instantiated in bundle_step_float.cu and bundle_step_double.cu.
template <class Real>
void launch_bundled_adjoint_step(const kern::ModelView<Real>& m, const BundlePool<Real>& p,
                                 StagedAdjoint<Real>& adjoint, StagedStep<Real>& step,
                                 const StagedAdjointArgs<Real>& a, int t, int nenv,
                                 cudaStream_t stream);

}  // namespace cuda_detail
}  // namespace stiffgrad
