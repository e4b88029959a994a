#include "stiffgrad/rollout.hpp"

#include <stdexcept>

#include "host/backend.hpp"

namespace stiffgrad {

Rollout::Rollout(Simulator& sim, int horizon) : sim_(sim), horizon_(horizon) {
  if (horizon < 1) throw std::invalid_argument("Rollout: horizon must be >= 1");
  impl_ = sim.impl().make_rollout(horizon, sim.options().substeps);
}

Rollout::~Rollout() = default;

void Rollout::begin() {
  impl_->save(0);
  steps_ = 0;
}

void Rollout::step(const double* ctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::step before begin()");
  if (steps_ >= horizon_) throw std::length_error("Rollout::step beyond the horizon");
  if (ctrl) sim_.set_ctrl(ctrl);
  sim_.step();
  impl_->save(++steps_);
}

void Rollout::step_backend_ctrl(const void* ctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::step before begin()");
  if (steps_ >= horizon_) throw std::length_error("Rollout::step beyond the horizon");
  sim_.step_backend_ctrl(ctrl);
  impl_->save(++steps_);
}

void Rollout::backward(const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0,
                       double* dL_dqvel0, double* dL_dctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::backward before begin()");
  impl_->backward(steps_, dL_dqpos, dL_dqvel, dL_dqpos0, /*tangent=*/true, dL_dqvel0, dL_dctrl);
}

void Rollout::backward_raw(const double* dL_dqpos, const double* dL_dqvel, double* dL_dqpos0_raw,
                           double* dL_dqvel0, double* dL_dctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::backward before begin()");
  impl_->backward(steps_, dL_dqpos, dL_dqvel, dL_dqpos0_raw, /*tangent=*/false, dL_dqvel0, dL_dctrl);
}

bool Rollout::replay_bitwise() const { return impl_->replay_bitwise(); }

void Rollout::checkpoint(int t, double* qpos, double* qvel, double* qacc_warmstart) const {
  if (t < 0 || t > steps_) throw std::out_of_range("Rollout::checkpoint: no such step");
  impl_->checkpoint(t, qpos, qvel, qacc_warmstart);
}

std::size_t Rollout::bytes_per_env() const { return impl_->bytes_per_env(); }

}  // namespace stiffgrad
