// What the learning tests share: task options that read the shared data folder.
#pragma once

#include <gtest/gtest.h>

#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/learn/train.hpp"
#include "test_support.hpp"

namespace sgtest {

// Task options with the shared data folder; episode_steps > 0 shortens the episodes.
inline stiffgrad::learn::TaskOptions learn_task_options(int episode_steps = 0) {
  stiffgrad::learn::TaskOptions t;
  t.data_dir = data_dir();
  t.episode_steps = episode_steps;
  return t;
}

// Every iteration's time split (simulation, adjoint, networks) is a split of that iteration:
// each part non-negative, the simulation's positive, together no more than the iteration's wall
// time (they are disjoint stretches of it; 1 ms of clock slack). On CUDA a host clock around
// the asynchronous step() broke this the other way (the steps' time landed in later phases),
// which this cannot see; tests/gpu/test_gpu_stream_timer.cpp checks the event timing itself.
inline void expect_time_split_within_wall(const stiffgrad::learn::TrainResult& r, const char* what) {
  double previous_wall = 0;
  for (const stiffgrad::learn::IterationLog& l : r.log) {
    const double wall = l.wall_s - previous_wall;
    previous_wall = l.wall_s;
    EXPECT_GT(l.sim_s, 0.0) << what << " iteration " << l.iteration;
    EXPECT_GE(l.adjoint_s, 0.0) << what << " iteration " << l.iteration;
    EXPECT_GE(l.network_s, 0.0) << what << " iteration " << l.iteration;
    EXPECT_LE(l.sim_s + l.adjoint_s + l.network_s, wall + 1e-3)
        << what << " iteration " << l.iteration << ": sim " << l.sim_s << " s, adjoint " << l.adjoint_s
        << " s, networks " << l.network_s << " s, wall " << wall << " s";
  }
}

}  // namespace sgtest
