#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "learn/task_common.hpp"
#include "kernels/tasks/task_kernel.hpp"

namespace stiffgrad::learn {

double Task::control_dt() const { return sim_options().substeps * model()->opt.timestep; }

double Task::tracking_error(int, int, const double*, const double*) const {
  return std::numeric_limits<double>::quiet_NaN();
}

void Task::add_delta(int, int, const double*, const double*, double*) const {
  throw std::logic_error(name() + " has no reference features for the ADD reward");
}

void Task::adj_add_delta(int, int, const double*, const double*, const double*, double*, double*) const {
  throw std::logic_error(name() + " has no reference features for the ADD reward");
}

void Task::observation_reference(int, int, double*) const {}

void Task::set_episode_data(const std::vector<double>& data) {
  if (!data.empty()) throw std::invalid_argument(name() + ": has no per-environment episode data to restore");
}

namespace {
kern::tasks::TaskKernel squash_kernel(const Model& m) {
  kern::tasks::TaskKernel k;
  k.nu = k.na = m.nu;
  k.action_map = kern::tasks::kActionSquash;
  k.ctrl_limited = m.actuator_ctrllimited.data();
  k.ctrl_range = m.actuator_ctrlrange.data();
  return k;
}
}  // namespace

void squash_action(const Model& m, const double* action, double* ctrl) {
  kern::tasks::task_action_to_ctrl(squash_kernel(m), action, nullptr, ctrl);
}

void adj_squash_action(const Model& m, const double* action, const double* adj_ctrl, double* adj_action) {
  kern::tasks::adj_task_action_to_ctrl(squash_kernel(m), action, nullptr, adj_ctrl, adj_action);
}

TaskKernelDesc squash_kernel_desc(const Model& m, int kind) {
  TaskKernelDesc d;
  d.kind = kind;
  d.action_map = kern::tasks::kActionSquash;
  d.ctrl_limited = m.actuator_ctrllimited;
  d.ctrl_range = m.actuator_ctrlrange;
  return d;
}

std::string format_task_options(const TaskOptions& o) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "contact=%s kappa=%.17g episode-steps=%d explicit-servos=%d servo-targets=%s action-scale=%.17g "
                "clip-window=%.17g:%.17g",
                contact_model_name(o.contact), o.kappa, o.episode_steps, o.explicit_servos ? 1 : 0,
                o.servo_targets == TaskOptions::ServoTargets::Reference ? "reference" : "home", o.action_scale,
                o.clip_begin, o.clip_end);
  return buf;
}

void parse_task_options(const std::string& text, TaskOptions* o) {
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const std::size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    const auto bad = [&] { return std::invalid_argument("task options: bad value in '" + word + "'"); };
    const auto number = [&] {
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !std::isfinite(x)) throw bad();
      return x;
    };
    if (key == "contact") {
      if (!parse_contact_model(value, &o->contact)) throw bad();
    } else if (key == "kappa") {
      o->kappa = number();
    } else if (key == "episode-steps") {
      const double x = number();
      if (x != std::floor(x) || x < 0 || x > 1e9) throw bad();
      o->episode_steps = static_cast<int>(x);
    } else if (key == "explicit-servos") {
      if (value != "0" && value != "1") throw bad();
      o->explicit_servos = value == "1";
    } else if (key == "servo-targets") {
      if (value == "home") o->servo_targets = TaskOptions::ServoTargets::Home;
      else if (value == "reference") o->servo_targets = TaskOptions::ServoTargets::Reference;
      else throw bad();
    } else if (key == "action-scale") {
      o->action_scale = number();
    } else if (key == "clip-window") {
      // B:E seconds, 0 <= B, and E = 0 (the clip's end) or E > B
      const std::size_t colon = value.find(':');
      if (colon == std::string::npos) throw bad();
      char* end = nullptr;
      const std::string b = value.substr(0, colon), e = value.substr(colon + 1);
      const double begin = std::strtod(b.c_str(), &end);
      if (b.empty() || *end || !std::isfinite(begin) || begin < 0) throw bad();
      const double finish = std::strtod(e.c_str(), &end);
      if (e.empty() || *end || !std::isfinite(finish) || (finish != 0 && finish <= begin)) throw bad();
      o->clip_begin = begin;
      o->clip_end = finish;
    } else {
      throw std::invalid_argument("task options: unknown key in '" + word + "'");
    }
  }
}

std::string task_data_file(const TaskOptions& options, const std::string& relative) {
  const std::string path = options.data_dir + "/" + relative;
  if (!std::filesystem::exists(path))
    throw std::runtime_error("task data not found: " + path + " (set the data folder with --data DIR)");
  return path;
}

std::vector<std::string> task_names() { return {"cartpole-swingup", "ant-run", "g1-imitate:CLIP"}; }

std::unique_ptr<Task> make_task(const std::string& spec, const TaskOptions& options) {
  if (spec == "cartpole-swingup") return make_cartpole_swingup(options);
  if (spec == "ant-run") return make_ant_run(options);
  const std::string g1 = "g1-imitate:";
  if (spec.rfind(g1, 0) == 0 && spec.size() > g1.size()) return make_g1_imitate(spec.substr(g1.size()), options);
  throw std::invalid_argument("unknown task '" + spec + "' (tasks: cartpole-swingup, ant-run, g1-imitate:CLIP)");
}

}  // namespace stiffgrad::learn
