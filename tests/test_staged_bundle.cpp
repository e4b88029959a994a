// Bundled Contact Gradients' forward step as the CUDA backend runs it (run_bundled_step,
// core/staged_schedule.hpp; backends/cuda/bundle_step_impl.cuh): the nominal staged step over
// the environments not bundled, the staged contact search and bundle_start_from_contacts for the
// bundles that start, and each branch as one staged control step over the bundled environments'
// branch states, between bundle_branches_begin_env and bundle_branches_finish_env. No GPU is
// needed to check it: the host runs the same stages over the device's layout
// (sgtest::HostStagedStep) and must equal, bit for bit, what the CPU backend and the fused
// kernels run per environment (bundle_start_env, bundle_step_env, control_step_env over the
// same view): states, warm starts, statistics, status, every branch state and perturbation. Then
// the adjoint as the backend runs it (run_bundled_adjoint_step: the staged adjoint of the others,
// one per branch over the bundled environments) against adj_bundle_step_env and
// adj_control_step_env, bit for bit: the state and control adjoints of every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "all_routines_scene.hpp"
#include "core/model_arrays.hpp"
#include "core/staged_schedule.hpp"
#include "kernels/bundle/bundle_step_adjoint.hpp"
#include "staged_host_adjoint.hpp"
#include "staged_host_step.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

// The arrays of one run, environment-minor as on the device (element i of environment e at
// i * nenv + e; branch b of a B-branch array at (b n + i) * nenv + e).
template <class Real>
struct Arrays {
  std::vector<Real> qpos, qvel, warm, stats, workspace;
  std::vector<Real> bq, bv, bw, dq, dv, start_q, start_v, start_w;  // (T + 1) B n, T B nv, B n
  std::vector<int> status;
};

// `drop`: lowered by this much (a free root joint's height), so that the bundles start touching.
template <class Real>
void check_bundled_steps(const std::shared_ptr<const Model>& model, const std::string& name,
                         ContactModel contact_model, int width, double drop = 0,
                         Integrator integrator = Integrator::SemiImplicitEuler) {
  const Model& M = *model;
  const int nenv = 6, T = 4, S = 2, B = 3;
  SimulatorOptions opt;
  opt.integrator = integrator;
  opt.contact_model = contact_model;
  opt.nenv = nenv;
  opt.substeps = S;
  opt.precision = std::is_same_v<Real, float> ? Precision::Float : Precision::Double;
  const Simulator sim(model, opt);  // for the constraint capacity
  const std::unique_ptr<Model> impulse_model = impulse_model_for(M, opt.contact_model, opt.impulse);
  const ModelArrays<Real> model_arrays(impulse_model ? *impulse_model : M, sim.capacity());
  const kern::ModelView<Real> m =
      with_team_width(simulation_view(model_arrays.host_view(), opt), width);
  ASSERT_TRUE(kern::staged_adjoint_applies(m, m)) << name;
  const kern::DataLayout layout = kern::DataLayout::make(m);
  const kern::BundleParams params{B, 0.01, 0.02, 1e-4, 7};
  const int nq = M.nq, nv = M.nv, nu = M.nu, NS = kern::kContactStats;
  const std::size_t n = static_cast<std::size_t>(nenv);

  // The schedule: bundles of two steps; environment 5 is non-finite from the start and in a
  // bundle at steps 1 and 2 (one that turned non-finite inside its bundle), so nothing of it moves.
  const std::vector<std::vector<int>> starts = {{0, 2}, {1}, {}, {0}, {2}, {}};
  std::vector<char> in_bundle(T * n, 0), first(T * n, 0);
  for (int e = 0; e < nenv; ++e)
    for (const int t0 : starts[static_cast<std::size_t>(e)]) {
      first[t0 * n + e] = 1;
      for (int t = t0; t < t0 + 2 && t < T; ++t) in_bundle[t * n + e] = 1;
    }
  in_bundle[1 * n + 5] = in_bundle[2 * n + 5] = 1;

  Arrays<Real> sa;
  sa.qpos.resize(nq * n);
  sa.qvel.resize(nv * n);
  sa.warm.assign(nv * n, Real(0));
  sa.stats.assign(NS * n, Real(0));
  sa.workspace.assign(static_cast<std::size_t>(layout.size) * n, Real(0));
  sa.bq.assign((T + 1) * B * nq * n, Real(0));
  sa.bv.assign((T + 1) * B * nv * n, Real(0));
  sa.bw.assign((T + 1) * B * nv * n, Real(0));
  sa.dq.assign(T * B * nv * n, Real(0));
  sa.dv.assign(T * B * nv * n, Real(0));
  sa.start_q.assign(B * nq * n, Real(0));
  sa.start_v.assign(B * nv * n, Real(0));
  sa.start_w.assign(B * nv * n, Real(0));
  sa.status.assign(n, 0);
  sa.status[5] = kern::kEnvNonFinite;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> n01;
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < nq; ++i) sa.qpos[i * n + e] = static_cast<Real>(M.qpos0[i]);
    if (M.njnt > 0 && M.jnt_type[0] == JointType::Free)
      sa.qpos[2 * n + e] -= static_cast<Real>(drop);
    for (int j = 0; j < M.njnt; ++j)
      if (M.jnt_type[j] == JointType::Hinge)
        sa.qpos[M.jnt_qposadr[j] * n + e] += static_cast<Real>(0.2 * n01(rng));
    for (int i = 0; i < nv; ++i) sa.qvel[i * n + e] = static_cast<Real>(0.3 * n01(rng));
  }
  std::vector<Real> ctrl(T * nu * n + 1);
  for (Real& x : ctrl) x = static_cast<Real>(0.3 * n01(rng));
  Arrays<Real> ra = sa;  // the reference run's copy

  using L = kern::Strided;
  using V = kern::View<Real, L>;
  const L s{nenv};
  const auto at = [&](std::vector<Real>& a, int e, std::size_t offset = 0) {
    return V{a.data() + offset + e, s};
  };
  const auto branch = [&](std::vector<Real>& a, int t, int width_n, int e) {
    return at(a, e, static_cast<std::size_t>(t) * B * width_n * n);
  };
  const auto data = [&](Arrays<Real>& a, int e) {
    return kern::Data<Real, L>::bind(at(a.workspace, e), layout);
  };

  // scratch of the reference (the fused functions': perturbation, control copy, branch statistics)
  std::vector<Real> perturbation(
      static_cast<std::size_t>(kern::bundle_perturbation_scratch_size(m)) * n);
  std::vector<Real> u_copy(nu * n + 1), one_branch_stats(NS * n);
  // the staged run's own: each branch's statistics and status, the flags, the scratch
  std::vector<Real> branch_stats(B * NS * n), staged_perturbation = perturbation;
  std::vector<int> branch_status(B * n), in_bundle_flag(n), start_skip(n), branch_skip(n);
  sgtest::HostStagedStep<Real> host(impulse_model ? *impulse_model : M, m, layout, nenv,
                                    sa.workspace.data());

  // the checkpoints at the control steps' boundaries (state, warm start), for the adjoint
  std::vector<Real> ckpt_q((T + 1) * nq * n), ckpt_v((T + 1) * nv * n), ckpt_w((T + 1) * nv * n);
  const auto save = [&](int t) {
    std::copy(sa.qpos.begin(), sa.qpos.end(), ckpt_q.begin() + t * nq * n);
    std::copy(sa.qvel.begin(), sa.qvel.end(), ckpt_v.begin() + t * nv * n);
    std::copy(sa.warm.begin(), sa.warm.end(), ckpt_w.begin() + t * nv * n);
  };
  int touching_starts = 0, bundled_steps = 0;
  for (int t = 0; t < T; ++t) {
    save(t);
    Real* u = ctrl.data() + static_cast<std::size_t>(t) * nu * n;
    const auto ctrl_at = [&](int e) { return V{u + e, s}; };

    // the reference: per environment, as the CPU backend runs it
    for (int e = 0; e < nenv; ++e) {
      const auto d = data(ra, e);
      const V q = at(ra.qpos, e), v = at(ra.qvel, e), w = at(ra.warm, e), st = at(ra.stats, e);
      if (!in_bundle[t * n + e]) {
        kern::control_step_env(m, q, v, ctrl_at(e), w, d, S, &ra.status[e], st);
        continue;
      }
      const bool f = first[t * n + e] != 0;
      if (f)
        kern::bundle_start_env(m, params, e, t, q, v, w, d, branch(ra.dq, t, nv, e),
                               branch(ra.dv, t, nv, e), at(ra.start_q, e), at(ra.start_v, e),
                               at(ra.start_w, e), at(perturbation, e));
      kern::bundle_step_env(m, params, q, v, ctrl_at(e), w, d, S, &ra.status[e], st,
                            f ? at(ra.start_q, e) : branch(ra.bq, t, nq, e),
                            f ? at(ra.start_v, e) : branch(ra.bv, t, nv, e),
                            f ? at(ra.start_w, e) : branch(ra.bw, t, nv, e),
                            branch(ra.bq, t + 1, nq, e), branch(ra.bv, t + 1, nv, e),
                            branch(ra.bw, t + 1, nv, e), at(u_copy, e), at(one_branch_stats, e));
    }

    // the staged run: run_bundled_step as backends/cuda/bundle_step_impl.cuh launches it
    struct Exec {
      std::function<void()> trigger, nominal_step, contact_search, bundle_start, branches_begin,
          branches_finish;
      std::function<void(int)> branch_step;
    } x;
    x.trigger = [&] {  // the trigger kernel's flags, from the schedule above
      for (int e = 0; e < nenv; ++e) {
        in_bundle_flag[e] = in_bundle[t * n + e];
        start_skip[e] = !first[t * n + e];
        branch_skip[e] = !(in_bundle[t * n + e] && (sa.status[e] & kern::kEnvNonFinite) == 0);
      }
    };
    x.nominal_step = [&] {
      host.step(sa.qpos.data(), sa.qvel.data(), u, sa.warm.data(), sa.stats.data(),
                sa.status.data(), in_bundle_flag.data(), S);
    };
    x.contact_search = [&] {
      host.contact_search(sa.qpos.data(), sa.qvel.data(), start_skip.data());
    };
    x.bundle_start = [&] {
      for (int e = 0; e < nenv; ++e) {
        if (start_skip[e]) continue;
        int bodies[kern::kBundleMaxBodies];
        touching_starts += kern::bundle_contact_bodies(m, host.data(e), bodies) > 0;
        kern::bundle_start_from_contacts(
            m, params, e, t, at(sa.qpos, e), at(sa.qvel, e), at(sa.warm, e), host.data(e),
            branch(sa.dq, t, nv, e), branch(sa.dv, t, nv, e), at(sa.start_q, e), at(sa.start_v, e),
            at(sa.start_w, e), at(staged_perturbation, e));
      }
    };
    x.branches_begin = [&] {
      for (int e = 0; e < nenv; ++e) {
        if (branch_skip[e]) continue;
        const bool f = !start_skip[e];
        kern::bundle_branches_begin_env(
            m, B, &sa.status[e], at(sa.stats, e), f ? at(sa.start_q, e) : branch(sa.bq, t, nq, e),
            f ? at(sa.start_v, e) : branch(sa.bv, t, nv, e),
            f ? at(sa.start_w, e) : branch(sa.bw, t, nv, e), branch(sa.bq, t + 1, nq, e),
            branch(sa.bv, t + 1, nv, e), branch(sa.bw, t + 1, nv, e), branch_status.data() + e,
            nenv);
      }
    };
    x.branch_step = [&](int b) {
      const std::size_t tb = static_cast<std::size_t>(t + 1) * B + b;
      host.step(sa.bq.data() + tb * nq * n, sa.bv.data() + tb * nv * n, u,
                sa.bw.data() + tb * nv * n,
                branch_stats.data() + static_cast<std::size_t>(b) * NS * n,
                branch_status.data() + b * n, branch_skip.data(), S);
    };
    x.branches_finish = [&] {
      for (int e = 0; e < nenv; ++e)
        if (in_bundle_flag[e]) {
          ++bundled_steps;
          kern::bundle_branches_finish_env(
              m, B, at(sa.qpos, e), at(sa.qvel, e), at(sa.warm, e), data(sa, e), &sa.status[e],
              at(sa.stats, e), branch(sa.bq, t + 1, nq, e), branch(sa.bv, t + 1, nv, e),
              branch(sa.bw, t + 1, nv, e), branch_status.data() + e, nenv, at(branch_stats, e));
        }
    };
    run_bundled_step(x, B);

    // bit for bit, everything either run wrote
    const auto same = [&](const std::vector<Real>& a, const std::vector<Real>& b,
                          const char* what) {
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        const bool both_nan =
            std::isnan(static_cast<double>(a[i])) && std::isnan(static_cast<double>(b[i]));
        if (!both_nan)
          ASSERT_EQ(a[i], b[i]) << name << ": " << what << " element " << i << " after step " << t;
      }
    };
    same(sa.qpos, ra.qpos, "qpos");
    same(sa.qvel, ra.qvel, "qvel");
    same(sa.warm, ra.warm, "warm start");
    same(sa.stats, ra.stats, "contact statistics");
    same(sa.bq, ra.bq, "branch qpos");
    same(sa.bv, ra.bv, "branch qvel");
    same(sa.bw, ra.bw, "branch warm start");
    same(sa.dq, ra.dq, "perturbation dq");
    same(sa.dv, ra.dv, "perturbation dv");
    same(sa.start_q, ra.start_q, "branch start qpos");
    for (int e = 0; e < nenv; ++e)
      EXPECT_EQ(sa.status[e], ra.status[e]) << name << " status of env " << e;
  }
  save(T);

  // The adjoint, step by step from T: the fused one per environment (adj_bundle_step_env for a
  // bundled step, else adj_control_step_env, then the loss gradient of the step's start) against
  // run_bundled_adjoint_step over the host's staged adjoint (the CUDA backend's launches).
  using Adjoint = sgtest::HostStagedAdjoint<Real>;
  Adjoint staged_adjoint(impulse_model ? *impulse_model : M, m, m, layout, nenv, S);
  std::vector<Real> dl_q((T + 1) * nq * n), dl_v((T + 1) * nv * n);
  for (Real& x : dl_q) x = static_cast<Real>(n01(rng));
  for (Real& x : dl_v) x = static_cast<Real>(n01(rng));
  std::vector<Real> adj_q_ref(dl_q.begin() + T * nq * n, dl_q.end()),
      adj_v_ref(dl_v.begin() + T * nv * n, dl_v.end());
  std::vector<Real> adj_q_st = adj_q_ref, adj_v_st = adj_v_ref, adj_u_ref(nu * n + 1),
                    adj_u_st(nu * n + 1);
  std::vector<Real> adj_qb_ref(B * nq * n, Real(0)), adj_vb_ref(B * nv * n, Real(0)),
      adj_qb_st = adj_qb_ref, adj_vb_st = adj_vb_ref;
  const std::size_t size = static_cast<std::size_t>(layout.size);
  std::vector<Real> d_ws(size * n), keep_ws(size * n), adj_ws(size * n),
      replay(static_cast<std::size_t>(kern::replay_size(m, S)) * n);
  std::vector<Real> u_s(nu * n + 1), adj_u_s(nu * n + 1), tq(nq * n), tv(nv * n), sink(nv * n),
      branch_adj_u(B * nu * n + 1);
  std::vector<int> ok(n, 1);
  std::vector<char> bundled(n), not_bundled(n);
  const auto ws = [&](std::vector<Real>& a, int e) {
    return kern::Data<Real, L>::bind(at(a, e), layout);
  };
  int branch_adjoints = 0;
  for (int t = T - 1; t >= 0; --t) {
    const std::size_t oq = t * nq * n, ov = t * nv * n;
    for (int e = 0; e < nenv; ++e) {
      bundled[e] = in_bundle[t * n + e];
      not_bundled[e] = !bundled[e];
    }
    Real* u = ctrl.data() + static_cast<std::size_t>(t) * nu * n;
    for (int e = 0; e < nenv; ++e) {
      const V q0 = at(ckpt_q, e, oq), v0 = at(ckpt_v, e, ov), w0 = at(ckpt_w, e, ov), ue{u + e, s};
      if (bundled[e]) {
        const bool f = first[t * n + e] != 0;
        kern::adj_bundle_step_env(
            m, m, layout, params, f, q0, v0, w0, ue,
            f ? at(ra.start_q, e) : branch(ra.bq, t, nq, e),
            f ? at(ra.start_v, e) : branch(ra.bv, t, nv, e),
            f ? at(ra.start_w, e) : branch(ra.bw, t, nv, e), branch(ra.bq, t + 1, nq, e),
            branch(ra.bv, t + 1, nv, e), branch(ra.dq, t, nv, e), branch(ra.dv, t, nv, e),
            at(adj_q_ref, e), at(adj_v_ref, e), at(adj_u_ref, e), at(adj_qb_ref, e),
            at(adj_vb_ref, e), ws(d_ws, e), ws(keep_ws, e), ws(adj_ws, e), at(adj_ws, e),
            at(replay, e), S, at(u_s, e), at(adj_u_s, e), at(tq, e), at(tv, e), at(sink, e));
      } else {
        kern::adj_control_step_env(m, m, layout, q0, v0, ue, w0, at(ckpt_q, e, oq + nq * n),
                                   at(ckpt_v, e, ov + nv * n), at(adj_q_ref, e), at(adj_v_ref, e),
                                   at(adj_u_ref, e), ws(d_ws, e), ws(keep_ws, e), ws(adj_ws, e),
                                   at(adj_ws, e), at(replay, e), S);
      }
      for (int i = 0; i < nq; ++i) adj_q_ref[i * n + e] += dl_q[oq + i * n + e];
      for (int i = 0; i < nv; ++i) adj_v_ref[i * n + e] += dl_v[ov + i * n + e];
    }

    struct AdjointExec {
      std::function<void()> nominal_adjoint, bundle_adjoint_begin, bundle_adjoint_end;
      std::function<void(int)> branch_adjoint;
    } y;
    const typename Adjoint::Args nominal{ckpt_q.data() + oq,
                                         ckpt_v.data() + ov,
                                         u,
                                         ckpt_w.data() + ov,
                                         ckpt_q.data() + oq + nq * n,
                                         ckpt_v.data() + ov + nv * n,
                                         adj_q_st.data(),
                                         adj_v_st.data(),
                                         adj_u_st.data(),
                                         dl_q.data() + oq,
                                         dl_v.data() + ov,
                                         sa.status.data(),
                                         ok.data(),
                                         bundled.data()};
    y.nominal_adjoint = [&] { staged_adjoint.step(nominal); };
    y.bundle_adjoint_begin = [&] {
      for (int e = 0; e < nenv; ++e)
        if (bundled[e])
          kern::adj_bundle_branches_begin_env(
              m, params, first[t * n + e] != 0, at(ckpt_q, e, oq), at(ckpt_v, e, ov),
              at(ckpt_w, e, ov), V{u + e, s}, branch(sa.bq, t, nq, e), branch(sa.bv, t, nv, e),
              branch(sa.bw, t, nv, e), at(sa.start_q, e), at(sa.start_v, e), at(sa.start_w, e),
              branch(sa.bq, t + 1, nq, e), branch(sa.dq, t, nv, e), branch(sa.dv, t, nv, e),
              at(adj_q_st, e), at(adj_v_st, e), at(adj_u_st, e), at(adj_qb_st, e), at(adj_vb_st, e),
              at(u_s, e), at(tq, e), at(tv, e));
    };
    y.branch_adjoint = [&](int b) {
      ++branch_adjoints;
      const std::size_t tb = static_cast<std::size_t>(t + 1) * B + b;
      staged_adjoint.step(typename Adjoint::Args{
          sa.start_q.data() + b * nq * n, sa.start_v.data() + b * nv * n, u,
          sa.start_w.data() + b * nv * n, sa.bq.data() + tb * nq * n, sa.bv.data() + tb * nv * n,
          adj_qb_st.data() + b * nq * n, adj_vb_st.data() + b * nv * n,
          branch_adj_u.data() + b * nu * n, nullptr, nullptr, sa.status.data(), ok.data(),
          not_bundled.data()});
    };
    y.bundle_adjoint_end = [&] {
      for (int e = 0; e < nenv; ++e)
        if (bundled[e])
          kern::adj_bundle_branches_end_env(m, params, first[t * n + e] != 0, at(ckpt_q, e, oq),
                                            branch(sa.dq, t, nv, e), at(adj_q_st, e),
                                            at(adj_v_st, e), at(adj_u_st, e), at(branch_adj_u, e),
                                            at(adj_qb_st, e), at(adj_vb_st, e), at(tq, e),
                                            at(sink, e), at(dl_q, e, oq), at(dl_v, e, ov));
    };
    run_bundled_adjoint_step(y, B);
    // environment 5 (non-finite, "bundled" over zero branch states) is left out: its adjoint is
    // not a number either way
    for (int e = 0; e < 5; ++e) {
      EXPECT_EQ(ok[e], 1) << name << " step " << t << " env " << e
                          << ": the staged replay is not bitwise";
      for (int i = 0; i < nq; ++i)
        ASSERT_EQ(adj_q_st[i * n + e], adj_q_ref[i * n + e])
            << name << " adj qpos " << i << " step " << t << " env " << e;
      for (int i = 0; i < nv; ++i)
        ASSERT_EQ(adj_v_st[i * n + e], adj_v_ref[i * n + e])
            << name << " adj qvel " << i << " step " << t << " env " << e;
      for (int i = 0; i < nu; ++i)
        ASSERT_EQ(adj_u_st[i * n + e], adj_u_ref[i * n + e])
            << name << " adj ctrl " << i << " step " << t << " env " << e;
      for (int i = 0; i < nq; ++i)
        ASSERT_TRUE(std::isfinite(static_cast<double>(adj_q_st[i * n + e]))) << name;
    }
  }
  EXPECT_EQ(branch_adjoints, B * T) << name;

  // the run must have bundled steps, starts whose contact search found touching contacts, and
  // perturbations that moved the branches; environment 5 must not have moved
  EXPECT_EQ(bundled_steps, 12) << name;
  EXPECT_GT(touching_starts, 0) << name;
  double moved = 0;
  for (const Real x : sa.dq) moved += std::abs(static_cast<double>(x));
  EXPECT_GT(moved, 0.0) << name;
  EXPECT_EQ(sa.status[5], kern::kEnvNonFinite);
}

TEST(StagedBundle, BranchesAsStagedStepsEqualFusedBundleStepAndAdjointBitwise) {
  const auto scene = load_mjcf_string(sgtest::kAllRoutinesXml, "all_routines.xml");
  for (const int width : {1, 32}) {
    const std::string w = ", team width " + std::to_string(width);
    check_bundled_steps<double>(scene, "all routines" + w, ContactModel::Soft, width);
    check_bundled_steps<float>(scene, "all routines (float)" + w, ContactModel::Soft, width);
    check_bundled_steps<double>(scene, "all routines (impulse)" + w, ContactModel::Impulse, width);
    check_bundled_steps<float>(scene, "all routines (impulse, float)" + w, ContactModel::Impulse,
                               width);
  }
  const auto humanoid = load_mjcf(sgtest::humanoid_xml());
  check_bundled_steps<double>(humanoid, "humanoid", ContactModel::Soft, 32, 0.24);
  check_bundled_steps<double>(humanoid, "humanoid (impulse)", ContactModel::Impulse, 32, 0.24);
  // the Runge–Kutta methods: a bundle's contact search runs after substeps whose controllers are
  // done, and must still search every environment
  check_bundled_steps<double>(scene, "all routines (tsit5)", ContactModel::Soft, 32, 0,
                              Integrator::Tsit5);
  check_bundled_steps<float>(scene, "all routines (rk4, float)", ContactModel::Soft, 1, 0,
                             Integrator::RK4);
}

}  // namespace
