// Shared pieces of the tasks: the squashed action map and the task factories.
#pragma once

#include <memory>
#include <string>

#include "stiffgrad/learn/task.hpp"

namespace stiffgrad::learn {

// ctrl_i = mid_i + half_i tanh(a_i) for an actuator with a control range (mid, half from it),
// ctrl_i = a_i otherwise: every action is a valid control, with a gradient everywhere.
void squash_action(const Model& m, const double* action, double* ctrl);
void adj_squash_action(const Model& m, const double* action, const double* adj_ctrl, double* adj_action);
// The kernel description of a task with the squashed action map (kind: kern::tasks::TaskKernelKind).
TaskKernelDesc squash_kernel_desc(const Model& m, int kind);

std::unique_ptr<Task> make_cartpole_swingup(const TaskOptions& options);
std::unique_ptr<Task> make_ant_run(const TaskOptions& options);
std::unique_ptr<Task> make_g1_imitate(const std::string& clip, const TaskOptions& options);  // task_g1_imitate.cpp

// data_dir/relative, with a std::runtime_error naming the path when it does not exist.
std::string task_data_file(const TaskOptions& options, const std::string& relative);

}  // namespace stiffgrad::learn
