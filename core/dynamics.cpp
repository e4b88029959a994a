// Single-state dynamics on the host: binds a contiguous Data buffer and runs the same kernel
// stages the batched backends run.
#include "stiffgrad/dynamics.hpp"
#include "core/dynamics_host.hpp"

#include <algorithm>

#include "core/host_run.hpp"
#include "core/model_arrays.hpp"
#include "kernels/constraint/row_sparsity.hpp"
#include "kernels/step/substep.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

namespace {

using HostData = HostRun<double>;

std::vector<double> copy_out(const kern::View<double, kern::Contiguous>& v, int n) {
  return std::vector<double>(v.p, v.p + n);
}

void copy_smooth(const kern::Data<double, kern::Contiguous>& d, int nv, SmoothDynamics& out) {
  out.M = copy_out(d.qM(), nv * nv);
  out.qfrc_bias = copy_out(d.qfrc_bias(), nv);
  out.qfrc_passive = copy_out(d.qfrc_passive(), nv);
  out.qfrc_actuator = copy_out(d.qfrc_actuator(), nv);
  out.qacc = copy_out(d.qacc(), nv);
}

}  // namespace

SmoothDynamics smooth_dynamics(const Model& model, const double* qpos, const double* qvel,
                               const double* ctrl) {
  HostData h(model);
  h.load(qpos, qvel, ctrl);
  kern::fwd_dynamics(h.view, h.d, 0.0);
  SmoothDynamics out;
  copy_smooth(h.d, model.nv, out);
  return out;
}

ConstrainedDynamics constrained_dynamics(const Model& model, const double* qpos, const double* qvel,
                                         const double* ctrl) {
  SimulatorOptions so;
  so.constraints = true;
  const ConstraintCapacity cap = constraint_capacity(model, so);
  HostData h(model, cap);
  h.load(qpos, qvel, ctrl);
  ConstrainedDynamics out;
  out.status = kern::fwd_dynamics(h.view, h.d, 0.0);
  const int nv = model.nv;
  copy_smooth(h.d, nv, out);
  if (cap.rows == 0) {  // nothing can constrain this model: the smooth dynamics
    out.qacc_smooth = out.qacc;
    out.qfrc_constraint.assign(static_cast<std::size_t>(nv), 0.0);
    return out;
  }
  out.qacc_smooth = copy_out(h.d.qacc_smooth(), nv);
  out.qfrc_constraint = copy_out(h.d.qfrc_constraint(), nv);
  const int ncon = static_cast<int>(h.d.ncon()[0]);
  for (int k = 0; k < ncon; ++k) {
    ContactInfo c;
    const int pair = static_cast<int>(h.d.contact_pair()[k]);
    c.geom1 = model.cpair_geom1[static_cast<std::size_t>(pair)];
    c.geom2 = model.cpair_geom2[static_cast<std::size_t>(pair)];
    c.dist = h.d.contact_dist()[k];
    kern::contact_world_pos(h.view, h.d, k, c.pos);
    for (int i = 0; i < 9; ++i) c.frame[i] = h.d.contact_frame()[9 * k + i];
    c.dim = model.cpair_condim[static_cast<std::size_t>(pair)];
    c.includemargin = model.cpair_margin[static_cast<std::size_t>(pair)] - model.cpair_gap[static_cast<std::size_t>(pair)];
    out.contacts.push_back(c);
  }
  const int nefc = static_cast<int>(h.d.nefc()[0]);
  out.nefc = nefc;
  auto ints = [nefc](const kern::View<double, kern::Contiguous>& v) {
    std::vector<int> o(static_cast<std::size_t>(nefc));
    for (int i = 0; i < nefc; ++i) o[static_cast<std::size_t>(i)] = static_cast<int>(v[i]);
    return o;
  };
  out.efc_type = ints(h.d.efc_type());
  out.efc_id = ints(h.d.efc_id());
  out.efc_state = ints(h.d.efc_state());
  out.efc_J.assign(static_cast<std::size_t>(nefc) * nv, 0.0);  // rows stored compactly: expand
  for (int i = 0; i < nefc; ++i) kern::row_to_dense(h.view, h.d, i, out.efc_J.data() + static_cast<std::size_t>(i) * nv);
  out.efc_pos = copy_out(h.d.efc_pos(), nefc);
  out.efc_margin = copy_out(h.d.efc_margin(), nefc);
  out.efc_frictionloss = copy_out(h.d.efc_frictionloss(), nefc);
  out.efc_diag_approx = copy_out(h.d.efc_diag_approx(), nefc);
  out.efc_R = copy_out(h.d.efc_R(), nefc);
  out.efc_D = copy_out(h.d.efc_D(), nefc);
  out.efc_vel = copy_out(h.d.efc_vel(), nefc);
  out.efc_aref = copy_out(h.d.efc_aref(), nefc);
  out.efc_force = copy_out(h.d.efc_force(), nefc);
  out.solver_iterations = static_cast<int>(h.d.solver_niter()[0]);
  return out;
}

void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps) {
  rollout_host(model, qpos, qvel, ctrl, steps, Integrator::SemiImplicitEuler, /*constraints=*/true);
}

void rollout_host(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps,
                  Integrator integrator, bool constraints) {
  SimulatorOptions so;
  so.constraints = constraints;
  HostData h(model, constraint_capacity(model, so), integrator);
  h.load(qpos, qvel, ctrl);
  for (int s = 0; s < steps; ++s) kern::substep(h.view, h.d);
  std::copy(h.d.qpos().p, h.d.qpos().p + model.nq, qpos);
  std::copy(h.d.qvel().p, h.d.qvel().p + model.nv, qvel);
}

void rollout_host_controls(const Model& model, double* qpos, double* qvel, const double* ctrl, int steps,
                           Integrator integrator, bool constraints) {
  SimulatorOptions so;
  so.constraints = constraints;
  HostData h(model, constraint_capacity(model, so), integrator);
  h.load(qpos, qvel);  // warm start zero, as after Simulator::set_state
  for (int s = 0; s < steps; ++s) {
    const double* u = ctrl + static_cast<std::size_t>(s) * model.nu;
    for (int i = 0; i < model.nu; ++i) h.d.ctrl()[i] = u[i];
    kern::substep(h.view, h.d);
  }
  std::copy(h.d.qpos().p, h.d.qpos().p + model.nq, qpos);
  std::copy(h.d.qvel().p, h.d.qvel().p + model.nv, qvel);
}

}  // namespace stiffgrad
