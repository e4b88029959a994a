// The cartpole-swingup and ant-run tasks: observation and reward adjoints against forward-mode
// dual numbers (the kernels) and central finite differences (the Task functions, with the
// squashed action map), and the task factory's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/base/dual.hpp"
#include "kernels/tasks/cartpole.hpp"
#include "stiffgrad/learn/task.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;
using D = kern::Dual<double, 1>;

learn::TaskOptions options() {
  learn::TaskOptions o;
  o.data_dir = sgtest::data_dir();
  return o;
}

TEST(LearnTasks, CartpoleKernelsDotProductAgainstDualNumbers) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    double q[2] = {n(rng), 3 * n(rng)}, v[2] = {n(rng), 3 * n(rng)}, u = 0.9 * std::tanh(n(rng));
    double du[5], w[5];
    for (double& x : du) x = n(rng);
    for (double& x : w) x = n(rng);
    // forward mode: J du for inputs (q0, q1, v0, v1, u)
    D qd[2] = {q[0], q[1]}, vd[2] = {v[0], v[1]}, ud = u, od[5];
    qd[0].d[0] = du[0]; qd[1].d[0] = du[1]; vd[0].d[0] = du[2]; vd[1].d[0] = du[3]; ud.d[0] = du[4];
    kern::tasks::cartpole_observe(qd, vd, od);
    const D rd = kern::tasks::cartpole_reward(qd, vd, ud);
    double lhs = rd.d[0] * w[0];
    for (int k = 0; k < 4; ++k) lhs += od[k + 1].d[0] * w[k + 1];  // obs 1..4 with w 1..4; obs 0 below
    lhs += od[0].d[0] * 0.7;
    // reverse mode: Jᵀ w
    double aq[2] = {0, 0}, av[2] = {0, 0}, au = 0, ao[5] = {0.7, w[1], w[2], w[3], w[4]};
    kern::tasks::adj_cartpole_observe(q, v, ao, aq, av);
    kern::tasks::adj_cartpole_reward(q, v, u, w[0], aq, av, &au);
    const double rhs = aq[0] * du[0] + aq[1] * du[1] + av[0] * du[2] + av[1] * du[3] + au * du[4];
    EXPECT_NEAR(lhs, rhs, 1e-13 * (1 + std::abs(lhs)));
  }
}

// Central differences of observe and reward of a Task at random states; raw qpos components
// are perturbed one at a time (the adjoint is in raw coordinates).
void check_task_fd(learn::Task& task, const std::vector<double>& q, const std::vector<double>& v,
                   const std::vector<double>& a, double bound) {
  const int nq = task.model()->nq, nv = task.model()->nv, no = task.obs_dim(), na = task.act_dim();
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<double> w(no);
  for (double& x : w) x = n(rng);
  std::vector<double> aq(nq, 0.0), av(nv, 0.0), aa(na, 0.0);
  task.adj_observe(0, 0, q.data(), v.data(), w.data(), aq.data(), av.data());
  const double wr = 0.8;
  task.adj_reward(0, 1, q.data(), v.data(), a.data(), wr, aq.data(), av.data(), aa.data());
  const auto f = [&](const std::vector<double>& qq, const std::vector<double>& vv, const std::vector<double>& act) {
    std::vector<double> o(no);
    task.observe(0, 0, qq.data(), vv.data(), o.data());
    double s = wr * task.reward(0, 1, qq.data(), vv.data(), act.data());
    for (int k = 0; k < no; ++k) s += w[k] * o[k];
    return s;
  };
  const double h = 1e-6;
  double err = 0, scale = 0;
  const auto cmp = [&](double fd, double adj) {
    err = std::max(err, std::abs(fd - adj));
    scale = std::max(scale, std::abs(fd));
  };
  for (int i = 0; i < nq; ++i) {
    auto p = q, m = q;
    p[i] += h; m[i] -= h;
    cmp((f(p, v, a) - f(m, v, a)) / (2 * h), aq[i]);
  }
  for (int i = 0; i < nv; ++i) {
    auto p = v, m = v;
    p[i] += h; m[i] -= h;
    cmp((f(q, p, a) - f(q, m, a)) / (2 * h), av[i]);
  }
  for (int i = 0; i < na; ++i) {
    auto p = a, m = a;
    p[i] += h; m[i] -= h;
    cmp((f(q, v, p) - f(q, v, m)) / (2 * h), aa[i]);
  }
  ASSERT_GT(scale, 0.0);
  EXPECT_LT(err / scale, bound) << task.name();
  // and the action map ctrl(a): its VJP against central differences
  std::vector<double> wc(task.model()->nu), ac(na, 0.0), cp(task.model()->nu), cm(task.model()->nu);
  for (double& x : wc) x = n(rng);
  task.adj_action_to_ctrl(0, 0, a.data(), wc.data(), ac.data());
  for (int i = 0; i < na; ++i) {
    auto p = a, m = a;
    p[i] += h; m[i] -= h;
    task.action_to_ctrl(0, 0, p.data(), cp.data());
    task.action_to_ctrl(0, 0, m.data(), cm.data());
    double fd = 0;
    for (int k = 0; k < task.model()->nu; ++k) fd += wc[k] * (cp[k] - cm[k]) / (2 * h);
    EXPECT_NEAR(fd, ac[i], 1e-8 * (1 + std::abs(fd)));
  }
}

TEST(LearnTasks, CartpoleTaskAdjointsMatchFiniteDifferences) {
  auto task = learn::make_task("cartpole-swingup", options());
  ASSERT_EQ(task->obs_dim(), 5);
  ASSERT_EQ(task->act_dim(), 1);
  check_task_fd(*task, {0.3, 2.5}, {-0.4, 1.5}, {0.35}, 1e-8);
}

TEST(LearnTasks, AntTaskAdjointsMatchFiniteDifferences) {
  auto task = learn::make_task("ant-run", options());
  const auto& m = *task->model();
  ASSERT_EQ(task->obs_dim(), m.nq - 2 + m.nv);
  std::mt19937_64 rng(4);
  std::vector<double> q(m.nq), v(m.nv), a(m.nu);
  task->resize(1);
  task->reset_env(0, rng, q.data(), v.data());
  std::normal_distribution<double> n(0.0, 1.0);
  for (double& x : a) x = n(rng);
  check_task_fd(*task, q, v, a, 1e-8);
}

TEST(LearnTasks, CartpoleRewardIsOneUprightAndStill) {
  // independent of the code under test: upright (θ = 0), centered, no control, at rest gives
  // each of dm_control's four factors its maximum 1
  EXPECT_DOUBLE_EQ(kern::tasks::cartpole_reward<double>(std::vector<double>{0, 0}.data(), std::vector<double>{0, 0}.data(), 0.0), 1.0);
  // hanging down: upright = 0
  EXPECT_NEAR(kern::tasks::cartpole_reward<double>(std::vector<double>{0, M_PI}.data(), std::vector<double>{0, 0}.data(), 0.0), 0.0, 1e-15);
  // the Gaussian tolerance reaches 0.1 at its margin: centered = (1 + 0.1)/2 at x = 2
  EXPECT_NEAR(kern::tasks::cartpole_reward<double>(std::vector<double>{2, 0}.data(), std::vector<double>{0, 0}.data(), 0.0), 0.55, 1e-12);
  // small_control at |u| = 1/2: (4 + 3/4)/5
  EXPECT_NEAR(kern::tasks::cartpole_reward<double>(std::vector<double>{0, 0}.data(), std::vector<double>{0, 0}.data(), 0.5), 0.95, 1e-12);
}

TEST(LearnTasks, FactoryErrors) {
  EXPECT_THROW(learn::make_task("no-such-task", options()), std::invalid_argument);
  learn::TaskOptions bad = options();
  bad.data_dir = "/nonexistent/data";
  try {
    learn::make_task("cartpole-swingup", bad);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/data"), std::string::npos) << e.what();
  }
}

}  // namespace
