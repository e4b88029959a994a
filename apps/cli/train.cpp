// `stiffgrad train` and `stiffgrad eval`.
#include "apps/cli/train.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "apps/cli/json.hpp"
#include "stiffgrad/learn/policy_file.hpp"
#include "stiffgrad/learn/task.hpp"

#ifndef SG_DEFAULT_DATA
#define SG_DEFAULT_DATA "data"
#endif

namespace stiffgrad::cli {

// The text of `stiffgrad train --help`; each {name} is a default read from the option structs
// below, so the help cannot drift from the code.
const char* const kTrainHelpTemplate =
    "usage: stiffgrad train TASK --algo shac|shac-bcg|ppo [--envs N] [--iterations K] [--seed S]\n"
    "                       [--backend cpu|cuda] [--out DIR] [--horizon H] [--threads T]\n"
    "                       [--contact soft|impulse] [--kappa K] [--episode-steps N] [--data DIR]\n"
    "                       [--actor-lr X] [--critic-lr X] [--ppo-lr X] [--log-std X] [--tau X]\n"
    "                       [--reward task|add] [--action-rate X] [--critics K]\n"
    "                       [--disc-replay ROWS] [--disc-minibatches M]\n"
    "                       [--policy-loop auto|host|backend] [--explicit-servos]\n"
    "                       [--servo-targets home|reference] [--action-scale X] [--clip-window B:E]\n"
    "                       [--eval-every N] [--eval-episodes E] [--init POLICY.sgp]\n"
    "                       [--checkpoint-every K] [--resume CHECKPOINT] [--policy-every K]\n"
    "TASK: cartpole-swingup, ant-run, g1-imitate:CLIP (CLIP: a file stem in DATA/motions/lafan1_g1,\n"
    "e.g. run1_subject2). Defaults: {nenv} environments, {iterations} iterations of a {horizon}-step horizon, seed {seed},\n"
    "the CPU backend, DIR train_TASK_ALGO, the Impulse contact model at kappa {kappa} for contact tasks.\n"
    "SHAC differentiates every {horizon}-step horizon through the simulator with the policy in the loop;\n"
    "shac-bcg adds Bundled Contact Gradients (B {branches}, H {bundle_steps}, tau {tau} N); ppo uses no gradients.\n"
    "--backend cuda: the simulator and its adjoint on the GPU. SHAC's policy in the loop\n"
    "(observation, actor, controls and their VJPs) runs there too for tasks with backend kernels\n"
    "(all three), with or without bundles: --policy-loop auto (default: backend on CUDA, host on the\n"
    "CPU), host (state and controls cross every step) or backend. PPO's networks stay on the host.\n"
    "--reward add (g1-imitate): the ADD discriminator's reward in place of the tracking reward;\n"
    "its replay ring keeps ROWS past fakes (default {replay}, 0: none), each of its M (default {disc_minibatches})\n"
    "updates per iteration pairs a share of the iteration's fakes with as many replayed ones;\n"
    "--action-rate X subtracts X mean_k (a_t,k - a_t-1,k)^2 from every reward; --critics K: SHAC's\n"
    "critic ensemble (g1-imitate default {g1_critics}, else {critics}). --explicit-servos (g1-imitate on the Impulse\n"
    "floor): the servos' velocity gains explicit, as before they were made implicit (the earlier\n"
    "runs' setting; explicit, SHAC's gradient grows ~1.8x per control step).\n"
    "--servo-targets (g1-imitate): what a zero action holds the servos at, the home pose (default,\n"
    "the paper's setting) or the reference's joint angles of the next step (a residual policy);\n"
    "--action-scale X: the servo target's change per unit action (rad, default {action_scale});\n"
    "--clip-window B:E: episodes start and run within seconds B to E of the clip (E 0: its end;\n"
    "default the whole clip).\n"
    "--eval-every N: after every N-th iteration and the last, E (default {eval_episodes}) deterministic episodes\n"
    "as `stiffgrad eval` runs them in stiffgrad (to a fall, fixed initial states), logged in the\n"
    "eval_* columns (empty in other rows); neither their steps nor their time count as training's.\n"
    "--init POLICY.sgp: a warm start, the actor, its log-std and the observation statistics from\n"
    "the file (e.g. an earlier run's DIR/policy.sgp; same observation, hidden and action sizes);\n"
    "critics, optimizer moments, return statistics and the learning-rate schedule start fresh, and\n"
    "the task and its options are this command's (a note on stderr when the file records others).\n"
    "--checkpoint-every K: after every K-th iteration and the last,\n"
    "the run's whole state goes to DIR/checkpoint.sgc (networks, optimizer moments, normalizers,\n"
    "random generator, environments, the ADD discriminator, logs). --resume DIR/checkpoint.sgc goes on from it with the\n"
    "same command (every option must equal the checkpoint's but --threads, --policy-loop and\n"
    "--checkpoint-every; an error names each difference) and rewrites DIR/log.csv whole; it equals\n"
    "the uninterrupted run bit for bit.\n"
    "--policy-every K: after every K-th iteration, the policy as it stands to DIR/policy_itN.sgp\n"
    "(N: iterations done), e.g. to evaluate the run in MuJoCo at a fraction of its budget; like the\n"
    "evaluations it changes nothing in training.\n"
    "Writes DIR/log.csv (one row per iteration; n/a where a value is undefined, e.g. the mean return\n"
    "before any episode has ended), DIR/policy.sgp (stiffgrad eval reads it), DIR/summary.json (the\n"
    "run's totals as one JSON object: env_steps, iterations, wall_s, env_steps_per_s, time_fraction\n"
    "of simulation / adjoint / networks, final_mean_return, null where undefined), DIR/plots.gp and, with\n"
    "gnuplot installed, DIR/return_vs_steps.png and return_vs_time.png (once an episode has ended),\n"
    "grad_norm.png and, for shac-bcg, bundle_rate.png; DIR/checkpoint.sgc and DIR/policy_itN.sgp\n"
    "with the options above. DIR must be a directory or not exist. Progress on stderr; the last\n"
    "line of stdout is `final mean return: X` (n/a when no episode ended).\n"
    "DATA defaults to $STIFFGRAD_DATA or the data folder the build was configured with (the repository's data/).\n";


std::string train_help() {
  const learn::TrainOptions train;
  const learn::TrainOptions bcg = learn::defaults_for("cartpole-swingup", learn::Algorithm::ShacBcg);
  const learn::TrainOptions g1 = learn::defaults_for("g1-imitate:clip", learn::Algorithm::Shac);
  const learn::EvalSchedule eval;
  const auto number = [](double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return std::string(text);
  };
  const std::pair<const char*, std::string> values[] = {
      {"{nenv}", number(train.nenv)},
      {"{iterations}", number(train.iterations)},
      {"{horizon}", number(train.horizon)},
      {"{seed}", number(static_cast<double>(train.seed))},
      {"{kappa}", number(learn::TaskOptions{}.kappa)},
      {"{branches}", number(bcg.bundles.branches)},
      {"{bundle_steps}", number(bcg.bundles.steps)},
      {"{tau}", number(bcg.bundles.tau)},
      {"{replay}", number(train.add.replay_capacity)},
      {"{disc_minibatches}", number(train.add.minibatches)},
      {"{g1_critics}", number(g1.critic_ensemble)},
      {"{critics}", number(train.critic_ensemble)},
      {"{action_scale}", number(learn::kG1ActionScale)},
      {"{eval_episodes}", number(eval.episodes)},
  };
  std::string text = kTrainHelpTemplate;
  for (const auto& [key, value] : values)
    for (std::size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, std::string(key).size(), value);
  return text;
}

const char* const kEvalHelp =
    "usage: stiffgrad eval POLICY.sgp [--task TASK] [--episodes N] [--in stiffgrad|mujoco] [--seed S]\n"
    "                      [--contact soft|impulse] [--kappa K] [--explicit-servos] [--data DIR]\n"
    "                      [--servo-targets home|reference] [--action-scale X] [--episode-steps N]\n"
    "                      [--clip-window B:E] [--json FILE]\n"
    "Runs the saved policy's deterministic action (the actor's mean) for N episodes (default 5)\n"
    "from the task's initial-state distribution, in stiffgrad or in MuJoCo 2.2.2 (libmujoco, the\n"
    "task's MuJoCo model file). An episode runs the task's full length or until a fall (imitation:\n"
    "losing the reference does not end it, as it does in training). Prints mean return, mean\n"
    "episode length, and where the task has them: falls (as n/N; a task that can fall: ant-run,\n"
    "g1-imitate with its root below 0.3 m), mean tracking error (imitation tasks) and mean largest\n"
    "foot contact penetration (tasks with feet); with --in mujoco also the same policy in stiffgrad\n"
    "and, with feet, the difference of mean penetration between the two simulators\n"
    "(delta_d = MuJoCo - stiffgrad). TASK defaults to the policy's;\n"
    "The task's options (--contact, --kappa, --episode-steps, --explicit-servos, --servo-targets,\n"
    "--action-scale, --clip-window) default to those the policy file records from its training; given here, they\n"
    "override them (with a note on stderr).\n"
    "--json FILE: also writes the figures as one JSON object to FILE (the printed lines are unchanged):\n"
    "policy, task, task_options, episodes, seed, in, then per simulator evaluated (\"stiffgrad\" and,\n"
    "with --in mujoco, \"mujoco\") mean_return, mean_episode_length, episodes, falls,\n"
    "tracking_error (m) and mean_penetration_mm, null where the task has no such figure; with\n"
    "--in mujoco also delta_d_mm (null without feet).\n";

namespace {

std::string data_dir(const Args& a) {
  if (a.has("data")) return a.get("data");
  if (const char* env = std::getenv("STIFFGRAD_DATA")) return env;
  return SG_DEFAULT_DATA;
}

// The task's options from the command line over `base` (the defaults, or for `eval` those the
// policy was trained with).
learn::TaskOptions task_options(const Args& a, const std::string& spec, learn::TaskOptions t = {}) {
  t.data_dir = data_dir(a);
  if (a.has("contact") && !parse_contact_model(a.get("contact"), &t.contact))
    throw UsageError("--contact must be soft or impulse");
  if (a.has("kappa")) {
    t.kappa = std::strtod(a.get("kappa").c_str(), nullptr);
    if (!(t.kappa > 0)) throw UsageError("--kappa must be a positive number");
  }
  if (a.has("explicit-servos")) t.explicit_servos = true;
  if (a.has("servo-targets")) {
    const std::string v = a.get("servo-targets");
    if (v == "home") t.servo_targets = learn::TaskOptions::ServoTargets::Home;
    else if (v == "reference") t.servo_targets = learn::TaskOptions::ServoTargets::Reference;
    else throw UsageError("--servo-targets must be home or reference");
  }
  if (a.has("action-scale")) {
    char* end = nullptr;
    t.action_scale = std::strtod(a.get("action-scale").c_str(), &end);
    if (!end || *end || !(t.action_scale > 0 && t.action_scale <= 10))
      throw UsageError("--action-scale must be a number in (0, 10] (rad per unit action)");
  }
  if (a.has("clip-window")) {
    // B:E seconds of clip time (E 0: the clip's end); the task checks it against the clip
    learn::TaskOptions w;
    try {
      learn::parse_task_options("clip-window=" + a.get("clip-window"), &w);
    } catch (const std::invalid_argument&) {
      throw UsageError("--clip-window must be B:E, seconds of clip time with 0 <= B < E (E 0: the clip's end)");
    }
    t.clip_begin = w.clip_begin;
    t.clip_end = w.clip_end;
  }
  for (const char* key : {"servo-targets", "action-scale", "clip-window"})
    if (a.has(key) && spec.rfind("g1-imitate:", 0) != 0)
      throw UsageError(std::string("--") + key + " applies to g1-imitate tasks only");
  if (a.has("episode-steps")) t.episode_steps = static_cast<int>(parse_int_in(a.get("episode-steps"), "--episode-steps", 1, 100000000));
  return t;
}

Backend parse_backend_name(const std::string& s) {
  if (s == "cpu") return Backend::Cpu;
  if (s == "cuda") return Backend::Cuda;
  throw UsageError("--backend must be cpu or cuda");
}

// A value of the log, or n/a where it is undefined (the mean return before any episode ended,
// the tracking error of a task that tracks nothing): "nan" reads as a failure.
std::string logged(const char* format, double x) {
  if (!std::isfinite(x)) return "n/a";
  char b[64];
  std::snprintf(b, sizeof b, format, x);
  return b;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + path);
}

// One line per iteration on a terminal (rewritten), else a line every 5% of the run.
class TrainProgress {
 public:
  explicit TrainProgress(int total) : total_(total), tty_(isatty(fileno(stderr)) != 0) {}
  void update(const learn::IterationLog& l) {
    const int every = std::max(1, total_ / 20);
    const bool last = l.iteration + 1 == total_;
    if (!tty_ && l.iteration % every != 0 && !last && !l.evaluated) return;
    const int width = 24, filled = static_cast<int>(width * (l.iteration + 1.0) / total_);
    std::string bar(filled, '#');
    bar.resize(width, '.');
    char evaluated[128] = "";
    if (l.evaluated)
      std::snprintf(evaluated, sizeof evaluated, "  eval: return %.2f, length %.1f, falls %d/%d", l.eval_return,
                    l.eval_episode_length, l.eval_falls, l.eval_episodes);
    std::fprintf(stderr, "%s[%s] it %d/%d  env-steps %lld  mean return %s  %.1f s%s%s", tty_ ? "\r" : "", bar.c_str(),
                 l.iteration + 1, total_, l.env_steps,
                 std::isfinite(l.mean_return) ? logged("%.2f", l.mean_return).c_str() : "n/a (no episode ended yet)",
                 l.wall_s, evaluated, tty_ && !last ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  int total_;
  bool tty_;
};

// DIR/plots.gp and, with gnuplot, its PNGs. The return plots need a mean return (gnuplot stops
// the script at a plot with no defined point), so they are written once an episode has ended.
void write_plots(const std::string& dir, bool bundles, bool any_return) {
  const std::string gp = dir + "/plots.gp";
  std::ofstream f(gp);
  f << "set datafile separator ','\nset datafile missing 'n/a'\nset terminal pngcairo size 800,500 noenhanced\n"
       "set key autotitle columnhead\nset grid\n";
  if (any_return)
    f << "set output '" << dir << "/return_vs_steps.png'\nset xlabel 'environment steps'\nset ylabel 'mean return'\n"
         "plot '" << dir << "/log.csv' using 2:4 with lines title 'mean return'\n"
         "set output '" << dir << "/return_vs_time.png'\nset xlabel 'wall time (s)'\n"
         "plot '" << dir << "/log.csv' using 3:4 with lines title 'mean return'\n";
  else
    std::fprintf(stderr, "train: no episode ended: return plots not drawn\n");
  f << "set output '" << dir << "/grad_norm.png'\nset xlabel 'environment steps'\nset ylabel 'actor gradient norm (before clipping)'\nset logscale y\n"
       "plot '" << dir << "/log.csv' using 2:9 with lines title 'gradient norm'\nunset logscale y\n";
  if (bundles)
    f << "set output '" << dir << "/bundle_rate.png'\nset ylabel 'bundles per environment-step'\n"
         "plot '" << dir << "/log.csv' using 2:10 with lines title 'bundle rate'\n";
  f.close();
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "train: gnuplot not found: plots not drawn (script: %s)\n", gp.c_str());
    return;
  }
  const std::string cmd = "gnuplot '" + gp + "' 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "train: gnuplot failed on %s\n", gp.c_str());
}

}  // namespace

int cmd_train(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("expected one TASK (see --help)");
  const std::string spec = a.positional[0];
  const learn::Algorithm algo = learn::parse_algorithm(a.get("algo"));
  learn::TrainOptions o = learn::defaults_for(spec, algo);
  if (a.has("envs")) o.nenv = static_cast<int>(parse_int_in(a.get("envs"), "--envs", 1, 1 << 20));
  if (a.has("iterations")) o.iterations = static_cast<int>(parse_int_in(a.get("iterations"), "--iterations", 1, 100000000));
  if (a.has("seed")) o.seed = static_cast<std::uint64_t>(parse_int_in(a.get("seed"), "--seed", 0, 1L << 62));
  if (a.has("horizon")) o.horizon = static_cast<int>(parse_int_in(a.get("horizon"), "--horizon", 1, 100000));
  if (a.has("threads")) o.threads = static_cast<int>(parse_int_in(a.get("threads"), "--threads", 0, 4096));
  if (a.has("backend")) o.backend = parse_backend_name(a.get("backend"));
  const auto real = [&](const char* key, double lo, double hi) {
    char* end = nullptr;
    const double x = std::strtod(a.get(key).c_str(), &end);
    if (!end || *end || !(x >= lo && x <= hi)) throw UsageError(std::string("--") + key + " must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  };
  if (a.has("actor-lr")) o.actor_lr = real("actor-lr", 0, 1);
  if (a.has("critic-lr")) o.critic_lr = real("critic-lr", 0, 1);
  if (a.has("ppo-lr")) o.ppo_lr = real("ppo-lr", 0, 1);
  if (a.has("log-std")) o.init_log_std = real("log-std", -10, 10);
  if (a.has("tau")) o.bundles.tau = real("tau", 0, 1e300);
  if (a.has("reward")) {
    try {
      o.reward = learn::parse_reward(a.get("reward"));
    } catch (const std::invalid_argument&) {
      throw UsageError("--reward must be task or add");
    }
  }
  if (a.has("action-rate")) o.action_rate_penalty = real("action-rate", 0, 1e6);
  if (a.has("disc-replay")) o.add.replay_capacity = static_cast<int>(parse_int_in(a.get("disc-replay"), "--disc-replay", 0, 1 << 24));
  if (a.has("disc-minibatches")) o.add.minibatches = static_cast<int>(parse_int_in(a.get("disc-minibatches"), "--disc-minibatches", 1, 1024));
  // the discriminator's settings would be ignored without its reward: say so rather than run
  // a training the user did not ask for
  for (const char* key : {"disc-replay", "disc-minibatches"})
    if (a.has(key) && o.reward != learn::RewardKind::Add)
      throw UsageError(std::string("--") + key + " sets the ADD discriminator: it needs --reward add");
  if (a.has("critics")) o.critic_ensemble = static_cast<int>(parse_int_in(a.get("critics"), "--critics", 1, 64));
  if (a.has("policy-loop")) {
    try {
      o.policy_loop = learn::parse_policy_loop(a.get("policy-loop"));
    } catch (const std::invalid_argument&) {
      throw UsageError("--policy-loop must be auto, host or backend");
    }
    if (o.policy_loop == learn::PolicyLoopKind::Backend && algo == learn::Algorithm::Ppo)
      throw UsageError("--policy-loop backend runs with --algo shac or shac-bcg (PPO's networks stay on the host)");
  }
  const std::string dir = a.has("out") ? a.get("out") : "train_" + spec.substr(0, spec.find(':')) + "_" + learn::algorithm_name(algo);
  learn::EvalSchedule eval;
  if (a.has("eval-every")) eval.every = static_cast<int>(parse_int_in(a.get("eval-every"), "--eval-every", 1, 100000000));
  if (a.has("eval-episodes")) eval.episodes = static_cast<int>(parse_int_in(a.get("eval-episodes"), "--eval-episodes", 1, 100000));
  const learn::TaskOptions topts = task_options(a, spec);
  auto task = learn::make_task(spec, topts);
  if (a.has("init")) {
    o.init_policy = a.get("init");
    const learn::PolicyFile init = learn::load_policy(o.init_policy);  // std::runtime_error naming the file
    if (init.task != spec || init.task_options != task->options_words())
      std::fprintf(stderr, "train: note: %s was trained on %s with %s; this run trains %s with %s\n", o.init_policy.c_str(),
                   init.task.c_str(), init.task_options.c_str(), spec.c_str(), task->options_words().c_str());
  }
  if (a.has("checkpoint-every")) {
    o.checkpoint_every = static_cast<int>(parse_int_in(a.get("checkpoint-every"), "--checkpoint-every", 1, 100000000));
    o.checkpoint_path = dir + "/checkpoint.sgc";
  }
  if (a.has("policy-every")) {
    o.snapshot_every = static_cast<int>(parse_int_in(a.get("policy-every"), "--policy-every", 1, 100000000));
    o.snapshot_dir = dir;
  }
  if (a.has("resume")) {
    if (a.has("init")) throw UsageError("--init and --resume exclude each other (a checkpoint holds the whole run)");
    o.resume_from = a.get("resume");
  }
  std::unique_ptr<learn::Task> eval_task;
  if (eval.every > 0) {
    eval_task = learn::make_task(spec, topts);
    eval.task = eval_task.get();
  }
  {
    std::error_code ec;
    const auto st = std::filesystem::status(dir, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
      // appended piecewise: GCC 12 warns (-Wrestrict, falsely) on "literal" + s
      throw UsageError(std::string("--out ").append(dir).append(
          ": exists and is not a directory (train writes its log, policy and plots into the directory DIR)"));
  }
  std::filesystem::create_directories(dir);
  const std::string csv = dir + "/log.csv";
  std::FILE* log = std::fopen(csv.c_str(), "w");
  if (!log) throw std::runtime_error("cannot write " + csv);
  std::fprintf(log, "iteration,env_steps,wall_s,mean_return,mean_episode_length,mean_step_reward,actor_loss,critic_loss,"
                    "actor_grad_norm,bundle_rate,nonfinite,sim_s,adjoint_s,network_s,mean_tracking_error,disc_loss,"
                    "eval_return,eval_episode_length,eval_falls,eval_tracking_error\n");
  std::fprintf(stderr,
               "train %s: %s, %d environments, %d iterations x %d steps, seed %llu, %s backend, %s reward, policy loop %s\n",
               spec.c_str(), learn::algorithm_name(algo).c_str(), o.nenv, o.iterations, o.horizon,
               static_cast<unsigned long long>(o.seed), backend_name(o.backend).c_str(),
               learn::reward_name(o.reward).c_str(), learn::policy_loop_name(o.policy_loop).c_str());
  TrainProgress progress(o.iterations);
  double sim = 0, adj = 0, net = 0;
  bool any_return = false;
  const learn::TrainResult r = learn::train(*task, spec, o, [&](const learn::IterationLog& l) {
    std::fprintf(log, "%d,%lld,%.6g,%s,%s,%s,%s,%s,%s,%.6g,%d,%.6g,%.6g,%.6g,%s,%s", l.iteration, l.env_steps, l.wall_s,
                 logged("%.10g", l.mean_return).c_str(), logged("%.6g", l.mean_episode_length).c_str(),
                 logged("%.10g", l.mean_step_reward).c_str(), logged("%.10g", l.actor_loss).c_str(),
                 logged("%.10g", l.critic_loss).c_str(), logged("%.10g", l.actor_grad_norm).c_str(), l.bundle_rate,
                 l.nonfinite, l.sim_s, l.adjoint_s, l.network_s, logged("%.6g", l.mean_tracking_error).c_str(),
                 logged("%.6g", l.disc_loss).c_str());
    any_return |= std::isfinite(l.mean_return);
    if (l.evaluated)
      std::fprintf(log, ",%s,%.6g,%d,%s\n", logged("%.10g", l.eval_return).c_str(), l.eval_episode_length, l.eval_falls,
                   logged("%.6g", l.eval_tracking_error).c_str());
    else
      std::fprintf(log, ",,,,\n");
    std::fflush(log);
    sim += l.sim_s; adj += l.adjoint_s; net += l.network_s;
    progress.update(l);
  }, eval);
  std::fclose(log);
  // the policy records the task's options (learn::train takes them from the task): eval runs it there
  learn::save_policy(dir + "/policy.sgp", r.policy);
  write_plots(dir, algo == learn::Algorithm::ShacBcg, any_return);
  const double wall = r.log.empty() ? 0 : r.log.back().wall_s;
  const long long steps = r.log.empty() ? 0 : r.log.back().env_steps;
  {
    // the run's totals for scripts (the lines below are for people): fractions, not percent
    const auto fraction = [&](double part) { return wall > 0 ? part / wall : std::nan(""); };
    std::string j = "{\n";
    j += "  \"task\": " + json_string(spec) + ",\n";
    j += "  \"task_options\": " + json_string(task->options_words()) + ",\n";
    j += "  \"algo\": " + json_string(learn::algorithm_name(algo)) + ",\n";
    j += "  \"envs\": " + std::to_string(o.nenv) + ",\n";
    j += "  \"horizon\": " + std::to_string(o.horizon) + ",\n";
    j += "  \"seed\": " + std::to_string(o.seed) + ",\n";
    j += "  \"backend\": " + json_string(backend_name(o.backend)) + ",\n";
    j += "  \"iterations\": " + std::to_string(r.log.empty() ? 0 : r.log.back().iteration + 1) + ",\n";
    j += "  \"env_steps\": " + std::to_string(steps) + ",\n";
    j += "  \"wall_s\": " + json_number(wall) + ",\n";
    j += "  \"env_steps_per_s\": " + json_number(wall > 0 ? steps / wall : std::nan("")) + ",\n";
    j += "  \"time_fraction\": {\"simulation\": " + json_number(fraction(sim)) + ", \"adjoint\": " + json_number(fraction(adj)) +
         ", \"networks\": " + json_number(fraction(net)) + "},\n";
    j += "  \"final_mean_return\": " + json_number(r.final_mean_return) + ",\n";
    j += "  \"log\": \"log.csv\",\n  \"policy\": \"policy.sgp\"\n}\n";
    write_text_file(dir + "/summary.json", j);
  }
  std::printf("log: %s\npolicy: %s/policy.sgp\n", csv.c_str(), dir.c_str());
  std::printf("throughput: %.0f env-steps/s; time in simulation %.1f%%, adjoint %.1f%%, networks %.1f%% (%.1f s)\n",
              wall > 0 ? steps / wall : 0.0, 100 * sim / std::max(wall, 1e-9), 100 * adj / std::max(wall, 1e-9),
              100 * net / std::max(wall, 1e-9), wall);
  std::printf("final mean return: %s\n", logged("%.6g", r.final_mean_return).c_str());
  return 0;
}

int cmd_eval(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("expected one POLICY file (see --help)");
  const learn::PolicyFile policy = learn::load_policy(a.positional[0]);
  const std::string spec = a.has("task") ? a.get("task") : policy.task;
  if (a.has("task") && spec != policy.task)
    std::fprintf(stderr, "eval: note: the policy was trained on %s, evaluating on %s\n", policy.task.c_str(), spec.c_str());
  const int episodes = a.has("episodes") ? static_cast<int>(parse_int_in(a.get("episodes"), "--episodes", 1, 100000)) : 5;
  const std::uint64_t seed = a.has("seed") ? static_cast<std::uint64_t>(parse_int_in(a.get("seed"), "--seed", 0, 1L << 62)) : 1;
  const std::string where = a.has("in") ? a.get("in") : "stiffgrad";
  if (where != "stiffgrad" && where != "mujoco") throw UsageError("--in must be stiffgrad or mujoco");
  // the training's task options (policy files before version 2 have none: the defaults), then
  // the command line's
  learn::TaskOptions trained;
  try {
    learn::parse_task_options(policy.task_options, &trained);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(a.positional[0] + ": " + e.what());
  }
  const learn::TaskOptions topts = task_options(a, spec, trained);
  if (policy.task_options.empty())
    std::fprintf(stderr, "eval: note: %s does not record its task options (an older file): using the defaults and "
                         "the command line's\n", a.positional[0].c_str());
  // compared in today's words (a file from before a key existed names fewer, holding their defaults)
  else if (learn::format_task_options(topts) != learn::format_task_options(trained))
    std::fprintf(stderr, "eval: note: the policy was trained with %s, evaluating with %s\n",
                 learn::format_task_options(trained).c_str(), learn::format_task_options(topts).c_str());
  auto task = learn::make_task(spec, topts);
  // falls only where the task can fall, tracking only where it tracks, penetration only where it
  // has feet (cartpole has none of the three)
  const bool falls = task->can_fall(), feet = !task->foot_geoms().empty();
  const auto print = [&](const char* sim, const learn::EvalResult& r) {
    std::printf("%s: mean return %.6g, mean episode length %.1f", sim, r.mean_return, r.mean_length);
    if (falls) std::printf(", falls %d/%d", r.falls, r.episodes);
    if (std::isfinite(r.tracking_error)) std::printf(", tracking error %.4f m", r.tracking_error);
    if (feet) std::printf(", mean penetration %.4f mm", 1e3 * r.mean_penetration);
    std::printf("\n");
  };
  // --json FILE: the same figures, full precision, null where the printed line leaves one out
  const auto json_sim = [&](const learn::EvalResult& r) {
    return "{\"mean_return\": " + json_number(r.mean_return) + ", \"mean_episode_length\": " + json_number(r.mean_length) +
           ", \"episodes\": " + std::to_string(r.episodes) +
           ", \"falls\": " + (falls ? std::to_string(r.falls) : std::string("null")) +
           ", \"tracking_error\": " + json_number(r.tracking_error) +
           ", \"mean_penetration_mm\": " + (feet ? json_number(1e3 * r.mean_penetration) : std::string("null")) + "}";
  };
  const auto write_json = [&](const learn::EvalResult& sg, const learn::EvalResult* mj) {
    if (!a.has("json")) return;
    std::string j = "{\n";
    j += "  \"policy\": " + json_string(a.positional[0]) + ",\n";
    j += "  \"task\": " + json_string(spec) + ",\n";
    j += "  \"task_options\": " + json_string(learn::format_task_options(topts)) + ",\n";
    j += "  \"episodes\": " + std::to_string(episodes) + ",\n";
    j += "  \"seed\": " + std::to_string(seed) + ",\n";
    j += "  \"in\": " + json_string(where) + ",\n";
    j += "  \"stiffgrad\": " + json_sim(sg);
    if (mj) {
      j += ",\n  \"mujoco\": " + json_sim(*mj);
      j += ",\n  \"delta_d_mm\": " + (feet ? json_number(1e3 * (mj->mean_penetration - sg.mean_penetration)) : std::string("null"));
    }
    j += "\n}\n";
    write_text_file(a.get("json"), j);
  };
  const learn::EvalResult in_sg = learn::evaluate_in_stiffgrad(*task, policy, episodes, seed);
  if (where == "stiffgrad") {
    print("stiffgrad", in_sg);
    write_json(in_sg, nullptr);
    return 0;
  }
  const learn::EvalResult in_mj = learn::evaluate_in_mujoco(*task, policy, episodes, seed);
  print("mujoco", in_mj);
  print("stiffgrad", in_sg);
  if (feet)
    std::printf("delta_d (MuJoCo - stiffgrad mean penetration): %.4f mm\n", 1e3 * (in_mj.mean_penetration - in_sg.mean_penetration));
  write_json(in_sg, &in_mj);
  return 0;
}

}  // namespace stiffgrad::cli

#ifndef STIFFGRAD_WITH_MUJOCO
namespace stiffgrad::learn {
EvalResult evaluate_in_mujoco(Task&, const PolicyFile&, int, std::uint64_t) {
  throw std::runtime_error("eval --in mujoco: this build has no MuJoCo (install libmujoco-dev and reconfigure)");
}
}  // namespace stiffgrad::learn
#endif
