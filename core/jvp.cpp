// Forward-mode derivatives on the host: the simulator's kernels instantiated with Dual<double>.
#include <stdexcept>

#include "core/host_run.hpp"
#include "core/model_arrays_impl.hpp"
#include "kernels/base/dual.hpp"
#include "kernels/step/substep.hpp"
#include "stiffgrad/gradcheck.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

template class ModelArrays<kern::Dual<double, 1>>;
template class ModelArrays<kern::Dual<float, 1>>;

namespace {

// The capacities a Simulator with constraints on and this contact model would size (zero when
// `constraints` is false).
ConstraintCapacity capacity_for(const Model& model, bool constraints, ContactModel contact_model) {
  SimulatorOptions so;
  so.constraints = constraints;
  so.contact_model = contact_model;
  return constraint_capacity(model, so);
}


// T control steps of `substeps` from the state in run.d, ctrl (T x nu, raw doubles) held per
// step; after_substep() runs after every substep.
template <class E, class After>
void host_rollout(HostRun<E>& run, const double* ctrl, int T, int substeps, After&& after_substep) {
  const auto& m = run.view;
  const auto& d = run.d;
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < m.nu; ++i) d.ctrl()[i] = E(ctrl[t * m.nu + i]);
    for (int s = 0; s < substeps; ++s) {
      kern::substep(m, d);
      after_substep();
    }
  }
}

template <class Scalar>
std::vector<double> rollout_jvp_in(const Model& model, const double* qpos, const double* qvel,
                                   const double* ctrl, int T, int substeps, const double* dqpos,
                                   const double* dqvel, const double* dctrl, Integrator integrator,
                                   bool constraints, const AdaptiveTolerances& adaptive,
                                   ContactModel contact_model, const ImpulseContact& impulse) {
  HostRun<kern::Dual<Scalar, 1>> run(model, capacity_for(model, constraints, contact_model), integrator, adaptive,
                                     contact_model, impulse);
  const auto& m = run.view;
  const auto& d = run.d;
  const auto S = [](double x) { return static_cast<Scalar>(x); };
  for (int i = 0; i < m.nq; ++i) {
    d.qpos()[i] = S(qpos[i]);
    d.qpos()[i].d[0] = S(dqpos[i]);
  }
  for (int i = 0; i < m.nv; ++i) {
    d.qvel()[i] = S(qvel[i]);
    d.qvel()[i].d[0] = S(dqvel[i]);
  }
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < m.nu; ++i) {
      d.ctrl()[i] = S(ctrl[t * m.nu + i]);
      d.ctrl()[i].d[0] = S(dctrl[t * m.nu + i]);
    }
    for (int s = 0; s < substeps; ++s) kern::substep(m, d);
  }
  std::vector<double> out(static_cast<std::size_t>(m.nq + m.nv));
  for (int i = 0; i < m.nq; ++i) out[i] = d.qpos()[i].d[0];
  for (int i = 0; i < m.nv; ++i) out[m.nq + i] = d.qvel()[i].d[0];
  return out;
}

}  // namespace

std::vector<double> rollout_jvp(const Model& model, const double* qpos, const double* qvel,
                                const double* ctrl, int T, int substeps, const double* dqpos,
                                const double* dqvel, const double* dctrl, Precision precision,
                                Integrator integrator, bool constraints, const AdaptiveTolerances& adaptive,
                                ContactModel contact_model, const ImpulseContact& impulse) {
  if (precision == Precision::Float)
    return rollout_jvp_in<float>(model, qpos, qvel, ctrl, T, substeps, dqpos, dqvel, dctrl, integrator, constraints,
                                 adaptive, contact_model, impulse);
  return rollout_jvp_in<double>(model, qpos, qvel, ctrl, T, substeps, dqpos, dqvel, dctrl, integrator, constraints,
                                adaptive, contact_model, impulse);
}

template class ModelArrays<long double>;

long double rollout_loss_extended(const Model& model, const double* qpos, const double* qvel,
                                  const double* ctrl, int T, int substeps, const double* w,
                                  Integrator integrator, bool constraints, const AdaptiveTolerances& adaptive,
                                  ContactModel contact_model, const ImpulseContact& impulse) {
  using E = long double;
  HostRun<E> run(model, capacity_for(model, constraints, contact_model), integrator, adaptive, contact_model, impulse);
  const auto& m = run.view;
  const auto& d = run.d;
  run.load(qpos, qvel);
  host_rollout(run, ctrl, T, substeps, [] {});
  E L = 0;
  for (int i = 0; i < m.nq; ++i) L += w[i] * d.qpos()[i];
  for (int i = 0; i < m.nv; ++i) L += w[m.nq + i] * d.qvel()[i];
  return L;
}

void rollout_solver_iterations(const Model& model, const double* qpos, const double* qvel, const double* ctrl,
                               int T, int substeps, Integrator integrator, bool constraints, int* solves,
                               int* at_cap, const AdaptiveTolerances& adaptive, ContactModel contact_model,
                               const ImpulseContact& impulse) {
  *solves = *at_cap = 0;
  if (contact_model == ContactModel::Impulse) return;  // fixed sweeps: no Newton solve to count
  HostRun<double> run(model, capacity_for(model, constraints, contact_model), integrator, adaptive, contact_model,
                      impulse);
  const auto& m = run.view;
  const auto& d = run.d;
  run.load(qpos, qvel);
  host_rollout(run, ctrl, T, substeps, [&] {
    if (m.nefc_max == 0 || d.nefc()[0] == 0) return;
    ++*solves;
    *at_cap += static_cast<int>(d.solver_niter()[0]) >= m.opt_iterations;
  });
}

void integrate_tangent(const Model& model, double* qpos, const double* delta) {
  ModelArrays<double> arrays(model);
  const auto m = arrays.host_view();
  kern::integrate_pos(m, kern::View<double, kern::Contiguous>{qpos, {}},
                      kern::View<double, kern::Contiguous>{const_cast<double*>(delta), {}}, 1.0);
}

}  // namespace stiffgrad
