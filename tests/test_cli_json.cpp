// Experiments as data (docs/experiments/running.md): `stiffgrad train` writes DIR/summary.json
// beside DIR/log.csv and `stiffgrad eval --json FILE` the evaluation as one JSON object, so that
// scripts read figures instead of scraping the printed lines. The JSON must hold every figure
// the lines print, agree with them to the lines' precision, and say null where a line leaves a
// figure out (a task that cannot fall, has no feet or tracks nothing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>

#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The object `"key": {...}` of a JSON text (one level of nesting, as eval writes it), "" if absent.
std::string json_object(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\": {");
  if (at == std::string::npos) return "";
  const auto b = json.find('{', at), e = json.find('}', b);
  return json.substr(b, e - b + 1);
}

// The raw value of `"key": VALUE` (a number, null or a quoted string), "" when the key is absent.
std::string json_raw(const std::string& json, const std::string& key) {
  const std::string tag = "\"" + key + "\": ";
  const auto at = json.find(tag);
  if (at == std::string::npos) return "";
  const auto b = at + tag.size();
  const auto e = json.find_first_of(",}\n", b);
  return json.substr(b, e - b);
}

// The number of `"key": X`; NaN for null, and a test failure when the key is absent.
double json_number(const std::string& json, const std::string& key) {
  const std::string raw = json_raw(json, key);
  EXPECT_FALSE(raw.empty()) << "no \"" << key << "\" in " << json;
  if (raw.empty() || raw == "null") return std::nan("");
  char* end = nullptr;
  const double x = std::strtod(raw.c_str(), &end);
  EXPECT_EQ(*end, '\0') << key << ": " << raw;
  return x;
}

// The number that follows `label` in `text` (e.g. "mean return " in an eval line); NaN if absent.
double number_after(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}

// The first printed line that starts with `prefix`, "" if none.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// `stiffgrad eval ARGS --json FILE` (FILE a fresh temporary named after `name`): the run and the
// JSON it wrote ("" when the run failed or wrote nothing; the caller's assertion shows the run).
std::pair<Run, std::string> eval_with_json(const std::string& args, const std::string& name) {
  const std::string file = unique_temp(name);
  Run r = run_cli("eval " + args + " --json " + file);
  EXPECT_EQ(r.status, 0) << r.err;
  return {r, r.status == 0 ? read_file(file) : std::string()};
}

// One simulator's figures in eval's JSON against its printed line.
void expect_sim_agrees(const std::string& sim_json, const std::string& line, bool falls, bool feet, int episodes) {
  SCOPED_TRACE(line);
  ASSERT_FALSE(sim_json.empty());
  ASSERT_FALSE(line.empty());
  // the line prints %.6g and %.1f: the JSON's full precision agrees to those digits
  const double ret = json_number(sim_json, "mean_return");
  EXPECT_NEAR(ret, number_after(line, "mean return "), 1e-5 * std::max(1.0, std::fabs(ret)));
  EXPECT_NEAR(json_number(sim_json, "mean_episode_length"), number_after(line, "mean episode length "), 0.05 + 1e-9);
  EXPECT_EQ(json_number(sim_json, "episodes"), episodes);
  if (falls) {
    EXPECT_EQ(json_number(sim_json, "falls"), number_after(line, "falls "));
    EXPECT_TRUE(contains(line, "/" + std::to_string(episodes)));
  } else {
    EXPECT_EQ(json_raw(sim_json, "falls"), "null");
    EXPECT_FALSE(contains(line, "falls"));
  }
  if (feet)
    EXPECT_NEAR(json_number(sim_json, "mean_penetration_mm"), number_after(line, "mean penetration "), 5e-5 + 1e-9);
  else
    EXPECT_EQ(json_raw(sim_json, "mean_penetration_mm"), "null");
  // neither task here tracks a reference
  EXPECT_EQ(json_raw(sim_json, "tracking_error"), "null");
  EXPECT_FALSE(contains(line, "tracking"));
}

// A tiny SHAC run: DIR/summary.json beside DIR/log.csv, agreeing with the throughput and final
// lines and with the log's last row. Episodes of 40 steps end within the 2 x 32 steps, so the
// final mean return is a number.
TEST(CliJson, TrainWritesSummaryJsonAgreeingWithItsLines) {
  const std::string dir = unique_temp("json_train");
  const auto r = run_cli("train cartpole-swingup --algo shac --envs 4 --iterations 2 --episode-steps 40 --threads 1 --out " +
                         dir + " --data " + sgtest::data_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string json = read_file(dir + "/summary.json");
  ASSERT_FALSE(json.empty()) << "no " << dir << "/summary.json";
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json_raw(json, "task"), "\"cartpole-swingup\"");
  EXPECT_EQ(json_raw(json, "algo"), "\"shac\"");
  EXPECT_EQ(json_number(json, "envs"), 4);
  EXPECT_EQ(json_number(json, "iterations"), 2);
  EXPECT_EQ(json_number(json, "env_steps"), 4 * 32 * 2);
  EXPECT_EQ(json_raw(json, "log"), "\"log.csv\"");
  EXPECT_EQ(json_raw(json, "policy"), "\"policy.sgp\"");

  // "throughput: X env-steps/s; time in simulation A%, adjoint B%, networks C% (W s)"
  const std::string tp = line_starting(r.out, "throughput: ");
  double rate = 0, sim = 0, adj = 0, net = 0, wall = 0;
  ASSERT_EQ(std::sscanf(tp.c_str(), "throughput: %lf env-steps/s; time in simulation %lf%%, adjoint %lf%%, networks %lf%% (%lf s)",
                        &rate, &sim, &adj, &net, &wall), 5) << tp;
  EXPECT_NEAR(json_number(json, "env_steps_per_s"), rate, 0.5 + 1e-9);
  EXPECT_NEAR(json_number(json, "wall_s"), wall, 0.05 + 1e-9);
  const std::string fractions = json_object(json, "time_fraction");
  ASSERT_FALSE(fractions.empty()) << json;
  EXPECT_NEAR(100 * json_number(fractions, "simulation"), sim, 0.05 + 1e-9);
  EXPECT_NEAR(100 * json_number(fractions, "adjoint"), adj, 0.05 + 1e-9);
  EXPECT_NEAR(100 * json_number(fractions, "networks"), net, 0.05 + 1e-9);

  const std::string fin = line_starting(r.out, "final mean return: ");
  ASSERT_FALSE(fin.empty()) << r.out;
  const double final_return = json_number(json, "final_mean_return");
  ASSERT_TRUE(std::isfinite(final_return)) << json << "\n" << r.out;
  EXPECT_NEAR(final_return, number_after(fin, "final mean return: "), 1e-5 * std::max(1.0, std::fabs(final_return)));

  // the last row of log.csv: iteration 1, its env_steps and wall_s
  std::ifstream csv(dir + "/log.csv");
  std::string row, last;
  while (std::getline(csv, row))
    if (!row.empty()) last = row;
  int iteration = -1;
  long long steps = -1;
  double log_wall = -1;
  ASSERT_EQ(std::sscanf(last.c_str(), "%d,%lld,%lf", &iteration, &steps, &log_wall), 3) << last;
  EXPECT_EQ(iteration + 1, json_number(json, "iterations"));
  EXPECT_EQ(steps, json_number(json, "env_steps"));
  EXPECT_NEAR(log_wall, json_number(json, "wall_s"), 1e-5 * std::max(1.0, log_wall));
}

// Before any episode ends the final mean return is undefined: "n/a" printed, null in the JSON.
TEST(CliJson, TrainSummarySaysNullWhereTheLineSaysNotApplicable) {
  const std::string dir = unique_temp("json_train_na");
  const auto r = run_cli("train cartpole-swingup --algo ppo --envs 2 --iterations 1 --threads 1 --out " + dir + " --data " +
                         sgtest::data_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "final mean return: n/a")) << r.out;
  const std::string json = read_file(dir + "/summary.json");
  EXPECT_EQ(json_raw(json, "final_mean_return"), "null") << json;
  EXPECT_FALSE(contains(json, "nan")) << json;
  EXPECT_FALSE(contains(json, "inf")) << json;
}

// eval --json on the cartpole (no falls, no feet) and the ant (both), in stiffgrad and MuJoCo.
TEST(CliJson, EvalJsonAgreesWithItsLines) {
  const std::string cart = unique_temp("json_eval_cart"), ant = unique_temp("json_eval_ant");
  ASSERT_EQ(run_cli("train cartpole-swingup --algo ppo --envs 2 --iterations 1 --threads 1 --out " + cart + " --data " +
                    sgtest::data_dir()).status, 0);
  ASSERT_EQ(run_cli("train ant-run --algo ppo --envs 2 --iterations 1 --horizon 4 --threads 1 --out " + ant + " --data " +
                    sgtest::data_dir()).status, 0);
  const std::string data = " --data " + sgtest::data_dir();

  {  // the cartpole in stiffgrad only: no "mujoco" object, no delta_d
    const auto [c, json] = eval_with_json(cart + "/policy.sgp --episodes 2 --episode-steps 50" + data, "json_eval_cart.json");
    ASSERT_FALSE(json.empty()) << c.out << c.err;
    EXPECT_EQ(json_raw(json, "task"), "\"cartpole-swingup\"");
    EXPECT_EQ(json_raw(json, "in"), "\"stiffgrad\"");
    EXPECT_EQ(json_number(json, "episodes"), 2);
    expect_sim_agrees(json_object(json, "stiffgrad"), line_starting(c.out, "stiffgrad: "), false, false, 2);
    EXPECT_TRUE(json_object(json, "mujoco").empty()) << json;
    EXPECT_TRUE(json_raw(json, "delta_d_mm").empty()) << json;
  }
  {  // the ant in MuJoCo and stiffgrad: falls, penetration and delta_d
    const auto [a, json] = eval_with_json(ant + "/policy.sgp --in mujoco --episodes 2 --episode-steps 50" + data,
                                          "json_eval_ant.json");
    ASSERT_FALSE(json.empty()) << a.out << a.err;
    EXPECT_EQ(json_raw(json, "in"), "\"mujoco\"");
    expect_sim_agrees(json_object(json, "stiffgrad"), line_starting(a.out, "stiffgrad: "), true, true, 2);
    expect_sim_agrees(json_object(json, "mujoco"), line_starting(a.out, "mujoco: "), true, true, 2);
    const std::string dd = line_starting(a.out, "delta_d ");
    ASSERT_FALSE(dd.empty()) << a.out;
    EXPECT_NEAR(json_number(json, "delta_d_mm"), number_after(dd, "): "), 5e-5 + 1e-9) << dd;
    EXPECT_NEAR(json_number(json, "delta_d_mm"),
                json_number(json_object(json, "mujoco"), "mean_penetration_mm") -
                    json_number(json_object(json, "stiffgrad"), "mean_penetration_mm"),
                1e-9);
  }
  {  // a file that cannot be written is an error, after the printed lines
    const auto bad = run_cli("eval " + cart + "/policy.sgp --episodes 1 --episode-steps 10 --json " +
                             unique_temp("no_such_dir") + "/eval.json" + data);
    EXPECT_EQ(bad.status, 1) << bad.err;
    EXPECT_TRUE(contains(bad.err, "cannot write")) << bad.err;
  }
}

// The shipped cartpole policy (models/policies/README.md) does what the README says: evaluated
// in MuJoCo 2.2.2 it swings the pole up and holds it. Its return there was 866.7 of at most 1000
// when it was trained (`stiffgrad train cartpole-swingup --algo shac --seed 0`); a policy after one
// PPO iteration gets 75, so 800 separates a swing-up from none. stiffgrad's own evaluation must
// agree with MuJoCo's (the same deterministic episodes of the same dynamics).
TEST(CliJson, ShippedCartpolePolicySwingsUpInMujoco) {
  const std::string policy = std::string(SG_SOURCE_DIR) + "/models/policies/cartpole_shac.sgp";
  ASSERT_TRUE(std::ifstream(policy).good()) << "missing " << policy;
  const auto [r, json] = eval_with_json(policy + " --in mujoco --data " + sgtest::data_dir(), "json_shipped_cartpole.json");
  ASSERT_FALSE(json.empty()) << r.out << r.err;
  const double in_mujoco = json_number(json_object(json, "mujoco"), "mean_return");
  const double in_stiffgrad = json_number(json_object(json, "stiffgrad"), "mean_return");
  EXPECT_GE(in_mujoco, 800.0) << r.out;
  EXPECT_NEAR(in_stiffgrad, in_mujoco, 1e-3 * in_mujoco) << r.out;
}

}  // namespace
