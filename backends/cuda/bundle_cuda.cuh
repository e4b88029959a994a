// Bundled Contact Gradients on the CUDA backend (stiffgrad/bundle.hpp): the bundle pool's
// device pointers and per-environment views, shared by the forward launch (backends/cuda/bundle_cuda.cu)
// and the adjoint kernel (backends/cuda/adjoint_step_impl.cuh). Every kernel lives in its own
// translation unit per precision so that nvcc compiles them in parallel.
#pragma once

#include <cstddef>

#include "backends/cuda/cuda_support.cuh"
#include "backends/cuda/staged_step.cuh"
#include "backends/cuda/step_launch.cuh"
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
  int* in_bundle = nullptr;                            // nenv  this step's flags (DeviceSelect input)
  int* ids = nullptr;                                  // nenv  compacted ids
  int* num_selected = nullptr;                         // 1
  char* step_in = nullptr;                             // T x nenv  bundled in step t
  char* step_first = nullptr;                          // T x nenv  the bundle's first step
};

template <class Real>
SG_HD SG_INLINE int bundle_scratch_size(const kern::ModelView<Real>& m) {
  return kern::bundle_perturbation_scratch_size(m) + 2 * m.nu + m.nq + 2 * m.nv + kern::kContactStats;
}

// Views of environment e's branches in a pool array at time index t (n = nq or nv per branch).
template <class Real>
SG_HD SG_INLINE kern::View<Real, kern::Strided> branch_view(Real* base, int t, int B, int n, int e, int nenv) {
  return kern::View<Real, kern::Strided>{base + static_cast<std::size_t>(t) * B * n * nenv + e, kern::Strided{nenv}};
}

template <class Real>
struct BundleScratch {
  kern::View<Real, kern::Strided> perturbation, u, adj_u, tq, tv, sink, stats;
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
    stats = take(kern::kContactStats);
  }
};

// The bundle kernels' CUB temporary storage (DeviceSelect::Flagged over nenv ids), in bytes.
std::size_t bundle_select_temp_bytes(int nenv, cudaStream_t stream);

// out[0 .. *num_selected) = the ids whose flag is set, in order (CUB's DeviceSelect::Flagged with
// temporary storage of bundle_select_temp_bytes), on `stream`.
void select_flagged_ids(void* temp, std::size_t temp_bytes, const int* ids, const int* flags, int* out,
                        int* num_selected, int n, cudaStream_t stream);

// env_ids[i] = i (the ids DeviceSelect compacts), once at creation.
void fill_env_ids(int* env_ids, int nenv, cudaStream_t stream);

// Control step t of every environment under the bundle scheduler, on `stream` without a host
// sync: the trigger kernel flags the bundled environments, DeviceSelect compacts their ids, the
// nominal step (`staged` where the backend has one, else the fused kernel) advances the others
// and the bundle kernel the compacted ones. Instantiated in bundle_step_float.cu and
// bundle_step_double.cu.
template <class Real>
void launch_bundled_step(const kern::ModelView<Real>& m, const BundlePool<Real>& p, const kern::DataLayout& layout,
                         Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace, int* status,
                         Real* contact_stats, const int* env_ids, void* select_temp, std::size_t select_temp_bytes,
                         int t, int nenv, int substeps, StagedStep<Real>* staged, cudaStream_t stream);

}  // namespace cuda_detail
}  // namespace stiffgrad
