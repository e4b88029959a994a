// One environment's kernels on the host: the model view in scalar E and a contiguous Data bound
// to its own zeroed buffer, for the single-state paths (core/dynamics.cpp, core/jvp.cpp) that
// run the same kernel stages as the batched backends.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "core/model_arrays.hpp"
#include "kernels/base/data.hpp"

namespace stiffgrad {

template <class E>
struct HostRun {
  std::unique_ptr<Model> impulse_model;  // the Impulse contact model's Model (else null)
  ModelArrays<E> arrays;
  kern::ModelView<E> view;
  kern::DataLayout layout;
  std::vector<E> buffer;
  kern::Data<E, kern::Contiguous> d;

  // `capacity`: the constraint capacities (zero: the smooth dynamics only); `integrator` and
  // `tol`: the substep integrator (with_integrator); `contact_model` and `impulse`: the contact
  // model (with_contact_model; Impulse steps impulse_model_for's copy of `m`)
  explicit HostRun(const Model& m, const ConstraintCapacity& capacity = {},
                   Integrator integrator = Integrator::SemiImplicitEuler, const AdaptiveTolerances& tol = {},
                   ContactModel contact_model = ContactModel::Soft, const ImpulseContact& impulse = {})
      : impulse_model(impulse_model_for(m, contact_model, impulse)),
        arrays(impulse_model ? *impulse_model : m, capacity),
        view(with_contact_model(with_integrator(arrays.host_view(), integrator, tol), contact_model, impulse)),
        layout(kern::DataLayout::make(view)),
        buffer(static_cast<std::size_t>(layout.size) + 1, E(0)),
        d(kern::Data<E, kern::Contiguous>::bind({buffer.data(), {}}, layout)) {}
  HostRun(const HostRun&) = delete;
  HostRun& operator=(const HostRun&) = delete;

  // qpos (nq), qvel (nv) and, when given, ctrl (nu)
  void load(const double* qpos, const double* qvel, const double* ctrl = nullptr) {
    for (int i = 0; i < view.nq; ++i) d.qpos()[i] = E(qpos[i]);
    for (int i = 0; i < view.nv; ++i) d.qvel()[i] = E(qvel[i]);
    if (ctrl)
      for (int i = 0; i < view.nu; ++i) d.ctrl()[i] = E(ctrl[i]);
  }
};

}  // namespace stiffgrad
