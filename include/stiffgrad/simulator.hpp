// stiffgrad — batched simulator: nenv copies of one Model on a backend, float or double.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
};

// True when this build has the CUDA backend and a CUDA device is present.
bool cuda_available();
std::string backend_name(Backend b);

class BackendImpl;  // host/backend.hpp

// Batched simulation. States are exchanged with the host in double, environment-major
// (qpos[e * nq + i]); internally they live environment-minor in the backend's memory and
// precision. step() neither allocates, copies to/from the host, nor synchronizes: workspace
// is sized at construction; on the CUDA backend step() only enqueues kernels.
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
  // Given states: qpos (nenv x nq), qvel (nenv x nv), environment-major.
  void set_state(const double* qpos, const double* qvel);
  void get_state(double* qpos, double* qvel) const;
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
  void step_backend_ctrl(const void* ctrl);
  // Element size of the backend's reals (4 for float, 8 for double).
  std::size_t real_size() const { return options_.precision == Precision::Float ? 4 : 8; }
  // Wait for queued work (CUDA); a no-op on the CPU.
  void synchronize();

  // Per-environment status (0 = ok, 1 = state became non-finite: frozen at its last finite
  // state until reset). Environments never affect each other.
  std::vector<int> status() const;
  int num_failed() const;

  // Bytes of backend memory held (state, control, workspace, model copy).
  std::size_t bytes() const;

  BackendImpl& impl() { return *impl_; }

 private:
  std::shared_ptr<const Model> model_;
  SimulatorOptions options_;
  std::unique_ptr<BackendImpl> impl_;
};

}  // namespace stiffgrad
