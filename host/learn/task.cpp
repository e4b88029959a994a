#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "host/learn/task_common.hpp"
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
