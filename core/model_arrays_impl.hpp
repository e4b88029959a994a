// Definitions of ModelArrays, in a header so that tests can instantiate it for dual numbers
// (the library instantiates float and double in model_arrays.cpp).
#pragma once

#include <bit>
#include <stdexcept>
#include <string>

#include "core/model_arrays.hpp"
#include "kernels/collision/contact_types.hpp"

namespace stiffgrad {

namespace detail {

// Calls f(view_field, model_field) for every array of the view, in one fixed order: packing
// and binding both walk this list, so the two can never disagree.
template <class Real, class F>
void visit_arrays(kern::ModelView<Real>& v, const Model& m, const DerivedArrays& x, F&& f) {
  f(v.body_parentid, m.body_parentid);
  f(v.body_rootid, m.body_rootid);
  f(v.body_jntnum, m.body_jntnum);
  f(v.body_jntadr, m.body_jntadr);
  f(v.body_dofnum, m.body_dofnum);
  f(v.body_dofadr, m.body_dofadr);
  f(v.body_pos, m.body_pos);
  f(v.body_quat, m.body_quat);
  f(v.body_ipos, m.body_ipos);
  f(v.body_iquat, m.body_iquat);
  f(v.body_mass, m.body_mass);
  f(v.body_gravcomp, m.body_gravcomp);
  f(v.body_inertia, m.body_inertia);
  f(v.jnt_type, m.jnt_type);
  f(v.jnt_qposadr, m.jnt_qposadr);
  f(v.jnt_dofadr, m.jnt_dofadr);
  f(v.jnt_bodyid, m.jnt_bodyid);
  f(v.jnt_pos, m.jnt_pos);
  f(v.jnt_axis, m.jnt_axis);
  f(v.jnt_stiffness, m.jnt_stiffness);
  f(v.jnt_actfrclimited, m.jnt_actfrclimited);
  f(v.jnt_actfrcrange, m.jnt_actfrcrange);
  f(v.dof_bodyid, m.dof_bodyid);
  f(v.dof_parentid, m.dof_parentid);
  f(v.dof_chainadr, x.dof_chainadr);
  f(v.dof_chainnum, x.dof_chainnum);
  f(v.dof_chain, x.dof_chain);
  f(v.cpair_contactadr, x.cpair_contactadr);
  f(v.dof_armature, m.dof_armature);
  f(v.dof_damping, m.dof_damping);
  f(v.qpos0, m.qpos0);
  f(v.qpos_spring, m.qpos_spring);
  f(v.actuator_trntype, m.actuator_trntype);
  f(v.actuator_trnid, m.actuator_trnid);
  f(v.actuator_gear, m.actuator_gear);
  f(v.actuator_gainprm, m.actuator_gainprm);
  f(v.actuator_biastype, m.actuator_biastype);
  f(v.actuator_biasprm, m.actuator_biasprm);
  f(v.actuator_ctrllimited, m.actuator_ctrllimited);
  f(v.actuator_ctrlrange, m.actuator_ctrlrange);
  f(v.actuator_forcelimited, m.actuator_forcelimited);
  f(v.actuator_forcerange, m.actuator_forcerange);
  f(v.tendon_adr, m.tendon_adr);
  f(v.tendon_num, m.tendon_num);
  f(v.tendon_stiffness, m.tendon_stiffness);
  f(v.tendon_damping, m.tendon_damping);
  f(v.tendon_lengthspring, m.tendon_lengthspring);
  f(v.wrap_jntid, m.wrap_jntid);
  f(v.wrap_coef, m.wrap_coef);
  f(v.geom_type, m.geom_type);
  f(v.geom_bodyid, m.geom_bodyid);
  f(v.geom_size, m.geom_size);
  f(v.geom_pos, m.geom_pos);
  f(v.geom_quat, m.geom_quat);
  f(v.geom_rbound, m.geom_rbound);
  f(v.geom_dataid, m.geom_dataid);
  f(v.mesh_vertadr, m.mesh_vertadr);
  f(v.mesh_vertnum, m.mesh_vertnum);
  f(v.mesh_vert, m.mesh_vert);
  f(v.mesh_graphadr, m.mesh_graphadr);
  f(v.mesh_graph, m.mesh_graph);
  f(v.cpair_geom1, m.cpair_geom1);
  f(v.cpair_geom2, m.cpair_geom2);
  f(v.cpair_condim, m.cpair_condim);
  f(v.cpair_friction, m.cpair_friction);
  f(v.cpair_solref, m.cpair_solref);
  f(v.cpair_solimp, m.cpair_solimp);
  f(v.cpair_margin, m.cpair_margin);
  f(v.cpair_gap, m.cpair_gap);
  f(v.body_invweight0, m.body_invweight0);
  f(v.dof_invweight0, m.dof_invweight0);
  f(v.dof_frictionloss, m.dof_frictionloss);
  f(v.dof_solref, m.dof_solref);
  f(v.dof_solimp, m.dof_solimp);
  f(v.jnt_limited, m.jnt_limited);
  f(v.jnt_range, m.jnt_range);
  f(v.jnt_margin, m.jnt_margin);
  f(v.jnt_solref, m.jnt_solref);
  f(v.jnt_solimp, m.jnt_solimp);
  f(v.tendon_limited, m.tendon_limited);
  f(v.tendon_range, m.tendon_range);
  f(v.tendon_margin, m.tendon_margin);
  f(v.tendon_solref_lim, m.tendon_solref_lim);
  f(v.tendon_solimp_lim, m.tendon_solimp_lim);
  f(v.tendon_frictionloss, m.tendon_frictionloss);
  f(v.tendon_solref_fri, m.tendon_solref_fri);
  f(v.tendon_solimp_fri, m.tendon_solimp_fri);
  f(v.tendon_invweight0, m.tendon_invweight0);
  f(v.eq_type, m.eq_type);
  f(v.eq_obj1id, m.eq_obj1id);
  f(v.eq_obj2id, m.eq_obj2id);
  f(v.eq_active, m.eq_active);
  f(v.eq_solref, m.eq_solref);
  f(v.eq_solimp, m.eq_solimp);
  f(v.eq_data, m.eq_data);
}

// The kernels find each kinematic tree as a contiguous run of bodies starting at its root
// (kernels/dynamics/kinematics.hpp tree_com); MJCF's depth-first body numbering guarantees it.
inline void check_trees_contiguous(const Model& m) {
  for (int b = 1; b < m.nbody; ++b) {
    const int r = m.body_rootid[static_cast<std::size_t>(b)];
    const bool ok = r == b ? m.body_parentid[static_cast<std::size_t>(b)] == 0
                           : (r < b && m.body_rootid[static_cast<std::size_t>(b - 1)] == r);
    if (!ok)
      throw std::invalid_argument("model '" + m.name + "': body " + std::to_string(b) +
                                  " breaks the depth-first numbering of its kinematic tree");
  }
}

}  // namespace detail

inline DerivedArrays::DerivedArrays(const Model& m) {
  const std::size_t nv = static_cast<std::size_t>(m.nv);
  dof_chainadr.resize(nv);
  dof_chainnum.resize(nv);
  for (std::size_t i = 0; i < nv; ++i) {
    dof_chainadr[i] = static_cast<int>(dof_chain.size());
    for (int j = static_cast<int>(i); j >= 0; j = m.dof_parentid[static_cast<std::size_t>(j)]) {
      if (j > static_cast<int>(i) || dof_chain.size() - static_cast<std::size_t>(dof_chainadr[i]) > nv)
        throw std::invalid_argument("model '" + m.name + "': dof_parentid is not a forest ordered parent-first");
      dof_chain.push_back(j);
    }
    dof_chainnum[i] = static_cast<int>(dof_chain.size()) - dof_chainadr[i];
  }
  cpair_contactadr.assign(1, 0);
  for (int c = 0; c < m.ncpair; ++c)
    cpair_contactadr.push_back(cpair_contactadr.back() +
                               (static_cast<std::size_t>(c) < m.cpair_maxcon.size() ? m.cpair_maxcon[static_cast<std::size_t>(c)]
                                                                                    : kern::kMaxContactsPerPair));
}

template <class Real>
ModelArrays<Real>::ModelArrays(const Model& m, const ConstraintCapacity& capacity) : model_(&m), derived_(m) {
  detail::check_trees_contiguous(m);
  auto& v = sizes_;
  v.nq = m.nq; v.nv = m.nv; v.nbody = m.nbody; v.njnt = m.njnt; v.nu = m.nu;
  v.ntendon = m.ntendon;
  v.ngeom = m.ngeom;
  v.ncpair = m.ncpair;
  v.ncon_max = capacity.contacts;
  v.nefc_max = capacity.rows;
  v.impratio = static_cast<Real>(m.opt.impratio);
  v.cone = m.opt.cone;
  v.refsafe = m.opt.refsafe_enabled ? 1 : 0;
  v.limit_enabled = m.opt.limit_enabled ? 1 : 0;
  v.frictionloss_enabled = m.opt.frictionloss_enabled ? 1 : 0;
  v.contact_enabled = m.opt.contact_enabled ? 1 : 0;
  v.equality_enabled = m.opt.equality_enabled ? 1 : 0;
  v.neq = m.neq;
  v.timestep = static_cast<Real>(m.opt.timestep);
  v.opt_iterations = m.opt.iterations;
  v.opt_tolerance = static_cast<Real>(m.opt.tolerance);
  v.opt_warmstart = m.opt.warmstart_enabled ? 1 : 0;
  v.stat_meaninertia = static_cast<Real>(m.stat_meaninertia);
  v.implicit_actuator_damping = 0;
  v.rk_integrator = kern::kIntEuler;
  v.rk_rtol = static_cast<Real>(AdaptiveTolerances{}.rtol);
  v.rk_atol = static_cast<Real>(AdaptiveTolerances{}.atol);
  v.rk_max_steps = AdaptiveTolerances{}.max_steps;
  v.rk_event_step = AdaptiveTolerances{}.event_step;
  v.rk_event_gradients = 0;
  v.cfd = 0;
  v.contact_model = kern::kContactSoft;
  v.impulse_kappa = static_cast<Real>(ImpulseContact{}.kappa);
  v.impulse_sweeps = ImpulseContact{}.sweeps;
  v.team_width = 1;  // the CUDA backend sets its warp's width (with_team_width)
  v.dof_damping_any = 0;
  for (double b : m.dof_damping) v.dof_damping_any = v.dof_damping_any || b > 0.0;
  v.gravcomp_any = 0;
  if (m.opt.gravity_enabled &&
      (m.opt.gravity[0] != 0 || m.opt.gravity[1] != 0 || m.opt.gravity[2] != 0))
    for (double g : m.body_gravcomp) v.gravcomp_any = v.gravcomp_any || g != 0.0;
  for (int k = 0; k < 3; ++k)
    v.gravity[k] = m.opt.gravity_enabled ? static_cast<Real>(m.opt.gravity[k]) : Real(0);

  kern::ModelView<Real> scratch = sizes_;
  detail::visit_arrays(scratch, m, derived_, [this](auto& /*field*/, const auto& src) {
    using Elem = typename std::decay_t<decltype(src)>::value_type;
    if constexpr (std::is_same_v<Elem, double>) {
      offsets_.push_back(reals_.size());
      for (double x : src) reals_.push_back(static_cast<Real>(x));
    } else if constexpr (std::is_same_v<Elem, float>) {
      // float data (mesh vertices) travels as its bit patterns in the int block
      offsets_.push_back(ints_.size());
      for (float x : src) ints_.push_back(std::bit_cast<int>(x));
    } else {
      offsets_.push_back(ints_.size());
      for (auto x : src) ints_.push_back(static_cast<int>(x));
    }
  });
  // never hand out an empty buffer: data() of an empty vector may be null
  reals_.push_back(Real(0));
  ints_.push_back(0);
}

template <class Real>
kern::ModelView<Real> ModelArrays<Real>::bind(const Real* real_base, const int* int_base) const {
  kern::ModelView<Real> v = sizes_;
  std::size_t k = 0;
  detail::visit_arrays(v, *model_, derived_, [&](auto& field, const auto& /*src*/) {
    using Ptr = std::decay_t<decltype(field)>;
    if constexpr (std::is_same_v<Ptr, const Real*>)
      field = real_base + offsets_[k++];
    else
      field = int_base + offsets_[k++];
  });
  return v;
}


}  // namespace stiffgrad
