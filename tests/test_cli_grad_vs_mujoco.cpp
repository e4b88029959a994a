// `stiffgrad grad` through contact against MuJoCo 2.2.2's own central differences of its
// constrained rollouts (issue 7, "Gradients"): humanoid.xml lying on its floor and the G1 at
// `home` under its servos, L = w . [qpos_N; qvel_N] after N = 20 steps with ctrl held.
//
// Both sides solve to convergence: the models are copied with <option tolerance="1e-14"
// iterations="100"> (the G1 files' own iterations="5" stops the solve early, where the implicit
// gradient is not the derivative of the truncated iteration: docs/physics/constraints.md, "Known limits"), and
// MuJoCo runs with its warm start off, so that its rollouts are a smooth function of the inputs
// to rounding. MuJoCo's central differences (h = 1e-6; qpos perturbed along the tangent with
// mj_integratePos, as `grad` reports dL/dqpos) are compared on a spread of inputs with
// |adj - fd| <= 1e-6 |fd| + 10 e_fd, e_fd = |fd(h) - fd(2h)| (the difference's own error).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "mujoco_bridge.hpp"
#include "test_support.hpp"

namespace {

constexpr int kSteps = 20;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string csv(const std::vector<double>& v) {
  std::stringstream s;
  s.precision(17);
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  s << "\n";
  return s.str();
}

struct Case {
  const char* name;
  std::string path;
  std::string option_from, option_to;  // the <option> rewrite
  const char* key;                      // keyframe ("" : qpos0)
  int settle;                           // MuJoCo steps to the start state
};

void compare(const Case& c) {
  std::string xml = read_file(c.path);
  const auto at = xml.find(c.option_from);
  ASSERT_NE(at, std::string::npos) << c.path << ": '" << c.option_from << "' not found";
  xml.replace(at, c.option_from.size(), c.option_to);
  const std::string path = temp_file(std::string(c.name) + "_converged.xml", xml);
  std::string error;
  sgtest::MjModelPtr mm = sgtest::mujoco_load(path, &error);
  ASSERT_TRUE(mm) << error;
  ASSERT_EQ(mm->opt.iterations, 100);
  mm->opt.disableflags |= mjDSBL_WARMSTART;
  const int nq = mm->nq, nv = mm->nv, nu = mm->nu;

  // the start state, from MuJoCo's own simulation
  sgtest::MjDataPtr d0(mj_makeData(mm.get()));
  const int key = *c.key ? mj_name2id(mm.get(), mjOBJ_KEY, c.key) : -1;
  if (key >= 0) mj_resetDataKeyframe(mm.get(), d0.get(), key);
  for (int i = 0; i < c.settle; ++i) mj_step(mm.get(), d0.get());
  std::vector<double> x(d0->qpos, d0->qpos + nq);
  x.insert(x.end(), d0->qvel, d0->qvel + nv);
  x.insert(x.end(), d0->ctrl, d0->ctrl + nu);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n01;
  std::vector<double> w(static_cast<std::size_t>(nq + nv));
  for (double& v : w) v = n01(rng);

  const auto r = run_cli("grad " + path + " --states " + temp_file(std::string(c.name) + "_x.csv", csv(x)) +
                         " --steps " + std::to_string(kSteps) + " --weights " +
                         temp_file(std::string(c.name) + "_w.csv", csv(w)));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto gq = json_array(r.out, "dL_dqpos"), gv = json_array(r.out, "dL_dqvel"), gu = json_array(r.out, "dL_dctrl");
  ASSERT_EQ(static_cast<int>(gq.size()), nv);
  ASSERT_EQ(static_cast<int>(gv.size()), nv);
  ASSERT_EQ(static_cast<int>(gu.size()), nu);

  // MuJoCo's loss with input k (tangent qpos 0..nv-1, qvel nv..2nv-1, ctrl 2nv..) moved by e
  sgtest::MjDataPtr d(mj_makeData(mm.get()));
  const auto loss = [&](int k, double e) {
    mj_resetData(mm.get(), d.get());
    std::copy(x.begin(), x.begin() + nq, d->qpos);
    std::copy(x.begin() + nq, x.begin() + nq + nv, d->qvel);
    std::copy(x.begin() + nq + nv, x.end(), d->ctrl);
    if (k < nv) {
      std::vector<double> delta(static_cast<std::size_t>(nv), 0.0);
      delta[static_cast<std::size_t>(k)] = e;
      mj_integratePos(mm.get(), d->qpos, delta.data(), 1.0);
    } else if (k < 2 * nv) {
      d->qvel[k - nv] += e;
    } else {
      d->ctrl[k - 2 * nv] += e;
    }
    for (int t = 0; t < kSteps; ++t) mj_step(mm.get(), d.get());
    double L = 0;
    for (int i = 0; i < nq; ++i) L += w[static_cast<std::size_t>(i)] * d->qpos[i];
    for (int i = 0; i < nv; ++i) L += w[static_cast<std::size_t>(nq + i)] * d->qvel[i];
    return L;
  };
  const double h = 1e-6;
  double worst = 0, worst_rel = 0;
  int checked = 0;
  for (int k = 0; k < 2 * nv + nu; k += 3) {  // every third input: free joint, hinges, velocities, controls
    const double fd = (loss(k, h) - loss(k, -h)) / (2 * h);
    const double fd2 = (loss(k, 2 * h) - loss(k, -2 * h)) / (4 * h);
    const double adj = k < nv ? gq[static_cast<std::size_t>(k)]
                       : k < 2 * nv ? gv[static_cast<std::size_t>(k - nv)]
                                    : gu[static_cast<std::size_t>(k - 2 * nv)];
    const double bound = 1e-6 * std::abs(fd) + 10 * std::abs(fd - fd2);
    EXPECT_LE(std::abs(adj - fd), bound) << c.name << " input " << k << ": grad " << adj << " MuJoCo FD " << fd
                                         << " (at 2h " << fd2 << ")";
    worst = std::max(worst, std::abs(adj - fd) / std::max(bound, 1e-300));
    worst_rel = std::max(worst_rel, std::abs(adj - fd) / std::max(1.0, std::abs(fd)));
    ++checked;
  }
  std::printf("[grad vs mujoco] %-9s N=%d, %d inputs: worst |grad - MuJoCo FD| / max(1, |fd|) %.1e, / bound %.2f\n",
              c.name, kSteps, checked, worst_rel, worst);
}

TEST(CliGradVsMujoco, HumanoidLyingOnTheFloor) {
  compare({"humanoid", sgtest::humanoid_xml(), "<option timestep=\"0.005\"/>",
           "<option timestep=\"0.005\" tolerance=\"1e-14\" iterations=\"100\"/>", "", 300});
}

TEST(CliGradVsMujoco, G1AtHomeUnderServos) {
  const std::string path = sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml";
  if (!sgtest::file_exists(path)) GTEST_FAIL() << "G1 model missing: " << path;
  compare({"g1", path, "iterations=\"5\"", "iterations=\"100\" tolerance=\"1e-14\"", "home", 100});
}

}  // namespace
