// The host-clock StreamTimer (CPU backend: step() returns when its work is done) and the choice
// between it and the CUDA one (learn/stream_timer.hpp).
#include "learn/stream_timer.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

namespace stiffgrad::learn {

namespace {

class HostClockTimer final : public StreamTimer {
 public:
  explicit HostClockTimer(int capacity) : capacity_(capacity) {}
  void begin() override {
    if (open_) throw std::logic_error("StreamTimer: begin() twice without end()");
    if (intervals_ == capacity_) throw std::logic_error("StreamTimer: more than " + std::to_string(capacity_) + " intervals before collect()");
    open_ = true;
    start_ = std::chrono::steady_clock::now();
  }
  void end() override {
    if (!open_) throw std::logic_error("StreamTimer: end() without begin()");
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    open_ = false;
    ++intervals_;
  }
  double collect() override {
    if (open_) throw std::logic_error("StreamTimer: collect() inside an interval");
    const double s = seconds_;
    seconds_ = 0;
    intervals_ = 0;
    return s;
  }

 private:
  int capacity_;
  int intervals_ = 0;
  bool open_ = false;
  double seconds_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::unique_ptr<StreamTimer> make_stream_timer(void* stream, int capacity) {
  if (capacity < 1) throw std::invalid_argument("StreamTimer: capacity must be >= 1, got " + std::to_string(capacity));
  if (stream == nullptr) return std::make_unique<HostClockTimer>(capacity);
  return make_stream_timer_cuda(stream, capacity);
}

}  // namespace stiffgrad::learn
