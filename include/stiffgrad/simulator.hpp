// stiffgrad — batched simulator: nenv copies of one Model on a backend, float or double.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stiffgrad/contacts_from_distance.hpp"
#include "stiffgrad/impulse_contact.hpp"
#include "stiffgrad/model.hpp"

namespace stiffgrad {

enum class Backend { Cpu, Cuda };
enum class Precision { Float, Double };
struct SimulatorOptions {
  Backend backend = Backend::Cpu;
  Precision precision = Precision::Double;
  int nenv = 1;        // environments stepped in parallel
  int substeps = 1;    // substeps of length model.opt.timestep per control step
  int threads = 0;     // CPU backend: OpenMP threads (0 = OpenMP's default)
  Integrator integrator = Integrator::SemiImplicitEuler;
  AdaptiveTolerances adaptive;  // Tsit5, Dopri5, Bosh3: error control (model.hpp)
  // Contacts from distance: Rollout gradients from a contact model that reaches `width` beyond
  // touch, straight-through on each substep; forward values unchanged
  // (stiffgrad/contacts_from_distance.hpp). Needs constraints on.
  ContactsFromDistance cfd;
  // Contact model. Soft: MuJoCo 2.2.2's soft constraints (see `constraints` below). Impulse:
  // Schwarke et al.'s velocity-level impulse model with Moreau midpoint stepping (the contact
  // model BCG trains with): contact impulses by `impulse.sweeps` projected Gauss–Seidel sweeps
  // with Coulomb projection and the soft activation σ(κ·d) on the penetration d (κ =
  // `impulse.kappa`; contacts are detected from ln(1e6)/κ apart, stiffgrad/impulse_contact.hpp);
  // joint limits (hinge, slide) and dof friction loss as impulses in the same sweeps. Impulse
  // needs constraints on (here and in the model), integrator SemiImplicitEuler (Moreau midpoint
  // stepping is its own integrator) and cfd off, and refuses models with limited ball joints,
  // limited tendons or tendon friction loss (std::invalid_argument at creation).
  ContactModel contact_model = ContactModel::Soft;
  ImpulseContact impulse;
  // CUDA backend: the cudaStream_t (passed as void* so that this header needs no CUDA) on
  // which the simulator enqueues all its work, or nullptr to let the simulator create its
  // own (pass cudaStreamLegacy for the legacy default stream). A given stream is not owned:
  // it must belong to the device current at construction and outlive the Simulator and its
  // Rollouts. Ignored by the CPU backend. See "Streams" below.
  void* cuda_stream = nullptr;
  // CUDA backend, Impulse contact model: shared memory in bytes per environment for its solve
  // stage's working set (the Delassus matrix G, Y = M̃⁻¹ Jᵀ, c and the blocks' vectors of its
  // live rows: n² + n·nv + 13n/3 Reals for n rows). -1: as much as the working set at the row
  // capacity needs, up to what one block may have on the device (227 KiB on sm_90); 0: none. An
  // environment whose live rows' working set fits solves in shared memory with one warp per
  // block, the others in global memory; the results are the same bit for bit (a performance
  // setting: fewer bytes, more blocks per SM). Ignored by the CPU backend.
  int cuda_solve_shared_bytes = -1;
  // Constraints: contacts, joint and tendon limits and friction loss with MuJoCo 2.2.2's soft
  // model and Newton solver (warm-started from the previous step's qacc unless the model's
  // warmstart flag is off: see set_warmstart), forward and adjoint (Rollout), as MuJoCo steps a
  // model: on unless the model disables them (<flag constraint="disable"/>, or contact, limit
  // and frictionloss each). false: the smooth dynamics alone (MuJoCo's constraint flag off),
  // e.g. to compare with an unconstrained reference.
  bool constraints = true;
  // Per-environment capacities, sized at creation (0: derived from the model: the sum over
  // candidate geom pairs of their narrow phase's most contacts, and the rows those and every
  // limit and friction loss can produce). An environment that would exceed them gets the
  // kEnvConstraintOverflow status bit and keeps stepping without the excess. With the Impulse
  // contact model every contact, friction loss and limit side is a block of 3 rows, and
  // max_constraint_rows is rounded down to a multiple of 3.
  int max_contacts = 0;
  int max_constraint_rows = 0;
};

// Constraint capacities of a Simulator (both 0 when constraints are off).
struct ConstraintCapacity {
  int contacts = 0;  // contacts per environment
  int rows = 0;      // constraint rows per environment
};
// The capacities a Simulator with these options would size (see SimulatorOptions).
ConstraintCapacity constraint_capacity(const Model& model, const SimulatorOptions& options);

// True when this build has the CUDA backend and a CUDA device is present.
bool cuda_available();
std::string backend_name(Backend b);

class BackendImpl;  // core/backend.hpp

// Batched simulation. States are exchanged with the host in double, environment-major
// (qpos[e * nq + i]); internally they live environment-minor in the backend's memory and
// precision. step() neither allocates, copies to/from the host, nor synchronizes: workspace
// is sized at construction; on the CUDA backend step() only enqueues kernels.
//
// Streams (CUDA backend). Every operation of a Simulator and of its Rollouts is enqueued, in
// call order, on one stream: cuda_stream(). Calls that return host data (get_state,
// get_ctrl, status, Rollout::backward, ...) wait for it; step() and step_backend_ctrl() do
// not. Work of yours is ordered before or after the simulator's as follows:
//  - Enqueue it on cuda_stream() itself: always ordered, nothing else to do.
//  - The legacy default stream (stream 0 / a plain <<<grid, block>>> launch, in a program
//    compiled without --default-stream per-thread): ordered both ways automatically, because
//    the stream the simulator creates is a blocking stream (cudaStreamDefault flags), which
//    the legacy default stream synchronizes with. (A stream given in the options keeps its
//    own flags: if it is non-blocking, the legacy default stream is NOT ordered with it.)
//  - Any other stream, including cudaStreamPerThread: not ordered. Before the simulator
//    reads what that stream wrote (e.g. controls for step_backend_ctrl), call
//    wait_for_stream(stream); before that stream reads or overwrites what the simulator uses
//    or produces (e.g. reuses the control buffer given to step_backend_ctrl), call
//    make_stream_wait(stream). Both only enqueue an event (no host sync, no allocation).
// On the CPU backend everything is synchronous: cuda_stream() is nullptr and the two
// ordering calls do nothing.
class Simulator {
 public:
  Simulator(std::shared_ptr<const Model> model, SimulatorOptions options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  const Model& model() const { return *model_; }
  const SimulatorOptions& options() const { return options_; }
  int nenv() const { return options_.nenv; }

  // Every environment to qpos0, zero velocity, zero control; clears status.
  void reset();
  // Every environment to a keyframe (throws std::invalid_argument for an unknown name).
  void reset_keyframe(const std::string& name);
  // Given states: qpos (nenv x nq), qvel (nenv x nv), environment-major. set_state (and
  // reset) also zero the constraint solve's warm start, so that a step from a set state is a
  // function of that state alone.
  void set_state(const double* qpos, const double* qvel);
  void get_state(double* qpos, double* qvel) const;
  // With constraints and the model's warmstart flag on, each constraint solve starts at the
  // previous one's qacc (MuJoCo's qacc_warmstart; kernels/constraint/solver.hpp): part of the state a step
  // depends on besides qpos and qvel, nenv x nv, environment-major. Without constraints the
  // getter writes zeros and the setter does nothing. Set it after set_state to continue a
  // trajectory exactly (as Rollout's replay does from its checkpoints).
  void set_warmstart(const double* qacc_warmstart);
  void get_warmstart(double* qacc_warmstart) const;
  // Controls (nenv x nu), environment-major; held over the substeps of following steps.
  void set_ctrl(const double* ctrl);
  void get_ctrl(double* ctrl) const;

  // Advance every environment by one control step (`substeps` substeps), with the controls
  // last set. Neither allocates, copies to/from the host, nor synchronizes.
  void step();
  // set_ctrl(ctrl) then step(): a convenience that stages host controls (a host-to-backend
  // copy; on CUDA it may wait for the previous upload to finish).
  void step(const double* ctrl);
  // Controls already in the backend's memory (device memory on CUDA, host memory on the
  // CPU), in the backend's precision (float or double as in the options), environment-minor
  // (ctrl[u * nenv + e], nu x nenv): copied backend-side into the control buffer, then
  // step(). No host copy, no host sync: the path for a policy that runs on the device.
  // On CUDA the copy is enqueued on cuda_stream(): whatever writes `ctrl` must be ordered
  // before it (see "Streams" above: write on cuda_stream() or the legacy default stream, or
  // call wait_for_stream(writer) first), and `ctrl` must not be overwritten until the copy
  // has run (same stream, or make_stream_wait(writer) after this call).
  void step_backend_ctrl(const void* ctrl);
  // CUDA: the cudaStream_t on which this simulator (and its Rollouts) enqueue everything, as
  // void*; nullptr on the CPU backend.
  void* cuda_stream() const;
  // CUDA: the simulator's work enqueued after this call waits for all work enqueued on
  // `stream` (a cudaStream_t; nullptr is the legacy default stream) before this call. No host
  // sync.
  void wait_for_stream(void* stream);
  // CUDA: work enqueued on `stream` after this call waits for all the simulator's work
  // enqueued before it. No host sync.
  void make_stream_wait(void* stream);
  // Element size of the backend's reals (4 for float, 8 for double).
  std::size_t real_size() const { return options_.precision == Precision::Float ? 4 : 8; }
  // Wait for queued work (CUDA); a no-op on the CPU.
  void synchronize();

  // Per-environment status bits (0 = ok; 1 = the state became non-finite: frozen at its last
  // finite state until reset; 2 = contacts or constraint rows exceeded their capacity: the
  // excess was dropped, the environment keeps stepping; 4 = an adaptive integrator reached
  // its max_steps in a substep and took the time left in one step that failed the tolerance).
  // Cleared only by reset/set_state.
  // Environments never affect each other.
  std::vector<int> status() const;
  int num_failed() const;  // environments with the non-finite bit

  // Statistics of the last control step, per environment (nenv x kStepStats, environment-major):
  // [0] most contacts with constraint rows in any substep, [1] largest normal force of one
  // contact, [2] normal impulse (sum over substeps of h x the sum of normal forces), [3] largest
  // penetration depth (0 when none) — zeros when constraints are off; [4] integrator steps
  // taken (one per substep, or the accepted steps of an adaptive integrator), [5] evaluations
  // of the dynamics (rejected trial steps included), [6] Newton iterations of the step's
  // constraint solves, summed (0 without constraints). A host copy (syncs on CUDA).
  static constexpr int kStepStats = 7;
  std::vector<double> contact_stats() const;
  // Restores statistics read by contact_stats() (nenv x kStepStats, e.g. from a training
  // checkpoint): a bundle scheduler's trigger at a recording's first step reads the last
  // step's, so a run resumed with them continues as it would have.
  void set_contact_stats(const double* stats);
  // The same statistics where the backend keeps them: kStepStats x nenv, environment-minor, in the
  // backend's precision and memory (device memory on CUDA), updated by every step() on
  // cuda_stream() — for device-side consumers such as a bundle scheduler.
  const void* contact_stats_backend() const;
  // The state where the backend keeps it, for a policy that runs on the device: qpos nq x nenv
  // and qvel nv x nenv, environment-minor (qpos[i * nenv + e]), in the backend's precision and
  // memory (device memory on CUDA), written by every step() on cuda_stream(). Read-only.
  const void* qpos_backend() const;
  // status() where the backend keeps it (nenv ints, device memory on CUDA), updated by every
  // step() on cuda_stream(). Read-only.
  const int* status_backend() const;
  const void* qvel_backend() const;

  // Constraint capacities sized at creation (both 0 when constraints are off).
  const ConstraintCapacity& capacity() const { return capacity_; }

  // Bytes of backend memory held (state, control, workspace, model copy).
  std::size_t bytes() const;

  BackendImpl& impl() { return *impl_; }

 private:
  std::shared_ptr<const Model> model_;
  SimulatorOptions options_;
  ConstraintCapacity capacity_;
  std::unique_ptr<BackendImpl> impl_;
};

}  // namespace stiffgrad
