// The training's step timer on the CPU backend (learn/stream_timer.hpp): the host clock
// around each interval, summed and reset by collect(), its capacity enforced, misuse refused.
// The CUDA event timer is tested on the device (tests/gpu/test_gpu_stream_timer.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "learn/stream_timer.hpp"

namespace {

using namespace stiffgrad::learn;

TEST(StreamTimer, HostClockSumsItsIntervalsAndNotTheGaps) {
  const auto timer = make_stream_timer(nullptr, 2);
  const auto t0 = std::chrono::steady_clock::now();
  timer->begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  timer->end();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // between intervals: not counted
  timer->begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  timer->end();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double s = timer->collect();
  EXPECT_GE(s, 0.040);
  EXPECT_LE(s, wall - 0.050);
  EXPECT_EQ(timer->collect(), 0.0);  // collect() starts the next batch
}

TEST(StreamTimer, CapacityAndMisuseAreRefused) {
  EXPECT_THROW(make_stream_timer(nullptr, 0), std::invalid_argument);
  const auto timer = make_stream_timer(nullptr, 1);
  EXPECT_THROW(timer->end(), std::logic_error);
  timer->begin();
  EXPECT_THROW(timer->begin(), std::logic_error);
  EXPECT_THROW(timer->collect(), std::logic_error);
  timer->end();
  EXPECT_THROW(timer->begin(), std::logic_error);  // one interval per collect()
  EXPECT_GE(timer->collect(), 0.0);
  timer->begin();  // room again after collect()
  timer->end();
  EXPECT_GE(timer->collect(), 0.0);
}

}  // namespace
