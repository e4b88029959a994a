// Constraint forces of one substep (MuJoCo's mj_fwdConstraint with the rows of mj_fwdPosition
// and mj_fwdVelocity): collision, rows, and the Newton solve, warm-started from the previous
// solve's qacc as MuJoCo 2.2.2 does when the warmstart flag is on (its default), else cold
// (docs/references/mujoco-2.2.2-constraints.md §5). The warm start is state: the result is a
// deterministic function of (state, Data::qacc_warmstart), replayable bit for bit from a
// checkpoint that records both (kernels/step/batch.hpp, kernels/step/batch_adjoint.hpp).
#pragma once

#include "kernels/constraint/constraint_rows.hpp"
#include "kernels/constraint/solver.hpp"

namespace stiffgrad::kern {

// The rows of the contacts in d.contact_* (and of every limit and friction loss), and the
// solve: fwd_constraint after the collision. Returns kEnvConstraintOverflow when the rows
// exceeded their capacity, else 0.
template <class Real, class L>
SG_HD int fwd_constraint_from_contacts(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int status = fwd_constraint_rows(m, d);
  constraint_solve(m, d);
  return status;
}

// Needs fwd_position, fwd_velocity, fwd_actuation, d.qfrc_smooth and d.qacc_smooth (the
// unconstrained acceleration M^-1 qfrc_smooth). Leaves the contacts and rows, efc_force,
// qfrc_constraint, and the solver's qacc in d.qacc. Returns kEnvConstraintOverflow when contacts
// or rows exceeded their capacity, else 0.
template <class Real, class L>
SG_HD int fwd_constraint(const ModelView<Real>& m, const Data<Real, L>& d) {
  const int status = fwd_collision(m, d);
  return status | fwd_constraint_from_contacts(m, d);
}

}  // namespace stiffgrad::kern
