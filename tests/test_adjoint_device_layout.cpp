// The CUDA Rollout launches kern::adj_control_step_env with every Data interleaved across
// environments (kern::Strided{nenv} workspace, backends/cuda/rollout_cuda.cu). No GPU is needed to
// check that layout: run the same per-environment body on the host with the device's
// workspace layout and compare with the CPU backend's Rollout (contiguous workspace), which
// must agree bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/model_arrays.hpp"
#include "kernels/step/batch_adjoint.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

void check_model(const std::string& path) {
  const auto model = load_mjcf(path);
  const Model& M = *model;
  const int nenv = 5, T = 6, S = 3;
  SimulatorOptions opt;
  opt.nenv = nenv;
  opt.substeps = S;
  opt.threads = 2;
  Simulator sim(model, opt);
  std::mt19937_64 rng(17);
  std::normal_distribution<double> n01;
  std::vector<double> q(nenv * M.nq), v(nenv * M.nv), u(T * nenv * M.nu);
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) q[e * M.nq + i] = M.qpos0[i];
    for (int j = 0; j < M.njnt; ++j)
      if (M.jnt_type[j] == JointType::Hinge) q[e * M.nq + M.jnt_qposadr[j]] += 0.2 * n01(rng);
  }
  for (double& x : v) x = 0.3 * n01(rng);
  for (double& x : u) x = 0.3 * n01(rng);
  sim.set_state(q.data(), v.data());
  Rollout ro(sim, T);
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step(u.data() + t * nenv * M.nu);
  std::vector<double> dlq((T + 1) * nenv * M.nq), dlv((T + 1) * nenv * M.nv);
  for (double& x : dlq) x = n01(rng);
  for (double& x : dlv) x = n01(rng);
  std::vector<double> ref_q(nenv * M.nq), ref_v(nenv * M.nv), ref_u(T * nenv * M.nu);
  ro.backward_raw(dlq.data(), dlv.data(), ref_q.data(), ref_v.data(), ref_u.data());

  // device layout on the host: checkpoints, adjoints and workspaces all environment-minor;
  // the Simulator's constraint capacities (constraints are on by default), so that contact
  // rows, the solver workspace and their adjoints are laid out as on the device too
  ModelArrays<double> arrays(M, sim.capacity());
  const auto m = arrays.host_view();
  const auto layout = kern::DataLayout::make(m);
  using V = kern::View<double, kern::Strided>;
  const kern::Strided s{nenv};
  std::vector<double> ck_q((T + 1) * M.nq * nenv), ck_v((T + 1) * M.nv * nenv), ck_w((T + 1) * M.nv * nenv),
      ck_u(T * M.nu * nenv + 1);
  for (int t = 0; t <= T; ++t) {
    std::vector<double> qq(nenv * M.nq), vv(nenv * M.nv), ww(nenv * M.nv);
    ro.checkpoint(t, qq.data(), vv.data(), ww.data());
    for (int e = 0; e < nenv; ++e) {
      for (int i = 0; i < M.nq; ++i) ck_q[(t * M.nq + i) * nenv + e] = qq[e * M.nq + i];
      for (int i = 0; i < M.nv; ++i) ck_v[(t * M.nv + i) * nenv + e] = vv[e * M.nv + i];
      for (int i = 0; i < M.nv; ++i) ck_w[(t * M.nv + i) * nenv + e] = ww[e * M.nv + i];
    }
  }
  for (int t = 0; t < T; ++t)
    for (int e = 0; e < nenv; ++e)
      for (int i = 0; i < M.nu; ++i) ck_u[(t * M.nu + i) * nenv + e] = u[(t * nenv + e) * M.nu + i];
  std::vector<double> adj_q(M.nq * nenv), adj_v(M.nv * nenv), adj_u(T * M.nu * nenv + 1);
  auto dl = [&](const std::vector<double>& src, int t, int n, int i, int e) { return src[(t * nenv + e) * n + i]; };
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) adj_q[i * nenv + e] = dl(dlq, T, M.nq, i, e);
    for (int i = 0; i < M.nv; ++i) adj_v[i * nenv + e] = dl(dlv, T, M.nv, i, e);
  }
  std::vector<double> primal(layout.size * nenv), keep(layout.size * nenv), adjoint(layout.size * nenv),
      replay(kern::replay_size(m, S) * nenv);
  for (int t = T - 1; t >= 0; --t) {
    for (int e = 0; e < nenv; ++e) {
      const auto d = kern::Data<double, kern::Strided>::bind(V{primal.data() + e, s}, layout);
      const auto d_keep = kern::Data<double, kern::Strided>::bind(V{keep.data() + e, s}, layout);
      const V adj_buffer{adjoint.data() + e, s};
      const auto a = kern::Data<double, kern::Strided>::bind(adj_buffer, layout);
      double* q0 = ck_q.data() + t * M.nq * nenv;
      double* v0 = ck_v.data() + t * M.nv * nenv;
      const bool same = kern::adj_control_step_env(
          m, m, layout, V{q0 + e, s}, V{v0 + e, s}, V{ck_u.data() + t * M.nu * nenv + e, s},
          V{ck_w.data() + t * M.nv * nenv + e, s},
          V{q0 + M.nq * nenv + e, s}, V{v0 + M.nv * nenv + e, s}, V{adj_q.data() + e, s},
          V{adj_v.data() + e, s}, V{adj_u.data() + t * M.nu * nenv + e, s}, d, d_keep, a, adj_buffer,
          V{replay.data() + e, s}, S);
      EXPECT_TRUE(same) << "replay, env " << e << " step " << t;
      for (int i = 0; i < M.nq; ++i) adj_q[i * nenv + e] += dl(dlq, t, M.nq, i, e);
      for (int i = 0; i < M.nv; ++i) adj_v[i * nenv + e] += dl(dlv, t, M.nv, i, e);
    }
  }
  for (int e = 0; e < nenv; ++e) {
    for (int i = 0; i < M.nq; ++i) EXPECT_EQ(adj_q[i * nenv + e], ref_q[e * M.nq + i]) << path;
    for (int i = 0; i < M.nv; ++i) EXPECT_EQ(adj_v[i * nenv + e], ref_v[e * M.nv + i]) << path;
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < M.nu; ++i)
        EXPECT_EQ(adj_u[(t * M.nu + i) * nenv + e], ref_u[(t * nenv + e) * M.nu + i]) << path;
  }
}

TEST(AdjointDeviceLayout, InterleavedWorkspaceMatchesCpuRolloutBitwise) {
  check_model(sgtest::humanoid_xml());
  check_model(sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml");
  check_model(sgtest::data_dir() + "/models/brax/ant.xml");
}

}  // namespace
