// stiffgrad — checking a model's gradients: adjoint vs forward mode vs finite differences.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stiffgrad/model.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

// Forward-mode (dual-number) directional derivative of a single-environment rollout of T
// control steps of S substeps: returns d[qpos_T; qvel_T] along the raw-coordinate direction
// (dqpos (nq), dqvel (nv), dctrl (T x nu)). Runs the same kernels in Dual<float or double>,
// with the integrator, constraints and contact model a Simulator with those options steps.
std::vector<double> rollout_jvp(const Model& model, const double* qpos, const double* qvel,
                                const double* ctrl, int T, int substeps, const double* dqpos,
                                const double* dqvel, const double* dctrl,
                                Precision precision = Precision::Double,
                                Integrator integrator = Integrator::SemiImplicitEuler,
                                bool constraints = true, const AdaptiveTolerances& adaptive = {},
                                ContactModel contact_model = ContactModel::Soft, const ImpulseContact& impulse = {});

// Along a single-environment rollout in double (ctrl: T x nu): the number of substeps with
// constraint rows (*solves) and of those whose Newton solve stopped at the model's iteration
// cap (*at_cap). Both 0 with the Impulse contact model (a fixed number of sweeps, no Newton solve).
void rollout_solver_iterations(const Model& model, const double* qpos, const double* qvel, const double* ctrl,
                               int T, int substeps, Integrator integrator, bool constraints, int* solves,
                               int* at_cap, const AdaptiveTolerances& adaptive = {},
                               ContactModel contact_model = ContactModel::Soft, const ImpulseContact& impulse = {});

// L = w . [qpos_T; qvel_T] of a single-environment rollout (ctrl: T x nu) computed by the same
// kernels in 80-bit extended precision: a finite-difference reference whose rounding noise
// (amplified along the rollout) stays far below the 1e-6 that double would allow.
long double rollout_loss_extended(const Model& model, const double* qpos, const double* qvel,
                                  const double* ctrl, int T, int substeps, const double* w,
                                  Integrator integrator = Integrator::SemiImplicitEuler,
                                  bool constraints = true, const AdaptiveTolerances& adaptive = {},
                                  ContactModel contact_model = ContactModel::Soft,
                                  const ImpulseContact& impulse = {});

// Perturb qpos by delta (nv) the way mj_integratePos(qpos, delta, 1) does.
void integrate_tangent(const Model& model, double* qpos, const double* delta);

struct GradcheckOptions {
  int steps = 20;        // control steps T
  int substeps = 4;      // S
  int samples = 12;      // inputs checked against finite differences
  Precision precision = Precision::Double;
  Integrator integrator = Integrator::SemiImplicitEuler;
  AdaptiveTolerances adaptive;  // Tsit5, Dopri5, Bosh3 (both modes take the same steps)
  bool constraints = true;  // contacts, limits, friction loss (SimulatorOptions::constraints; on as there)
  ContactModel contact_model = ContactModel::Soft;  // SimulatorOptions::contact_model
  ImpulseContact impulse;                           // SimulatorOptions::impulse
  std::uint64_t seed = 1;
  double fd_step = 1e-5;  // h of the 4-point central stencil (extended precision)
  // initial state; empty: qpos0 with hinge/slide offsets ~N(0, 0.1^2), qvel ~N(0, 0.1^2),
  // ctrl at the middle of ctrlrange (or 0)
  std::vector<double> qpos, qvel, ctrl;
  // called after each finite-difference sample with (done, samples); may be empty
  std::function<void(int, int)> progress;
};

// The bounds run_gradcheck applies: max relative error against finite differences and the
// dot-product residual against forward mode.
struct GradcheckTolerance {
  double relative;
  double dot;
};
GradcheckTolerance gradcheck_tolerance(Precision precision);

struct GradcheckRow {
  std::string input;  // e.g. "ctrl[t=3,u=5]", "qvel0[7]", "qpos0[tangent 4]"
  double adjoint, finite_difference, rel_error;
  double finite_difference_double;  // the same stencil evaluated in double (h = 1e-4)
};

struct GradcheckReport {
  std::vector<GradcheckRow> rows;
  // Over rows: |adj - fd| / (|fd| + (10 e_fd + 1e3 eps g_max) / tolerance), where e_fd is the
  // finite difference's own error (its 4-point stencil at h against the one at 2h, at least
  // the 80-bit rounding of the loss over h), eps the machine epsilon of the run's precision
  // and g_max the largest |fd| probed. <= tolerance means |adj - fd| <= tolerance |fd| +
  // 10 e_fd + 1e3 eps g_max: no fixed absolute floor, so a zero gradient is checked too.
  double max_rel_error = 0;
  double max_rel_error_double_fd = 0;  // the same against plain double finite differences
  double dot_residual = 0;     // |w.Ju - (J^T w).u| / scale (double adjoint vs dual forward)
  double tolerance = 0;        // max_rel_error bound used
  double dot_tolerance = 0;
  bool replay_bitwise = false;
  bool passed = false;
  // Constraint solves along the nominal rollout (one per substep with rows) and how many of
  // them stopped at the model's `iterations` cap: there the adjoint is the implicit gradient
  // at the point returned, while finite differences follow the truncated iteration, so the
  // two need not agree (docs/physics/constraints.md, "Known limits"). Not part of `passed`.
  int constraint_solves = 0;
  int solves_at_iteration_cap = 0;
};

// The fixed loss is L = w . [qpos_T; qvel_T] with w ~ N(0, 1) drawn from `seed`. Throws
// std::invalid_argument for steps, substeps or samples below 1 (a check of nothing must not
// pass) or a model with neither degrees of freedom nor actuators.
GradcheckReport run_gradcheck(const std::shared_ptr<const Model>& model, const GradcheckOptions& opt);

}  // namespace stiffgrad
