// The main job and the command line's rough edges as a newcomer meets them (issue 41): the
// demo's batched-vs-single check (warm start carried, bitwise), its texts, hints, memory check
// and option errors; loader messages in words; repeated options, --version and help; train's
// undefined values and output directory; eval's task-dependent figures; info's dropped geoms.
// The main job itself (`stiffgrad demo` with its defaults) runs as the ctest MainJob.DemoDefaults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "apps/cli/demo.hpp"
#include "core/dynamics_host.hpp"
#include "core/servo_stability.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
std::string cartpole_xml() { return sgtest::data_dir() + "/models/dm_control/cartpole.xml"; }
std::string g1_scene_xml() { return sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"; }

// ---- the check: environment 0 of a batched run equals the single-state host path ----

// The batched Simulator carries the constraint solve's warm start from step to step; the
// single-state replay must too. Restarting every step's solve cold (rollout_host once per
// step, as the demo did) differs by the solver's tolerance, which the humanoid's dynamics then
// amplified to 9e-4 over 300 steps. Carried, the two are the same bits.
TEST(MainJob, BatchedRunEqualsTheSingleStateRolloutBitForBit) {
  const auto m = load_mjcf(sgtest::humanoid_xml());
  const int nenv = 3, steps = 150;
  std::mt19937_64 rng(7);
  std::vector<double> qpos0, qvel0;
  sample_states_near_qpos0(*m, nenv, rng, 0.1, 0.1, &qpos0, &qvel0);
  std::vector<double> ctrl(static_cast<std::size_t>(steps) * nenv * m->nu);
  for (int s = 0; s < steps; ++s) sample_controls(*m, nenv, rng, ctrl.data() + static_cast<std::size_t>(s) * nenv * m->nu);
  SimulatorOptions opt;
  opt.nenv = nenv;
  opt.threads = 2;
  Simulator sim(m, opt);
  sim.set_state(qpos0.data(), qvel0.data());
  double contacts = 0;
  for (int s = 0; s < steps; ++s) {
    sim.step(ctrl.data() + static_cast<std::size_t>(s) * nenv * m->nu);
    contacts += sim.contact_stats()[0];
  }
  ASSERT_GT(contacts, 0) << "the check must cover steps with contacts (warm-started solves)";
  std::vector<double> q(qpos0.size()), v(qvel0.size());
  sim.get_state(q.data(), v.data());
  for (int e = 0; e < nenv; ++e) {
    std::vector<double> u(static_cast<std::size_t>(steps) * m->nu);
    for (int s = 0; s < steps; ++s)
      std::copy_n(ctrl.data() + (static_cast<std::size_t>(s) * nenv + e) * m->nu, m->nu, u.data() + static_cast<std::size_t>(s) * m->nu);
    std::vector<double> hq(qpos0.begin() + e * m->nq, qpos0.begin() + (e + 1) * m->nq);
    std::vector<double> hv(qvel0.begin() + e * m->nv, qvel0.begin() + (e + 1) * m->nv);
    rollout_host_controls(*m, hq.data(), hv.data(), u.data(), steps, Integrator::SemiImplicitEuler);
    EXPECT_EQ(0, std::memcmp(hq.data(), q.data() + e * m->nq, sizeof(double) * m->nq)) << "environment " << e;
    EXPECT_EQ(0, std::memcmp(hv.data(), v.data() + e * m->nv, sizeof(double) * m->nv)) << "environment " << e;
  }
}

TEST(MainJob, DemoCheckIsBitwiseWithContacts) {
  const auto r = run_cli("demo --nenv 8 --steps 200 --threads 2");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "rollout over 200 steps: bitwise equal")) << r.out;
  EXPECT_TRUE(contains(r.out, "mean contacts per environment and step")) << r.out;
}

// ---- the demo's texts ----

TEST(MainJob, DemoTextsSayItHasContacts) {
  const auto r = run_cli("demo --nenv 2 --steps 3 --threads 1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "batched dynamics with contacts")) << r.out;
  EXPECT_FALSE(contains(r.out, "no contacts")) << r.out;
  const std::string help = run_cli("demo --help").out;
  EXPECT_TRUE(contains(help, "with contacts")) << help;
  EXPECT_FALSE(contains(help, "no contacts yet")) << help;
  EXPECT_EQ(run_cli("help demo").out, help);
}

TEST(MainJob, DemoBadValuesGiveTheCommonLineNotAUsageDump) {
  for (const auto& [args, line] : std::vector<std::pair<std::string, std::string>>{
           {"--nenv x", "--nenv must be an integer from 1 to 16777216, got 'x'"},
           {"--nenv 0", "--nenv must be an integer from 1 to 16777216, got '0'"},
           {"--threads -1", "--threads must be an integer from 0 to 4096, got '-1'"},
           {"--steps 2.5", "--steps must be an integer from 1 to 1000000000, got '2.5'"},
           {"--backend gpu", "--backend must be cpu or cuda, got 'gpu'"},
           {"--bogus 1", "unknown option --bogus"},
           {"--steps 10 --steps 20", "option --steps given more than once"}}) {
    const auto r = run_cli("demo " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(contains(r.err, "stiffgrad demo: " + line)) << args << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "usage:")) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

TEST(MainJob, DemoRefusesMoreEnvironmentsThanMemoryBeforeAllocating) {
  // 10^6 humanoid environments need ~5 GB (measured 5.0 KB per environment at 65536); the cap
  // makes the refusal independent of the machine
  const auto r = run_cli("demo --nenv 1000000", "STIFFGRAD_MEMORY_LIMIT=1000000000 ");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "--nenv 1000000 needs about")) << r.err;
  EXPECT_TRUE(contains(r.err, "available (STIFFGRAD_MEMORY_LIMIT)")) << r.err;
  EXPECT_FALSE(contains(r.out, "env-steps/s")) << "refused after running:\n" << r.out;
  const auto at = r.err.find("needs about ");
  ASSERT_NE(at, std::string::npos);
  const double gib = std::strtod(r.err.c_str() + at + 12, nullptr);
  EXPECT_GT(gib, 3.0) << r.err;
  EXPECT_LT(gib, 10.0) << r.err;
}

TEST(MainJob, DemoPrintsLoadNotesOnStderr) {
  const auto r = run_cli("demo --model " + g1_scene_xml() + " --nenv 2 --steps 2 --threads 1 --implicit-actuators");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "note: dropped 35 visual-only geoms")) << r.err;
  EXPECT_FALSE(contains(r.out, "note:")) << r.out;
}

// The G1's position servos at its 4 ms step: the decoupled estimate finds the wrists past
// the explicit bound (their velocity flips sign every step in an explicit rollout), and the
// demo says so before running, whether or not an environment then becomes non-finite.
TEST(MainJob, DemoWarnsOfUnstableExplicitServos) {
  const auto g1 = load_mjcf(g1_scene_xml());
  const ServoStability s = explicit_servo_stability(*g1, g1->opt.timestep);
  EXPECT_EQ(s.actuated_dofs, g1->nu);
  EXPECT_GE(s.unstable_dofs, 1);
  EXPECT_TRUE(contains(s.worst_joint, "wrist")) << s.worst_joint;
  // halving the step brings every servo inside the bound: the estimate scales as it must
  EXPECT_EQ(explicit_servo_stability(*g1, 0.5 * g1->opt.timestep).unstable_dofs, 0);
  const auto r = run_cli("demo --model " + g1_scene_xml() + " --nenv 2 --steps 5 --threads 1");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "unstable under explicit")) << r.err;
  EXPECT_TRUE(contains(r.err, "--implicit-actuators")) << r.err;
  const auto implicit = run_cli("demo --model " + g1_scene_xml() + " --nenv 2 --steps 5 --threads 1 --implicit-actuators");
  EXPECT_EQ(implicit.status, 0) << implicit.err;
  EXPECT_FALSE(contains(implicit.err, "unstable")) << implicit.err;
  // a model without servos has nothing to warn about
  const auto cart = load_mjcf(cartpole_xml());
  EXPECT_EQ(explicit_servo_stability(*cart, cart->opt.timestep).unstable_dofs, 0);
}

TEST(MainJob, FloatRateNoteSaysWhyFloatIsNotFaster) {
  EXPECT_EQ(float_rate_note(Backend::Cpu, 1e5, 1.5e5), nullptr);
  const char* cpu = float_rate_note(Backend::Cpu, 1e5, 1.02e5);
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(contains(cpu, "scalar code")) << cpu;
  const char* cuda = float_rate_note(Backend::Cuda, 1e5, 0.9e5);
  ASSERT_NE(cuda, nullptr);
  EXPECT_TRUE(contains(cuda, "local")) << cuda;
}

// ---- loader messages in words ----

TEST(MainJob, LoaderSaysWhatIsWrongInWords) {
  const std::string dir = unique_temp("loader_dir");
  std::filesystem::create_directories(dir);
  const std::string binary = unique_temp("binary.xml");
  {
    std::ofstream f(binary, std::ios::binary);
    const char bytes[] = {'\x7f', 'E', 'L', 'F', '\x02', '\x01', '\0', '\0'};
    f.write(bytes, sizeof bytes);
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {temp_file("empty.xml", ""), "empty.xml:1: not an MJCF file: it holds no XML element"},
      {temp_file("blank.xml", "  \n<!-- nothing -->\n"), "not an MJCF file: it holds no XML element"},
      {temp_file("unclosed.xml", "<mujoco>\n<worldbody>\n<body></worldbody></mujoco>"),
       "unclosed.xml:3: XML parse error: a closing tag does not match"},
      {temp_file("attr.xml", "<mujoco model=x/>"), "XML parse error: malformed attribute"},
      {temp_file("words.xml", "hello world\n"), "XML parse error: text where an element belongs"},
      {binary, "binary.xml:1: not an MJCF file: binary data"},
      {unique_temp("missing.xml"), "missing.xml: no such file"},
      {dir, dir + ": is a directory, not an MJCF file"},
  };
  for (const auto& [path, message] : cases) {
    const auto r = run_cli("info " + path);
    EXPECT_EQ(r.status, 1) << path;
    EXPECT_TRUE(contains(r.err, message)) << path << "\n" << r.err;
    for (const char* internal : {"XML_ERROR", "ErrorID", ":0:", "Line number"})
      EXPECT_FALSE(contains(r.err, internal)) << path << "\n" << r.err;
  }
}

TEST(MainJob, MeshFittedPrimitivesAreSizedFromTheirMesh) {
  // A primitive with a mesh attribute is sized from the mesh (MuJoCo's fit; its sizes against
  // MuJoCo 2.2.2's: tests/test_mesh_vs_mujoco.cpp), so the mesh must be there: a missing file
  // is named at its <mesh> element, never reported as a non-positive size
  for (const char* type : {"capsule", "box"}) {
    const std::string xml =
        std::string(
            "<mujoco><asset>\n<mesh name=\"m\" file=\"m.stl\"/></asset><worldbody><body>"
            "<joint/><geom name=\"g\" type=\"") +
        type + "\" mesh=\"m\"/></body></worldbody></mujoco>";
    try {
      load_mjcf_string(xml, "fit.xml");
      ADD_FAILURE() << type << " sized from a missing mesh loaded";
    } catch (const MjcfError& e) {
      EXPECT_EQ(e.line(), 2);
      EXPECT_TRUE(contains(e.what(), "mesh 'm'") && contains(e.what(), "m.stl")) << e.what();
      EXPECT_FALSE(contains(e.what(), "sizes must be positive")) << e.what();
    }
  }
  // given sizes do not make it load without its mesh: MuJoCo would still fit the geom to the mesh
  EXPECT_THROW(
      load_mjcf_string(
          "<mujoco><worldbody><body><joint/><geom type=\"sphere\" size=\"0.1\" mesh=\"m\"/>"
          "</body></worldbody></mujoco>",
          "fit.xml"),
      MjcfError);
}

TEST(MainJob, InfoNotesTheGeomsItDropped) {
  const auto r = run_cli("info " + g1_scene_xml());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "note: dropped 35 visual-only geoms")) << r.err;
  const auto g1 = load_mjcf(g1_scene_xml());
  EXPECT_TRUE(contains(r.out, "geoms") && contains(r.out, std::to_string(g1->ngeom))) << r.out;
}

// ---- options, --version, help ----

TEST(MainJob, RepeatedOptionsAreErrors) {
  const std::string model = cartpole_xml(), s = temp_file("s.csv", "0,0,0,0,0\n");
  for (const std::string args : {"rollout " + model + " --states " + s + " --steps 10 --steps 20",
                                 "rollout " + model + " --states " + s + " --steps 1 --float --float",
                                 "states " + model + " -o a.csv --output b.csv",
                                 std::string("train cartpole-swingup --algo shac --algo ppo")}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_TRUE(contains(r.err, "given more than once")) << args << "\n" << r.err;
  }
}

TEST(MainJob, VersionAndHelpWork) {
  for (const char* v : {"--version", "version"}) {
    const auto r = run_cli(v);
    EXPECT_EQ(r.status, 0) << v;
    EXPECT_EQ(r.out.rfind("stiffgrad 0.", 0), 0u) << r.out;
    EXPECT_TRUE(contains(r.out, "backends: cpu")) << r.out;
  }
  const auto help = run_cli("help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out, run_cli("--help").out);
  for (const char* cmd : {"info", "states", "dynamics", "rollout", "grad", "gradcheck", "demo", "train", "eval"}) {
    const auto h = run_cli(std::string("help ") + cmd);
    EXPECT_EQ(h.status, 0) << cmd;
    EXPECT_EQ(h.out, run_cli(std::string(cmd) + " --help").out) << cmd;
    EXPECT_TRUE(contains(h.out, std::string("usage: stiffgrad ") + cmd)) << cmd;
  }
  const auto bad = run_cli("help nonsense");
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(contains(bad.err, "unknown command 'nonsense'")) << bad.err;
}

// The help says what --contact impulse takes, and the command takes exactly that.
TEST(MainJob, RolloutHelpMatchesWhatImpulseAccepts) {
  const std::string help = run_cli("rollout --help").out;
  EXPECT_TRUE(contains(help, "--integrator euler or implicit-actuators (or --implicit-actuators) only")) << help;
  const std::string model = cartpole_xml(), s = temp_file("s.csv", "0,0,0,0,0\n");
  const std::string base = "rollout " + model + " --states " + s + " --steps 2 --contact impulse";
  for (const char* ok : {"", " --integrator euler", " --integrator implicit-actuators", " --implicit-actuators"})
    EXPECT_EQ(run_cli(base + ok).status, 0) << ok << run_cli(base + ok).err;
  for (const char* refused : {" --integrator rk4", " --integrator tsit5"}) {
    const auto r = run_cli(base + refused);
    EXPECT_EQ(r.status, 2) << refused;
    EXPECT_TRUE(contains(r.err, "needs --integrator euler or implicit-actuators")) << r.err;
  }
}

// ---- train and eval ----

TEST(MainJob, TrainSaysNotApplicableBeforeAnEpisodeEnds) {
  // 3 iterations of 32 steps: no cartpole episode (1000 steps) ends
  const std::string dir = unique_temp("train_na");
  const auto r = run_cli("train cartpole-swingup --algo shac --envs 4 --iterations 3 --threads 1 --out " + dir +
                         " --data " + sgtest::data_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "it 1/3  env-steps 128  mean return n/a")) << r.err;
  EXPECT_FALSE(contains(r.err, "nan")) << r.err;
  EXPECT_TRUE(contains(r.out, "final mean return: n/a")) << r.out;
  std::ifstream csv(dir + "/log.csv");
  std::string header, line;
  std::getline(csv, header);
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("0,128,", 0), 0u) << line;
  EXPECT_TRUE(contains(line, ",n/a,n/a,")) << line;  // mean_return, mean_episode_length
  EXPECT_FALSE(contains(line, "nan")) << line;
}

// The outputs of a plain SHAC run are what `train --help` (and docs/learning.md) list: log, policy,
// summary (its contents: tests/test_cli_json.cpp), plot script and, with gnuplot, the plots whose
// data exist (no bundle rate without bundles).
TEST(MainJob, TrainWritesTheListedOutputs) {
  const std::string dir = unique_temp("train_outputs");
  const auto r = run_cli("train cartpole-swingup --algo shac --envs 4 --iterations 40 --threads 1 --out " + dir +
                         " --data " + sgtest::data_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  std::set<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files.insert(f.path().filename().string());
  std::set<std::string> expected = {"log.csv", "policy.sgp", "summary.json", "plots.gp"};
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0)
    expected.insert({"return_vs_steps.png", "return_vs_time.png", "grad_norm.png"});
  EXPECT_EQ(files, expected);
  const std::string help = run_cli("train --help").out;
  for (const std::string& f : expected) EXPECT_TRUE(contains(help, f)) << f << " missing from train --help";
  EXPECT_TRUE(contains(help, "for shac-bcg, bundle_rate.png")) << help;
  EXPECT_FALSE(contains(r.err, "gnuplot failed")) << r.err;
}

TEST(MainJob, TrainRefusesAnOutputThatIsAFile) {
  const std::string file = temp_file("not_a_dir", "x");
  const auto r = run_cli("train cartpole-swingup --algo shac --iterations 1 --out " + file + " --data " +
                         sgtest::data_dir());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--out " + file + ": exists and is not a directory")) << r.err;
  EXPECT_FALSE(contains(r.err, "filesystem error")) << r.err;
}

// Falls and penetration where the task has them: the ant can fall and has feet; the cartpole
// neither (it printed "falls 0/2" and a zero penetration before).
TEST(MainJob, EvalPrintsFallsAndPenetrationOnlyWhereTheyMeanSomething) {
  const std::string cart = unique_temp("eval_cart"), ant = unique_temp("eval_ant");
  ASSERT_EQ(run_cli("train cartpole-swingup --algo ppo --envs 2 --iterations 1 --threads 1 --out " + cart + " --data " +
                    sgtest::data_dir()).status, 0);
  ASSERT_EQ(run_cli("train ant-run --algo ppo --envs 2 --iterations 1 --horizon 4 --threads 1 --out " + ant +
                    " --data " + sgtest::data_dir()).status, 0);
  const auto c = run_cli("eval " + cart + "/policy.sgp --in mujoco --episodes 1 --episode-steps 50 --data " + sgtest::data_dir());
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_TRUE(contains(c.out, "stiffgrad: mean return")) << c.out;
  for (const char* absent : {"falls", "penetration", "delta_d", "tracking"}) EXPECT_FALSE(contains(c.out, absent)) << c.out;
  const auto a = run_cli("eval " + ant + "/policy.sgp --in mujoco --episodes 1 --episode-steps 50 --data " + sgtest::data_dir());
  ASSERT_EQ(a.status, 0) << a.err;
  for (const char* present : {"falls ", "/1", "mean penetration", "delta_d"}) EXPECT_TRUE(contains(a.out, present)) << a.out;
  EXPECT_FALSE(contains(a.out, "tracking")) << a.out;
}

}  // namespace
