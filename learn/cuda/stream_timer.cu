// The CUDA StreamTimer (learn/stream_timer.hpp): a pool of event pairs created at
// construction, recorded around each interval on the simulator's stream (no host sync), read
// by collect() once the trainer's own download has waited for the stream.
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cuda/cuda_support.cuh"
#include "learn/stream_timer.hpp"

namespace stiffgrad::learn {

namespace {

class CudaEventTimer final : public StreamTimer {
 public:
  CudaEventTimer(void* stream, int capacity) : stream_(static_cast<cudaStream_t>(stream)), start_(capacity), stop_(capacity) {
    for (int i = 0; i < capacity; ++i) {
      SG_CUDA_CHECK(cudaEventCreate(&start_[i]));
      SG_CUDA_CHECK(cudaEventCreate(&stop_[i]));
    }
  }
  ~CudaEventTimer() override {
    for (cudaEvent_t e : start_) cudaEventDestroy(e);
    for (cudaEvent_t e : stop_) cudaEventDestroy(e);
  }
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void begin() override {
    if (open_) throw std::logic_error("StreamTimer: begin() twice without end()");
    if (intervals_ == static_cast<int>(start_.size()))
      throw std::logic_error("StreamTimer: more than " + std::to_string(start_.size()) + " intervals before collect()");
    SG_CUDA_CHECK(cudaEventRecord(start_[intervals_], stream_));
    open_ = true;
  }
  void end() override {
    if (!open_) throw std::logic_error("StreamTimer: end() without begin()");
    SG_CUDA_CHECK(cudaEventRecord(stop_[intervals_], stream_));
    open_ = false;
    ++intervals_;
  }
  double collect() override {
    if (open_) throw std::logic_error("StreamTimer: collect() inside an interval");
    double seconds = 0;
    if (intervals_ > 0) SG_CUDA_CHECK(cudaEventSynchronize(stop_[intervals_ - 1]));
    for (int i = 0; i < intervals_; ++i) {
      float ms = 0;
      SG_CUDA_CHECK(cudaEventElapsedTime(&ms, start_[i], stop_[i]));
      seconds += 1e-3 * ms;
    }
    intervals_ = 0;
    return seconds;
  }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> start_, stop_;  // capacity each
  int intervals_ = 0;
  bool open_ = false;
};

}  // namespace

std::unique_ptr<StreamTimer> make_stream_timer_cuda(void* stream, int capacity) {
  return std::make_unique<CudaEventTimer>(stream, capacity);
}

}  // namespace stiffgrad::learn
