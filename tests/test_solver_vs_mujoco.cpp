// kernels/constraint/solver.hpp against MuJoCo 2.2.2's Newton solver, on MuJoCo's own constraint rows so
// that only the solve is tested (facts §5, §6). MuJoCo runs cold (warmstart off) with tolerance
// 1e-14 and 200 iterations; states are taken along its own simulation (bodies falling onto and
// resting on a floor, a limited chain with friction loss), so the contact sets are MuJoCo's.
// The optimum is unique, so qacc, qfrc_constraint and efc_force must agree to the solvers'
// tolerance, and efc_state exactly (no row sat on a zone boundary in these states; a mismatch
// is reported with its |jar|·D so that such a case would be recognised).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/base/dual.hpp"
#include "kernels/constraint/solver.hpp"
#include "mujoco_bridge.hpp"
#include "test_support.hpp"

namespace {

namespace kern = stiffgrad::kern;
using sgtest::rel_diff;

constexpr double kTol = 1e-8;  // issue 7: qacc, qfrc_constraint, efc_force relative to max(1, max|.|)
// ‖M qacc − qfrc_smooth − Jᵀf‖∞ of our solution, relative to max(1, ‖qfrc_smooth‖∞): measured
// ≤ 1.4e-12 (elliptic pile; pyramidal ≤ 2e-13), MuJoCo's own ≤ 1e-14
constexpr double kResidualTol = 1e-10;

// One problem in our Data: the ModelView carries only what the solver and DataLayout read.
template <class Real>
struct Problem {
  kern::ModelView<Real> m{};
  sgtest::SerialDofChain chain;
  kern::DataLayout o{};
  std::vector<Real> buf;
  kern::Data<Real, kern::Contiguous> d;

  Problem(int nv, int nefc_max, int iterations, double tolerance, double meaninertia) : chain(nv) {
    m.nv = nv;
    m.nefc_max = nefc_max;
    chain.bind(m);
    m.opt_iterations = iterations;
    m.opt_tolerance = Real(tolerance);
    m.stat_meaninertia = Real(meaninertia);
    o = kern::DataLayout::make(m);
    buf.assign(static_cast<std::size_t>(o.size), Real(0));
    d = kern::Data<Real, kern::Contiguous>::bind(kern::View<Real, kern::Contiguous>{buf.data(), {}}, o);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
};

// Copies MuJoCo's solver inputs (facts §6) into p: qM, qacc_smooth, qfrc_smooth and the rows.
template <class Real>
void copy_inputs(const mjModel* mm, const mjData* md, Problem<Real>& p) {
  const int nv = mm->nv, nefc = md->nefc;
  std::vector<double> M(static_cast<std::size_t>(nv) * nv);
  mj_fullM(mm, M.data(), md->qM);
  auto& d = p.d;
  for (int i = 0; i < nv * nv; ++i) d.qM()[i] = Real(M[i]);
  for (int i = 0; i < nv; ++i) {
    d.qacc_smooth()[i] = Real(md->qacc_smooth[i]);
    d.qfrc_smooth()[i] = Real(md->qfrc_smooth[i]);
  }
  d.nefc()[0] = Real(nefc);
  for (int i = 0; i < nefc; ++i) {
    d.efc_type()[i] = Real(md->efc_type[i]);
    for (int c = 0; c < nv; ++c) d.efc_J()[i * nv + c] = Real(md->efc_J[i * nv + c]);
    d.efc_D()[i] = Real(md->efc_D[i]);
    d.efc_R()[i] = Real(md->efc_R[i]);
    d.efc_aref()[i] = Real(md->efc_aref[i]);
    d.efc_frictionloss()[i] = Real(md->efc_frictionloss[i]);
    if (md->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC) {
      const mjContact& con = md->contact[md->efc_id[i]];
      const int k = i - con.efc_address;
      d.efc_mu()[i] = Real(k == 0 ? con.mu : con.friction[k - 1]);
      d.efc_dim()[i] = Real(con.dim);
    }
  }
}

struct Worst {
  int solves = 0, rows = 0, elliptic_rows = 0, cone_rows = 0;
  double qacc = 0, qfrc = 0, force = 0, residual = 0, mj_residual = 0;
  int state_mismatch = 0;
  double mismatch_jar = 0;  // largest |jar|·D over rows whose state differs
  int iters = 0, iters_max = 0, mj_iters = 0, mj_iters_max = 0;
};

// ‖M qacc − qfrc_smooth − Jᵀ f‖∞ / max(1, ‖qfrc_smooth‖∞): the optimality condition (facts §6).
double residual(const mjModel* mm, const mjData* md, const double* qacc, const double* f) {
  const int nv = mm->nv;
  std::vector<double> M(static_cast<std::size_t>(nv) * nv), r(nv);
  mj_fullM(mm, M.data(), md->qM);
  double scale = 1, worst = 0;
  for (int a = 0; a < nv; ++a) {
    double s = -md->qfrc_smooth[a];
    for (int b = 0; b < nv; ++b) s += M[a * nv + b] * qacc[b];
    for (int i = 0; i < md->nefc; ++i) s -= md->efc_J[i * nv + a] * f[i];
    worst = std::max(worst, std::abs(s));
    scale = std::max(scale, std::abs(md->qfrc_smooth[a]));
  }
  return worst / scale;
}

// Solves MuJoCo's current problem with constraint_solve and folds the differences into w.
void compare_one(const mjModel* mm, const mjData* md, Worst& w) {
  const int nv = mm->nv, nefc = md->nefc;
  Problem<double> p(nv, std::max(1, nefc), mm->opt.iterations, mm->opt.tolerance, mm->stat.meaninertia);
  copy_inputs(mm, md, p);
  kern::constraint_solve(p.m, p.d);
  std::vector<double> qacc(nv), qfrc(nv), force(std::max(1, nefc));
  for (int i = 0; i < nv; ++i) {
    qacc[i] = p.d.qacc()[i];
    qfrc[i] = p.d.qfrc_constraint()[i];
  }
  for (int i = 0; i < nefc; ++i) force[i] = p.d.efc_force()[i];
  w.qacc = std::max(w.qacc, rel_diff(qacc.data(), md->qacc, nv));
  w.qfrc = std::max(w.qfrc, rel_diff(qfrc.data(), md->qfrc_constraint, nv));
  if (nefc > 0) w.force = std::max(w.force, rel_diff(force.data(), md->efc_force, nefc));
  w.residual = std::max(w.residual, residual(mm, md, qacc.data(), force.data()));
  w.mj_residual = std::max(w.mj_residual, residual(mm, md, md->qacc, md->efc_force));
  for (int i = 0; i < nefc; ++i) {
    if (md->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC) ++w.elliptic_rows;
    if (md->efc_state[i] == mjCNSTRSTATE_CONE) ++w.cone_rows;
    if (static_cast<int>(p.d.efc_state()[i]) != md->efc_state[i]) {
      ++w.state_mismatch;
      double jar = -md->efc_aref[i];
      for (int c = 0; c < nv; ++c) jar += md->efc_J[i * nv + c] * md->qacc[c];
      w.mismatch_jar = std::max(w.mismatch_jar, std::abs(jar) * md->efc_D[i]);
    }
  }
  const int it = static_cast<int>(p.d.solver_niter()[0]);
  ++w.solves;
  w.rows += nefc;
  w.iters += it;
  w.iters_max = std::max(w.iters_max, it);
  w.mj_iters += md->solver_iter;
  w.mj_iters_max = std::max(w.mj_iters_max, md->solver_iter);
}

// MuJoCo cold and converged (facts §5 "For parity"), dense Jacobian so that efc_J is nefc x nv.
void parity_options(mjModel* mm) {
  mm->opt.disableflags |= mjDSBL_WARMSTART;
  mm->opt.tolerance = 1e-14;
  mm->opt.iterations = 200;
  mm->opt.jacobian = mjJAC_DENSE;
}

// Steps MuJoCo `steps` times from the current state, comparing every `every` steps (after
// mj_forward, so that every input and output is of the same state).
Worst run_model(mjModel* mm, mjData* md, int steps, int every) {
  Worst w;
  for (int s = 1; s <= steps; ++s) {
    mj_step(mm, md);
    if (s % every) continue;
    mj_forward(mm, md);
    if (md->nefc == 0) continue;
    compare_one(mm, md, w);
  }
  return w;
}

void report_and_check(const std::string& name, const Worst& w) {
  std::printf("[solver] %-28s solves %3d  rows/solve %5.1f (elliptic %d, cone-state %d)  "
              "qacc %.1e  qfrc %.1e  force %.1e  residual %.1e (mujoco %.1e)  state mismatches %d "
              "(max |jar|D %.1e)  iterations mean %.2f max %d (mujoco %.2f max %d)\n",
              name.c_str(), w.solves, w.solves ? double(w.rows) / w.solves : 0.0, w.elliptic_rows,
              w.cone_rows, w.qacc, w.qfrc, w.force, w.residual, w.mj_residual, w.state_mismatch,
              w.mismatch_jar, w.solves ? double(w.iters) / w.solves : 0.0, w.iters_max,
              w.solves ? double(w.mj_iters) / w.solves : 0.0, w.mj_iters_max);
  ASSERT_GT(w.solves, 0) << name << ": no state with constraint rows";
  EXPECT_LE(w.qacc, kTol) << name;
  EXPECT_LE(w.qfrc, kTol) << name;
  EXPECT_LE(w.force, kTol) << name;
  EXPECT_LE(w.residual, kResidualTol) << name;
  EXPECT_EQ(w.state_mismatch, 0) << name;
}

sgtest::MjModelPtr load_or_fail(const std::string& path) {
  std::string err;
  auto mm = sgtest::mujoco_load(path, &err);
  EXPECT_TRUE(mm) << path << ": " << err;
  return mm;
}

sgtest::MjModelPtr load_inline(const std::string& name, const std::string& xml) {
  const std::string path = testing::TempDir() + "/solver_" + name + ".xml";
  std::ofstream(path) << xml;
  return load_or_fail(path);
}

// A pile of free bodies dropped onto a plane, every primitive type, with condims 1, 3, 4, 6
// (the plane has condim 1 so that a contact takes its geom's condim; geom-geom pairs take the
// larger).
std::string pile_xml(const std::string& cone, double impratio) {
  return R"(<mujoco>
  <option timestep="0.002" cone=")" + cone + R"(" impratio=")" + std::to_string(impratio) + R"("/>
  <worldbody>
    <geom type="plane" size="5 5 0.1" condim="1"/>
    <body pos="0 0 0.12"><freejoint/><geom type="box" size="0.2 0.15 0.08" condim="3"/></body>
    <body pos="0.05 0.02 0.4" euler="10 20 30"><freejoint/><geom type="box" size="0.1 0.1 0.1" condim="6"/></body>
    <body pos="-0.3 0.1 0.15"><freejoint/><geom type="sphere" size="0.1" condim="1"/></body>
    <body pos="0.35 -0.1 0.2" euler="0 80 0"><freejoint/><geom type="capsule" size="0.05 0.2" condim="4"/></body>
    <body pos="-0.1 -0.3 0.5" euler="40 10 0"><freejoint/><geom type="capsule" size="0.06 0.15" condim="3"/></body>
    <body pos="0.0 0.05 0.8"><freejoint/><geom type="sphere" size="0.08" condim="6"/></body>
    <body pos="0.3 0.3 0.3" euler="90 0 0"><freejoint/><geom type="cylinder" size="0.07 0.1" condim="4"/></body>
    <body pos="-0.3 0.35 0.3"><freejoint/><geom type="ellipsoid" size="0.12 0.08 0.06" condim="6"/></body>
  </worldbody>
</mujoco>)";
}

// A hinge/hinge/ball/slide chain with joint and fixed-tendon limits and friction loss on every
// dof and on the tendon, falling under gravity onto a floor below it.
std::string chain_xml(const std::string& cone) {
  return R"(<mujoco>
  <option timestep="0.002" cone=")" + cone + R"("/>
  <default><joint limited="true" range="-30 30" frictionloss="0.2" damping="0.05"/></default>
  <worldbody>
    <geom type="plane" size="5 5 0.1" pos="0 0 1.55"/>
    <body pos="0 0 2">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
      <body pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0" range="-20 45"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
        <body pos="0.3 0 0">
          <joint name="j3" type="ball" range="0 40"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
          <body pos="0.3 0 0">
            <joint name="j4" type="slide" axis="1 0 0" range="-0.05 0.05" frictionloss="1"/>
            <geom type="box" size="0.06 0.06 0.06"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t" limited="true" range="-0.3 0.3" frictionloss="0.3">
      <joint joint="j1" coef="1"/><joint joint="j2" coef="-1"/>
    </fixed>
  </tendon>
</mujoco>)";
}

void run_inline(const std::string& name, const std::string& xml, int steps, int every) {
  auto mm = load_inline(name, xml);
  ASSERT_TRUE(mm);
  parity_options(mm.get());
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  report_and_check(name, run_model(mm.get(), md.get(), steps, every));
}

TEST(SolverVsMujoco, PilePyramidal) { run_inline("pile_pyramidal", pile_xml("pyramidal", 1), 400, 20); }
TEST(SolverVsMujoco, PileElliptic) { run_inline("pile_elliptic", pile_xml("elliptic", 1), 400, 20); }
TEST(SolverVsMujoco, PileEllipticImpratio) { run_inline("pile_elliptic_impratio3", pile_xml("elliptic", 3), 400, 20); }
TEST(SolverVsMujoco, PilePyramidalImpratio) { run_inline("pile_pyramidal_impratio3", pile_xml("pyramidal", 3), 400, 20); }
TEST(SolverVsMujoco, LimitedChainFrictionloss) { run_inline("chain_pyramidal", chain_xml("pyramidal"), 600, 20); }
TEST(SolverVsMujoco, LimitedChainElliptic) { run_inline("chain_elliptic", chain_xml("elliptic"), 600, 20); }

// humanoid.xml from qpos0: it falls onto the floor and lies there.
void run_humanoid(const std::string& name, int cone, double impratio) {
  auto mm = load_or_fail(sgtest::humanoid_xml());
  ASSERT_TRUE(mm);
  parity_options(mm.get());
  mm->opt.cone = cone;
  mm->opt.impratio = impratio;
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  report_and_check(name, run_model(mm.get(), md.get(), 600, 25));
}

TEST(SolverVsMujoco, HumanoidPyramidal) { run_humanoid("humanoid_pyramidal", mjCONE_PYRAMIDAL, 1); }
TEST(SolverVsMujoco, HumanoidElliptic) { run_humanoid("humanoid_elliptic_impratio2", mjCONE_ELLIPTIC, 2); }

// The G1 scene at its `home` keyframe under its position servos.
TEST(SolverVsMujoco, G1Home) {
  const std::string path = sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  auto mm = load_or_fail(path);
  ASSERT_TRUE(mm);
  parity_options(mm.get());
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  const int key = mj_name2id(mm.get(), mjOBJ_KEY, "home");
  ASSERT_GE(key, 0);
  mj_resetDataKeyframe(mm.get(), md.get(), key);
  report_and_check("g1_home", run_model(mm.get(), md.get(), 300, 15));
}

// Stop rules (facts §5): `iterations` caps the Newton steps; tolerance 0 disables the
// improvement and gradient exits, and the solve still ends (line search returns 0) at the optimum.
TEST(SolverVsMujoco, IterationsAndToleranceZero) {
  auto mm = load_or_fail(sgtest::humanoid_xml());
  ASSERT_TRUE(mm);
  parity_options(mm.get());
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  for (int s = 0; s < 300; ++s) mj_step(mm.get(), md.get());
  mj_forward(mm.get(), md.get());
  const int nv = mm->nv, nefc = md->nefc;
  ASSERT_GT(nefc, 0);
  ASSERT_GT(md->solver_iter, 1);
  auto solve = [&](int iterations, double tolerance, double* niter) {
    Problem<double> p(nv, nefc, iterations, tolerance, mm->stat.meaninertia);
    copy_inputs(mm.get(), md.get(), p);
    kern::constraint_solve(p.m, p.d);
    *niter = p.d.solver_niter()[0];
    std::vector<double> qacc(nv);
    for (int i = 0; i < nv; ++i) qacc[i] = p.d.qacc()[i];
    return rel_diff(qacc.data(), md->qacc, nv);
  };
  double n1 = 0, n0 = 0;
  const double d1 = solve(1, 1e-14, &n1);
  const double d0 = solve(200, 0.0, &n0);
  std::printf("[solver] humanoid: iterations=1 -> niter %g, qacc diff %.1e; tolerance 0 -> niter %g, "
              "qacc diff %.1e\n", n1, d1, n0, d0);
  EXPECT_EQ(n1, 1.0);
  EXPECT_GT(d1, kTol);  // one step is not converged here (MuJoCo needed more)
  EXPECT_LT(n0, 200.0);
  EXPECT_LE(d0, kTol);
}

// The warm start (facts §5 (1), kernels/constraint/solver.hpp), on states along MuJoCo's own simulation of
// the pile (elliptic) and humanoid.xml, tolerance 1e-14:
//  - started at the converged solution, the solve takes at most two Newton steps (the first
//    moves by rounding only; the tolerance 1e-14 is below what the cost can resolve) and returns
//    that solution (to 1e-10), where the cold solve needed several;
//  - a warm start with a higher cost than qacc_smooth, or one that is not a number, is dropped:
//    the result is bitwise the cold solve's;
//  - the solve leaves its qacc in qacc_warmstart for the next one;
//  - with the default tolerance, started from MuJoCo's own qacc_warmstart (the previous step's
//    solution) it stops within one iteration of MuJoCo's count at MuJoCo's qacc (to 1e-6).
TEST(SolverVsMujoco, WarmStart) {
  for (const std::string name : {"pile_elliptic", "humanoid"}) {
    auto mm = name == "humanoid" ? load_or_fail(sgtest::humanoid_xml()) : load_inline(name, pile_xml("elliptic", 1));
    ASSERT_TRUE(mm);
    const double default_tolerance = mm->opt.tolerance;
    sgtest::MjDataPtr md(mj_makeData(mm.get()));  // MuJoCo as shipped: warm start on
    const int nv = mm->nv;
    int checked = 0, fewer = 0, iteration_gap = 0, max_from_solution = 0;
    double worst_warm = 0, worst_mj = 0;
    for (int s = 1; s <= 400; ++s) {
      mj_step(mm.get(), md.get());
      if (s % 20) continue;
      const std::vector<double> mj_warm(md->qacc_warmstart, md->qacc_warmstart + nv);
      mj_forward(mm.get(), md.get());  // solves from mj_warm, leaves qacc and solver_iter
      const int nefc = md->nefc;
      if (nefc == 0) continue;
      ++checked;
      auto solve = [&](const double* warm, double tolerance, Problem<double>& p) {
        copy_inputs(mm.get(), md.get(), p);
        p.m.opt_warmstart = warm ? 1 : 0;
        p.m.opt_tolerance = tolerance;
        for (int i = 0; i < nv; ++i) p.d.qacc_warmstart()[i] = warm ? warm[i] : 0.0;
        kern::constraint_solve(p.m, p.d);
        std::vector<double> qacc(static_cast<std::size_t>(nv));
        for (int i = 0; i < nv; ++i) qacc[static_cast<std::size_t>(i)] = p.d.qacc()[i];
        return qacc;
      };
      Problem<double> cold(nv, nefc, 200, 1e-14, mm->stat.meaninertia);
      const std::vector<double> a_cold = solve(nullptr, 1e-14, cold);
      const int n_cold = static_cast<int>(cold.d.solver_niter()[0]);
      Problem<double> warm(nv, nefc, 200, 1e-14, mm->stat.meaninertia);
      const std::vector<double> a_warm = solve(a_cold.data(), 1e-14, warm);
      EXPECT_LE(warm.d.solver_niter()[0], 2.0) << name << " step " << s;
      max_from_solution = std::max(max_from_solution, static_cast<int>(warm.d.solver_niter()[0]));
      fewer += warm.d.solver_niter()[0] < n_cold;
      worst_warm = std::max(worst_warm, rel_diff(a_warm.data(), a_cold.data(), nv));
      for (int i = 0; i < nv; ++i) EXPECT_EQ(warm.d.qacc_warmstart()[i], warm.d.qacc()[i]);
      // rejected warm starts: far worse than qacc_smooth, and NaN
      std::vector<double> bad(static_cast<std::size_t>(nv)), nan(static_cast<std::size_t>(nv), std::nan(""));
      for (int i = 0; i < nv; ++i) bad[static_cast<std::size_t>(i)] = md->qacc_smooth[i] + 1e6;
      for (const std::vector<double>* w : {&bad, &nan}) {
        Problem<double> p(nv, nefc, 200, 1e-14, mm->stat.meaninertia);
        const std::vector<double> a = solve(w->data(), 1e-14, p);
        EXPECT_TRUE(a == a_cold) << name << " step " << s << ": a dropped warm start must give the cold solve";
      }
      // MuJoCo's own warm start at MuJoCo's tolerance
      Problem<double> as_mj(nv, nefc, mm->opt.iterations, default_tolerance, mm->stat.meaninertia);
      const std::vector<double> a_mj = solve(mj_warm.data(), default_tolerance, as_mj);
      worst_mj = std::max(worst_mj, rel_diff(a_mj.data(), md->qacc, nv));
      iteration_gap = std::max(
          iteration_gap, std::abs(static_cast<int>(as_mj.d.solver_niter()[0]) - md->solver_iter));
    }
    std::printf("[solver] warm start %-14s %d states: from the solution %.1e in <= %d iterations (fewer than cold "
                "in %d); from MuJoCo's warm start at tolerance %g: qacc %.1e, iterations within %d of MuJoCo's\n",
                name.c_str(), checked, worst_warm, max_from_solution, fewer, default_tolerance, worst_mj, iteration_gap);
    ASSERT_GT(checked, 5) << name;
    EXPECT_LE(worst_warm, 1e-10) << name;
    EXPECT_GT(fewer, 0) << name;
    EXPECT_LE(worst_mj, 1e-6) << name;
    EXPECT_LE(iteration_gap, 1) << name;
  }
}

// The solver instantiated with Dual<double> (the dual-number path runs the same Newton code):
// the value part is bitwise the double solve's, and the tangent of qacc along a perturbation of
// qfrc_smooth and aref matches a central difference of the double solve (the Newton iterates'
// tangents converge with the iterates: at g = 0 the Newton map's derivative is exact when H is
// the true Hessian on the final active set, cone Hessians included). `min_cone_rows`: step
// MuJoCo until that many rows are in the cone (middle) zone, so that the cone Hessian is tested.
void dual_tangent_check(const std::string& name, const std::string& xml, int min_cone_rows) {
  using D = kern::Dual<double>;
  auto mm = load_inline(name, xml);
  ASSERT_TRUE(mm);
  parity_options(mm.get());
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  int cone_rows = 0;
  for (int s = 0; s < 400; ++s) {
    mj_step(mm.get(), md.get());
    if (s < 150) continue;
    mj_forward(mm.get(), md.get());
    cone_rows = 0;
    for (int i = 0; i < md->nefc; ++i) cone_rows += md->efc_state[i] == mjCNSTRSTATE_CONE;
    if (cone_rows >= min_cone_rows) break;
  }
  const int nv = mm->nv, nefc = md->nefc;
  ASSERT_GT(nefc, 0);
  ASSERT_GE(cone_rows, min_cone_rows);

  const double tol = mm->opt.tolerance, mi = mm->stat.meaninertia;
  Problem<D> pd(nv, nefc, mm->opt.iterations, tol, mi);
  copy_inputs(mm.get(), md.get(), pd);
  // direction: qfrc_smooth += e·u (and qacc_smooth += e·M⁻¹u: the problem's a_s), aref += e·z
  std::vector<double> u(nv), z(nefc), Minv_u(nv);
  for (int i = 0; i < nv; ++i) u[i] = std::sin(1.0 + i);
  for (int i = 0; i < nefc; ++i) z[i] = std::cos(0.5 + i);
  mj_solveM(mm.get(), md.get(), Minv_u.data(), u.data(), 1);
  for (int i = 0; i < nv; ++i) {
    pd.d.qfrc_smooth()[i].d[0] = u[i];
    pd.d.qacc_smooth()[i].d[0] = Minv_u[i];
  }
  for (int i = 0; i < nefc; ++i) pd.d.efc_aref()[i].d[0] = z[i];
  kern::constraint_solve(pd.m, pd.d);

  auto solve_double = [&](double e, std::vector<double>& qacc) {
    Problem<double> p(nv, nefc, mm->opt.iterations, tol, mi);
    copy_inputs(mm.get(), md.get(), p);
    for (int i = 0; i < nv; ++i) {
      p.d.qfrc_smooth()[i] += e * u[i];
      p.d.qacc_smooth()[i] += e * Minv_u[i];
    }
    for (int i = 0; i < nefc; ++i) p.d.efc_aref()[i] += e * z[i];
    kern::constraint_solve(p.m, p.d);
    qacc.resize(nv);
    for (int i = 0; i < nv; ++i) qacc[i] = p.d.qacc()[i];
  };
  std::vector<double> q0, qp, qm;
  solve_double(0, q0);
  const double h = 1e-6;
  solve_double(h, qp);
  solve_double(-h, qm);
  double value_diff = 0, tan_err = 0, tan_scale = 0;
  for (int i = 0; i < nv; ++i) {
    value_diff = std::max(value_diff, std::abs(pd.d.qacc()[i].v - q0[i]));
    const double fd = (qp[i] - qm[i]) / (2 * h);
    tan_err = std::max(tan_err, std::abs(pd.d.qacc()[i].d[0] - fd));
    tan_scale = std::max(tan_scale, std::abs(fd));
  }
  std::printf("[solver] dual %-22s rows %d (cone zone %d), value diff %.1e, tangent vs central "
              "difference %.1e (scale %.1e)\n", name.c_str(), nefc, cone_rows, value_diff, tan_err, tan_scale);
  EXPECT_EQ(value_diff, 0.0);
  EXPECT_GT(tan_scale, 0.0);
  // measured ≤ 2e-10 relative: the central difference's own error at h = 1e-6
  EXPECT_LE(tan_err, 1e-6 * std::max(1.0, tan_scale));

  // The adjoint's helper: at the solution (a held fixed, so the dual part of g is ∂g/∂θ), H from
  // newton_hessian_at_solution is the Jacobian of g = 0, so H ȧ + ∂g/∂θ = 0 for the tangent ȧ.
  std::vector<double> adot(nv);
  for (int i = 0; i < nv; ++i) {
    adot[i] = pd.d.qacc()[i].d[0];
    pd.d.qacc()[i].d[0] = 0;
  }
  const auto w = kern::newton_hessian_at_solution(pd.m, pd.d);
  double res = 0, res_scale = 1;
  for (int r = 0; r < nv; ++r) {
    double s = w.grad[r].d[0];
    for (int c = 0; c < nv; ++c) s += (c <= r ? w.H[r * nv + c].v : w.H[c * nv + r].v) * adot[c];
    res = std::max(res, std::abs(s));
    res_scale = std::max(res_scale, std::abs(w.grad[r].d[0]));
  }
  std::printf("[solver] dual %-22s |H adot + dg/dtheta| %.1e (scale %.1e)\n", name.c_str(), res, res_scale);
  EXPECT_LE(res, 1e-9 * res_scale);  // measured ≤ 3e-13 relative
}

TEST(SolverVsMujoco, DualTangentBottomZone) { dual_tangent_check("dual_pile", pile_xml("elliptic", 2), 0); }
TEST(SolverVsMujoco, DualTangentConeZone) { dual_tangent_check("dual_pile_cone", pile_xml("elliptic", 3), 1); }

}  // namespace
