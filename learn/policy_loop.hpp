// SHAC's policy in the loop where the simulator runs: per control step the observation, the
// actor, the actions and the controls are computed in the backend's memory (device memory on
// CUDA) from the simulator's state, and in the backward pass the Rollout's BackendControlVjp
// adds the policy's and the observation's VJPs to the state adjoint there. Nothing crosses to
// the host inside the step loop: the horizon's inputs go down once before it (noise, reference
// rows, normalizer statistics, actor parameters), its records come up once after it (states,
// observations, actions, status) for the host's rewards, critic and bookkeeping, and the
// gradient comes up once after the backward sweep.
//
// The per-environment bodies live in kernels/learn/policy_loop.hpp; this file's CPU loop
// (policy_loop_cpu.cpp, OpenMP over environments, the actor as Mlp<float>) and the CUDA loop
// (learn/cuda/policy_loop.cu, a thread per environment, the actor as MlpDevice) only launch
// them. The CPU loop reproduces the host trainer (learn/shac.cpp's host hook) bit for bit.
//
// Tasks take part through Task::kernel_desc() (cartpole-swingup, ant-run, g1-imitate); the
// simulator must be in double precision. With bundles (SHAC+BCG) Rollout::step_backend_ctrl
// runs the scheduler, and the loop observes the bundled environments' averaged states.
#pragma once

#include <memory>
#include <vector>

#include "stiffgrad/learn/mlp.hpp"
#include "stiffgrad/learn/normalizer.hpp"
#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::learn {

class PolicyLoop {
 public:
  virtual ~PolicyLoop() = default;

  // At a horizon's start: log σ (na), the observation statistics (read when the loop
  // normalizes), this horizon's noise ε (H x nenv x na, environment-major rows) and the task's
  // observation references ((H + 1) x nenv x ref_dim; row t is what observe at row t reads).
  // The actor's parameters are read from the network given at creation.
  virtual void begin_horizon(const std::vector<float>& log_std, const RunningMeanStd& obs_rms, const float* eps,
                             const double* ref) = 0;
  // Row t (0 .. H) of the observations from the simulator's current state (saved for backward).
  virtual void observe(int t) = 0;
  // After observe(t): the actor's means, the actions and the controls of row t; returns the
  // controls (backend memory, nu x nenv) for Rollout::step_backend_ctrl.
  virtual const void* act(int t) = 0;
  // After the simulator's step t: its status (nenv) into row t.
  virtual void record_status(int t) = 0;
  // The horizon's rows to the host (one synchronization), environment-major: qpos, qvel
  // ((H + 1) x nenv x nq, nv), obs ((H + 1) x nenv x no), x (normalized, float, the same),
  // mu (H x nenv x na, float), a (H x nenv x na), status (H x nenv).
  virtual void download(double* qpos, double* qvel, double* obs, float* x, float* mu, double* a, int* status) = 0;

  // Before the backward sweep: the loss's direct gradient with respect to the actions (H x nenv x
  // na) and the active steps k_e of every environment (nenv; row t of e is active for t < k_e).
  virtual void begin_backward(const double* dA, const int* steps_active) = 0;
  // The Rollout's BackendControlVjp at step t.
  virtual void vjp(int t, const void* adj_ctrl, void* adj_qpos, void* adj_qvel, void* stream) = 0;
  // After the sweep: grad (the actor's parameters, then log σ; host) += the policy's gradient.
  // Returns how many (step, environment) action adjoints were non-finite (contained: zero).
  virtual int finish_backward(float* grad) = 0;
};

// Whether `task` has backend kernels for a policy loop.
bool has_policy_loop(const Task& task);

// A loop for `sim`'s backend (CPU or CUDA) with `actor` (which must outlive it), horizon H.
// std::invalid_argument when the task has no kernels or the simulator is not double precision.
std::unique_ptr<PolicyLoop> make_policy_loop(const Task& task, Simulator& sim, const Mlp<float>& actor, int horizon,
                                             bool normalize_obs);

// The backends' loops (policy_loop_cpu.cpp; learn/cuda/policy_loop.cu, or a stub that throws).
std::unique_ptr<PolicyLoop> make_policy_loop_cpu(const Task& task, Simulator& sim, const Mlp<float>& actor, int horizon,
                                                 bool normalize_obs);
std::unique_ptr<PolicyLoop> make_policy_loop_cuda(const Task& task, Simulator& sim, const Mlp<float>& actor,
                                                  int horizon, bool normalize_obs);

}  // namespace stiffgrad::learn
