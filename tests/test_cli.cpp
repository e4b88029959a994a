// The command line: runs the built `stiffgrad` binary and checks its output against the
// library (dynamics, rollout) and its error handling.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/dynamics_host.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

TEST(Cli, HelpForEveryCommand) {
  for (const char* c : {"info", "dynamics", "rollout"}) {
    const auto r = run_cli(std::string(c) + " --help");
    EXPECT_EQ(r.status, 0) << c;
    EXPECT_NE(r.out.find("usage: stiffgrad"), std::string::npos) << c;
  }
  EXPECT_EQ(run_cli("").status, 2);
  EXPECT_NE(run_cli("").err.find("usage: stiffgrad"), std::string::npos);
  EXPECT_EQ(run_cli("frobnicate").status, 2);
}

TEST(Cli, InfoOnHumanoid) {
  const auto r = run_cli("info " + sgtest::humanoid_xml());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("nq, nv     28, 27"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("actuators  21"), std::string::npos) << r.out;
}

TEST(Cli, DynamicsMatchesLibraryToAllDigits) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  std::stringstream csv;
  csv.precision(17);
  csv << "# qpos, qvel, ctrl\n";
  std::vector<double> qpos = m->qpos0, qvel(m->nv), ctrl(m->nu);
  for (int i = 0; i < m->nv; ++i) qvel[i] = 0.1 * (i % 5) - 0.2;
  for (int u = 0; u < m->nu; ++u) ctrl[u] = 0.3 * ((u % 3) - 1);
  qpos[7] = 0.25;
  for (int row = 0; row < 2; ++row) {
    std::string sep;
    for (double x : qpos) csv << sep << x, sep = ",";
    for (double x : qvel) csv << sep << x;
    for (double x : ctrl) csv << sep << x;
    csv << "\n";
  }
  const auto r = run_cli("dynamics " + sgtest::humanoid_xml() + " --states " + temp_file("s.csv", csv.str()));
  ASSERT_EQ(r.status, 0) << r.out;
  std::stringstream lines(r.out);
  std::string line;
  int rows = 0;
  const auto ref = smooth_dynamics(*m, qpos.data(), qvel.data(), ctrl.data());
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') continue;
    ++rows;
    EXPECT_EQ(json_array(line, "M"), ref.M);  // 17 digits round-trip doubles exactly
    EXPECT_EQ(json_array(line, "qfrc_bias"), ref.qfrc_bias);
    EXPECT_EQ(json_array(line, "qfrc_passive"), ref.qfrc_passive);
    EXPECT_EQ(json_array(line, "qfrc_actuator"), ref.qfrc_actuator);
    EXPECT_EQ(json_array(line, "qacc"), ref.qacc);
  }
  EXPECT_EQ(rows, 2);
}

TEST(Cli, RolloutMatchesLibrary) {
  const auto m = load_mjcf(sgtest::data_dir() + "/models/dm_control/cartpole.xml");
  const std::vector<double> state = {0.1, 0.5, 0.0, -0.3, 0.7};  // nq=2, nv=2, nu=1
  ASSERT_EQ(static_cast<int>(state.size()), m->nq + m->nv + m->nu);
  const auto path = temp_file("c.csv", "0.1,0.5,0.0,-0.3,0.7\n");
  const auto r = run_cli("rollout " + m->file + " --states " + path + " --steps 50");
  ASSERT_EQ(r.status, 0) << r.out;
  std::vector<double> q = {0.1, 0.5}, v = {0.0, -0.3};
  const double u = 0.7;
  rollout_host(*m, q.data(), v.data(), &u, 50);
  std::stringstream ss(r.out);
  std::string tok;
  std::vector<double> got;
  while (std::getline(ss, tok, ',')) got.push_back(std::strtod(tok.c_str(), nullptr));
  ASSERT_EQ(got.size(), 4u) << r.out;
  EXPECT_EQ(got[0], q[0]);
  EXPECT_EQ(got[1], q[1]);
  EXPECT_EQ(got[2], v[0]);
  EXPECT_EQ(got[3], v[1]);
  // float runs and stays close
  const auto f = run_cli("rollout " + m->file + " --states " + path + " --steps 50 --float");
  ASSERT_EQ(f.status, 0) << f.out;
  EXPECT_NEAR(std::strtod(f.out.c_str(), nullptr), q[0], 1e-4);
}

// --integrator and the adaptive tolerances reach the simulator: RK4 and Tsit5 rollouts equal
// the library's (rollout_host with that integrator), and a bad value is a usage error.
TEST(Cli, RolloutIntegrators) {
  const auto m = load_mjcf(sgtest::data_dir() + "/models/dm_control/cartpole.xml");
  const auto path = temp_file("ci.csv", "0.1,0.5,0.0,-0.3,0.7\n");
  for (const auto& [name, integ] : {std::pair{"rk4", Integrator::RK4}, std::pair{"tsit5", Integrator::Tsit5}}) {
    const auto r = run_cli("rollout " + m->file + " --states " + path + " --steps 20 --integrator " + name);
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<double> q = {0.1, 0.5}, v = {0.0, -0.3};
    const double u = 0.7;
    rollout_host(*m, q.data(), v.data(), &u, 20, integ, true);
    EXPECT_EQ(std::strtod(r.out.c_str(), nullptr), q[0]) << name;
  }
  const auto tight = run_cli("rollout " + m->file + " --states " + path +
                             " --steps 5 --integrator tsit5 --rtol 1e-12 --atol 1e-14 --max-steps 1");
  EXPECT_EQ(tight.status, 0);
  EXPECT_NE(tight.err.find("reached --max-steps"), std::string::npos) << tight.err;
  auto bad = run_cli("rollout " + m->file + " --states " + path + " --steps 1 --integrator rk45");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--integrator must be"), std::string::npos) << bad.err;
  bad = run_cli("rollout " + m->file + " --states " + path + " --steps 1 --integrator tsit5 --rtol -1");
  EXPECT_EQ(bad.status, 2);
  bad = run_cli("grad " + m->file + " --states " + path + " --steps 1 --weights " + temp_file("w.csv", "1,0,0,0\n") +
                " --cfd 0,0.01");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--cfd"), std::string::npos) << bad.err;
}

TEST(Cli, BadInputGivesClearErrors) {
  const std::string model = sgtest::data_dir() + "/models/dm_control/cartpole.xml";
  auto r = run_cli("rollout " + model + " --states " + temp_file("bad.csv", "0.1,0.5,zz,0,0\n") + " --steps 3");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.csv:1: malformed number 'zz'"), std::string::npos) << r.err;
  r = run_cli("rollout " + model + " --states " + temp_file("short.csv", "# c\n0.1,0.5\n") + " --steps 3");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("short.csv:2: expected 5 values, found 2"), std::string::npos) << r.err;
  r = run_cli("rollout " + model + " --states x.csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--steps"), std::string::npos) << r.err;
  r = run_cli("info /nonexistent/model.xml");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/model.xml"), std::string::npos) << r.err;
  r = run_cli("rollout " + model + " --states " + temp_file("ok.csv", "0,0,0,0,0\n") + " --steps 1 --backend tpu");
  EXPECT_EQ(r.status, 2);
}

}  // namespace

namespace {

// `grad`: L = w.[qpos_N; qvel_N] with ctrl held; compared with central differences of the
// CLI's own rollout output in the same process-independent way a user would check it.
TEST(Cli, GradMatchesFiniteDifferencesOfRollout) {
  const std::string model = sgtest::data_dir() + "/models/dm_control/cartpole.xml";
  const double x[5] = {0.1, 0.5, 0.2, -0.3, 0.4};
  const double w[4] = {0.3, -1.2, 0.7, 0.25};
  auto line = [](const double* v, int n) {
    std::stringstream s;
    s.precision(17);
    for (int i = 0; i < n; ++i) s << (i ? "," : "") << v[i];
    s << "\n";
    return s.str();
  };
  const auto states = temp_file("g.csv", line(x, 5));
  const auto weights = temp_file("w.csv", line(w, 4));
  const auto r = run_cli("grad " + model + " --states " + states + " --steps 30 --weights " + weights);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto gq = json_array(r.out, "dL_dqpos"), gv = json_array(r.out, "dL_dqvel"), gu = json_array(r.out, "dL_dctrl");
  ASSERT_EQ(gq.size(), 2u);
  ASSERT_EQ(gv.size(), 2u);
  ASSERT_EQ(gu.size(), 1u);
  const auto m = load_mjcf(model);
  auto loss = [&](const double* y) {
    double q[2] = {y[0], y[1]}, v[2] = {y[2], y[3]};
    rollout_host(*m, q, v, y + 4, 30);
    return w[0] * q[0] + w[1] * q[1] + w[2] * v[0] + w[3] * v[1];
  };
  const double grads[5] = {gq[0], gq[1], gv[0], gv[1], gu[0]};
  for (int i = 0; i < 5; ++i) {
    double a[5], b[5];
    std::copy(x, x + 5, a);
    std::copy(x, x + 5, b);
    const double h = 1e-6;
    a[i] += h;
    b[i] -= h;
    const double fd = (loss(a) - loss(b)) / (2 * h);
    EXPECT_NEAR(grads[i], fd, 1e-6 * std::max(1.0, std::abs(fd))) << "input " << i;
  }
}

TEST(Cli, GradcheckPassesAndReports) {
  const auto r = run_cli("gradcheck " + sgtest::humanoid_xml() + " --steps 10 --substeps 2 --samples 4");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("dot-product residual"), std::string::npos);
  EXPECT_NE(r.out.find("PASSED"), std::string::npos);
  const auto f = run_cli("gradcheck " + sgtest::humanoid_xml() + " --steps 5 --float --samples 3");
  EXPECT_EQ(f.status, 0) << f.out << f.err;
  EXPECT_EQ(run_cli("gradcheck " + sgtest::humanoid_xml() + " --steps x").status, 2);
  EXPECT_EQ(run_cli("grad --help").status, 0);
  EXPECT_EQ(run_cli("gradcheck --help").status, 0);
}

}  // namespace
