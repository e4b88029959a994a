// stiffgrad — recorded rollouts and their exact gradients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "stiffgrad/bundle.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

class RolloutImpl;  // core/backend.hpp

// A control that depends on the state it is applied in (a policy in the loop: ctrl_t =
// π(obs(state_t))), seen by the backward pass: called once per control step t = T-1, ..., 0 with
//   adj_ctrl  nenv x nu  dL/dctrl_t, the total derivative through the dynamics after t,
// it adds its VJP (∂ctrl_t/∂state_t)ᵀ adj_ctrl, and any other dependence of L on state_t it
// prefers to give here, into
//   adj_qpos  nenv x nq  raw qpos coordinates (quaternion components as stored),
//   adj_qvel  nenv x nv,
// which are zero on entry and are added to the adjoint of state t before the sweep moves to
// step t - 1. Host arrays, environment-major, double. (The policy's own parameter gradients are
// the callee's business: it sees adj_ctrl for every step.)
using ControlVjp = std::function<void(int t, const double* adj_ctrl, double* adj_qpos, double* adj_qvel)>;

// The same hook for a policy that runs where the simulator does (on the device with CUDA): its
// arrays are backend memory in the backend's precision (Simulator::real_size()),
// environment-minor, and the running state adjoint itself:
//   adj_ctrl  nu x nenv  dL/dctrl_t (read-only),
//   adj_qpos  nq x nenv  the adjoint of state t, raw qpos coordinates,
//   adj_qvel  nv x nenv,
// into which the hook ADDS its VJP. `stream` is the simulator's (Simulator::cuda_stream(),
// nullptr on the CPU): the hook enqueues its work there and must not synchronize the host with
// it; the sweep moves to step t - 1 on the same stream. Nothing crosses to the host per step.
using BackendControlVjp =
    std::function<void(int t, const void* adj_ctrl, void* adj_qpos, void* adj_qvel, void* stream)>;

// Records up to `horizon` control steps of a Simulator, storing only the state at each
// control boundary and the controls (checkpoints), and returns exact reverse-mode gradients
// of a loss over the recorded trajectory. The backward pass replays each control step's
// substeps from its checkpoint and runs the adjoint substeps in reverse, so memory per
// environment is (horizon + 1)(nq + nv) + horizon nu reals for checkpoints, (horizon + 1) nv
// more with constraints (the solver's warm start, part of the state a constrained step depends
// on: kernels/constraint/solver.hpp), plus O(substeps (nq + 2 nv)) workspace.
//
// Arrays are environment-major doubles on the host, like Simulator's.
class Rollout {
 public:
  // `sim` must outlive the Rollout. All memory is sized here.
  Rollout(Simulator& sim, int horizon);
  // With Bundled Contact Gradients (stiffgrad/bundle.hpp) when bundles.enabled: step() runs the
  // bundle scheduler and backward() returns the bundled gradients. std::invalid_argument for invalid
  // options (on CUDA also for a pool smaller than nenv: one bundle slot per environment there).
  Rollout(Simulator& sim, int horizon, const BundleOptions& bundles);
  ~Rollout();
  Rollout(const Rollout&) = delete;
  Rollout& operator=(const Rollout&) = delete;

  int horizon() const { return horizon_; }
  int steps() const { return steps_; }  // control steps recorded since begin()

  // Starts a recording at the simulator's current state (checkpoint 0).
  void begin();
  // The same with the bundle perturbations of this recording (and of its backward replay)
  // drawn from Philox keyed by bundle_seed in place of BundleOptions::seed. The key fixes the
  // draws of (environment, step, branch) within a recording; a training loop that records one
  // horizon per iteration passes a new key each time so that its bundles are not the same
  // perturbations at every iteration.
  void begin(std::uint64_t bundle_seed);
  // One control step of the simulator with `ctrl` (nenv x nu; nullptr keeps the current
  // control), then a checkpoint. Throws std::length_error beyond the horizon.
  void step(const double* ctrl = nullptr);
  // The same with controls already in the backend's memory (see
  // Simulator::step_backend_ctrl): no host copy or sync while recording (with bundles the
  // scheduler decides and steps on the backend, as in step()). The checkpoint
  // copies go on the simulator's stream (Simulator::cuda_stream()), so the ordering contract
  // of Simulator::step_backend_ctrl applies unchanged.
  void step_backend_ctrl(const void* ctrl);

  // Gradient of a loss L(state_0 .. state_T, ctrl_0 .. ctrl_{T-1}) whose partial derivatives
  // with respect to the states are given per step, T = steps():
  //   dL_dqpos  (T + 1) x nenv x nq, raw qpos coordinates (row t: dL/dqpos_t), or nullptr;
  //   dL_dqvel  (T + 1) x nenv x nv, or nullptr.
  // Outputs (each may be nullptr):
  //   dL_dqpos0 nenv x nv  gradient w.r.t. the initial qpos in MuJoCo's tangent convention
  //                        (qpos perturbed as mj_integratePos(qpos, delta, 1));
  //   dL_dqvel0 nenv x nv;
  //   dL_dctrl  T x nenv x nu (total derivative through the dynamics; add any direct
  //             dependence of L on the controls yourself).
  void backward(const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                double* dL_dqvel0, double* dL_dctrl);
  // As backward(), also returning dL/dqpos_0 in raw qpos coordinates (nenv x nq).
  void backward_raw(const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0_raw,
                    double* dL_dqvel0, double* dL_dctrl);

  // backward() for a loop in which ctrl_t depends on state_t (see ControlVjp): the sweep calls
  // `vjp` at every step, so L's gradient flows through the controls back into earlier states.
  // dL_dqvel0 (nenv x nv) and dL_dctrl (T x nenv x nu, the adj_ctrl each call saw) may be null.
  // Both backends; on CUDA every step copies adj_ctrl to the host and the hook's adjoints back
  // (a host round trip per step; backward_policy_backend has none).
  void backward_policy(const double* dL_dqpos, const double* dL_dqvel, const ControlVjp& vjp,
                       double* dL_dqvel0 = nullptr, double* dL_dctrl = nullptr);
  // backward_policy with the hook in backend memory (BackendControlVjp): the loss gradients are
  // uploaded once, then one adjoint kernel and the hook's work per step on the simulator's
  // stream, no host sync until the end (replay_bitwise' flags).
  void backward_policy_backend(const double* dL_dqpos, const double* dL_dqvel, const BackendControlVjp& vjp);

  // Every control step replayed by the last backward() reproduced its recorded next state
  // bit for bit (the checkpointing invariant).
  bool replay_bitwise() const;

  // Recorded state after step t (0 <= t <= steps()), nenv x nq and nenv x nv; with
  // qacc_warmstart (nenv x nv, may be null) also the constraint solve's warm start recorded
  // with it (zeros when the simulator has no constraints).
  void checkpoint(int t, double* qpos, double* qvel, double* qacc_warmstart = nullptr) const;

  // Backend memory this Rollout holds per environment (checkpoints + adjoint workspace, and
  // the bundle pool's share).
  std::size_t bytes_per_env() const;

  // Bundles since begin(): started, and triggers refused because the pool was full (both 0
  // without bundles). bundles_per_env: nenv counts of bundles started.
  int bundles_started() const;
  int bundles_skipped() const;
  std::vector<int> bundles_per_env() const;

 private:
  Simulator& sim_;
  int horizon_;
  int steps_ = -1;
  bool bundles_ = false;
  std::uint64_t bundle_seed_ = 1;  // BundleOptions::seed, begin()'s key
  std::unique_ptr<RolloutImpl> impl_;
};

}  // namespace stiffgrad
