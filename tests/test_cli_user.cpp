// The command line as a new user meets it (issue 6, section 5): making starting states,
// model information with ranges and JSON, clear errors for empty inputs and oversized
// requests, one --steps rule, honest tolerances in the help, progress on terminals only, and
// a demo that says why it failed.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "apps/cli/cli.hpp"
#include "apps/cli/progress.hpp"
#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/learn/train.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

std::string g1_xml() { return sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml"; }
std::string cartpole_xml() { return sgtest::data_dir() + "/models/dm_control/cartpole.xml"; }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// `stiffgrad states MODEL OPTIONS -o PATH`, then the library's reader on PATH (empty on failure).
std::vector<StateRow> states_via_cli(const Model& m, const std::string& options, const std::string& path) {
  const auto r = run_cli("states " + m.file + " " + options + " -o " + path);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "-o must not also write stdout";
  return r.status == 0 ? read_states_csv(path, m) : std::vector<StateRow>{};
}

// ---- a strict JSON grammar check (RFC 8259 values), enough to prove `info --json` parses ----

struct JsonChecker {
  const std::string& s;
  std::size_t i = 0;

  void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
  bool lit(const char* w) {
    const std::string t = w;
    if (s.compare(i, t.size(), t) != 0) return false;
    i += t.size();
    return true;
  }
  bool string() {
    if (i >= s.size() || s[i] != '"') return false;
    for (++i; i < s.size(); ++i) {
      if (static_cast<unsigned char>(s[i]) < 0x20) return false;
      if (s[i] == '\\') ++i;
      else if (s[i] == '"') return ++i, true;
    }
    return false;
  }
  bool number() {
    const std::size_t b = i;
    if (i < s.size() && s[i] == '-') ++i;
    const std::size_t digits = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' ||
                            s[i] == 'E' || s[i] == '+' || s[i] == '-'))
      ++i;
    if (i == digits) return false;
    char* end = nullptr;
    std::strtod(s.c_str() + b, &end);  // the characters taken must form one number
    return end == s.c_str() + i;
  }
  template <class Item>
  bool sequence(char close, Item item) {
    ++i;
    ws();
    if (i < s.size() && s[i] == close) return ++i, true;
    while (true) {
      if (!item()) return false;
      ws();
      if (i < s.size() && s[i] == ',') { ++i; ws(); continue; }
      return i < s.size() && s[i++] == close;
    }
  }
  bool value() {
    ws();
    if (i >= s.size()) return false;
    if (s[i] == '{')
      return sequence('}', [&] {
        if (!string()) return false;
        ws();
        return i < s.size() && s[i++] == ':' && value();
      });
    if (s[i] == '[') return sequence(']', [&] { return value(); });
    if (s[i] == '"') return string();
    return lit("true") || lit("false") || lit("null") || number();
  }
};

bool is_json(const std::string& text) {
  JsonChecker c{text};
  if (!c.value()) return false;
  c.ws();
  return c.i == text.size();
}

TEST(CliUser, JsonCheckerRejectsMalformedText) {
  EXPECT_TRUE(is_json("{\"a\": [1, -2.5e-3, null, true], \"b\": {\"c\": \"x\\\"y\"}}\n"));
  EXPECT_FALSE(is_json("{\"a\": [1, 2,]}"));
  EXPECT_FALSE(is_json("{\"a\": nan}"));
  EXPECT_FALSE(is_json("{\"a\": 1} x"));
}

// ---- info ----

TEST(CliUser, InfoPrintsQpos0RangesAndCtrlrange) {
  const auto r = run_cli("info " + sgtest::humanoid_xml());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "qpos0      0 0 1.5 1 0 0 0 0")) << r.out;
  EXPECT_TRUE(contains(r.out, "joint root                         free  body torso")) << r.out;
  EXPECT_TRUE(contains(r.out, "range unlimited")) << r.out;
  EXPECT_TRUE(contains(r.out, "range [-0.78539816339744828, 0.78539816339744828]")) << r.out;  // abdomen_z +-45 deg
  EXPECT_TRUE(contains(r.out, "actuator left_elbow")) << r.out;
  EXPECT_TRUE(contains(r.out, "ctrlrange [-1, 1]")) << r.out;
}

TEST(CliUser, InfoJsonParsesAndHoldsTheModel) {
  const auto m = load_mjcf(g1_xml());
  const auto r = run_cli("info " + g1_xml() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(is_json(r.out)) << r.out;
  EXPECT_EQ(json_array(r.out, "qpos0"), m->qpos0);  // 17 digits: exact
  EXPECT_TRUE(contains(r.out, "\"nq\": " + std::to_string(m->nq) + ","));
  EXPECT_TRUE(contains(r.out, "\"keyframes\": [\"home\", \"knees_bent\"]")) << r.out;
  // a ctrl-limited actuator's range appears exactly
  const std::string name = "\"name\": \"" + m->actuator_name[0] + "\"";
  ASSERT_TRUE(contains(r.out, name)) << r.out;
  EXPECT_EQ(json_array(r.out.substr(r.out.find(name)), "ctrlrange"),
            (std::vector<double>{m->actuator_ctrlrange[0], m->actuator_ctrlrange[1]}));
}

// ---- states ----

TEST(CliUser, StatesQpos0IsWhatTheReaderReadsBack) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  const std::string path = unique_temp("qpos0.csv");
  const auto states = states_via_cli(*m, "", path);
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].qpos, m->qpos0);
  EXPECT_EQ(states[0].qvel, std::vector<double>(m->nv, 0.0));
  EXPECT_EQ(states[0].ctrl, std::vector<double>(m->nu, 0.0));
  // stdout and the --qpos0 spelling give the same text
  EXPECT_EQ(run_cli("states " + sgtest::humanoid_xml() + " --qpos0").out, file_text(path));
}

TEST(CliUser, StatesKeyframeByNameAndUnknownNameListsThem) {
  const auto m = load_mjcf(g1_xml());
  const auto states = states_via_cli(*m, "--keyframe knees_bent", unique_temp("key.csv"));
  ASSERT_EQ(states.size(), 1u);
  const Keyframe& k = m->keyframes[m->keyframe_id("knees_bent")];
  EXPECT_EQ(states[0].qpos, k.qpos);
  EXPECT_EQ(states[0].qvel, k.qvel);
  EXPECT_EQ(states[0].ctrl, k.ctrl);
  const auto bad = run_cli("states " + g1_xml() + " --keyframe crouch");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.err, "no keyframe 'crouch'")) << bad.err;
  EXPECT_TRUE(contains(bad.err, "available: home knees_bent")) << bad.err;
  const auto none = run_cli("states " + sgtest::humanoid_xml() + " --keyframe stand");
  EXPECT_EQ(none.status, 1);
  EXPECT_TRUE(contains(none.err, "the model has no keyframes")) << none.err;
}

void expect_within_ranges(const Model& m, const StateRow& s) {
  for (int j = 0; j < m.njnt; ++j) {
    const double* q = s.qpos.data() + m.jnt_qposadr[j];
    const double lo = m.jnt_range[2 * j], hi = m.jnt_range[2 * j + 1];
    switch (m.jnt_type[j]) {
      case JointType::Hinge:
      case JointType::Slide:
        if (m.jnt_limited[j]) {
          EXPECT_GE(q[0], lo) << m.jnt_name[j];
          EXPECT_LE(q[0], hi) << m.jnt_name[j];
        } else {
          EXPECT_LE(std::abs(q[0] - m.qpos0[m.jnt_qposadr[j]]), 0.1) << m.jnt_name[j];
        }
        break;
      case JointType::Free:
        for (int k = 0; k < 3; ++k) EXPECT_LE(std::abs(q[k] - m.qpos0[m.jnt_qposadr[j] + k]), 0.1);
        q += 3;
        [[fallthrough]];
      case JointType::Ball: {
        EXPECT_NEAR(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12) << m.jnt_name[j];
        if (m.jnt_type[j] == JointType::Ball && m.jnt_limited[j])
          EXPECT_LE(2 * std::acos(std::min(1.0, std::abs(q[0]))), hi + 1e-12) << m.jnt_name[j];
        break;
      }
    }
  }
  for (double v : s.qvel) EXPECT_LE(std::abs(v), 0.1);
  for (int u = 0; u < m.nu; ++u) {
    const double lo = m.actuator_ctrllimited[u] ? m.actuator_ctrlrange[2 * u] : -1.0;
    const double hi = m.actuator_ctrllimited[u] ? m.actuator_ctrlrange[2 * u + 1] : 1.0;
    EXPECT_GE(s.ctrl[u], lo);
    EXPECT_LE(s.ctrl[u], hi);
  }
}

TEST(CliUser, StatesRandomStayInRangesAreSeededAndFeedTheOtherCommands) {
  const auto m = load_mjcf(g1_xml());
  const std::string path = unique_temp("rand.csv");
  const auto states = states_via_cli(*m, "--random 25 --seed 7", path);
  ASSERT_EQ(states.size(), 25u);
  for (const auto& s : states) expect_within_ranges(*m, s);
  // spread over the ranges, not stuck at qpos0
  EXPECT_NE(states[0].qpos, states[1].qpos);
  EXPECT_NE(states[0].qpos, m->qpos0);
  const std::string again = run_cli("states " + g1_xml() + " --random 25 --seed 7").out;
  EXPECT_EQ(again, file_text(path));
  EXPECT_NE(run_cli("states " + g1_xml() + " --random 25 --seed 8").out, again);
  // the file is what dynamics and rollout read
  const auto dyn = run_cli("dynamics " + g1_xml() + " --states " + path);
  EXPECT_EQ(dyn.status, 0) << dyn.err;
  EXPECT_EQ(std::count(dyn.out.begin(), dyn.out.end(), '\n'), 25);
  const auto roll = run_cli("rollout " + g1_xml() + " --states " + path + " --steps 2 --implicit-actuators");
  EXPECT_EQ(roll.status, 0) << roll.err;
}

TEST(CliUser, StatesRandomBallJointsWithinTheirLimit) {
  const std::string xml = unique_temp("balls.xml");
  std::ofstream(xml) << "<mujoco><worldbody><body><joint type=\"ball\" limited=\"true\" range=\"0 30\"/>"
                        "<geom size=\"0.1\"/><body pos=\"0 0 1\"><joint type=\"ball\"/><geom size=\"0.1\"/>"
                        "</body></body></worldbody></mujoco>";
  const auto m = load_mjcf(xml);
  ASSERT_EQ(m->jnt_limited[0], 1);
  const auto states = sample_states_in_range(*m, 200, 3);
  double largest = 0;
  for (const auto& s : states) {
    expect_within_ranges(*m, s);
    largest = std::max(largest, 2 * std::acos(std::min(1.0, std::abs(s.qpos[0]))));
  }
  EXPECT_GT(largest, 0.8 * m->jnt_range[1]);  // the limit is used, not a tiny cone
}

TEST(CliUser, StatesUsageErrors) {
  const std::string h = sgtest::humanoid_xml();
  auto r = run_cli("states " + h + " --qpos0 --random 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "only one of")) << r.err;
  r = run_cli("states " + h + " --seed 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--seed applies only to --random")) << r.err;
  r = run_cli("states " + h + " --random 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--random must be an integer from 1")) << r.err;
  const std::string out = unique_temp("long_option.csv");
  EXPECT_EQ(run_cli("states " + h + " --output " + out).status, 0);
  EXPECT_EQ(read_states_csv(out, *load_mjcf(h)).size(), 1u);
  r = run_cli("states " + h + " -o /nonexistent/dir/s.csv");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.err, "/nonexistent/dir/s.csv: cannot write")) << r.err;
}

// ---- inputs that hold no states ----

TEST(CliUser, EmptyStatesFileOrDirectoryIsAnError) {
  const std::string model = cartpole_xml();
  const std::string empty = temp_file("empty.csv", ""), comments = temp_file("comments.csv", "# nothing\n\n");
  const std::string dir = unique_temp("dir");
  std::filesystem::create_directories(dir);
  for (const std::string cmd : {"dynamics", "rollout --steps 3"}) {
    for (const auto& f : {empty, comments}) {
      const auto r = run_cli(cmd + " " + model + " --states " + f);
      EXPECT_EQ(r.status, 1) << cmd;
      EXPECT_TRUE(contains(r.err, f + ": no data rows")) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
    const auto r = run_cli(cmd + " " + model + " --states " + dir);
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_TRUE(contains(r.err, dir + ": is a directory")) << r.err;
  }
  const auto w = run_cli("grad " + model + " --steps 2 --states " + temp_file("one.csv", "0,0,0,0,0\n") +
                         " --weights " + empty);
  EXPECT_EQ(w.status, 1);
  EXPECT_TRUE(contains(w.err, "no data rows")) << w.err;
}

// A model with nothing to set (no dofs, no actuators: Menagerie ships single static meshes):
// its state rows are empty lines, which the reader reads back, and it rolls out.
TEST(CliUser, StaticModelStatesAreEmptyRowsAndRollOut) {
  const std::string model = temp_file(
      "static.xml",
      "<mujoco><worldbody><geom type=\"box\" size=\"0.1 0.1 0.1\"/></worldbody></mujoco>");
  const std::string s = unique_temp("static_states.csv");
  ASSERT_EQ(run_cli("states " + model + " -o " + s).status, 0);
  EXPECT_EQ(read_states_csv(s, *load_mjcf(model)).size(), 1u);
  const auto r = run_cli("rollout " + model + " --states " + s + " --steps 3");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

// ---- one --steps rule ----

TEST(CliUser, StepsRuleIsTheSameForEveryCommand) {
  const std::string model = cartpole_xml(), s = temp_file("s.csv", "0,0,0,0,0\n"), w = temp_file("w.csv", "1,1,1,1\n");
  const std::string expected = "--steps must be an integer from 1 to 1000000000, got '0'";
  for (const std::string cmd : {"rollout " + model + " --states " + s, "grad " + model + " --states " + s + " --weights " + w,
                                "gradcheck " + model}) {
    const auto r = run_cli(cmd + " --steps 0");
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_TRUE(contains(r.err, expected)) << r.err;
    EXPECT_EQ(run_cli(cmd + " --steps 1000000001").status, 2) << cmd;
  }
  EXPECT_EQ(run_cli("demo --model " + model + " --steps 0").status, 2);
  EXPECT_TRUE(contains(run_cli("--help").out, "must be from 1 to 1000000000 for every command"));
  // the smallest legal request works for both
  EXPECT_EQ(run_cli("rollout " + model + " --states " + s + " --steps 1").status, 0);
  EXPECT_EQ(run_cli("grad " + model + " --states " + s + " --weights " + w + " --steps 1").status, 0);
}

// ---- memory ----

TEST(CliUser, GradRefusesARequestLargerThanMemoryBeforeAllocating) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  const std::string s = unique_temp("h.csv"), w = temp_file("hw.csv", [&] {
    std::string row;
    for (int i = 0; i < m->nq + m->nv; ++i) row += i ? ",0.5" : "0.5";
    return row + "\n";
  }());
  ASSERT_EQ(run_cli("states " + sgtest::humanoid_xml() + " -o " + s).status, 0);
  const auto r = run_cli("grad " + sgtest::humanoid_xml() + " --states " + s + " --weights " + w +
                         " --steps 1000000000");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_FALSE(contains(r.err, "bad_alloc")) << r.err;
  const auto at = r.err.find("needs ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const double need = std::strtod(r.err.c_str() + at + 6, nullptr);
  // about (T + 1)(nq + nv) doubles of checkpoints and as many of gradient rows
  EXPECT_GT(need, 2.0 * 1e9 * (m->nq + m->nv) * 8 * 0.99) << r.err;
  EXPECT_TRUE(contains(r.err, "available (MemAvailable in /proc/meminfo)") ||
              contains(r.err, "available (physical memory)")) << r.err;
}

TEST(CliUser, GradMemoryEstimateMatchesTheRollout) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  for (Precision p : {Precision::Double, Precision::Float}) {
    SimulatorOptions opt;
    opt.nenv = 3;
    opt.precision = p;
    Simulator sim(m, opt);
    const int T = 40;
    const auto need = cli::grad_memory(sim, T);
    const double rollout = 3.0 * static_cast<double>(Rollout(sim, T).bytes_per_env());
    EXPECT_NEAR(need.rollout, rollout, 64.0);  // up to the per-environment rounding of a few reals
    EXPECT_EQ(need.simulator, static_cast<double>(sim.bytes()));
    EXPECT_EQ(need.host_arrays, 8.0 * 3 * ((T + 1) * (m->nq + m->nv) + T * m->nu + 2 * m->nv));
  }
  EXPECT_GT(cli::available_memory().bytes, 0.0);
}

// ---- gradcheck ----

TEST(CliUser, GradcheckRejectsZeroSamples) {
  const auto r = run_cli("gradcheck " + cartpole_xml() + " --samples 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(contains(r.err, "--samples must be an integer from 1")) << r.err;
  EXPECT_FALSE(contains(r.out, "PASSED"));
  GradcheckOptions opt;
  opt.samples = 0;
  EXPECT_THROW(run_gradcheck(load_mjcf(cartpole_xml()), opt), std::invalid_argument);
}

// `train --help` states the defaults the run uses: they are read from the option structs, so
// no placeholder is left and each figure is the struct's.
TEST(CliUser, TrainHelpStatesTheDefaultsTheRunUses) {
  const std::string help = run_cli("train --help").out;
  EXPECT_EQ(help.find('{'), std::string::npos) << help;
  const learn::TrainOptions o;
  char expected[160];
  std::snprintf(expected, sizeof expected, "Defaults: %d environments, %d iterations of a %d-step horizon",
                o.nenv, o.iterations, o.horizon);
  EXPECT_TRUE(contains(help, expected)) << help;
  std::snprintf(expected, sizeof expected, "Impulse contact model at kappa %g", learn::TaskOptions{}.kappa);
  EXPECT_TRUE(contains(help, expected)) << help;
  const auto bcg = learn::defaults_for("ant-run", learn::Algorithm::ShacBcg).bundles;
  std::snprintf(expected, sizeof expected, "(B %d, H %d, tau %g N)", bcg.branches, bcg.steps, bcg.tau);
  EXPECT_TRUE(contains(help, expected)) << help;
}

// The help states the bounds the run applies: both come from gradcheck_tolerance.
TEST(CliUser, GradcheckHelpStatesTheToleranceTheRunUses) {
  const std::string help = run_cli("gradcheck --help").out;
  EXPECT_TRUE(contains(help, "(double: 1e-6 relative and 1e-10 dot-product; --float: 1e-2 and 1e-4)")) << help;
  const auto f = gradcheck_tolerance(Precision::Float), d = gradcheck_tolerance(Precision::Double);
  EXPECT_EQ(f.relative, 1e-2);
  EXPECT_EQ(f.dot, 1e-4);
  EXPECT_EQ(d.relative, 1e-6);
  EXPECT_EQ(d.dot, 1e-10);
  const auto r = run_cli("gradcheck " + cartpole_xml() + " --float --steps 3 --samples 2");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "(tolerance 1e-02;")) << r.out;
  EXPECT_TRUE(contains(r.out, "(tolerance 1e-04)")) << r.out;
}

// ---- progress ----

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(CliUser, ProgressDrawsOnlyWhenEnabledAndEndsItsLine) {
  std::FILE* on = std::tmpfile();
  std::FILE* off = std::tmpfile();
  ASSERT_TRUE(on && off);
  {
    Progress p("rollout", 4, "steps", on, true, 0.0);
    Progress q("rollout", 4, "steps", off, false, 0.0);
    for (int i = 1; i <= 4; ++i) p.update(i), q.update(i);
    EXPECT_TRUE(p.shown());
    EXPECT_FALSE(q.shown());
  }
  const std::string text = read_all(on);
  EXPECT_TRUE(contains(text, "\rrollout: 1/4 steps (25%)")) << text;
  EXPECT_TRUE(contains(text, "rollout: 4/4 steps (100%)")) << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(read_all(off), "");
  std::FILE* late = std::tmpfile();
  {
    Progress p("x", 2, "steps", late, true, 3600.0);  // not yet due: nothing shown
    p.update(1);
  }
  EXPECT_EQ(read_all(late), "");
  std::fclose(on);
  std::fclose(off);
  std::fclose(late);
}

// End to end: on a pseudo-terminal (util-linux `script`) the commands show progress; with
// stderr redirected to a file they do not. STIFFGRAD_PROGRESS_AFTER_S=0 removes the 2 s wait.
TEST(CliUser, CommandsShowProgressOnATerminalOnly) {
  if (!std::filesystem::exists("/usr/bin/script")) GTEST_SKIP() << "util-linux `script` is not installed";
  const std::string model = cartpole_xml(), s = temp_file("p.csv", "0,0,0,0,0\n"), w = temp_file("pw.csv", "1,1,1,1\n");
  const std::string env = "STIFFGRAD_PROGRESS_AFTER_S=0 ";
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"rollout " + model + " --states " + s + " --steps 200", "rollout: 200/200 steps (100%)"},
      {"grad " + model + " --states " + s + " --weights " + w + " --steps 200", "grad forward: 200/200 steps"},
      {"gradcheck " + model + " --steps 3 --samples 2", "gradcheck: 2/2 finite-difference samples"},
      {"demo --model " + model + " --nenv 2 --steps 20 --threads 1", "demo float: 20/20 steps"},
      // the untimed pass after the timed runs shows its progress too
      {"demo --model " + model + " --nenv 2 --steps 20 --threads 1", "demo contact count (untimed, double): 20/20 steps"}};
  for (const auto& [args, line] : runs) {
    const std::string tty_cmd = "script -qec '" + env + std::string(SG_CLI) + " " + args + " >/dev/null' /dev/null";
    FILE* p = popen(tty_cmd.c_str(), "r");
    ASSERT_TRUE(p);
    std::string tty;
    for (int c; (c = std::fgetc(p)) != EOF;) tty += static_cast<char>(c);
    pclose(p);
    EXPECT_TRUE(contains(tty, line)) << args << "\n" << tty;
    const auto piped = run_cli(args, env);
    EXPECT_EQ(piped.status, 0) << args << piped.err;
    EXPECT_FALSE(contains(piped.err, "\r")) << args << piped.err;
    EXPECT_FALSE(contains(piped.err, line)) << args << piped.err;
  }
}

// ---- demo ----

// A stiff velocity servo at a 10 ms step: explicit integration multiplies the velocity by
// |1 - h kv / I| = 249 per step and must overflow; with the velocity gain implicit it is stable.
// The mechanism, not a tuned physics figure, decides both outcomes.
std::string stiff_servo_xml() {
  return temp_file("servo.xml",
                   "<mujoco model=\"stiff servo\"><option timestep=\"0.01\"/><worldbody><body>"
                   "<joint name=\"j\" type=\"hinge\" axis=\"0 0 1\"/><geom type=\"sphere\" size=\"0.1\" mass=\"1\"/>"
                   "</body></worldbody><actuator><general joint=\"j\" ctrlrange=\"-1 1\" ctrllimited=\"true\" "
                   "biastype=\"affine\" gainprm=\"1000\" biasprm=\"0 -1000 -100\"/></actuator></mujoco>");
}

TEST(CliUser, DemoSaysWhyEnvironmentsBecameNonFinite) {
  const auto r = run_cli("demo --model " + stiff_servo_xml() + " --nenv 4 --steps 300 --threads 1");
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "became non-finite")) << r.err;
  EXPECT_TRUE(contains(r.err, "random controls spin free limbs up")) << r.err;
  EXPECT_TRUE(contains(r.err, "at its 4 ms step): rerun with --implicit-actuators")) << r.err;
  EXPECT_TRUE(contains(r.err, "Try: --implicit-actuators")) << r.err;
  // the stability estimate warned before the run: a*h c/I = 250 for this servo
  EXPECT_TRUE(contains(r.err, "1 of 1 servo-driven degrees of freedom are unstable")) << r.err;
}

TEST(CliUser, DemoRunsWithImplicitActuators) {
  const auto r = run_cli("demo --model " + stiff_servo_xml() + " --nenv 4 --steps 300 --threads 1 --implicit-actuators");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "actuator velocity gains implicit")) << r.out;
  // the single-state check follows the same integrator: identical bits on the CPU
  EXPECT_TRUE(contains(r.out, "steps: bitwise equal")) << r.out;
  EXPECT_TRUE(contains(run_cli("demo --help").out, "--implicit-actuators"));
}

}  // namespace
