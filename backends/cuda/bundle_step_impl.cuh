// The forward half of Bundled Contact Gradients on the CUDA backend (backends/cuda/bundle_cuda.cuh),
// included by bundle_step_float.cu and bundle_step_double.cu only: the trigger kernel, CUB's
// compaction of the bundled environments' ids, the nominal step of the others (staged or fused)
// and the bundle kernel, which runs each compacted environment's B branches with the same kern::
// functions as the CPU backend. Divergence: a warp of the bundle kernel holds only bundled
// environments (each doing B branch steps, differing only in their bundle's phase).
#pragma once

#include "backends/cuda/bundle_cuda.cuh"

namespace stiffgrad {
namespace cuda_detail {

namespace {

// Step t's bundle flags: a bundle starts where the environment is free, finite and over τ.
template <class Real>
__global__ void __launch_bounds__(kBlockSize)
bundle_trigger_kernel(const BundlePool<Real> p, const Real* stats, const int* status, int t, int nenv) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv) return;
  const std::size_t te = static_cast<std::size_t>(t) * nenv + e;
  char first = 0;
  if (p.left[e] == 0 && (status[e] & kern::kEnvNonFinite) == 0 &&
      static_cast<double>(stats[static_cast<std::size_t>(p.trigger_row) * nenv + e]) > p.tau) {
    p.left[e] = p.steps;
    ++p.count[e];
    first = 1;
  }
  p.in_bundle[e] = p.left[e] > 0;
  p.step_in[te] = static_cast<char>(p.left[e] > 0);
  p.step_first[te] = first;
}

// Thread i < *num_selected steps the bundle of environment ids[i] (bundle_start_env at its first
// step, then bundle_step_env), in that environment's workspace.
template <class Real>
__global__ void __launch_bounds__(kBlockSize)
bundle_step_kernel(const __grid_constant__ kern::ModelView<Real> m, const BundlePool<Real> p, Real* qpos, Real* qvel,
                   Real* ctrl, Real* warm, Real* workspace, const __grid_constant__ kern::DataLayout layout, int t,
                   int nenv, int substeps, int* status, Real* contact_stats) {
  const int i = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (i >= *p.num_selected) return;
  const int e = p.ids[i];
  using L = kern::Strided;
  using V = kern::View<Real, L>;
  const L s{nenv};
  const auto d = kern::Data<Real, L>::bind(V{workspace + e, s}, layout);
  const BundleScratch<Real> sc(m, p.scratch, e, nenv);
  const V q{qpos + e, s}, v{qvel + e, s}, u{ctrl + e, s}, w{warm + e, s};
  const bool first = p.step_first[static_cast<std::size_t>(t) * nenv + e] != 0;
  const int B = p.B, nq = m.nq, nv = m.nv;
  const V sq = branch_view(p.start_q, 0, B, nq, e, nenv), sv = branch_view(p.start_v, 0, B, nv, e, nenv),
          sw = branch_view(p.start_w, 0, B, nv, e, nenv);
  if (first)
    kern::bundle_start_env(m, p.params, e, t, q, v, w, d, branch_view(p.dq, t, B, nv, e, nenv),
                           branch_view(p.dv, t, B, nv, e, nenv), sq, sv, sw, sc.perturbation);
  kern::bundle_step_env(m, p.params, q, v, u, w, d, substeps, status + e, V{contact_stats + e, s},
                        first ? sq : branch_view(p.q, t, B, nq, e, nenv), first ? sv : branch_view(p.v, t, B, nv, e, nenv),
                        first ? sw : branch_view(p.w, t, B, nv, e, nenv), branch_view(p.q, t + 1, B, nq, e, nenv),
                        branch_view(p.v, t + 1, B, nv, e, nenv), branch_view(p.w, t + 1, B, nv, e, nenv), sc.u,
                        sc.stats);
  --p.left[e];
}

}  // namespace

template <class Real>
void launch_bundled_step(const kern::ModelView<Real>& m, const BundlePool<Real>& p, const kern::DataLayout& layout,
                         Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace, int* status,
                         Real* contact_stats, const int* env_ids, void* select_temp, std::size_t select_temp_bytes,
                         int t, int nenv, int substeps, StagedStep<Real>* staged, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((nenv + kBlockSize - 1) / kBlockSize);
  bundle_trigger_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(p, contact_stats, status, t, nenv);
  SG_CUDA_CHECK(cudaGetLastError());
  std::size_t bytes = select_temp_bytes;
  select_flagged_ids(select_temp, bytes, env_ids, p.in_bundle, p.ids, p.num_selected, nenv, stream);
  if (staged)
    staged->launch(stream, qpos, qvel, ctrl, warm, workspace, contact_stats, status, p.in_bundle, substeps);
  else
    launch_fused_step<Real>(m, qpos, qvel, ctrl, warm, workspace, layout, nenv, substeps, status, contact_stats,
                            p.in_bundle, stream);
  bundle_step_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(m, p, qpos, qvel, ctrl, warm, workspace, layout, t, nenv,
                                                              substeps, status, contact_stats);
  SG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace cuda_detail
}  // namespace stiffgrad
