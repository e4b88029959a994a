// Constraint rows of the Impulse contact model (kernels/impulse/impulse_step.hpp): blocks of three rows,
// in MuJoCo's order (friction loss, limits, contacts):
//   dof friction loss  row 0 = unit row on the dof; impulse in the box |P| <= h f   (mu = −h f)
//   joint limit        row 0 = ±unit row (hinge, slide) when dist < margin; P >= 0  (mu = 0)
//   contact            rows n, t1, t2 of the contact frame, relative Jacobian J_2 − J_1; the
//                      Coulomb cone |P_t| <= mu P_n with mu = the pair's sliding friction (0 for
//                      condim 1), and the soft activation σ(κ d) of the penetration d = −dist.
// A 1-D block's rows 1 and 2 are structurally zero (empty chain); the step pads its Delassus block
// with a unit tangent diagonal so that the block is invertible and those impulses stay zero.
// Limits and friction loss carry σ = 1: κ is a length scale of contact penetration.
// Ball-joint and tendon limits and tendon friction loss are not part of this model: the
// Simulator refuses such models (core/simulator.cpp).
#pragma once

#include "kernels/constraint/constraint_rows.hpp"
#include "kernels/impulse/impulse_solve.hpp"

namespace stiffgrad::kern {

// Begins block `blk` (rows 3 blk .. 3 blk + 2) of the given type and id: rows 1 and 2 empty.
template <class Real, class L>
SG_HD SG_INLINE void begin_impulse_block(const ModelView<Real>& m, const Data<Real, L>& d, int blk, int type, int id,
                                         Real pos) {
  for (int r = 0; r < 3; ++r) {
    const int i = 3 * blk + r;
    if (r > 0) begin_row(m, d, i, kChainEmpty);
    d.efc_type()[i] = Real(type);
    d.efc_id()[i] = Real(id);
    d.efc_pos()[i] = pos;
  }
}

// Fills d.efc_J, efc_type, efc_id, efc_pos (dist of contacts and limits), the blocks' mu,
// sigma and width dim (1: rows 1 and 2 empty, 3), and d.nefc = 3 x blocks. Needs fwd_position
// and fwd_collision. Returns kEnvConstraintOverflow when the blocks did not fit (the excess is
// dropped), else 0.
template <class Real, class L>
SG_HD int impulse_rows(const ModelView<Real>& m, const Data<Real, L>& d, View<Real, L> mu, View<Real, L> sigma,
                       View<Real, L> dim) {
  const int capacity = m.nefc_max / 3;
  const Real h = m.timestep;
  int nb = 0, status = 0;
  auto room = [&]() {
    if (nb < capacity) return true;
    status = kEnvConstraintOverflow;
    return false;
  };
  if (m.frictionloss_enabled)
    for (int i = 0; i < m.nv; ++i) {
      if (!(m.dof_frictionloss[i] > Real(0)) || !room()) continue;
      unit_row(m, d, 3 * nb, i, Real(1));
      begin_impulse_block(m, d, nb, kCnstrFrictionDof, i, Real(0));
      mu[nb] = -h * m.dof_frictionloss[i];
      dim[nb] = Real(1);
      sigma[nb++] = Real(1);
    }
  if (m.limit_enabled)
    for (int j = 0; j < m.njnt; ++j) {
      const int type = m.jnt_type[j];
      if (!m.jnt_limited[j] || (type != kJntHinge && type != kJntSlide)) continue;
      const int da = m.jnt_dofadr[j], qa = m.jnt_qposadr[j];
      for (int side = 0; side < 2; ++side) {
        const Real dist =
            side == 0 ? d.qpos()[qa] - m.jnt_range[2 * j] : m.jnt_range[2 * j + 1] - d.qpos()[qa];
        if (!(dist < m.jnt_margin[j]) || !room()) continue;
        unit_row(m, d, 3 * nb, da, side == 0 ? Real(1) : Real(-1));
        begin_impulse_block(m, d, nb, kCnstrLimitJoint, j, dist);
        mu[nb] = Real(0);
        dim[nb] = Real(1);
        sigma[nb++] = Real(1);
      }
    }
  const View<Real, L> jac = d.solver_ws();  // 6 x nv scratch (free: no Newton solve in this model)
  const int ncon = sg_int(d.ncon()[0]);
  for (int k = 0; k < ncon; ++k) {
    if (!room()) break;
    const int chain = contact_jacobian(m, d, k, jac);
    for (int r = 0; r < 3; ++r) {
      const int i = 3 * nb + r;
      begin_row(m, d, i, chain);
      for_each_row_entry(m, chain, [&](int slot, int col) {
        d.efc_J()[i * m.nv + slot] = contact_frame_row(m, d, k, jac, r, col);
      });
      d.efc_type()[i] = Real(kCnstrContactElliptic);
      d.efc_id()[i] = Real(k);
      d.efc_pos()[i] = d.contact_dist()[k];
    }
    const int c = sg_int(d.contact_pair()[k]);
    mu[nb] = m.cpair_condim[c] > 1 ? m.cpair_friction[5 * c] : Real(0);
    dim[nb] = Real(3);
    sigma[nb++] = impulse_activation(-d.contact_dist()[k], m.impulse_kappa);
  }
  d.nefc()[0] = Real(3 * nb);
  return status;
}

}  // namespace stiffgrad::kern
