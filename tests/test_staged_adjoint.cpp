// The staged adjoint (kernels/step/staged_adjoint.hpp, core/staged_schedule.hpp
// run_staged_adjoint_step) that the CUDA backend launches as one kernel per stage: a replay into
// a tape of S Data per environment through the staged step's stages, then the adjoint substeps
// in stages, none recomputing its primal. The host runs the stages in the schedule's order over
// the device's layout (everything interleaved across environments, kern::Strided{nenv}), item by
// item as the kernels' threads would, and must equal the fused adjoint (adj_control_step_env,
// which the CPU backend and the fused CUDA kernel run) bit for bit: the state and control
// adjoints after every control step and the replay check, in double and float, at the CPU's team
// width 1 and the CUDA backend's 32 (the solve's team taking its items as a warp's lanes would),
// with soft constraints and with the Impulse model, and with contacts from distance (the adjoint
// of a second contact model, whose primal the gradient-model stages put in each slot).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "all_routines_scene.hpp"
#include "core/model_arrays.hpp"
#include "core/staged_schedule.hpp"
#include "kernels/step/staged_adjoint.hpp"
#include "staged_host_adjoint.hpp"
#include "stiffgrad/contacts_from_distance.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

template <class Real>
void check_staged_adjoint(const std::shared_ptr<const Model>& model, const std::string& name,
                          int nenv, int T, int S, int width,
                          ContactModel contact_model = ContactModel::Soft, bool cfd = false,
                          Integrator integrator = Integrator::SemiImplicitEuler,
                          const AdaptiveTolerances& adaptive = AdaptiveTolerances{},
                          bool constraints = true) {
  const Model& M = *model;
  SimulatorOptions opt;
  opt.integrator = integrator;
  opt.adaptive = adaptive;
  opt.constraints = constraints;
  opt.contact_model = contact_model;
  opt.nenv = nenv;
  opt.substeps = S;
  opt.threads = 1;
  opt.precision = std::is_same_v<Real, float> ? Precision::Float : Precision::Double;
  Simulator sim(model, opt);
  // the Impulse model steps a copy with wider margins
  const std::unique_ptr<Model> impulse_model = impulse_model_for(M, opt.contact_model, opt.impulse);
  const ModelArrays<Real> arrays(impulse_model ? *impulse_model : M, sim.capacity());
  const kern::ModelView<Real> m = with_team_width(simulation_view(arrays.host_view(), opt), width);
  // the model the adjoint differentiates: m, or with contacts from distance (DiffMJX's parameters)
  // the second contact model, as the backends build it
  if (cfd) opt.cfd = parse_contacts_from_distance("0,0.01,0.05,1,2");
  const std::unique_ptr<Model> cfd_model =
      cfd ? std::make_unique<Model>(contacts_from_distance_model(M, opt.cfd)) : nullptr;
  const std::unique_ptr<ModelArrays<Real>> cfd_arrays =
      cfd ? std::make_unique<ModelArrays<Real>>(*cfd_model, sim.capacity()) : nullptr;
  const kern::ModelView<Real> mg =
      cfd ? with_team_width(gradient_view(cfd_arrays->host_view(), opt), width) : m;
  ASSERT_TRUE(kern::staged_adjoint_applies(m, mg)) << name;
  const bool impulse = kern::staged_step_is_impulse(m);
  ASSERT_EQ(impulse, contact_model == ContactModel::Impulse) << name;
  const kern::DataLayout layout = kern::DataLayout::make(m);
  const PairGroups groups = make_pair_groups(M);
  using V = kern::View<Real, kern::Strided>;
  using D = kern::Data<Real, kern::Strided>;
  const kern::Strided str{nenv};
  const std::size_t n = static_cast<std::size_t>(nenv), size = static_cast<std::size_t>(layout.size);
  const int nq = M.nq, nv = M.nv, nu = M.nu;

  // the forward rollout's checkpoints (the fused step over the same view, as on the device)
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  std::vector<Real> q((T + 1) * nq * n), v((T + 1) * nv * n), w((T + 1) * nv * n, Real(0)), u(T * nu * n + 1);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < nq; ++i) q[i * n + e] = static_cast<Real>(M.qpos0[i]);
    for (int j = 0; j < M.njnt; ++j)
      if (M.jnt_type[j] == JointType::Hinge) q[M.jnt_qposadr[j] * n + e] += static_cast<Real>(0.2 * n01(rng));
    for (int i = 0; i < nv; ++i) v[i * n + e] = static_cast<Real>(0.3 * n01(rng));
  }
  for (Real& x : u) x = static_cast<Real>(0.3 * n01(rng));
  std::vector<Real> fwd(size * n);
  std::vector<int> status(n, 0);
  int contacts = 0;
  for (int t = 0; t < T; ++t) {
    std::copy_n(q.begin() + t * nq * n, nq * n, q.begin() + (t + 1) * nq * n);
    std::copy_n(v.begin() + t * nv * n, nv * n, v.begin() + (t + 1) * nv * n);
    std::copy_n(w.begin() + t * nv * n, nv * n, w.begin() + (t + 1) * nv * n);
    for (int e = 0; e < nenv; ++e) {
      const D d = D::bind(V{fwd.data() + e, str}, layout);
      kern::control_step_env(m, V{q.data() + (t + 1) * nq * n + e, str}, V{v.data() + (t + 1) * nv * n + e, str},
                             V{u.data() + t * nu * n + e, str}, V{w.data() + (t + 1) * nv * n + e, str}, d, S,
                             &status[e]);
      contacts += static_cast<int>(d.ncon()[0]);
    }
  }
  for (int e = 0; e < nenv; ++e)
    ASSERT_EQ(status[e] & ~kern::kEnvStepCap, kern::kEnvOk) << name << " env " << e;
  if (constraints) EXPECT_GT(contacts, 0) << name;

  // the adjoint of state T: random
  std::vector<Real> adjq_fused(nq * n), adjv_fused(nv * n);
  for (Real& x : adjq_fused) x = static_cast<Real>(n01(rng));
  for (Real& x : adjv_fused) x = static_cast<Real>(n01(rng));
  std::vector<Real> adjq_staged = adjq_fused, adjv_staged = adjv_fused;
  const std::vector<Real> seed_v = adjv_fused;
  std::vector<Real> adju_fused(nu * n + 1), adju_staged(nu * n + 1);

  // fused: adj_control_step_env's workspaces
  std::vector<Real> d_ws(size * n), keep_ws(size * n), adj_ws(size * n),
      replay(static_cast<std::size_t>(kern::replay_size(m, S)) * n);
  // staged: the host emulation of StagedAdjoint (its tape, adjoint Data, replay buffer, slots)
  sgtest::HostStagedAdjoint<Real> staged(impulse_model ? *impulse_model : M, m, mg, layout, nenv,
                                         S);
  const auto at = [&](std::vector<Real>& a, std::size_t offset, int e) { return V{a.data() + offset + e, str}; };
  std::vector<int> ok(n);  // the staged replay's check
  double scale = 0;
  for (int t = T - 1; t >= 0; --t) {
    for (int e = 0; e < nenv; ++e) {
      const bool same = kern::adj_control_step_env(
          m, mg, layout, at(q, t * nq * n, e), at(v, t * nv * n, e), at(u, t * nu * n, e),
          at(w, t * nv * n, e), at(q, (t + 1) * nq * n, e), at(v, (t + 1) * nv * n, e),
          at(adjq_fused, 0, e), at(adjv_fused, 0, e), at(adju_fused, 0, e),
          D::bind(V{d_ws.data() + e, str}, layout), D::bind(V{keep_ws.data() + e, str}, layout),
          D::bind(V{adj_ws.data() + e, str}, layout), at(adj_ws, 0, e), at(replay, 0, e), S);
      EXPECT_TRUE(same) << name << " step " << t << " env " << e << ": the fused replay is not bitwise";
    }
    std::fill(ok.begin(), ok.end(), 1);
    const typename sgtest::HostStagedAdjoint<Real>::Args a{q.data() + t * nq * n,
                                                           v.data() + t * nv * n,
                                                           u.data() + t * nu * n,
                                                           w.data() + t * nv * n,
                                                           q.data() + (t + 1) * nq * n,
                                                           v.data() + (t + 1) * nv * n,
                                                           adjq_staged.data(),
                                                           adjv_staged.data(),
                                                           adju_staged.data(),
                                                           nullptr,
                                                           nullptr,
                                                           status.data(),
                                                           ok.data(),
                                                           nullptr};
    staged.step(a);
    for (int e = 0; e < nenv; ++e) {
      EXPECT_EQ(ok[e], 1) << name << " step " << t << " env " << e << ": the staged replay is not bitwise";
      for (int i = 0; i < nq; ++i)
        ASSERT_EQ(adjq_staged[i * n + e], adjq_fused[i * n + e]) << name << " adj qpos " << i << " step " << t;
      for (int i = 0; i < nv; ++i)
        ASSERT_EQ(adjv_staged[i * n + e], adjv_fused[i * n + e]) << name << " adj qvel " << i << " step " << t;
      for (int i = 0; i < nu; ++i)
        ASSERT_EQ(adju_staged[i * n + e], adju_fused[i * n + e]) << name << " adj ctrl " << i << " step " << t;
      // the gradient must move: the adjoint of the state before the step against after it
      for (int i = 0; i < nv; ++i) scale = std::max(scale, std::abs(static_cast<double>(adjv_fused[i * n + e] - seed_v[i * n + e])));
    }
  }
  // the adjoint's first stage once per dynamics adjoint: per substep, or per Runge–Kutta round and
  // used stage (plan.rk_steps rounds, each environment in those of its accepted steps)
  const StagedPlan plan = make_staged_plan(mg);
  int per_substep = 1;
  if (plan.rk_evaluations > 0) {
    const kern::RkTableau t = kern::rk_tableau(plan.rk_integrator);
    int used = 0;
    for (int i = 0; i < t.stages; ++i) used += kern::rk_stage_used(t, i);
    per_substep = plan.rk_steps * used;
    // every environment's accepted steps were differentiated, and no more
    EXPECT_GT(staged.rk_stage_adjoints, 0) << name;
    EXPECT_LE(staged.rk_stage_adjoints, static_cast<long>(per_substep) * S * T * nenv) << name;
    // with event gradients, the saltation was applied at located events
    if (adaptive.event_gradients) EXPECT_GT(staged.rk_events, 0) << name;
  }
  EXPECT_EQ(staged.stage_calls, S * T * per_substep) << name;
  EXPECT_EQ(staged.gradient_calls, cfd ? S * T : 0) << name;
  int routines = 0;
  for (int r = 0; r < kern::kPairRoutines; ++r) routines += groups.count(r) > 0;
  EXPECT_EQ(staged.pair_calls, plan.contacts ? routines * S * T * per_substep : 0) << name;
  EXPECT_GT(scale, 1e-3) << name << ": the adjoint does not move through the steps";
  for (Real x : adjq_fused) EXPECT_TRUE(std::isfinite(static_cast<double>(x))) << name;
}

TEST(StagedAdjoint, EveryRoutineEqualsFusedAdjointBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  for (int width : {1, 32}) {
    check_staged_adjoint<double>(model, "all routines", 4, 6, 3, width);
    check_staged_adjoint<float>(model, "all routines (float)", 4, 6, 3, width);
  }
}

TEST(StagedAdjoint, RobotsEqualFusedAdjointBitwise) {
  for (const std::string& path : {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"}) {
    const auto model = load_mjcf(path);
    for (int width : {1, 32}) {
      check_staged_adjoint<double>(model, path, 3, 4, 3, width);
      check_staged_adjoint<float>(model, path + " (float)", 3, 4, 3, width);
    }
  }
}

// The Impulse model: the replay through its six stages (the Delassus assembly and the
// Gauss–Seidel sweeps by the team), its adjoint from the tape's record in five stages.
TEST(StagedAdjoint, ImpulseEqualsFusedAdjointBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  for (int width : {1, 32}) {
    check_staged_adjoint<double>(model, "all routines (impulse)", 4, 6, 3, width, ContactModel::Impulse);
    check_staged_adjoint<float>(model, "all routines (impulse, float)", 4, 6, 3, width, ContactModel::Impulse);
  }
  // the G1 on its floor (the humanoid starts above it and touches nothing within these steps)
  const std::string g1 = sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml";
  const auto robot = load_mjcf(g1);
  check_staged_adjoint<double>(robot, g1 + " (impulse)", 2, 3, 2, 32, ContactModel::Impulse);
  check_staged_adjoint<float>(robot, g1 + " (impulse, float)", 2, 3, 2, 1, ContactModel::Impulse);
}

// One substep per control step: the fused adjoint then recomputes its one substep and keeps none.
TEST(StagedAdjoint, OneSubstepEqualsFusedAdjointBitwise) {
  const auto model = load_mjcf(sgtest::humanoid_xml());
  check_staged_adjoint<double>(model, "humanoid S=1", 3, 4, 1, 32);
}

// Contacts from distance: the adjoint differentiates the second contact model at the replayed
// states; the staged adjoint puts that model's primal of each substep in the slot first.
TEST(StagedAdjoint, ContactsFromDistanceEqualFusedAdjointBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  for (int width : {1, 32}) {
    check_staged_adjoint<double>(model, "all routines (cfd)", 4, 6, 3, width, ContactModel::Soft,
                                 true);
    check_staged_adjoint<float>(model, "all routines (cfd, float)", 4, 6, 3, width,
                                ContactModel::Soft, true);
    check_staged_adjoint<double>(model, "all routines (cfd, impulse)", 4, 6, 3, width,
                                 ContactModel::Impulse, true);
  }
  const auto humanoid = load_mjcf(sgtest::humanoid_xml());
  check_staged_adjoint<double>(humanoid, "humanoid (cfd)", 3, 4, 3, 32, ContactModel::Soft, true);
}

// The Runge–Kutta methods: the replay through the staged substep (a controller per environment
// between staged evaluations), then per substep each environment's accepted steps last to first
// in rounds (the environments with fewer steps skip a round), each step's stages recomputed and
// each used stage's dynamics adjoint run as the soft-constraint stages; with contacts from
// distance the gradient model's substep and evaluations.
TEST(StagedAdjoint, RungeKuttaEqualsFusedAdjointBitwise) {
  const auto model = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  for (const Integrator integrator : {Integrator::RK4, Integrator::Tsit5, Integrator::Bosh3}) {
    const std::string name = std::string("all routines, ") + integrator_name(integrator);
    for (int width : {1, 32}) {
      check_staged_adjoint<double>(model, name, 4, 3, 2, width, ContactModel::Soft, false,
                                   integrator);
      check_staged_adjoint<float>(model, name + " (float)", 4, 3, 2, width, ContactModel::Soft,
                                  false, integrator);
    }
  }
  AdaptiveTolerances tight;  // more trials, some at the cap
  tight.rtol = 1e-6;
  tight.max_steps = 6;
  check_staged_adjoint<double>(model, "all routines, dopri5 tight", 4, 3, 2, 32, ContactModel::Soft,
                               false, Integrator::Dopri5, tight);
  AdaptiveTolerances events;  // event location without event gradients: halved trials
  events.event_step = 1e-4;
  check_staged_adjoint<double>(model, "all routines, tsit5 events", 4, 3, 2, 1, ContactModel::Soft,
                               false, Integrator::Tsit5, events);
  check_staged_adjoint<double>(model, "all routines, tsit5 (cfd)", 4, 3, 2, 32, ContactModel::Soft,
                               true, Integrator::Tsit5);
  // event gradients: the saltation at located events, its three evaluations staged
  AdaptiveTolerances saltation = events;
  saltation.event_gradients = true;
  check_staged_adjoint<double>(model, "all routines, tsit5 event gradients", 4, 3, 2, 32,
                               ContactModel::Soft, false, Integrator::Tsit5, saltation);
  check_staged_adjoint<float>(model, "all routines, tsit5 event gradients (float)", 4, 3, 2, 1,
                              ContactModel::Soft, false, Integrator::Tsit5, saltation);
  const auto g1 = load_mjcf(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml");
  check_staged_adjoint<double>(g1, "G1, tsit5", 2, 2, 2, 32, ContactModel::Soft, false,
                               Integrator::Tsit5);
}

// Without constraints: the Euler family's state and finish stages alone, and the Runge–Kutta
// rounds without the constraint forces' stages.
TEST(StagedAdjoint, WithoutConstraintsEqualsFusedAdjointBitwise) {
  const auto model = load_mjcf(sgtest::humanoid_xml());
  for (const Integrator integrator :
       {Integrator::SemiImplicitEuler, Integrator::RK4, Integrator::Tsit5}) {
    const std::string name =
        std::string("humanoid without constraints, ") + integrator_name(integrator);
    check_staged_adjoint<double>(model, name, 3, 3, 2, 1, ContactModel::Soft, false, integrator,
                                 AdaptiveTolerances{}, false);
    check_staged_adjoint<float>(model, name + " (float)", 3, 3, 2, 32, ContactModel::Soft, false,
                                integrator, AdaptiveTolerances{}, false);
  }
}

}  // namespace
