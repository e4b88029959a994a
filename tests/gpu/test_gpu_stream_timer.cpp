// The training's step timer on the CUDA backend (learn/stream_timer.hpp): event pairs on
// the stream measure the enqueued work's own time, which a host clock around the asynchronous
// enqueue does not. The work is a 200 ms host-side stall enqueued on the stream
// (cudaLaunchHostFunc): enqueuing returns at once, the events see the 200 ms.
#include <gtest/gtest.h>

#if defined(SG_TEST_WITH_CUDA)
#include <cuda_runtime_api.h>

#include <chrono>
#include <thread>

#include "learn/stream_timer.hpp"
#include "stiffgrad/simulator.hpp"

namespace {

using namespace stiffgrad;

void CUDART_CB stall(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

TEST(GpuStreamTimer, EventsMeasureTheStreamsWorkNotItsEnqueue) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: the stream timer runs on a device machine (scripts/device_check.sh)";
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    const auto timer = learn::make_stream_timer(stream, 2);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 2; ++i) {
      timer->begin();
      ASSERT_EQ(cudaLaunchHostFunc(stream, stall, nullptr), cudaSuccess);
      timer->end();
    }
    const double enqueue = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double s = timer->collect();  // waits for the last end event
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(enqueue, 0.1) << "enqueuing should not wait for the stall";
    EXPECT_GE(s, 0.39);
    EXPECT_LE(s, wall + 1e-3);
    EXPECT_EQ(timer->collect(), 0.0);
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
#else
TEST(GpuStreamTimer, EventsMeasureTheStreamsWorkNotItsEnqueue) {
  GTEST_SKIP() << "built without the CUDA backend (STIFFGRAD_CUDA=OFF): no stream to time";
}
#endif
