// Constraint capacities sized at Simulator creation (SimulatorOptions::constraints).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/impulse/impulse_workspace.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

namespace {

// Rows one contact of condim `dim` produces (facts §3): 1 frictionless, dim elliptic,
// 2 (dim - 1) pyramidal.
int rows_per_contact(int dim, int cone) {
  if (dim <= 1) return 1;
  return cone == 1 ? dim : 2 * (dim - 1);
}

void require_size(const std::string& name, std::size_t have, std::size_t want) {
  if (have != want)
    throw std::invalid_argument("constraints: the model's " + name + " holds " + std::to_string(have) +
                                " values, expected " + std::to_string(want) +
                                " (a Model built without the constraint fields)");
}

// The Model must carry every field the constraint kernels read.
void check_constraint_fields(const Model& m) {
  const auto nb = static_cast<std::size_t>(m.nbody), nj = static_cast<std::size_t>(m.njnt);
  const auto nv = static_cast<std::size_t>(m.nv), nt = static_cast<std::size_t>(m.ntendon);
  const auto ng = static_cast<std::size_t>(m.ngeom), nc = static_cast<std::size_t>(m.ncpair);
  require_size("body_invweight0", m.body_invweight0.size(), 2 * nb);
  require_size("dof_invweight0", m.dof_invweight0.size(), nv);
  require_size("dof_solref", m.dof_solref.size(), 2 * nv);
  require_size("dof_solimp", m.dof_solimp.size(), 5 * nv);
  require_size("jnt_margin", m.jnt_margin.size(), nj);
  require_size("jnt_solref", m.jnt_solref.size(), 2 * nj);
  require_size("jnt_solimp", m.jnt_solimp.size(), 5 * nj);
  require_size("tendon_margin", m.tendon_margin.size(), nt);
  require_size("tendon_frictionloss", m.tendon_frictionloss.size(), nt);
  require_size("tendon_invweight0", m.tendon_invweight0.size(), nt);
  require_size("geom_rbound", m.geom_rbound.size(), ng);
  require_size("geom_dataid", m.geom_dataid.size(), ng);
  const auto nmesh = static_cast<std::size_t>(m.nmesh);
  require_size("mesh_vertadr", m.mesh_vertadr.size(), nmesh);
  require_size("mesh_vertnum", m.mesh_vertnum.size(), nmesh);
  require_size("mesh_graphadr", m.mesh_graphadr.size(), nmesh);
  const auto neq = static_cast<std::size_t>(m.neq);
  require_size("eq_type", m.eq_type.size(), neq);
  require_size("eq_data", m.eq_data.size(), 11 * neq);
  require_size("eq_solimp", m.eq_solimp.size(), 5 * neq);
  require_size("cpair_geom1", m.cpair_geom1.size(), nc);
  require_size("cpair_maxcon", m.cpair_maxcon.size(), nc);
  require_size("cpair_friction", m.cpair_friction.size(), 5 * nc);
}

// The Impulse contact model's rows (kernels/impulse/impulse_rows.hpp): each contact, each dof with
// friction loss and each side of a hinge or slide limit is one block of kern::kImpulseBlockRows
// (a contact's normal and two tangents; a limit or friction loss uses the first row). Limited
// ball joints, tendon limits and tendon friction loss are refused at Simulator creation.
using kern::kImpulseBlockRows;
int impulse_rows(const Model& m, int contacts) {
  int blocks = contacts;
  if (m.opt.frictionloss_enabled)
    for (double f : m.dof_frictionloss) blocks += f > 0;
  if (m.opt.limit_enabled)
    for (int j = 0; j < m.njnt; ++j) {
      const JointType type = m.jnt_type[static_cast<std::size_t>(j)];
      if (m.jnt_limited[static_cast<std::size_t>(j)] && (type == JointType::Hinge || type == JointType::Slide))
        blocks += 2;
    }
  return kImpulseBlockRows * blocks;
}

// The soft model's rows: those of the contacts plus one per friction loss, two per limited
// hinge, slide or tendon, one per limited ball joint, and the equality constraints' (facts §3).
int soft_rows(const Model& m, int contact_rows) {
  int rows = contact_rows;
  // equality rows: 3 per connect, 1 per joint or tendon coupling (active or not: a user may
  // switch one on)
  if (m.opt.equality_enabled)
    for (int i = 0; i < m.neq; ++i) rows += m.eq_type[static_cast<std::size_t>(i)] == 0 ? 3 : 1;
  if (m.opt.frictionloss_enabled) {
    for (double f : m.dof_frictionloss) rows += f > 0;
    for (double f : m.tendon_frictionloss) rows += f > 0;
  }
  if (m.opt.limit_enabled) {
    for (int j = 0; j < m.njnt; ++j)
      if (m.jnt_limited[static_cast<std::size_t>(j)])
        rows += m.jnt_type[static_cast<std::size_t>(j)] == JointType::Ball ? 1 : 2;
    for (int t = 0; t < m.ntendon; ++t) rows += m.tendon_limited[static_cast<std::size_t>(t)] ? 2 : 0;
  }
  return rows;
}

}  // namespace

ConstraintCapacity constraint_capacity(const Model& m, const SimulatorOptions& o) {
  ConstraintCapacity cap;
  if (!o.constraints || !m.opt.constraint_enabled) return cap;
  if (o.max_contacts < 0 || o.max_constraint_rows < 0)
    throw std::invalid_argument("Simulator: max_contacts and max_constraint_rows must be >= 0");
  check_constraint_fields(m);
  int contacts = 0, contact_rows = 0;
  if (m.opt.contact_enabled)
    for (int c = 0; c < m.ncpair; ++c) {
      const int n = m.cpair_maxcon[static_cast<std::size_t>(c)];
      contacts += n;
      contact_rows += n * rows_per_contact(m.cpair_condim[static_cast<std::size_t>(c)], m.opt.cone);
    }
  const bool impulse = o.contact_model == ContactModel::Impulse;
  const int rows = impulse ? impulse_rows(m, contacts) : soft_rows(m, contact_rows);
  // the Impulse model's rows come in whole blocks: a user's capacity is rounded down to them
  const int quantum = impulse ? kImpulseBlockRows : 1;
  cap.contacts = o.max_contacts > 0 ? std::min(o.max_contacts, contacts) : contacts;
  cap.rows = o.max_constraint_rows > 0 ? std::min(o.max_constraint_rows / quantum * quantum, rows) : rows;
  if (cap.rows == 0) cap.contacts = 0;  // nothing can constrain this model
  return cap;
}

}  // namespace stiffgrad
