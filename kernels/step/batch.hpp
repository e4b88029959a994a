// Per-environment entry points shared by the CPU loop (backends/cpu/) and the CUDA kernels (backends/cuda/):
// load the batched state of one environment into its Data, advance S substeps, store back.
// Batched arrays use layout LS (environment-minor), Data uses LW (contiguous on the CPU,
// environment-minor on the device).
#pragma once

#include "kernels/collision/contact_stats.hpp"
#include "kernels/base/status.hpp"
#include "kernels/step/substep.hpp"

namespace stiffgrad::kern {

template <class Real> SG_HD SG_INLINE bool is_finite(Real x) { return (x - x) == (x - x); }

template <class Real, class LS, class LW>
SG_HD void load_env(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                    View<Real, LS> ctrl, const Data<Real, LW>& d) {
  for (int i = 0; i < m.nq; ++i) d.qpos()[i] = qpos[i];
  for (int i = 0; i < m.nv; ++i) d.qvel()[i] = qvel[i];
  for (int i = 0; i < m.nu; ++i) d.ctrl()[i] = ctrl[i];
}

// The solve's warm start, the part of the state beside (qpos, qvel) that a constrained step
// depends on (kernels/constraint/solver.hpp): d.qacc_warmstart <- warm (nv), or zero when warm is null
// (MuJoCo's value after mj_resetData). store_warmstart writes it back.
template <class Real, class LS, class LW>
SG_HD void load_warmstart(const ModelView<Real>& m, View<Real, LS> warm, const Data<Real, LW>& d) {
  if (!has_warmstart(m)) return;
  for (int i = 0; i < m.nv; ++i) d.qacc_warmstart()[i] = warm.p ? warm[i] : Real(0);
}
template <class Real, class LS, class LW>
SG_HD void store_warmstart(const ModelView<Real>& m, const Data<Real, LW>& d, View<Real, LS> warm) {
  if (!has_warmstart(m) || !warm.p) return;
  for (int i = 0; i < m.nv; ++i) warm[i] = d.qacc_warmstart()[i];
}

// The parts of a control step, for control_step_env below and for the staged CUDA pipeline
// (kernels/step/staged_step.hpp), which runs the substeps between them in separate kernels.
// control_step_begin: false (nothing to do) for an environment already non-finite; else loads
// its state, control and warm start into d and clears the step's statistics.
template <class Real, class LS, class LW>
SG_HD SG_INLINE bool control_step_begin(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                                        View<Real, LS> ctrl, View<Real, LS> warm, const Data<Real, LW>& d,
                                        const int* status, View<Real, LS> stats) {
  if (*status & kEnvNonFinite) return false;
  load_env(m, qpos, qvel, ctrl, d);
  load_warmstart(m, warm, d);
  if (stats.p != nullptr) clear_contact_stats(stats);
  return true;
}

// After each substep: its contact and integrator statistics into stats (when given).
template <class Real, class LS, class LW>
SG_HD SG_INLINE void accumulate_substep_stats(const ModelView<Real>& m, const Data<Real, LW>& d,
                                              View<Real, LS> stats) {
  if (stats.p == nullptr) return;
  accumulate_contact_stats(m, d, stats);  // returns at once without constraints
  accumulate_integrator_stats(m, d, stats);
}

// The end of a control step: an environment whose state turned non-finite keeps its last
// finite state and gets kEnvNonFinite; otherwise the status bits `raised` by its substeps join
// *status and the state and warm start are stored back.
template <class Real, class LS, class LW>
SG_HD SG_INLINE void control_step_end(const ModelView<Real>& m, const Data<Real, LW>& d, View<Real, LS> qpos,
                                      View<Real, LS> qvel, View<Real, LS> warm, int raised, int* status) {
  bool finite = true;
  for (int i = 0; i < m.nq; ++i) finite = finite && is_finite(d.qpos()[i]);
  for (int i = 0; i < m.nv; ++i) finite = finite && is_finite(d.qvel()[i]);
  if (!finite) {
    *status |= kEnvNonFinite;
    return;
  }
  *status |= raised;
  for (int i = 0; i < m.nq; ++i) qpos[i] = d.qpos()[i];
  for (int i = 0; i < m.nv; ++i) qvel[i] = d.qvel()[i];
  store_warmstart(m, d, warm);
}

// One control step: `substeps` substeps with the control held. An environment whose state
// turns non-finite keeps its last finite state and gets kEnvNonFinite in `status`, so one
// diverging environment never feeds NaN into anything else.
// `warm` (nv, may be null) is the solve's warm start, read and updated (load_warmstart).
// `stats` (kContactStats rows, may be null: stats.p == nullptr) receives the step's contact
// statistics (kernels/collision/contact_stats.hpp).
template <class Real, class LS, class LW>
SG_HD void control_step_env(const ModelView<Real>& m, View<Real, LS> qpos, View<Real, LS> qvel,
                            View<Real, LS> ctrl, View<Real, LS> warm, const Data<Real, LW>& d, int substeps,
                            int* status, View<Real, LS> stats = View<Real, LS>{}) {
  if (!control_step_begin(m, qpos, qvel, ctrl, warm, d, status, stats)) return;
  int raised = 0;
  for (int s = 0; s < substeps; ++s) {
    raised |= substep(m, d);
    accumulate_substep_stats(m, d, stats);
  }
  control_step_end(m, d, qpos, qvel, warm, raised, status);
}

}  // namespace stiffgrad::kern
