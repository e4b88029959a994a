// Per-environment contact statistics of one control step, kept in backend memory so that a
// scheduler (the bundle trigger of a later issue) reads them where they are computed.
#pragma once

#include "kernels/base/data.hpp"

namespace stiffgrad::kern {

// Rows of the statistics array (nenv x kContactStats, environment-minor like the state).
enum : int {
  kStatActiveContacts = 0,  // most contacts with constraint rows in any substep of the step
  kStatMaxNormalForce = 1,  // largest normal force of one contact in any substep
  kStatNormalImpulse = 2,   // sum over substeps of h * (sum of normal forces): the step's impulse
  kStatMaxPenetration = 3,  // largest -dist of a contact with rows (0 when none penetrates)
  kStatIntegratorSteps = 4, // integrator steps taken over the control step (Euler, RK4: one per
                            // substep; adaptive: the accepted ones)
  kStatDynamicsEvals = 5,   // evaluations of the dynamics (rejected trial steps included)
  kStatSolverIterations = 6,  // Newton iterations of the step's constraint solves, summed
  kContactStats = 7
};

template <class Real, class LS>
SG_HD SG_INLINE void clear_contact_stats(View<Real, LS> stats) {
  for (int k = 0; k < kContactStats; ++k) stats[k] = Real(0);
}

// Adds the last substep's integrator and solver cost (kernels/integrators/integrator_rk.hpp: rk_count).
template <class Real, class L, class LS>
SG_HD SG_INLINE void accumulate_integrator_stats(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> stats) {
  const bool rk = m.rk_integrator != kIntEuler;
  stats[kStatIntegratorSteps] += rk ? d.rk_count()[0] : Real(1);
  stats[kStatDynamicsEvals] += rk ? d.rk_count()[1] : Real(1);
  if (m.nefc_max > 0) stats[kStatSolverIterations] += rk ? d.rk_count()[2] : d.solver_niter()[0];
}

// Adds the last substep's contacts to the statistics. A contact's normal force is its row's
// force (frictionless, elliptic row 0) or the sum of its pyramid edges' forces (facts §3,
// mj_contactForce); the rows of one contact are consecutive and share efc_id.
template <class Real, class L, class LS>
SG_HD void accumulate_contact_stats(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, LS> stats) {
  if (m.nefc_max == 0) return;
  const int nefc = sg_int(d.nefc()[0]);
  int active = 0;
  Real total = Real(0);
  for (int i = 0; i < nefc;) {
    const int type = sg_int(d.efc_type()[i]);
    if (type < kCnstrContactFrictionless) { ++i; continue; }
    const int id = sg_int(d.efc_id()[i]);
    Real normal = Real(0);
    int j = i;
    for (; j < nefc && sg_int(d.efc_id()[j]) == id && sg_int(d.efc_type()[j]) == type; ++j)
      if (type != kCnstrContactElliptic || j == i) normal += d.efc_force()[j];
    ++active;
    total += normal;
    if (normal > stats[kStatMaxNormalForce]) stats[kStatMaxNormalForce] = normal;
    const Real depth = -d.contact_dist()[id];
    if (depth > stats[kStatMaxPenetration]) stats[kStatMaxPenetration] = depth;
    i = j;
  }
  if (Real(active) > stats[kStatActiveContacts]) stats[kStatActiveContacts] = Real(active);
  stats[kStatNormalImpulse] += m.timestep * total;
}

}  // namespace stiffgrad::kern
