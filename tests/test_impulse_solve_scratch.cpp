// The Impulse model's solve stage in a scratch (kern::impulse_substep_solve_in, issue 38 item 2):
// the CUDA stage runs a warp per environment with the working set of its live rows (G, Y, c, the
// blocks' vectors) in its block's shared memory where it fits, and in the workspace where it does
// not. No GPU is needed to check its logic: the host emulation of the staged step
// (sgtest::HostStagedStep) runs the same function over a scratch of the same capacity, filled with
// NaN as shared memory holds garbage, with its lanes in a warp's order last lane first. It must
// leave everything as the solve in the workspace does, bit for bit: the state, the status and
// the statistics after every control step, and the whole workspace (the finish reads Y and the
// impulses, the adjoint's tape G, c, the steps, P and the record), with every environment in
// the scratch and with some in it and the others in the workspace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "all_routines_scene.hpp"
#include "core/model_arrays.hpp"
#include "kernels/impulse/impulse_step.hpp"
#include "staged_host_step.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

// One run of the staged step over the device's layout with a given scratch capacity.
template <class Real>
struct Run {
  std::vector<Real> qpos, qvel, ctrl, warm, stats, workspace;
  std::vector<int> status;
  std::unique_ptr<sgtest::HostStagedStep<Real>> staged;
};

template <class Real>
bool same_bits(const std::vector<Real>& a, const std::vector<Real>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(Real) * a.size()) == 0;
}

template <class Real>
void check_scratch(const std::shared_ptr<const Model>& model, const std::string& name, int nenv,
                   int T, int S) {
  const Model& M = *model;
  SimulatorOptions opt;
  opt.contact_model = ContactModel::Impulse;
  opt.nenv = nenv;
  opt.substeps = S;
  opt.precision = std::is_same_v<Real, float> ? Precision::Float : Precision::Double;
  const Simulator sim(model, opt);
  const std::unique_ptr<Model> impulse_model = impulse_model_for(M, opt.contact_model, opt.impulse);
  const ModelArrays<Real> arrays(*impulse_model, sim.capacity());
  const kern::ModelView<Real> m =
      with_team_width(simulation_view(arrays.host_view(), opt), kern::kMaxTeamWidth);
  const kern::DataLayout layout = kern::DataLayout::make(m);
  ASSERT_GT(m.nefc_max, 0) << name;

  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  std::vector<Real> q0(M.nq * nenv), v0(M.nv * nenv), u(T * nenv * M.nu + 1);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) q0[i * nenv + e] = static_cast<Real>(M.qpos0[i]);
    for (int j = 0; j < M.njnt; ++j)
      if (M.jnt_type[j] == JointType::Hinge)
        q0[M.jnt_qposadr[j] * nenv + e] += static_cast<Real>(0.2 * n01(rng));
  }
  for (Real& x : v0) x = static_cast<Real>(0.3 * n01(rng));
  for (Real& x : u) x = static_cast<Real>(0.3 * n01(rng));

  const auto make_run = [&](int capacity) {
    Run<Real> r;
    r.qpos = q0;
    r.qvel = v0;
    r.ctrl.assign(M.nu * nenv + 1, Real(0));
    r.warm.assign(M.nv * nenv, Real(0));
    r.stats.assign(kern::kContactStats * nenv, Real(0));
    r.workspace.assign(static_cast<std::size_t>(layout.size) * nenv, Real(0));
    r.status.assign(nenv, 0);
    r.staged = std::make_unique<sgtest::HostStagedStep<Real>>(*impulse_model, m, layout, nenv,
                                                              r.workspace.data());
    r.staged->solve_scratch_reals = capacity;
    return r;
  };
  const auto step = [&](Run<Real>& r, int t) {
    for (int e = 0; e < nenv; ++e)
      for (int i = 0; i < M.nu; ++i) r.ctrl[i * nenv + e] = u[(t * nenv + e) * M.nu + i];
    r.staged->step(r.qpos.data(), r.qvel.data(), r.ctrl.data(), r.warm.data(), r.stats.data(),
                   r.status.data(), nullptr, S);
  };

  // the working sets the run's solves need, from a run in the workspace
  Run<Real> probe = make_run(0);
  for (int t = 0; t < T; ++t) step(probe, t);
  std::vector<int> sizes = probe.staged->solve_set_sizes;
  ASSERT_EQ(static_cast<int>(sizes.size()), nenv * S * T) << name;
  std::sort(sizes.begin(), sizes.end());
  ASSERT_LT(sizes.front(), sizes.back())
      << name << ": the environments' live rows must differ to split them";
  const int all = kern::impulse_solve_set_size(m.nefc_max, m.nv);  // the capacity's: everyone fits
  // a split: the middle size fits, the largest does not
  const int split =
      sizes[sizes.size() / 2] < sizes.back() ? sizes[sizes.size() / 2] : sizes.back() - 1;

  for (const int capacity : {all, split}) {
    const std::string what = name + " (scratch of " + std::to_string(capacity) + " Reals)";
    Run<Real> ref = make_run(0), run = make_run(capacity);
    for (int t = 0; t < T; ++t) {
      step(ref, t);
      step(run, t);
      EXPECT_TRUE(same_bits(run.qpos, ref.qpos)) << what << " qpos, step " << t;
      EXPECT_TRUE(same_bits(run.qvel, ref.qvel)) << what << " qvel, step " << t;
      EXPECT_TRUE(same_bits(run.stats, ref.stats)) << what << " statistics, step " << t;
      EXPECT_EQ(run.status, ref.status) << what << " status, step " << t;
      EXPECT_TRUE(same_bits(run.workspace, ref.workspace)) << what << " workspace, step " << t;
    }
    EXPECT_EQ(ref.staged->scratch_solves, 0) << what;
    EXPECT_GT(run.staged->scratch_solves, 0) << what;
    if (capacity == all)
      EXPECT_EQ(run.staged->in_place_solves, 0) << what;
    else
      EXPECT_GT(run.staged->in_place_solves, 0) << what;
    std::printf(
        "[solve scratch] %s: %ld solves in the scratch, %ld in the workspace; working sets %d to "
        "%d Reals "
        "(%d at the row capacity %d)\n",
        what.c_str(), run.staged->scratch_solves, run.staged->in_place_solves, sizes.front(),
        sizes.back(), all, m.nefc_max);
  }
}

TEST(ImpulseSolveScratch, EqualsTheSolveInTheWorkspaceBitwise) {
  const auto scene = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  check_scratch<double>(scene, "all routines", 4, 8, 3);
  check_scratch<float>(scene, "all routines (float)", 4, 8, 3);
  const auto g1 = load_mjcf(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml");
  check_scratch<double>(g1, "G1", 3, 4, 2);
  check_scratch<float>(g1, "G1 (float)", 3, 4, 2);
}

// The working set's size and carving: the fields follow one another without overlap and fill it.
TEST(ImpulseSolveScratch, PackedSetCarvesItsSizeExactly) {
  for (const int n : {3, 12, 129}) {
    const int nv = 35, size = kern::impulse_solve_set_size(n, nv);
    std::vector<double> base(static_cast<std::size_t>(size));
    const auto s = kern::ImpulseSolveSet<double, kern::Contiguous>::packed(
        kern::View<double, kern::Contiguous>{base.data()}, n, nv);
    EXPECT_EQ(s.Y.p - s.G.p, n * n);
    EXPECT_EQ(s.c.p - s.Y.p, n * nv);
    EXPECT_EQ(s.mu.p - s.c.p, n);
    EXPECT_EQ(s.P.p - s.step.p, n / 3);
    EXPECT_EQ(s.out.p + n - base.data(), size);
    EXPECT_TRUE(kern::impulse_solve_fits(n, nv, size));
    EXPECT_FALSE(kern::impulse_solve_fits(n, nv, size - 1));
  }
}

}  // namespace
