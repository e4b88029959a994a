// Per-environment entry points shared by the CPU loop (host/) and the CUDA kernels (cuda/):
// load the batched state of one environment into its Data, advance S substeps, store back.
// Batched arrays use layout LS (environment-minor), Data uses LW (contiguous on the CPU,
// environment-minor on the device).
#pragma once

#include "kernels/contact_stats.hpp"
#include "kernels/status.hpp"
#include "kernels/substep.hpp"

namespace stiffgrad::kern {

template <class Real> SG_HD SG_INLINE bool is_finite(Real x) { return (x - x) == (x - x); }

template <class Real, class LS, class LW>
SG_HD void load_env(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                    View<Real, LS> ctrl, const Data<Real, LW>& d) {
  for (int i = 0; i < m.nq; ++i) d.qpos[i] = qpos[i];
  for (int i = 0; i < m.nv; ++i) d.qvel[i] = qvel[i];
  for (int i = 0; i < m.nu; ++i) d.ctrl[i] = ctrl[i];
}

// One control step: `substeps` smooth Euler substeps with the control held. An environment
// whose state turns non-finite keeps its last finite state and gets kEnvNonFinite in
// `status`, so one diverging environment never feeds NaN into anything else.
// `stats` (kContactStats rows, may be null: stats.p == nullptr) receives the step's contact
// statistics (kernels/contact_stats.hpp).
template <class Real, class LS, class LW>
SG_HD void control_step_env(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                            View<Real, LS> ctrl, const Data<Real, LW>& d, int substeps,
                            int* status, View<Real, LS> stats = View<Real, LS>{}) {
  if (*status & kEnvNonFinite) return;
  load_env(m, qpos, qvel, ctrl, d);
  const bool with_stats = stats.p != nullptr;
  if (with_stats) clear_contact_stats(stats);
  int raised = 0;
  for (int s = 0; s < substeps; ++s) {
    raised |= substep(m, d);
    if (with_stats) {
      accumulate_contact_stats(m, d, stats);  // returns at once without constraints
      accumulate_integrator_stats(m, d, stats);
    }
  }
  bool finite = true;
  for (int i = 0; i < m.nq; ++i) finite = finite && is_finite(d.qpos[i]);
  for (int i = 0; i < m.nv; ++i) finite = finite && is_finite(d.qvel[i]);
  if (!finite) {
    *status |= kEnvNonFinite;
    return;
  }
  *status |= raised;
  for (int i = 0; i < m.nq; ++i) qpos[i] = d.qpos[i];
  for (int i = 0; i < m.nv; ++i) qvel[i] = d.qvel[i];
}

}  // namespace stiffgrad::kern
