#include "stiffgrad/rollout.hpp"

#include <stdexcept>

#include "core/backend.hpp"

namespace stiffgrad {

Rollout::Rollout(Simulator& sim, int horizon) : sim_(sim), horizon_(horizon) {
  if (horizon < 1) throw std::invalid_argument("Rollout: horizon must be >= 1");
  impl_ = sim.impl().make_rollout(horizon, sim.options().substeps);
}

Rollout::Rollout(Simulator& sim, int horizon, const BundleOptions& bundles) : Rollout(sim, horizon) {
  if (bundles.enabled) {
    validate(bundles);
    impl_->enable_bundles(bundles);
    bundles_ = true;
    bundle_seed_ = bundles.seed;
  }
}

Rollout::~Rollout() = default;

void Rollout::begin() { begin(bundle_seed_); }

void Rollout::begin(std::uint64_t bundle_seed) {
  impl_->begin(bundle_seed);
  impl_->save(0);
  steps_ = 0;
}

void Rollout::step(const double* ctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::step before begin()");
  if (steps_ >= horizon_) throw std::length_error("Rollout::step beyond the horizon");
  if (ctrl) sim_.set_ctrl(ctrl);
  if (!impl_->bundled_step(steps_)) sim_.step();
  impl_->save(++steps_);
}

void Rollout::step_backend_ctrl(const void* ctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::step before begin()");
  if (steps_ >= horizon_) throw std::length_error("Rollout::step beyond the horizon");
  if (bundles_) {  // the bundle scheduler decides and steps on the backend (no host sync)
    sim_.impl().set_ctrl_backend(ctrl);
    if (!impl_->bundled_step(steps_)) sim_.step();
  } else {
    sim_.step_backend_ctrl(ctrl);
  }
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

void Rollout::backward_policy(const double* dL_dqpos, const double* dL_dqvel, const ControlVjp& vjp,
                              double* dL_dqvel0, double* dL_dctrl) {
  if (steps_ < 0) throw std::logic_error("Rollout::backward before begin()");
  if (!vjp) throw std::invalid_argument("Rollout::backward_policy: empty ControlVjp");
  impl_->backward_policy(steps_, dL_dqpos, dL_dqvel, vjp, dL_dqvel0, dL_dctrl);
}

void Rollout::backward_policy_backend(const double* dL_dqpos, const double* dL_dqvel, const BackendControlVjp& vjp) {
  if (steps_ < 0) throw std::logic_error("Rollout::backward before begin()");
  if (!vjp) throw std::invalid_argument("Rollout::backward_policy_backend: empty BackendControlVjp");
  impl_->backward_policy_backend(steps_, dL_dqpos, dL_dqvel, vjp);
}

bool Rollout::replay_bitwise() const { return impl_->replay_bitwise(); }

void Rollout::checkpoint(int t, double* qpos, double* qvel, double* qacc_warmstart) const {
  if (t < 0 || t > steps_) throw std::out_of_range("Rollout::checkpoint: no such step");
  impl_->checkpoint(t, qpos, qvel, qacc_warmstart);
}

std::size_t Rollout::bytes_per_env() const { return impl_->bytes_per_env(); }

int Rollout::bundles_started() const { return impl_->bundles_started(); }
int Rollout::bundles_skipped() const { return impl_->bundles_skipped(); }
std::vector<int> Rollout::bundles_per_env() const {
  std::vector<int> counts(static_cast<std::size_t>(sim_.options().nenv), 0);
  impl_->bundles_per_env(counts.data());
  return counts;
}

}  // namespace stiffgrad
