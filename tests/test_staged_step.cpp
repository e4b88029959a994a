// The staged control step (kernels/step/staged_step.hpp, core/staged_schedule.hpp) that the CUDA
// backend launches as one kernel per stage: no GPU is needed to check its logic. The host runs
// the same stages in the same order (run_staged_control_step) over the device's layout (every
// Data and the pair slots interleaved across environments, kern::Strided{nenv}), item by item as
// the kernels' threads would, and must equal the CPU backend's fused step bit for bit: state,
// warm start, status and contact statistics after every control step, in double and float, with
// soft constraints and with the Impulse model (whose solve stages run a team: here one that
// takes the items in a warp's lanes' order, last lane first).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "all_routines_scene.hpp"
#include "core/model_arrays.hpp"
#include "core/staged_schedule.hpp"
#include "kernels/step/staged_step.hpp"
#include "staged_host_step.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

struct Reference {
  std::vector<double> q, v, w, stats;
  std::vector<int> status;
};

// Returns the contacts each routine found over the run. With a team width W > 1 (the CUDA
// backend's 32: ModelView::team_width) the stages are compared bit for bit with the fused step
// run here over the same view (what the one-thread functions compute at the device's summation
// order), and that
// with the CPU backend's (W = 1): the widths differ in the solves' summation order only,
// so after the first control step the states agree to rounding (`width_tol` relative to the
// state's scale). Later steps amplify that as the dynamics do (measured: the all-routines scene's
// tumbling boxes reach 4e-5 after 12 steps in double): printed, and bounded by 1e-2 only to catch
// a blow-up.
// `integrator`, `adaptive`: the Runge–Kutta methods' staged substep (a controller per
// environment between evaluations of the dynamics, each a round of stages).
template <class Real>
std::vector<long> check_staged(
    const std::shared_ptr<const Model>& model, const std::string& name, int nenv, int T, int S,
    ContactModel contact_model = ContactModel::Soft, int width = 1, double width_tol = 0,
    Integrator integrator = Integrator::SemiImplicitEuler,
    const AdaptiveTolerances& adaptive = AdaptiveTolerances{}, bool constraints = true,
    std::vector<long>* evaluations_out = nullptr, int* status_bits_out = nullptr) {
  const Model& M = *model;
  SimulatorOptions opt;
  opt.constraints = constraints;
  opt.integrator = integrator;
  opt.adaptive = adaptive;
  opt.contact_model = contact_model;
  opt.nenv = nenv;
  opt.substeps = S;
  opt.threads = 2;
  opt.precision = std::is_same_v<Real, float> ? Precision::Float : Precision::Double;
  Simulator sim(model, opt);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n01;
  std::vector<double> q(nenv * M.nq), v(nenv * M.nv), u(T * nenv * M.nu + 1);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) q[e * M.nq + i] = M.qpos0[i];
    for (int j = 0; j < M.njnt; ++j)
      if (M.jnt_type[j] == JointType::Hinge) q[e * M.nq + M.jnt_qposadr[j]] += 0.2 * n01(rng);
  }
  for (double& x : v) x = 0.3 * n01(rng);
  for (double& x : u) x = 0.3 * n01(rng);
  sim.set_state(q.data(), v.data());

  // the CPU backend's fused steps
  std::vector<Reference> ref(T);
  for (int t = 0; t < T; ++t) {
    sim.set_ctrl(u.data() + t * nenv * M.nu);
    sim.step();
    Reference& r = ref[t];
    r.q.resize(nenv * M.nq);
    r.v.resize(nenv * M.nv);
    r.w.resize(nenv * M.nv);
    sim.get_state(r.q.data(), r.v.data());
    sim.get_warmstart(r.w.data());
    r.stats = sim.contact_stats();
    r.status = sim.status();
  }

  // the staged stages over the device's layout (the Impulse model steps a copy with wider margins)
  const std::unique_ptr<Model> impulse_model = impulse_model_for(M, opt.contact_model, opt.impulse);
  const ModelArrays<Real> arrays(impulse_model ? *impulse_model : M, sim.capacity());
  const kern::ModelView<Real> m = with_team_width(simulation_view(arrays.host_view(), opt), width);
  const kern::DataLayout layout = kern::DataLayout::make(m);
  const PairGroups groups = make_pair_groups(M);
  EXPECT_EQ(static_cast<int>(groups.pairs.size()), M.ncpair);
  using V = kern::View<Real, kern::Strided>;
  const kern::Strided s{nenv};
  std::vector<Real> qpos(M.nq * nenv), qvel(M.nv * nenv), ctrl(M.nu * nenv + 1),
      warm(M.nv * nenv, Real(0)), stats(kern::kContactStats * nenv),
      workspace(static_cast<std::size_t>(layout.size) * nenv);
  std::vector<int> status(nenv, 0);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) qpos[i * nenv + e] = static_cast<Real>(q[e * M.nq + i]);
    for (int i = 0; i < M.nv; ++i) qvel[i * nenv + e] = static_cast<Real>(v[e * M.nv + i]);
  }
  // the stages as the CUDA backend's StagedStep launches them (sgtest::HostStagedStep)
  sgtest::HostStagedStep<Real> staged(impulse_model ? *impulse_model : M, m, layout, nenv,
                                      workspace.data());
  const auto data = [&](int e) { return staged.data(e); };
  const auto at = [&](std::vector<Real>& a, int e) { return V{a.data() + e, s}; };
  // width > 1: the fused step over the same view, at the CUDA backend's summation order
  std::vector<Real> qposF = qpos, qvelF = qvel, warmF = warm, statsF = stats, workspaceF = workspace;
  std::vector<int> statusF(nenv, 0);
  const auto dataF = [&](int e) { return kern::Data<Real, kern::Strided>::bind(V{workspaceF.data() + e, s}, layout); };
  double width_gap = 0, first_step_gap = 0;
  int contacts = 0;
  std::vector<double> evaluations(nenv, 0.0);  // the fused controller's count (statistics)
  for (int t = 0; t < T; ++t) {
    for (int e = 0; e < nenv; ++e)
      for (int i = 0; i < M.nu; ++i) ctrl[i * nenv + e] = static_cast<Real>(u[(t * nenv + e) * M.nu + i]);
    staged.step(qpos.data(), qvel.data(), ctrl.data(), warm.data(), stats.data(), status.data(),
                nullptr, S);
    Reference fused;
    if (width > 1) {
      fused = ref[t];
      for (int e = 0; e < nenv; ++e) {
        kern::control_step_env(m, at(qposF, e), at(qvelF, e), at(ctrl, e), at(warmF, e), dataF(e), S, &statusF[e],
                               at(statsF, e));
        fused.status[e] = statusF[e];
        double scale = 1, gap = 0;
        for (int i = 0; i < M.nq; ++i) {
          fused.q[e * M.nq + i] = static_cast<double>(qposF[i * nenv + e]);
          scale = std::max(scale, std::abs(ref[t].q[e * M.nq + i]));
          gap = std::max(gap, std::abs(fused.q[e * M.nq + i] - ref[t].q[e * M.nq + i]));
        }
        for (int i = 0; i < M.nv; ++i) {
          fused.v[e * M.nv + i] = static_cast<double>(qvelF[i * nenv + e]);
          fused.w[e * M.nv + i] = static_cast<double>(warmF[i * nenv + e]);
          scale = std::max(scale, std::abs(ref[t].v[e * M.nv + i]));
          gap = std::max(gap, std::abs(fused.v[e * M.nv + i] - ref[t].v[e * M.nv + i]));
        }
        for (int i = 0; i < kern::kContactStats; ++i)
          fused.stats[e * kern::kContactStats + i] = static_cast<double>(statsF[i * nenv + e]);
        EXPECT_EQ(statusF[e], ref[t].status[e]) << name << " width " << width << " step " << t << " env " << e;
        width_gap = std::max(width_gap, gap / scale);
        if (t == 0) first_step_gap = std::max(first_step_gap, gap / scale);
      }
    }
    const Reference& r = width > 1 ? fused : ref[t];
    for (int e = 0; e < nenv; ++e) {
      contacts += static_cast<int>(data(e).ncon()[0]);
      evaluations[e] += r.stats[e * kern::kContactStats + kern::kStatDynamicsEvals];
      EXPECT_EQ(status[e], r.status[e]) << name << " step " << t << " env " << e;
      for (int i = 0; i < M.nq; ++i)
        EXPECT_EQ(static_cast<double>(qpos[i * nenv + e]), r.q[e * M.nq + i]) << name << " qpos " << i << " step " << t;
      for (int i = 0; i < M.nv; ++i) {
        EXPECT_EQ(static_cast<double>(qvel[i * nenv + e]), r.v[e * M.nv + i]) << name << " qvel " << i << " step " << t;
        EXPECT_EQ(static_cast<double>(warm[i * nenv + e]), r.w[e * M.nv + i]) << name << " warm " << i << " step " << t;
      }
      for (int i = 0; i < kern::kContactStats; ++i)
        EXPECT_EQ(static_cast<double>(stats[i * nenv + e]), r.stats[e * kern::kContactStats + i])
            << name << " stat " << i << " step " << t;
    }
  }
  // the comparison must have seen contacts (with constraints), and one launch per routine present
  // per evaluation of the dynamics (one per substep but for the Runge–Kutta methods)
  if (m.nefc_max > 0) EXPECT_GT(contacts, 0) << name;
  int routines = 0;
  for (int r = 0; r < kern::kPairRoutines; ++r) routines += groups.count(r) > 0;
  const int rounds = std::max(staged.plan().rk_evaluations, 1);
  EXPECT_EQ(staged.narrow_calls, staged.plan().contacts ? routines * S * T * rounds : 0) << name;
  if (staged.plan().rk_evaluations > 0) {
    // every substep's controllers ended within the launched evaluations, and each environment
    // ran exactly the evaluations its fused controller counted
    EXPECT_EQ(staged.unfinished_substeps, 0) << name;
    for (int e = 0; e < nenv; ++e) {
      EXPECT_EQ(static_cast<double>(staged.evaluations[e]), evaluations[e]) << name << " env " << e;
      EXPECT_GT(staged.evaluations[e], 0) << name << " env " << e;
    }
    if (evaluations_out) *evaluations_out = staged.evaluations;
  }
  if (status_bits_out)
    for (int e = 0; e < nenv; ++e) *status_bits_out |= status[e];
  EXPECT_EQ(staged.impulse_calls, contact_model == ContactModel::Impulse ? S * T : 0) << name;
  if (width > 1) {
    std::printf("[staged] %s, team width %d: fused = staged bit for bit; against width 1 (the CPU backend) the "
                "state differs by %.1e of its scale after the first step, %.1e after %d\n", name.c_str(), width,
                first_step_gap, width_gap, T);
    EXPECT_LT(first_step_gap, width_tol) << name;
    EXPECT_LT(width_gap, 1e-2) << name;
  }
  return staged.found;
}

TEST(StagedStep, EveryRoutineEqualsFusedStepBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  // every routine but plane-plane has a pair in this scene
  const PairGroups g = make_pair_groups(*model);
  for (int r = kern::kRoutinePlaneSphere; r < kern::kPairRoutines; ++r)
    EXPECT_GT(g.count(r), 0) << "routine " << r << " has no pair in the test scene";
  for (const auto& found : {check_staged<double>(model, "all routines", 4, 12, 3),
                            check_staged<float>(model, "all routines (float)", 4, 12, 3)})
    for (int r = kern::kRoutinePlaneSphere; r < kern::kPairRoutines; ++r)
      EXPECT_GT(found[r], 0) << "routine " << r << " found no contact in the test scene";
}

TEST(StagedStep, RobotsEqualFusedStepBitwise) {
  for (const std::string& path : {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml",
                                  sgtest::data_dir() + "/models/brax/ant.xml"}) {
    const auto model = load_mjcf(path);
    check_staged<double>(model, path, 5, 8, 4);
    check_staged<float>(model, path + " (float)", 5, 8, 4);
  }
}

// The Newton solve of soft contact by a team (the warp per environment of the CUDA backend):
// its rows, dofs and H's rows across the lanes, its sums in the order of width 32. Against the
// CPU backend's width 1 after the first step (measured 2026-12-07): 6.6e-14 (double) and 7.2e-6
// (float) of the state's scale at most: the Newton solve stops at its tolerance, so a last-bit
// change of its sums can move the result by more than one rounding.
TEST(StagedStep, SoftTeamSolveEqualsFusedStepBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  check_staged<double>(model, "all routines (team)", 4, 12, 3, ContactModel::Soft, 32, 1e-12);
  for (const std::string& path : {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"}) {
    const auto robot = load_mjcf(path);
    check_staged<double>(robot, path + " (team)", 3, 6, 2, ContactModel::Soft, 32, 1e-12);
    check_staged<float>(robot, path + " (team, float)", 3, 6, 2, ContactModel::Soft, 32, 5e-5);
  }
}

// The Impulse model's stages (smooth, narrow, rows, the Delassus assembly and solve by a team,
// finish), with the CPU's team width 1 and the CUDA backend's 32.
TEST(StagedStep, ImpulseEqualsFusedStepBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  check_staged<double>(model, "all routines (impulse)", 4, 12, 3, ContactModel::Impulse);
  check_staged<float>(model, "all routines (impulse, float)", 4, 12, 3, ContactModel::Impulse);
  check_staged<double>(model, "all routines (impulse)", 4, 12, 3, ContactModel::Impulse, 32, 1e-13);
  for (const std::string& path : {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"}) {
    const auto robot = load_mjcf(path);
    check_staged<double>(robot, path + " (impulse)", 3, 6, 2, ContactModel::Impulse);
    check_staged<float>(robot, path + " (impulse, float)", 3, 6, 2, ContactModel::Impulse);
    check_staged<double>(robot, path + " (impulse)", 3, 6, 2, ContactModel::Impulse, 32, 1e-13);
    check_staged<float>(robot, path + " (impulse, float)", 3, 6, 2, ContactModel::Impulse, 32, 1e-5);
  }
}

// The Runge–Kutta methods with soft contact: RK4's four evaluations per substep, and the adaptive
// methods' controller resumed between evaluations, each environment taking its own trial steps
// (the rounds past an environment's last evaluation skip it). Tight tolerances and a low cap make
// the controller reject trials and hit the cap (kEnvStepCap) in some environments; event location
// (event_step) halves trials across contact events.
TEST(StagedStep, RungeKuttaEqualsFusedStepBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  for (const Integrator integrator :
       {Integrator::RK4, Integrator::Tsit5, Integrator::Dopri5, Integrator::Bosh3}) {
    const std::string name = std::string("all routines, ") + integrator_name(integrator);
    std::vector<long> evaluations;
    check_staged<double>(model, name, 4, 6, 2, ContactModel::Soft, 1, 0, integrator,
                         AdaptiveTolerances{}, true, &evaluations);
    check_staged<float>(model, name + " (float)", 4, 6, 2, ContactModel::Soft, 1, 0, integrator);
    // Against the CPU's width 1: RK4 to rounding (the Newton solves' sums); an adaptive method's
    // controller may take other steps for a last-bit change of its error norm, and the two runs
    // then differ by up to their error tolerances (each accepted step's local error is at most
    // rtol of the state's scale, so 2 rtol between two runs): one control step, bounded by
    // 2 rtol (measured 2026-12-08: 1.8e-6 tsit5, 4.6e-7 dopri5; RK4 below 1e-9).
    if (integrator == Integrator::RK4)
      check_staged<double>(model, name + " (team)", 4, 4, 2, ContactModel::Soft, 32, 1e-9,
                           integrator);
    else
      check_staged<double>(model, name + " (team)", 4, 1, 2, ContactModel::Soft, 32,
                           2 * AdaptiveTolerances{}.rtol, integrator);
    if (integrator != Integrator::RK4) {
      // the environments took different numbers of evaluations: the masking was exercised
      EXPECT_NE(*std::min_element(evaluations.begin(), evaluations.end()),
                *std::max_element(evaluations.begin(), evaluations.end()))
          << name;
    }
  }
  AdaptiveTolerances tight;
  tight.rtol = 1e-7;
  tight.atol = 1e-9;
  tight.max_steps = 5;
  int bits = 0;
  check_staged<double>(model, "all routines, tsit5 at the cap", 4, 6, 2, ContactModel::Soft, 1, 0,
                       Integrator::Tsit5, tight, true, nullptr, &bits);
  EXPECT_NE(bits & kern::kEnvStepCap, 0) << "no environment reached the trial-step cap";
  AdaptiveTolerances events;
  events.event_step = 1e-4;
  check_staged<double>(model, "all routines, tsit5 with event location", 4, 6, 2,
                       ContactModel::Soft, 1, 0, Integrator::Tsit5, events);
  for (const std::string& path :
       {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"}) {
    const auto robot = load_mjcf(path);
    check_staged<double>(robot, path + " (tsit5)", 3, 3, 2, ContactModel::Soft, 1, 0,
                         Integrator::Tsit5);
    // (measured: the G1 in float 8.2e-4, within 2 rtol as above)
    check_staged<float>(robot, path + " (tsit5, float, team)", 3, 1, 2, ContactModel::Soft, 32,
                        2 * AdaptiveTolerances{}.rtol, Integrator::Tsit5);
    check_staged<double>(robot, path + " (rk4, team)", 3, 3, 2, ContactModel::Soft, 32, 1e-9,
                         Integrator::RK4);
  }
}

// Without constraints a substep has no narrow, rows or solve stage: the Euler family's smooth and
// finish stages, or the Runge–Kutta evaluations' smooth and finish stages.
TEST(StagedStep, WithoutConstraintsEqualsFusedStepBitwise) {
  const auto model = load_mjcf(sgtest::humanoid_xml());
  for (const Integrator integrator :
       {Integrator::SemiImplicitEuler, Integrator::ImplicitDampingEuler, Integrator::RK4,
        Integrator::Tsit5}) {
    const std::string name =
        std::string("humanoid without constraints, ") + integrator_name(integrator);
    check_staged<double>(model, name, 3, 5, 2, ContactModel::Soft, 1, 0, integrator,
                         AdaptiveTolerances{}, false);
    check_staged<float>(model, name + " (float)", 3, 5, 2, ContactModel::Soft, 1, 0, integrator,
                        AdaptiveTolerances{}, false);
  }
}

TEST(StagedStep, PairGroupsKeepPairOrderWithinARoutine) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  const PairGroups g = make_pair_groups(*model);
  std::vector<int> seen(model->ncpair, 0);
  for (int r = 0; r < kern::kPairRoutines; ++r)
    for (int k = g.begin[r]; k < g.begin[r + 1]; ++k) {
      const int c = g.pairs[k];
      ++seen[c];
      if (k > g.begin[r]) EXPECT_LT(g.pairs[k - 1], c);
      const int t1 = static_cast<int>(model->geom_type[model->cpair_geom1[c]]);
      const int t2 = static_cast<int>(model->geom_type[model->cpair_geom2[c]]);
      EXPECT_EQ(kern::pair_routine(t1, t2), r);
    }
  for (int c = 0; c < model->ncpair; ++c) EXPECT_EQ(seen[c], 1) << "pair " << c;
}

}  // namespace
