// What the learning tests share: task options that read the shared data folder.
#pragma once

#include "stiffgrad/learn/task.hpp"
#include "test_support.hpp"

namespace sgtest {

// Task options with the shared data folder; episode_steps > 0 shortens the episodes.
inline stiffgrad::learn::TaskOptions learn_task_options(int episode_steps = 0) {
  stiffgrad::learn::TaskOptions t;
  t.data_dir = shared_data();
  t.episode_steps = episode_steps;
  return t;
}

}  // namespace sgtest
