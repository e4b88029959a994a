// Batched CPU simulator: agreement with the single-state host path, bitwise independence of
// the OpenMP thread count, NaN containment, keyframes, float vs double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

struct Batch {
  std::vector<double> qpos, qvel, ctrl;
};

// Random states near qpos0 (hinges perturbed, quaternions rotated a little) and controls.
Batch random_batch(const Model& m, int nenv, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  Batch b;
  for (int e = 0; e < nenv; ++e) {
    std::vector<double> q = m.qpos0;
    for (int j = 0; j < m.njnt; ++j) {
      const int a = m.jnt_qposadr[j];
      if (m.jnt_type[j] == JointType::Hinge || m.jnt_type[j] == JointType::Slide) {
        q[a] += 0.3 * n01(rng);
      } else {
        const int qa = m.jnt_type[j] == JointType::Free ? a + 3 : a;
        double nrm = 0;
        for (int c = 0; c < 4; ++c) nrm += (q[qa + c] += 0.2 * n01(rng)) * q[qa + c];
        for (int c = 0; c < 4; ++c) q[qa + c] /= std::sqrt(nrm);
      }
    }
    b.qpos.insert(b.qpos.end(), q.begin(), q.end());
    for (int i = 0; i < m.nv; ++i) b.qvel.push_back(0.3 * n01(rng));
    for (int u = 0; u < m.nu; ++u) b.ctrl.push_back(0.5 * n01(rng));
  }
  return b;
}

Batch run(const std::shared_ptr<const Model>& m, SimulatorOptions opt, const Batch& init, int steps) {
  Simulator sim(m, opt);
  sim.set_state(init.qpos.data(), init.qvel.data());
  sim.set_ctrl(init.ctrl.data());
  for (int t = 0; t < steps; ++t) sim.step();
  Batch out{std::vector<double>(init.qpos.size()), std::vector<double>(init.qvel.size()), init.ctrl};
  sim.get_state(out.qpos.data(), out.qvel.data());
  return out;
}

TEST(Simulator, BatchedEqualsSingleStateHostPath) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  const int nenv = 8, steps = 20, substeps = 2;
  const Batch init = random_batch(*m, nenv, 3);
  SimulatorOptions opt;
  opt.nenv = nenv;
  opt.substeps = substeps;
  const Batch out = run(m, opt, init, steps);
  for (int e = 0; e < nenv; ++e) {
    std::vector<double> q(init.qpos.begin() + e * m->nq, init.qpos.begin() + (e + 1) * m->nq);
    std::vector<double> v(init.qvel.begin() + e * m->nv, init.qvel.begin() + (e + 1) * m->nv);
    rollout_host(*m, q.data(), v.data(), init.ctrl.data() + e * m->nu, steps * substeps);
    EXPECT_EQ(0, std::memcmp(q.data(), out.qpos.data() + e * m->nq, sizeof(double) * m->nq)) << "env " << e;
    EXPECT_EQ(0, std::memcmp(v.data(), out.qvel.data() + e * m->nv, sizeof(double) * m->nv)) << "env " << e;
  }
}

// An environment's result depends only on its own inputs: bitwise equal for 1, 2, 3, 7 threads.
TEST(Simulator, BitwiseIndependentOfThreadCount) {
  for (const std::string path : {sgtest::humanoid_xml(),
                                 sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"}) {
    const auto m = load_mjcf(path);
    for (Precision p : {Precision::Double, Precision::Float}) {
      SimulatorOptions opt;
      opt.nenv = 37;
      opt.substeps = 3;
      opt.precision = p;
      const Batch init = random_batch(*m, opt.nenv, 5);
      opt.threads = 1;
      const Batch ref = run(m, opt, init, 10);
      for (int threads : {2, 3, 7}) {
        opt.threads = threads;
        const Batch out = run(m, opt, init, 10);
        EXPECT_EQ(0, std::memcmp(ref.qpos.data(), out.qpos.data(), sizeof(double) * ref.qpos.size()))
            << path << " threads " << threads;
        EXPECT_EQ(0, std::memcmp(ref.qvel.data(), out.qvel.data(), sizeof(double) * ref.qvel.size()))
            << path << " threads " << threads;
      }
    }
  }
}

// A NaN in one environment is reported in status() and does not reach the others.
TEST(Simulator, NonFiniteEnvironmentIsContained) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  SimulatorOptions opt;
  opt.nenv = 6;
  Batch init = random_batch(*m, opt.nenv, 9);
  const Batch clean = run(m, opt, init, 5);
  init.qvel[2 * m->nv + 4] = std::nan("");
  Simulator sim(m, opt);
  sim.set_state(init.qpos.data(), init.qvel.data());
  sim.set_ctrl(init.ctrl.data());
  for (int t = 0; t < 5; ++t) sim.step();
  const auto status = sim.status();
  Batch out{std::vector<double>(init.qpos.size()), std::vector<double>(init.qvel.size()), {}};
  sim.get_state(out.qpos.data(), out.qvel.data());
  EXPECT_EQ(sim.num_failed(), 1);
  for (int e = 0; e < opt.nenv; ++e) {
    if (e == 2) {
      EXPECT_EQ(status[e], 1);
      // frozen at its last finite state: the initial qpos
      EXPECT_EQ(0, std::memcmp(out.qpos.data() + e * m->nq, init.qpos.data() + e * m->nq, sizeof(double) * m->nq));
      continue;
    }
    EXPECT_EQ(status[e], 0);
    EXPECT_EQ(0, std::memcmp(out.qpos.data() + e * m->nq, clean.qpos.data() + e * m->nq, sizeof(double) * m->nq));
  }
  sim.reset();
  EXPECT_EQ(sim.num_failed(), 0);
}

TEST(Simulator, ResetToQpos0AndKeyframe) {
  const auto m = load_mjcf(sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml");
  ASSERT_GE(m->keyframe_id("knees_bent"), 0);
  SimulatorOptions opt;
  opt.nenv = 4;
  Simulator sim(m, opt);
  std::vector<double> qpos(4 * m->nq), qvel(4 * m->nv), ctrl(4 * m->nu);
  sim.get_state(qpos.data(), qvel.data());
  for (int e = 0; e < 4; ++e)
    for (int i = 0; i < m->nq; ++i) EXPECT_EQ(qpos[e * m->nq + i], m->qpos0[i]);
  sim.reset_keyframe("knees_bent");
  sim.get_state(qpos.data(), qvel.data());
  sim.get_ctrl(ctrl.data());
  const auto& key = m->keyframes[m->keyframe_id("knees_bent")];
  for (int e = 0; e < 4; ++e) {
    for (int i = 0; i < m->nq; ++i) EXPECT_EQ(qpos[e * m->nq + i], key.qpos[i]);
    for (int u = 0; u < m->nu; ++u) EXPECT_EQ(ctrl[e * m->nu + u], key.ctrl[u]);
  }
  EXPECT_THROW(sim.reset_keyframe("no_such_key"), std::invalid_argument);
}

// Float tracks double closely over a short horizon (documented float tolerance: 1e-3 of the
// state scale after 20 steps of humanoid.xml; float rounding ~6e-8 grows through the
// dynamics, whose largest local amplification over 0.1 s is well below 1e4).
TEST(Simulator, FloatTracksDouble) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  SimulatorOptions opt;
  opt.nenv = 16;
  const Batch init = random_batch(*m, opt.nenv, 12);
  const Batch d = run(m, opt, init, 20);
  opt.precision = Precision::Float;
  const Batch f = run(m, opt, init, 20);
  double err = 0, scale = 1;
  for (std::size_t i = 0; i < d.qvel.size(); ++i) {
    err = std::max(err, std::abs(d.qvel[i] - f.qvel[i]));
    scale = std::max(scale, std::abs(d.qvel[i]));
  }
  for (std::size_t i = 0; i < d.qpos.size(); ++i) err = std::max(err, std::abs(d.qpos[i] - f.qpos[i]));
  EXPECT_LE(err / scale, 1e-3);
  std::printf("[float] humanoid 20 steps: max |float - double| / scale = %.2e\n", err / scale);
}

TEST(Simulator, RejectsBadOptions) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  SimulatorOptions opt;
  opt.nenv = 0;
  EXPECT_THROW(Simulator(m, opt), std::invalid_argument);
  opt.nenv = 1;
  opt.substeps = 0;
  EXPECT_THROW(Simulator(m, opt), std::invalid_argument);
  opt.substeps = 1;
  opt.cuda_solve_shared_bytes = -2;
  EXPECT_THROW(Simulator(m, opt), std::invalid_argument);
  opt.cuda_solve_shared_bytes = -1;
  if (!cuda_available()) {
    opt.substeps = 1;
    opt.backend = Backend::Cuda;
    EXPECT_THROW(Simulator(m, opt), std::runtime_error);
  }
}

}  // namespace

namespace {

// Controls handed over in the backend's own layout and precision give the same trajectory
// (and the same recorded gradients) as host controls.
TEST(Simulator, BackendControlsEqualHostControls) {
  using namespace stiffgrad;
  const auto m = load_mjcf(sgtest::humanoid_xml());
  for (Precision p : {Precision::Double, Precision::Float}) {
    SimulatorOptions opt;
    opt.nenv = 3;
    opt.precision = p;
    Simulator a(m, opt), b(m, opt);
    std::vector<double> host(opt.nenv * m->nu);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = 0.1 * static_cast<double>(i % 7) - 0.3;
    // environment-minor, backend precision
    std::vector<double> dminor(host.size());
    std::vector<float> fminor(host.size());
    for (int e = 0; e < opt.nenv; ++e)
      for (int u = 0; u < m->nu; ++u) {
        dminor[u * opt.nenv + e] = host[e * m->nu + u];
        fminor[u * opt.nenv + e] = static_cast<float>(host[e * m->nu + u]);
      }
    const void* backend_ctrl = p == Precision::Double ? static_cast<const void*>(dminor.data())
                                                      : static_cast<const void*>(fminor.data());
    Rollout ra(a, 5), rb(b, 5);
    ra.begin();
    rb.begin();
    for (int t = 0; t < 5; ++t) {
      ra.step(host.data());
      rb.step_backend_ctrl(backend_ctrl);
    }
    std::vector<double> qa(opt.nenv * m->nq), va(opt.nenv * m->nv), qb(qa.size()), vb(va.size());
    a.get_state(qa.data(), va.data());
    b.get_state(qb.data(), vb.data());
    EXPECT_EQ(qa, qb);
    EXPECT_EQ(va, vb);
    std::vector<double> dl((5 + 1) * opt.nenv * m->nv, 1.0), ga(5 * opt.nenv * m->nu), gb(ga.size());
    ra.backward(nullptr, dl.data(), nullptr, nullptr, ga.data());
    rb.backward(nullptr, dl.data(), nullptr, nullptr, gb.data());
    EXPECT_EQ(ga, gb);
  }
}

}  // namespace
