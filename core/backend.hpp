// Backend interface behind Simulator: the CPU backend (backends/cpu/backend_cpu.cpp) and the CUDA
// backend (backends/cuda/backend_cuda.cu) hold batched state environment-minor in their own memory and
// precision, and both advance it with kern::control_step_env.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "stiffgrad/bundle.hpp"
#include "stiffgrad/model.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

// Checkpoint storage and adjoint workspace of one Rollout, in the backend's memory.
class RolloutImpl {
 public:
  virtual ~RolloutImpl() = default;
  // Copies the simulator's current state into checkpoint `t` and, when t > 0, the current
  // control into control slot t - 1.
  virtual void save(int t) = 0;
  // Reverse sweep over steps T-1 .. 0 (see Rollout::backward); dL_dqpos0 is written in raw
  // coordinates when `tangent` is false, else in the tangent convention.
  virtual void backward(int T, const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                        bool tangent, double* dL_dqvel0, double* dL_dctrl) = 0;
  // The same reverse sweep with a state-dependent control in the loop (Rollout::backward_policy):
  // after step t's adjoint, `vjp` adds its VJP into the state adjoint at t. A backend without it
  // refuses.
  virtual void backward_policy(int T, const double* dL_dqpos, const double* dL_dqvel, const ControlVjp& vjp,
                               double* dL_dqvel0, double* dL_dctrl) {
    (void)T; (void)dL_dqpos; (void)dL_dqvel; (void)vjp; (void)dL_dqvel0; (void)dL_dctrl;
    throw std::runtime_error("Rollout::backward_policy (a policy in the loop) is not implemented on this backend yet");
  }
  // The same with the hook in backend memory (Rollout::backward_policy_backend).
  virtual void backward_policy_backend(int T, const double* dL_dqpos, const double* dL_dqvel,
                                       const BackendControlVjp& vjp) {
    (void)T; (void)dL_dqpos; (void)dL_dqvel; (void)vjp;
    throw std::runtime_error("Rollout::backward_policy_backend is not implemented on this backend yet");
  }
  virtual bool replay_bitwise() const = 0;
  // qacc_warmstart may be null (Rollout::checkpoint)
  virtual void checkpoint(int t, double* qpos, double* qvel, double* qacc_warmstart) const = 0;
  virtual std::size_t bytes_per_env() const = 0;
  // Bundled Contact Gradients (stiffgrad/bundle.hpp): a backend without them refuses.
  virtual void enable_bundles(const BundleOptions& options) {
    (void)options;
    throw std::runtime_error("Rollout: bundles (BundleOptions) are not implemented on this backend");
  }
  // Rollout::begin, before save(0): a new recording (clears the bundle schedule) whose bundle
  // perturbations are keyed by bundle_seed (ignored without bundles).
  virtual void begin(std::uint64_t bundle_seed) { (void)bundle_seed; }
  // With bundles: control step t (checkpoint t -> t + 1) of the simulator under the bundle
  // scheduler, returning true; false without bundles (the Rollout steps the Simulator itself).
  virtual bool bundled_step(int t) { (void)t; return false; }
  virtual int bundles_started() const { return 0; }
  virtual int bundles_skipped() const { return 0; }
  virtual void bundles_per_env(int* counts) const { (void)counts; }
};

class BackendImpl {
 public:
  virtual ~BackendImpl() = default;
  // Host arrays in double, environment-major (nenv x n).
  virtual void set_state(const double* qpos, const double* qvel) = 0;
  virtual void get_state(double* qpos, double* qvel) const = 0;
  // The constraint solve's warm start (Simulator::set_warmstart), nenv x nv.
  virtual void set_warmstart(const double* warm) = 0;
  virtual void get_warmstart(double* warm) const = 0;
  virtual void set_ctrl(const double* ctrl) = 0;
  virtual void get_ctrl(double* ctrl) const = 0;
  // Controls in backend memory, precision and layout (nu x nenv): a backend-side copy.
  virtual void set_ctrl_backend(const void* ctrl) = 0;
  virtual void clear_status() = 0;
  virtual void get_status(int* status) const = 0;  // nenv
  virtual void step(int substeps) = 0;
  virtual void synchronize() = 0;
  // Contact statistics of the last step (nenv x kContactStats, environment-major, host double;
  // zeros when constraints are off), and the backend buffer they live in (kContactStats x
  // nenv, environment-minor, backend precision).
  virtual void get_contact_stats(double* stats) const = 0;
  virtual void set_contact_stats(const double* stats) = 0;
  virtual const void* contact_stats_backend() const = 0;
  // The state where the backend keeps it: qpos nq x nenv and qvel nv x nenv, environment-minor,
  // backend precision and memory.
  virtual const void* qpos_backend() const = 0;
  virtual const int* status_backend() const = 0;  // nenv, backend memory
  virtual const void* qvel_backend() const = 0;
  // Stream ordering (Simulator's "Streams"): a synchronous backend has no stream, and its
  // calls are ordered with everything by returning when done, hence these no-op defaults.
  virtual void* stream() const { return nullptr; }
  virtual void wait_for_stream(void* stream) { (void)stream; }
  virtual void make_stream_wait(void* stream) { (void)stream; }
  virtual std::size_t bytes() const = 0;
  // Checkpoints and adjoint workspace for a Rollout of `horizon` control steps.
  virtual std::unique_ptr<RolloutImpl> make_rollout(int horizon, int substeps) {
    (void)horizon; (void)substeps;
    throw std::runtime_error("gradients (Rollout) are not implemented on this backend yet");
  }
};

std::unique_ptr<BackendImpl> make_cpu_backend(const Model& model, const SimulatorOptions& opt);
// Throws std::runtime_error when the build has no CUDA backend or no device is present.
std::unique_ptr<BackendImpl> make_cuda_backend(const Model& model, const SimulatorOptions& opt);
bool cuda_backend_available();

// Environment-major (host) <-> environment-minor (backend) transposition with conversion.
template <class Dst, class Src>
void to_env_minor(Dst* dst, const Src* src, int nenv, int n) {
  for (int e = 0; e < nenv; ++e)
    for (int i = 0; i < n; ++i) dst[i * nenv + e] = static_cast<Dst>(src[e * n + i]);
}
template <class Dst, class Src>
void to_env_major(Dst* dst, const Src* src, int nenv, int n) {
  for (int e = 0; e < nenv; ++e)
    for (int i = 0; i < n; ++i) dst[e * n + i] = static_cast<Dst>(src[i * nenv + e]);
}

}  // namespace stiffgrad
