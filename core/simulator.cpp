#include "stiffgrad/simulator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "kernels/collision/contact_stats.hpp"

namespace stiffgrad {

std::string backend_name(Backend b) { return b == Backend::Cpu ? "cpu" : "cuda"; }

bool cuda_available() { return cuda_backend_available(); }

namespace {
constexpr struct {
  Integrator integrator;
  const char* name;
} kIntegratorNames[] = {{Integrator::SemiImplicitEuler, "euler"}, {Integrator::ImplicitDampingEuler, "implicit-actuators"},
                        {Integrator::RK4, "rk4"},                  {Integrator::Tsit5, "tsit5"},
                        {Integrator::Dopri5, "dopri5"},            {Integrator::Bosh3, "bosh3"}};

// "joint 'name'" or, unnamed, "joint 3".
std::string named(const char* what, const std::vector<std::string>& names, int i) {
  const auto k = static_cast<std::size_t>(i);
  if (k < names.size() && !names[k].empty()) return std::string(what) + " '" + names[k] + "'";
  return std::string(what) + " " + std::to_string(i);
}

// The Impulse contact model's requirements on the options and the model
// (SimulatorOptions::contact_model): what the impulse kernels do not step is refused, not ignored.
void check_impulse(const Model& m, const SimulatorOptions& o) {
  const std::string who = "Simulator: the impulse contact model (contact_model Impulse, --contact impulse)";
  if (!o.constraints) throw std::invalid_argument(who + " needs constraints on (SimulatorOptions::constraints)");
  if (!m.opt.constraint_enabled)
    throw std::invalid_argument(who + " needs constraints on, but the model disables them (<flag constraint=\"disable\"/>)");
  // Moreau midpoint stepping is its own integrator; its mass matrix takes the joint damping
  // implicitly (M + h D, as MuJoCo's Euler), and with ImplicitDampingEuler the actuators'
  // velocity gains too (kernels/impulse/impulse_step.hpp)
  if (o.integrator != Integrator::SemiImplicitEuler && o.integrator != Integrator::ImplicitDampingEuler)
    throw std::invalid_argument(who + " needs integrator SemiImplicitEuler (--integrator euler) or ImplicitDampingEuler "
                                "(--integrator implicit-actuators), not '" + integrator_name(o.integrator) +
                                "': Moreau midpoint stepping is its own integrator");
  if (o.cfd.enabled)
    throw std::invalid_argument(who + " cannot be combined with contacts from distance (cfd, --cfd)");
  impulse_contact_model(Model{}, o.impulse);  // validates kappa and sweeps
  const auto j = [](int i) { return static_cast<std::size_t>(i); };
  if (m.opt.limit_enabled) {
    for (int i = 0; i < m.njnt; ++i)
      if (m.jnt_limited[j(i)] && m.jnt_type[j(i)] == JointType::Ball)
        throw std::invalid_argument(who + " supports limits of hinge and slide joints only; " +
                                    named("ball joint", m.jnt_name, i) + " is limited");
    for (int t = 0; t < m.ntendon; ++t)
      if (m.tendon_limited[j(t)])
        throw std::invalid_argument(who + " does not support tendon limits; " + named("tendon", m.tendon_name, t) +
                                    " is limited");
  }
  if (m.opt.frictionloss_enabled)
    for (int t = 0; t < m.ntendon; ++t)
      if (m.tendon_frictionloss[j(t)] > 0)
        throw std::invalid_argument(who + " does not support tendon friction loss; " +
                                    named("tendon", m.tendon_name, t) + " has frictionloss > 0");
  if (m.opt.equality_enabled && m.neq > 0)
    throw std::invalid_argument(who + " does not support equality constraints; " +
                                named("equality constraint", m.eq_name, 0) +
                                " is one (use the soft contact model)");
}

// ImplicitDampingEuler makes a damping actuator's velocity gain implicit in M's tree-sparse
// factor: a tendon actuator's gain couples every pair of its dofs, so they must lie on one chain
// of the kinematic tree (kernels/step/step.hpp add_implicit_actuator_damping).
void check_implicit_tendon_actuators(const Model& m) {
  const auto z = [](int i) { return static_cast<std::size_t>(i); };
  auto on_one_chain = [&](int a, int b) {
    if (a > b) std::swap(a, b);
    while (b > a) b = m.dof_parentid[z(b)];
    return b == a;
  };
  for (int u = 0; u < m.nu; ++u) {
    if (m.actuator_trntype[z(u)] != 3 || m.actuator_biastype[z(u)] != BiasType::Affine ||
        !(m.actuator_biasprm[3 * z(u) + 2] < 0))
      continue;
    const int t = m.actuator_trnid[z(u)];
    for (int w = m.tendon_adr[z(t)]; w < m.tendon_adr[z(t)] + m.tendon_num[z(t)]; ++w)
      for (int v = m.tendon_adr[z(t)]; v < w; ++v)
        if (!on_one_chain(m.jnt_dofadr[z(m.wrap_jntid[z(w)])], m.jnt_dofadr[z(m.wrap_jntid[z(v)])]))
          throw std::invalid_argument("Simulator: integrator implicit-actuators cannot make " +
                                      named("actuator", m.actuator_name, u) +
                                      "'s damping implicit: its " +
                                      named("tendon", m.tendon_name, t) +
                                      " couples joints on different branches of the kinematic tree "
                                      "(use --integrator euler)");
  }
}

}  // namespace

const char* integrator_name(Integrator integrator) {
  for (const auto& e : kIntegratorNames)
    if (e.integrator == integrator) return e.name;
  return "unknown";
}

bool parse_integrator(const std::string& name, Integrator* integrator) {
  for (const auto& e : kIntegratorNames)
    if (name == e.name) {
      *integrator = e.integrator;
      return true;
    }
  return false;
}

Simulator::Simulator(std::shared_ptr<const Model> model, SimulatorOptions options)
    : model_(std::move(model)), options_(options) {
  if (!model_) throw std::invalid_argument("Simulator: null model");
  if (options_.nenv < 1) throw std::invalid_argument("Simulator: nenv must be >= 1");
  if (options_.substeps < 1) throw std::invalid_argument("Simulator: substeps must be >= 1");
  if (options_.cuda_solve_shared_bytes < -1)
    throw std::invalid_argument(
        "Simulator: cuda_solve_shared_bytes must be >= -1 (-1: automatic, 0: none)");
  const AdaptiveTolerances& tol = options_.adaptive;
  if (!(tol.rtol >= 0.0) || !(tol.atol >= 0.0) || tol.rtol + tol.atol <= 0.0)
    throw std::invalid_argument("Simulator: adaptive rtol and atol must be >= 0, not both 0");
  if (tol.max_steps < 1) throw std::invalid_argument("Simulator: adaptive max_steps must be >= 1");
  if (!(tol.event_step >= 0.0) || !std::isfinite(tol.event_step))
    throw std::invalid_argument("Simulator: adaptive event_step must be a finite number >= 0 (0: off)");
  if (tol.event_gradients) {
    const Integrator i = options_.integrator;
    if (i != Integrator::Tsit5 && i != Integrator::Dopri5 && i != Integrator::Bosh3)
      throw std::invalid_argument(std::string("Simulator: event_gradients need an adaptive integrator (tsit5, dopri5, "
                                              "bosh3), not ") + integrator_name(i));
    if (!(tol.event_step > 0.0))
      throw std::invalid_argument("Simulator: event_gradients need event location (adaptive event_step > 0)");
    if (options_.contact_model != ContactModel::Soft)
      throw std::invalid_argument("Simulator: event_gradients need the Soft contact model");
    if (options_.cfd.enabled)
      throw std::invalid_argument("Simulator: event_gradients and contacts from distance are alternatives; choose one");
  }
  if (options_.cfd.enabled) {
    if (!options_.constraints) throw std::invalid_argument("Simulator: contacts from distance need constraints on");
    contacts_from_distance_model(*model_, options_.cfd);  // validates the parameters
  }
  if (options_.contact_model == ContactModel::Impulse) check_impulse(*model_, options_);
  if (options_.integrator == Integrator::ImplicitDampingEuler)
    check_implicit_tendon_actuators(*model_);
  capacity_ = constraint_capacity(*model_, options_);
  impl_ = options_.backend == Backend::Cuda ? make_cuda_backend(*model_, options_)
                                            : make_cpu_backend(*model_, options_);
  reset();
}

Simulator::~Simulator() = default;

void Simulator::reset() {
  const Model& m = *model_;
  std::vector<double> qpos(static_cast<std::size_t>(m.nq) * nenv());
  std::vector<double> qvel(static_cast<std::size_t>(m.nv) * nenv(), 0.0);
  std::vector<double> ctrl(static_cast<std::size_t>(m.nu) * nenv(), 0.0);
  for (int e = 0; e < nenv(); ++e)
    std::copy(m.qpos0.begin(), m.qpos0.end(), qpos.begin() + static_cast<std::ptrdiff_t>(e) * m.nq);
  impl_->set_state(qpos.data(), qvel.data());
  impl_->set_ctrl(ctrl.data());
  impl_->clear_status();
}

void Simulator::reset_keyframe(const std::string& name) {
  const Model& m = *model_;
  const int k = m.keyframe_id(name);
  if (k < 0) throw std::invalid_argument("Simulator: no keyframe named '" + name + "'");
  const Keyframe& key = m.keyframes[k];
  std::vector<double> qpos, qvel, ctrl;
  for (int e = 0; e < nenv(); ++e) {
    qpos.insert(qpos.end(), key.qpos.begin(), key.qpos.end());
    qvel.insert(qvel.end(), key.qvel.begin(), key.qvel.end());
    ctrl.insert(ctrl.end(), key.ctrl.begin(), key.ctrl.end());
  }
  impl_->set_state(qpos.data(), qvel.data());
  impl_->set_ctrl(ctrl.data());
  impl_->clear_status();
}

void Simulator::set_state(const double* qpos, const double* qvel) {
  impl_->set_state(qpos, qvel);
  impl_->clear_status();
}
void Simulator::get_state(double* qpos, double* qvel) const { impl_->get_state(qpos, qvel); }

void Simulator::set_warmstart(const double* qacc_warmstart) { impl_->set_warmstart(qacc_warmstart); }

void Simulator::get_warmstart(double* qacc_warmstart) const { impl_->get_warmstart(qacc_warmstart); }
void Simulator::set_ctrl(const double* ctrl) { impl_->set_ctrl(ctrl); }
void Simulator::get_ctrl(double* ctrl) const { impl_->get_ctrl(ctrl); }
void Simulator::step() { impl_->step(options_.substeps); }
void Simulator::step(const double* ctrl) {
  impl_->set_ctrl(ctrl);
  impl_->step(options_.substeps);
}
void Simulator::step_backend_ctrl(const void* ctrl) {
  impl_->set_ctrl_backend(ctrl);
  impl_->step(options_.substeps);
}
void Simulator::synchronize() { impl_->synchronize(); }
void* Simulator::cuda_stream() const { return impl_->stream(); }
void Simulator::wait_for_stream(void* stream) { impl_->wait_for_stream(stream); }
void Simulator::make_stream_wait(void* stream) { impl_->make_stream_wait(stream); }

std::vector<int> Simulator::status() const {
  std::vector<int> s(nenv());
  impl_->get_status(s.data());
  return s;
}

static_assert(Simulator::kStepStats == kern::kContactStats, "the statistics rows of kernels/collision/contact_stats.hpp");

std::vector<double> Simulator::contact_stats() const {
  std::vector<double> s(static_cast<std::size_t>(nenv()) * kStepStats);
  impl_->get_contact_stats(s.data());
  return s;
}
void Simulator::set_contact_stats(const double* stats) { impl_->set_contact_stats(stats); }
const void* Simulator::contact_stats_backend() const { return impl_->contact_stats_backend(); }
const void* Simulator::qpos_backend() const { return impl_->qpos_backend(); }
const int* Simulator::status_backend() const { return impl_->status_backend(); }
const void* Simulator::qvel_backend() const { return impl_->qvel_backend(); }

int Simulator::num_failed() const {
  int n = 0;
  for (int s : status()) n += (s & 1) != 0;
  return n;
}

std::size_t Simulator::bytes() const { return impl_->bytes(); }

}  // namespace stiffgrad
