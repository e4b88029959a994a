// The staged control step on the device (kernels/step/staged_step.hpp, core/staged_schedule.hpp):
// one kernel per stage, launched in run_staged_control_step's order on the backend's stream,
// captured once per set of arguments (substep count, skip flags, arrays) into a CUDA graph. No
// physics here: every kernel binds one environment's Data and calls one kern:: stage.
//
// Every model runs here (the fused step kernel is gone since 2026-12-08): the Euler family and
// the Impulse model, the Runge–Kutta methods (a controller per environment in rk_ between the
// evaluations of the dynamics, whose stages skip the environments already done), with or
// without constraints (StagedPlan).
//
// Grids: the per-environment stages use one thread per environment (blocks of kBlockSize); the
// narrow stage of routine R uses blockIdx.y = the pair (uniform across the block, so the routine,
// the pair's model data and the branch structure are warp-uniform) and x = the environment; the
// Impulse model's solve stage (the Delassus assembly and the Gauss–Seidel sweeps) runs a warp per
// environment (WarpTeam, backends/cuda/warp_team.cuh: the lanes split the rows and each
// residual's sum): one warp per block with its working set (G, Y, c, the blocks' vectors) in
// the block's dynamic shared memory where it fits (solve_scratch_reals_), else kBlockSize / 32
// environments per block in the workspace. The backend's view has team_width = 32, so that
// every kernel sums in the warp's order.
//
// Device memory owned here (environment-minor like all of backends/cuda/):
//   slots_    pair_slots_size x nenv   the narrow phase's per-pair contacts
//   raised_   nenv                     status bits raised by the substeps of the current step
//   pairs_    ncpair                   PairGroups::pairs
//   rk_       nenv RkControl           the Runge–Kutta controllers between a substep's
//                                      evaluations (only with a Runge–Kutta method)
// The instantiations live in staged_step_float.cu and staged_step_double.cu (one translation
// unit per precision: they compile in parallel).
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "backends/cuda/cuda_support.cuh"
#include "core/staged_schedule.hpp"
#include "kernels/step/staged_step.hpp"

namespace stiffgrad::cuda_detail {

// Everything a stage kernel needs, by value (__grid_constant__: read from the parameter bank).
template <class Real>
struct StagedArgs {
  kern::ModelView<Real> m;
  kern::DataLayout layout;
  Real *qpos, *qvel, *ctrl, *warm, *workspace, *stats, *slots;
  int* status;       // null: every environment is live (the adjoint's replay)
  int* raised;
  const int* skip;   // nenv flags of environments stepped elsewhere (bundles), or null
  const int* pairs;  // PairGroups::pairs on the device
  kern::RkControl* rk;  // the Runge–Kutta controllers (nenv), or null: the Euler family, Impulse
  int nenv;
  // The Impulse solve's shared memory per environment in Reals (kern::impulse_substep_solve_in):
  // 0, every solve in the workspace (kBlockSize / 32 environments per block); else one warp per
  // block with this much dynamic shared memory.
  int solve_scratch_reals;
};

template <class Real>
class StagedStep {
 public:
  // solve_shared_bytes: SimulatorOptions::cuda_solve_shared_bytes (the Impulse solve's shared
  // memory per environment; -1: as much as a block may have, 0: none).
  StagedStep(const Model& model, const kern::ModelView<Real>& m, const kern::DataLayout& layout,
             int nenv, int solve_shared_bytes = -1);
  // Enqueues one control step of `substeps` substeps on `stream` (no host sync, no allocation
  // after the first call with the same arguments: each set is captured once into a graph and
  // kept). The pointers are the backend's arrays, or a bundle branch's (one set per control step
  // and branch of a Rollout).
  void launch(cudaStream_t stream, Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace,
              Real* stats, int* status, const int* skip, int substeps);
  // Enqueues the contact search alone (run_staged_contact_search) at the states (qpos, qvel) of the
  // environments not flagged in skip, into their Data in `workspace`: the kinematics and the
  // contact list, as fwd_position and fwd_collision leave them (a bundle's start).
  void launch_contact_search(cudaStream_t stream, Real* qpos, Real* qvel, Real* workspace,
                             const int* skip);
  // Captures the graph launch() would use for these arguments without launching it.
  void prepare(cudaStream_t stream, Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace, Real* stats,
               int* status, const int* skip, int substeps);
  // Enqueues the stages of one substep (run_staged_substep)
  // over `workspace`, for every environment whatever its status: the staged adjoint's replay
  // into a tape slot (backends/cuda/staged_adjoint.cuh). `stats` (kContactStats x nenv) is
  // scratch; the status bits raised go to raised_, unused until the next step begins.
  void launch_substep(cudaStream_t stream, Real* workspace, Real* stats);
  // Enqueues one evaluation of the Runge–Kutta dynamics over `workspace` up to its constraint
  // solve (the stages rk smooth, narrow, rows and solve) for the environments whose controller is
  // not done: the staged adjoint's Runge–Kutta rounds, which mark them (rk_controls()) and run
  // the evaluation's finish themselves.
  void launch_evaluation(cudaStream_t stream, Real* workspace);
  kern::RkControl* rk_controls() const { return rk_.get(); }  // nenv, or null without Runge–Kutta
  const PairGroups& groups() const { return groups_; }
  const int* pairs() const { return pairs_.get(); }  // groups().pairs on the device
  const StagedPlan& plan() const { return plan_; }
  int solve_scratch_reals() const { return solve_scratch_reals_; }
  std::size_t bytes() const {
    return slots_.bytes() + raised_.bytes() + pairs_.bytes() + rk_.bytes();
  }
  ~StagedStep();
  StagedStep(const StagedStep&) = delete;
  StagedStep& operator=(const StagedStep&) = delete;

 private:
  void enqueue(cudaStream_t stream, const StagedArgs<Real>& a, int substeps) const;
  // The graph for (substeps, the arguments), captured on first use; null when graphs are off.
  cudaGraphExec_t graph(cudaStream_t stream, const StagedArgs<Real>& a, int substeps);
  StagedArgs<Real> args(Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* workspace, Real* stats, int* status,
                        const int* skip) const;
  kern::ModelView<Real> m_;
  kern::DataLayout layout_;
  int nenv_;
  PairGroups groups_;
  StagedPlan plan_;
  int solve_scratch_reals_ = 0;
  DeviceArray<Real> slots_;
  DeviceArray<int> raised_;
  DeviceArray<int> pairs_;
  DeviceArray<kern::RkControl> rk_;
  // what a captured graph bakes in: the substep count and StagedArgs' per-call pointers
  using GraphKey = std::array<const void*, 9>;
  static constexpr std::size_t kMaxGraphs = 4096;  // beyond: plain launches (bounded memory)
  bool use_graphs_ = true;  // off after a capture failed (then plain launches)
  std::map<GraphKey, cudaGraphExec_t> graphs_;
};

}  // namespace stiffgrad::cuda_detail
