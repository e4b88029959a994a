// Single-state dynamics on the host: binds a contiguous Data buffer and runs the same kernel
// stages the batched backends run.
#include "stiffgrad/dynamics.hpp"
#include "host/dynamics_host.hpp"

#include <algorithm>

#include "host/model_arrays.hpp"
#include "kernels/step.hpp"

namespace stiffgrad {

namespace {

struct HostData {
  ModelArrays<double> arrays;
  kern::ModelView<double> view;
  kern::DataLayout layout;
  std::vector<double> buffer;
  kern::Data<double, kern::Contiguous> d;

  explicit HostData(const Model& m)
      : arrays(m), view(arrays.host_view()), layout(kern::DataLayout::make(view)),
        buffer(static_cast<std::size_t>(layout.size) + 1, 0.0),
        d(kern::Data<double, kern::Contiguous>::bind({buffer.data(), {}}, layout)) {}

  void load(const double* qpos, const double* qvel, const double* ctrl) {
    for (int i = 0; i < view.nq; ++i) d.qpos[i] = qpos[i];
    for (int i = 0; i < view.nv; ++i) d.qvel[i] = qvel[i];
    for (int i = 0; i < view.nu; ++i) d.ctrl[i] = ctrl[i];
  }
};

std::vector<double> copy_out(const kern::View<double, kern::Contiguous>& v, int n) {
  return std::vector<double>(v.p, v.p + n);
}

}  // namespace

SmoothDynamics smooth_dynamics(const Model& model, const double* qpos, const double* qvel,
                               const double* ctrl) {
  HostData h(model);
  h.load(qpos, qvel, ctrl);
  kern::fwd_dynamics(h.view, h.d, 0.0);
  SmoothDynamics out;
  const int nv = model.nv;
  out.M = copy_out(h.d.qM, nv * nv);
  out.qfrc_bias = copy_out(h.d.qfrc_bias, nv);
  out.qfrc_passive = copy_out(h.d.qfrc_passive, nv);
  out.qfrc_actuator = copy_out(h.d.qfrc_actuator, nv);
  out.qacc = copy_out(h.d.qacc, nv);
  return out;
}

void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps) {
  rollout_host(model, qpos, qvel, ctrl, steps, Integrator::SemiImplicitEuler);
}

void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps,
                  Integrator integrator) {
  HostData h(model);
  h.view.implicit_actuator_damping = integrator == Integrator::ImplicitDampingEuler;
  h.load(qpos, qvel, ctrl);
  for (int s = 0; s < steps; ++s) kern::substep(h.view, h.d);
  std::copy(h.d.qpos.p, h.d.qpos.p + model.nq, qpos);
  std::copy(h.d.qvel.p, h.d.qvel.p + model.nv, qvel);
}

}  // namespace stiffgrad
