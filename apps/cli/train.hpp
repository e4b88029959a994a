// stiffgrad — the `train` and `eval` commands (apps/cli/train.cpp) and MuJoCo evaluation
// (apps/cli/eval_mujoco.cpp, built when libmujoco is found).
#pragma once

#include <cstdint>
#include <string>

#include "apps/cli/cli.hpp"
#include "stiffgrad/learn/train.hpp"

namespace stiffgrad::cli {

std::string train_help();  // `stiffgrad train --help`, its defaults read from the option structs
extern const char* const kEvalHelp;
int cmd_train(const Args& a);
int cmd_eval(const Args& a);

}  // namespace stiffgrad::cli

namespace stiffgrad::learn {

// Deterministic episodes of `policy` in MuJoCo 2.2.2 (libmujoco) on task.mujoco_model_file(),
// with the task's timestep, substeps, observation, action map, reward and termination;
// mean_penetration is the mean over steps of the largest penetration of any contact.
// std::runtime_error when this build has no MuJoCo or the task has no MuJoCo file.
EvalResult evaluate_in_mujoco(Task& task, const PolicyFile& policy, int episodes, std::uint64_t seed);

}  // namespace stiffgrad::learn
