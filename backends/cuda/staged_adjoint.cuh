// The staged adjoint on the device (kernels/step/staged_adjoint.hpp, core/staged_schedule.hpp
// run_staged_adjoint_step): the replay runs the staged step's kernels (StagedStep::launch_substep)
// over a tape of S Data per environment, then the adjoint substeps run in reverse, a kernel per
// stage, none recomputing its primal. No physics here: every kernel binds one environment's
// tape slot and adjoint Data and calls one kern:: stage. CudaRollout differentiates every step
// with it (with contacts from distance through a second StagedStep in the gradient model). With
// bundles, the environments not bundled in a step take one launch
// (StagedAdjointArgs::skip: the bundled ones) and each branch another over the bundled ones
// (backends/cuda/bundle_cuda.cuh, launch_bundled_adjoint_step).
//
// Device memory owned here (environment-minor like all of backends/cuda/):
//   tape_     S x DataLayout::size x nenv   substep s's primal Data in slot s
//   pair_slots_  adjoint_pair_slots_size x nenv   the pairs stage's geom pose adjoints
//   stats_    kContactStats x nenv          the replay's statistics (scratch)
// The adjoint Data and the replay buffer are the rollout's. A control step's launches are
// captured once into a CUDA graph per set of argument pointers (a rollout's backward pass has one
// per control step: the checkpoints of step t are at fixed places) and replayed with one
// cudaGraphLaunch; a stream that cannot be captured falls back to plain launches. The
// instantiations live in staged_adjoint_float.cu and staged_adjoint_double.cu.
#pragma once

#include <array>
#include <map>

#include "backends/cuda/staged_step.cuh"

namespace stiffgrad::cuda_detail {

// One control step's arguments, by value (__grid_constant__).
template <class Real>
struct StagedAdjointArgs {
  kern::ModelView<Real> m;
  kern::DataLayout layout;
  const Real *q0, *v0, *u, *w0;  // the checkpoint at the step's start, its control and warm start
  const Real *q1, *v1;           // the next checkpoint (the replay's bitwise check)
  Real *adj_q, *adj_v;           // nq / nv x nenv: in, the adjoint of the state after the step; out, before
  Real* adj_u;                   // nu x nenv: out, the control's adjoint
  const Real *dl_q, *dl_v;       // the loss gradient of the state at the step's start (may be null)
  Real *tape, *adjoint_ws, *replay;
  Real* pair_slots;              // kern::adjoint_pair_slots_size x nenv
  const int* pairs;              // PairGroups::pairs on the device (StagedStep::pairs)
  kern::RkControl* rk;           // the staged step's controllers (StagedStep::rk_controls): the
                                 // Runge–Kutta rounds mark the environments they evaluate
  const int* status;             // the backend's status: a non-finite environment's check is not counted
  int* replay_ok;                // cleared where the replay is not bitwise
  const char* skip;  // nenv or null: environments whose step another launch differentiates
                     // (a bundled step: its branches' launches), left untouched past the
                     // replay
  int nenv;
};

template <class Real>
class StagedAdjoint {
 public:
  // m: the model the adjoint differentiates (the backend's gradient view; the replay's stages
  // read only its sizes, which the simulated model shares). With contacts from distance (m.cfd),
  // gradient_step is the staged step in that model, which puts each substep's primal in its slot
  // (kern::staged_gradient_restore); it must outlive this object.
  StagedAdjoint(const kern::ModelView<Real>& m, const kern::DataLayout& layout, int nenv,
                int substeps, StagedStep<Real>* gradient_step = nullptr);
  ~StagedAdjoint();
  StagedAdjoint(const StagedAdjoint&) = delete;
  StagedAdjoint& operator=(const StagedAdjoint&) = delete;
  // Enqueues the adjoint of one control step (a: everything but tape) on `stream`; the replay's
  // substeps go through `step` (the backend's StagedStep). No host sync, and no allocation once
  // the graph of these pointers exists (the first backward pass of a rollout captures one per
  // control step).
  void launch(cudaStream_t stream, StagedStep<Real>& step, StagedAdjointArgs<Real> a);
  std::size_t bytes() const { return tape_.bytes() + pair_slots_.bytes() + stats_.bytes(); }

 private:
  // the pointers a captured graph bakes in: StagedAdjointArgs' per-call ones and the step's
  using GraphKey = std::array<const void*, 17>;
  static constexpr std::size_t kMaxGraphs = 4096;  // beyond: plain launches (bounded memory)
  void enqueue(cudaStream_t stream, StagedStep<Real>& step, const StagedAdjointArgs<Real>& a) const;
  cudaGraphExec_t graph(cudaStream_t stream, StagedStep<Real>& step,
                        const StagedAdjointArgs<Real>& a);

  kern::ModelView<Real> m_;
  kern::DataLayout layout_;
  int nenv_, substeps_;
  StagedStep<Real>* gradient_step_;  // contacts from distance, else null
  DeviceArray<Real> tape_, pair_slots_, stats_;
  std::map<GraphKey, cudaGraphExec_t> graphs_;
  bool use_graphs_ = true;  // off after a capture failed (then plain launches)
};

}  // namespace stiffgrad::cuda_detail
