#include "mujoco_bridge.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "core/collision_pairs.hpp"

namespace sgtest {

std::string mujoco_version_problem() {
  if (mj_version() == kMujocoVersion) return "";
  return "the MuJoCo library loaded at run time reports mj_version() = " + std::to_string(mj_version()) +
         "; stiffgrad's parity tests and their bounds are for MuJoCo 2.2.2 (mj_version() = " +
         std::to_string(kMujocoVersion) + ", Debian's libmujoco-dev)";
}

MjModelPtr mujoco_load(const std::string& path, std::string* error) {
  if (const std::string problem = mujoco_version_problem(); !problem.empty()) {
    if (error) *error = problem;
    return nullptr;
  }
  char err[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
  if (!m && error) *error = err;
  return MjModelPtr(m);
}

BothModels load_both_converged(const std::string& xml, stiffgrad::LoadNotes* notes) {
  static int serial = 0;
  const std::string path =
      "/tmp/sg_both_" + std::to_string(getpid()) + "_" + std::to_string(serial++) + ".xml";
  { std::ofstream(path) << xml; }
  BothModels b;
  b.mj = mujoco_load(path, &b.error);
  try {
    b.ours = std::make_shared<stiffgrad::Model>(*stiffgrad::load_mjcf(path, notes));
  } catch (...) {
    std::remove(path.c_str());
    throw;
  }
  std::remove(path.c_str());
  if (b.mj) {
    b.mj->opt.disableflags |= mjDSBL_WARMSTART;
    b.mj->opt.tolerance = 1e-14;
    b.mj->opt.iterations = 200;
  }
  b.ours->opt.tolerance = 1e-14;
  b.ours->opt.iterations = 200;
  return b;
}

void mujoco_disable_constraints(mjModel* m) {
  m->opt.disableflags |= mjDSBL_CONSTRAINT | mjDSBL_CONTACT | mjDSBL_LIMIT |
                         mjDSBL_FRICTIONLOSS | mjDSBL_EQUALITY;
  m->opt.integrator = mjINT_EULER;
}

namespace {
template <class T>
std::vector<double> vd(const T* p, int n) {
  return std::vector<double>(p, p + n);
}
template <class T>
std::vector<int> vi(const T* p, int n) {
  return std::vector<int>(p, p + n);
}

// Options, geoms, pairs, excludes and the constants the constraint pipeline reads, copied
// from mjModel; the candidate pairs are compiled from them by the library's own function.
void copy_constraint_fields(const mjModel* m, stiffgrad::Model& o) {
  auto enabled = [&](int dsbl) { return !(m->opt.disableflags & dsbl); };
  stiffgrad::Options& op = o.opt;
  op.contact_enabled = enabled(mjDSBL_CONTACT);
  op.constraint_enabled = enabled(mjDSBL_CONSTRAINT);
  op.limit_enabled = enabled(mjDSBL_LIMIT);
  op.frictionloss_enabled = enabled(mjDSBL_FRICTIONLOSS);
  op.refsafe_enabled = enabled(mjDSBL_REFSAFE);
  op.warmstart_enabled = enabled(mjDSBL_WARMSTART);
  op.filterparent_enabled = enabled(mjDSBL_FILTERPARENT);
  op.override_enabled = (m->opt.enableflags & mjENBL_OVERRIDE) != 0;
  op.iterations = m->opt.iterations;
  op.tolerance = m->opt.tolerance;
  op.impratio = m->opt.impratio;
  op.cone = m->opt.cone;
  op.collision = m->opt.collision;
  static const char* const kSolver[] = {"PGS", "CG", "Newton"};
  op.solver = kSolver[m->opt.solver];
  op.o_margin = m->opt.o_margin;
  std::copy(m->opt.o_solref, m->opt.o_solref + 2, op.o_solref);
  std::copy(m->opt.o_solimp, m->opt.o_solimp + 5, op.o_solimp);

  o.body_weldid = vi(m->body_weldid, m->nbody);
  o.body_invweight0 = vd(m->body_invweight0, 2 * m->nbody);
  o.jnt_solref = vd(m->jnt_solref, mjNREF * m->njnt);
  o.jnt_solimp = vd(m->jnt_solimp, mjNIMP * m->njnt);
  o.jnt_margin = vd(m->jnt_margin, m->njnt);
  o.dof_solref = vd(m->dof_solref, mjNREF * m->nv);
  o.dof_solimp = vd(m->dof_solimp, mjNIMP * m->nv);
  o.dof_invweight0 = vd(m->dof_invweight0, m->nv);
  o.stat_meaninertia = m->stat.meaninertia;

  o.ngeom = m->ngeom;
  for (int g = 0; g < m->ngeom; ++g) o.geom_type.push_back(static_cast<stiffgrad::GeomType>(m->geom_type[g]));
  o.geom_bodyid = vi(m->geom_bodyid, m->ngeom);
  o.geom_contype = vi(m->geom_contype, m->ngeom);
  o.geom_conaffinity = vi(m->geom_conaffinity, m->ngeom);
  o.geom_condim = vi(m->geom_condim, m->ngeom);
  o.geom_priority = vi(m->geom_priority, m->ngeom);
  o.geom_group = vi(m->geom_group, m->ngeom);
  o.geom_size = vd(m->geom_size, 3 * m->ngeom);
  o.geom_pos = vd(m->geom_pos, 3 * m->ngeom);
  o.geom_quat = vd(m->geom_quat, 4 * m->ngeom);
  o.geom_friction = vd(m->geom_friction, 3 * m->ngeom);
  o.geom_solref = vd(m->geom_solref, mjNREF * m->ngeom);
  o.geom_solimp = vd(m->geom_solimp, mjNIMP * m->ngeom);
  o.geom_margin = vd(m->geom_margin, m->ngeom);
  o.geom_gap = vd(m->geom_gap, m->ngeom);
  o.geom_solmix = vd(m->geom_solmix, m->ngeom);
  o.geom_rbound = vd(m->geom_rbound, m->ngeom);
  o.geom_dataid = vi(m->geom_dataid, m->ngeom);
  o.nmesh = m->nmesh;
  o.mesh_vertadr = vi(m->mesh_vertadr, m->nmesh);
  o.mesh_vertnum = vi(m->mesh_vertnum, m->nmesh);
  o.mesh_vert.assign(m->mesh_vert, m->mesh_vert + 3 * m->nmeshvert);
  o.mesh_graphadr = vi(m->mesh_graphadr, m->nmesh);
  o.mesh_graph = vi(m->mesh_graph, m->nmeshgraph);

  op.equality_enabled = enabled(mjDSBL_EQUALITY);
  o.neq = m->neq;
  o.eq_name.assign(static_cast<std::size_t>(m->neq), "");
  o.eq_type = vi(m->eq_type, m->neq);
  o.eq_obj1id = vi(m->eq_obj1id, m->neq);
  o.eq_obj2id = vi(m->eq_obj2id, m->neq);
  o.eq_active = vi(m->eq_active, m->neq);
  o.eq_objtype.assign(static_cast<std::size_t>(m->neq), 1);
  o.eq_solref = vd(m->eq_solref, mjNREF * m->neq);
  o.eq_solimp = vd(m->eq_solimp, mjNIMP * m->neq);
  o.eq_data = vd(m->eq_data, mjNEQDATA * m->neq);

  // Pairs in mjModel's order (its own sort of equal signatures), excludes from signatures.
  o.npair = m->npair;
  o.pair_geom1 = vi(m->pair_geom1, m->npair);
  o.pair_geom2 = vi(m->pair_geom2, m->npair);
  o.pair_condim = vi(m->pair_dim, m->npair);
  o.pair_friction = vd(m->pair_friction, 5 * m->npair);
  o.pair_solref = vd(m->pair_solref, mjNREF * m->npair);
  o.pair_solimp = vd(m->pair_solimp, mjNIMP * m->npair);
  o.pair_margin = vd(m->pair_margin, m->npair);
  o.pair_gap = vd(m->pair_gap, m->npair);
  o.nexclude = m->nexclude;
  for (int e = 0; e < m->nexclude; ++e) {
    o.exclude_body1.push_back((m->exclude_signature[e] >> 16) - 1);
    o.exclude_body2.push_back((m->exclude_signature[e] & 0xFFFF) - 1);
  }

  o.tendon_margin = vd(m->tendon_margin, m->ntendon);
  o.tendon_solref_lim = vd(m->tendon_solref_lim, mjNREF * m->ntendon);
  o.tendon_solimp_lim = vd(m->tendon_solimp_lim, mjNIMP * m->ntendon);
  o.tendon_frictionloss = vd(m->tendon_frictionloss, m->ntendon);
  o.tendon_solref_fri = vd(m->tendon_solref_fri, mjNREF * m->ntendon);
  o.tendon_solimp_fri = vd(m->tendon_solimp_fri, mjNIMP * m->ntendon);
  o.tendon_invweight0 = vd(m->tendon_invweight0, m->ntendon);

  stiffgrad::compile_collision_pairs(o);
}

}  // namespace

stiffgrad::Model model_from_mujoco(const mjModel* m) {
  stiffgrad::Model o;
  o.nq = m->nq; o.nv = m->nv; o.nbody = m->nbody; o.njnt = m->njnt; o.nu = m->nu;
  o.ntendon = m->ntendon; o.nwrap = m->nwrap;
  o.opt.timestep = m->opt.timestep;
  for (int k = 0; k < 3; ++k) o.opt.gravity[k] = m->opt.gravity[k];
  o.opt.gravity_enabled = !(m->opt.disableflags & mjDSBL_GRAVITY);
  o.body_parentid = vi(m->body_parentid, m->nbody);
  o.body_rootid = vi(m->body_rootid, m->nbody);
  o.body_jntnum = vi(m->body_jntnum, m->nbody);
  o.body_jntadr = vi(m->body_jntadr, m->nbody);
  o.body_dofnum = vi(m->body_dofnum, m->nbody);
  o.body_dofadr = vi(m->body_dofadr, m->nbody);
  o.body_pos = vd(m->body_pos, 3 * m->nbody);
  o.body_quat = vd(m->body_quat, 4 * m->nbody);
  o.body_ipos = vd(m->body_ipos, 3 * m->nbody);
  o.body_iquat = vd(m->body_iquat, 4 * m->nbody);
  o.body_mass = vd(m->body_mass, m->nbody);
  o.body_gravcomp.assign(static_cast<std::size_t>(m->nbody), 0.0);  // MuJoCo 2.2.2 has none
  o.body_inertia = vd(m->body_inertia, 3 * m->nbody);
  for (int j = 0; j < m->njnt; ++j) o.jnt_type.push_back(static_cast<stiffgrad::JointType>(m->jnt_type[j]));
  o.jnt_qposadr = vi(m->jnt_qposadr, m->njnt);
  o.jnt_dofadr = vi(m->jnt_dofadr, m->njnt);
  o.jnt_bodyid = vi(m->jnt_bodyid, m->njnt);
  o.jnt_limited = vi(m->jnt_limited, m->njnt);
  o.jnt_pos = vd(m->jnt_pos, 3 * m->njnt);
  o.jnt_axis = vd(m->jnt_axis, 3 * m->njnt);
  o.jnt_stiffness = vd(m->jnt_stiffness, m->njnt);
  o.jnt_range = vd(m->jnt_range, 2 * m->njnt);
  o.jnt_actfrclimited.assign(m->njnt, 0);
  o.jnt_actfrcrange.assign(2 * m->njnt, 0.0);
  o.dof_bodyid = vi(m->dof_bodyid, m->nv);
  o.dof_jntid = vi(m->dof_jntid, m->nv);
  o.dof_parentid = vi(m->dof_parentid, m->nv);
  o.dof_armature = vd(m->dof_armature, m->nv);
  o.dof_damping = vd(m->dof_damping, m->nv);
  o.dof_frictionloss = vd(m->dof_frictionloss, m->nv);
  o.qpos0 = vd(m->qpos0, m->nq);
  o.qpos_spring = vd(m->qpos_spring, m->nq);
  for (int u = 0; u < m->nu; ++u) {
    o.actuator_trntype.push_back(m->actuator_trntype[u]);
    o.actuator_trnid.push_back(m->actuator_trnid[2 * u]);
    o.actuator_gear.push_back(m->actuator_gear[6 * u]);
    o.actuator_gaintype.push_back(stiffgrad::GainType::Fixed);
    o.actuator_biastype.push_back(static_cast<stiffgrad::BiasType>(m->actuator_biastype[u]));
    for (int k = 0; k < 3; ++k) {
      o.actuator_gainprm.push_back(m->actuator_gainprm[mjNGAIN * u + k]);
      o.actuator_biasprm.push_back(m->actuator_biasprm[mjNBIAS * u + k]);
    }
  }
  o.actuator_ctrllimited = vi(m->actuator_ctrllimited, m->nu);
  o.actuator_ctrlrange = vd(m->actuator_ctrlrange, 2 * m->nu);
  o.actuator_forcelimited = vi(m->actuator_forcelimited, m->nu);
  o.actuator_forcerange = vd(m->actuator_forcerange, 2 * m->nu);
  o.tendon_adr = vi(m->tendon_adr, m->ntendon);
  o.tendon_num = vi(m->tendon_num, m->ntendon);
  o.tendon_stiffness = vd(m->tendon_stiffness, m->ntendon);
  o.tendon_damping = vd(m->tendon_damping, m->ntendon);
  o.tendon_lengthspring = vd(m->tendon_lengthspring, m->ntendon);
  o.tendon_limited = vi(m->tendon_limited, m->ntendon);
  o.tendon_range = vd(m->tendon_range, 2 * m->ntendon);
  o.wrap_jntid = vi(m->wrap_objid, m->nwrap);
  o.wrap_coef = vd(m->wrap_prm, m->nwrap);
  copy_constraint_fields(m, o);
  return o;
}

RandomState random_state(const stiffgrad::Model& m, std::mt19937_64& rng, double vel_scale) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);
  RandomState s;
  s.qpos = m.qpos0;
  for (int j = 0; j < m.njnt; ++j) {
    const int a = m.jnt_qposadr[j];
    switch (m.jnt_type[j]) {
      case stiffgrad::JointType::Free:
        for (int c = 0; c < 3; ++c) s.qpos[a + c] = m.qpos0[a + c] + 0.3 * uni(rng);
        [[fallthrough]];
      case stiffgrad::JointType::Ball: {
        const int qa = m.jnt_type[j] == stiffgrad::JointType::Free ? a + 3 : a;
        double q[4], n = 0;
        for (double& x : q) { x = gauss(rng); n += x * x; }
        n = std::sqrt(n);
        for (int c = 0; c < 4; ++c) s.qpos[qa + c] = q[c] / n;
        break;
      }
      default: {
        const double lo = m.jnt_limited[j] ? m.jnt_range[2 * j] : m.qpos0[a] - 1.0;
        const double hi = m.jnt_limited[j] ? m.jnt_range[2 * j + 1] : m.qpos0[a] + 1.0;
        s.qpos[a] = lo + (hi - lo) * 0.5 * (uni(rng) + 1.0);
      }
    }
  }
  s.qvel.resize(m.nv);
  for (double& v : s.qvel) v = vel_scale * gauss(rng);
  s.ctrl.resize(m.nu);
  for (int u = 0; u < m.nu; ++u) {
    const bool lim = m.actuator_ctrllimited[u];
    const double lo = lim ? m.actuator_ctrlrange[2 * u] : -1.0;
    const double hi = lim ? m.actuator_ctrlrange[2 * u + 1] : 1.0;
    // reach 10% beyond the range so that control clamping is exercised
    const double mid = 0.5 * (lo + hi), half = 0.55 * (hi - lo);
    s.ctrl[u] = mid + half * uni(rng);
  }
  return s;
}

double rel_diff(const double* a, const double* b, int n) {
  double num = 0, den = 1;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return HUGE_VAL;
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

void mujoco_set_state(const mjModel* m, mjData* d, const RandomState& s) {
  mj_resetData(m, d);
  std::copy(s.qpos.begin(), s.qpos.end(), d->qpos);
  std::copy(s.qvel.begin(), s.qvel.end(), d->qvel);
  std::copy(s.ctrl.begin(), s.ctrl.end(), d->ctrl);
}

}  // namespace sgtest
