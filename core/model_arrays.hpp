// Conversion of a Model into the kernel-facing arrays in the simulation scalar. All numbers
// go into one Real buffer and one int buffer so that a backend copies exactly two blocks
// (the CUDA backend copies them to the device once) and then binds a ModelView to them.
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include "kernels/base/model_view.hpp"
#include "stiffgrad/model.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

// Index arrays derived from a Model for the kernels (kernels/base/model_view.hpp).
struct DerivedArrays {
  std::vector<int> dof_chainadr, dof_chainnum, dof_chain;
  // ncpair + 1: the first contact slot of each candidate pair in the staged narrow phase's
  // per-pair slots (kernels/step/staged_step.hpp): prefix sums of Model::cpair_maxcon
  std::vector<int> cpair_contactadr;
  explicit DerivedArrays(const Model& m);
  DerivedArrays() = default;
};

template <class Real>
class ModelArrays {
 public:
  // `capacity`: the constraint capacities the kernels size their Data for (zero: no constraints).
  explicit ModelArrays(const Model& m, const ConstraintCapacity& capacity = {});

  const std::vector<Real>& reals() const { return reals_; }
  const std::vector<int>& ints() const { return ints_; }

  // A view whose pointers address `real_base` / `int_base`, copies of reals() / ints()
  // (host or device memory).
  kern::ModelView<Real> bind(const Real* real_base, const int* int_base) const;
  kern::ModelView<Real> host_view() const { return bind(reals_.data(), ints_.data()); }

 private:
  const Model* model_;              // the source (kept alive by the owner of this object)
  DerivedArrays derived_;           // arrays the view needs that the Model does not store
  kern::ModelView<Real> sizes_{};   // sizes and scalars; pointers unset
  std::vector<std::size_t> offsets_;  // offset of each array in visit order
  std::vector<Real> reals_;
  std::vector<int> ints_;
};

// `view` set up for a substep integrator: ImplicitDampingEuler's implicit actuator damping, or
// a Runge–Kutta method with its tolerances (kernels/integrators/integrator_rk.hpp). Set before the
// DataLayout is made: a Runge–Kutta method adds its scratch to every environment's Data.
template <class Real>
kern::ModelView<Real> with_integrator(kern::ModelView<Real> view, Integrator integrator,
                                      const AdaptiveTolerances& tol = {}) {
  view.implicit_actuator_damping = integrator == Integrator::ImplicitDampingEuler;
  switch (integrator) {
    case Integrator::RK4: view.rk_integrator = kern::kIntRK4; break;
    case Integrator::Tsit5: view.rk_integrator = kern::kIntTsit5; break;
    case Integrator::Dopri5: view.rk_integrator = kern::kIntDopri5; break;
    case Integrator::Bosh3: view.rk_integrator = kern::kIntBosh3; break;
    default: view.rk_integrator = kern::kIntEuler; break;
  }
  view.rk_rtol = static_cast<Real>(tol.rtol);
  view.rk_atol = static_cast<Real>(tol.atol);
  view.rk_max_steps = tol.max_steps;
  view.rk_event_step = tol.event_step;
  view.rk_event_gradients = tol.event_gradients ? 1 : 0;
  return view;
}

// `view` set up for the simulator's contact model (SimulatorOptions::contact_model; the view of
// the Model impulse_model_for returns when that is Impulse). Set before the DataLayout is made:
// the Impulse model sizes its own workspace in every environment's Data.
template <class Real>
kern::ModelView<Real> with_contact_model(kern::ModelView<Real> view, ContactModel contact_model,
                                         const ImpulseContact& impulse = {}) {
  const bool on = contact_model == ContactModel::Impulse;
  view.contact_model = on ? kern::kContactImpulse : kern::kContactSoft;
  view.impulse_kappa = static_cast<Real>(on ? impulse.kappa : ImpulseContact{}.kappa);
  view.impulse_sweeps = on ? impulse.sweeps : ImpulseContact{}.sweeps;
  return view;
}

// The view a backend simulates: `view` with the simulator's integrator and contact model.
template <class Real>
kern::ModelView<Real> simulation_view(kern::ModelView<Real> view, const SimulatorOptions& opt) {
  return with_contact_model(with_integrator(view, opt.integrator, opt.adaptive), opt.contact_model, opt.impulse);
}

// `view` with the team width W (kernels/base/team.hpp): the summation order of the solves that a
// team runs. The CPU backend keeps 1 (serial sums); the CUDA backend sets kern::kMaxTeamWidth,
// so that its thread-per-environment kernels and replays sum as its warp-per-environment stages.
template <class Real>
kern::ModelView<Real> with_team_width(kern::ModelView<Real> view, int width) {
  view.team_width = width;
  return view;
}

// With the Impulse contact model, the Model a backend steps in place of `model`
// (impulse_contact_model: every candidate pair's margin widened to the activation's reach),
// for the backend to own as long as views of it are used; null with the Soft model.
std::unique_ptr<Model> impulse_model_for(const Model& model, ContactModel contact_model,
                                         const ImpulseContact& impulse);

// The view of the contacts-from-distance model (stiffgrad/contacts_from_distance.hpp) that a
// backend's adjoint differentiates: the simulator's integrator, marked cfd.
template <class Real>
kern::ModelView<Real> gradient_view(kern::ModelView<Real> cfd_view, const SimulatorOptions& opt) {
  kern::ModelView<Real> v = simulation_view(cfd_view, opt);
  v.cfd = 1;
  return v;
}

extern template class ModelArrays<float>;
extern template class ModelArrays<double>;

}  // namespace stiffgrad
