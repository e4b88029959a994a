// Constraint forces of one substep (MuJoCo's mj_fwdConstraint with the rows of mj_fwdPosition
// and mj_fwdVelocity): collision, rows, and the Newton solve from a cold start, which makes the
// result a deterministic function of the state (replayable bit for bit). MuJoCo 2.2.2 warm-starts
// from the previous step's qacc; both stop at the solver tolerance, so they differ by at most
// that tolerance (shared/facts/mujoco-2.2.2-constraints.md §5).
#pragma once

#include "kernels/constraint_rows.hpp"
#include "kernels/solver.hpp"

namespace stiffgrad::kern {

// Needs fwd_position, fwd_velocity, fwd_actuation, d.qfrc_smooth and d.qacc_smooth (the
// unconstrained acceleration M^-1 qfrc_smooth). Leaves the contacts and rows, efc_force,
// qfrc_constraint, and the solver's qacc in d.qacc. Returns kEnvConstraintOverflow when contacts
// or rows exceeded their capacity, else 0.
template <class Real, class L>
SG_HD int fwd_constraint(const ModelView<Real>& m, const Data<Real, L>& d) {
  int status = fwd_collision(m, d);
  status |= fwd_constraint_rows(m, d);
  constraint_solve(m, d);
  return status;
}

}  // namespace stiffgrad::kern
