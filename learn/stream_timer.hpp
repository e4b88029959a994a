// Time taken by work enqueued on a simulator's stream, measured without synchronizing the host
// inside the step loop (the training's time split: simulation vs networks).
//
// On the CUDA backend Simulator::step() only enqueues kernels, so a host clock around it measures
// the launch, and the kernels' time lands in whichever later call waits for the stream (the
// observation download, the adjoint). A StreamTimer records a CUDA event pair around each
// interval instead and reads their elapsed times in collect(), which a trainer calls after the
// phase's own synchronization (a download), where it waits for nothing. On the CPU backend
// (stream nullptr) everything is synchronous and the intervals are timed by the host clock.
#pragma once

#include <memory>

namespace stiffgrad::learn {

class StreamTimer {
 public:
  virtual ~StreamTimer() = default;
  // An interval's start and end, around work enqueued on the stream. At most `capacity`
  // intervals between two collect() calls (std::logic_error beyond: sized at creation, the
  // event pool is never grown inside the step loop).
  virtual void begin() = 0;
  virtual void end() = 0;
  // Seconds of the intervals since the last collect(), summed; starts the next batch. CUDA: waits
  // for the last interval's end event (call it after the phase's own host synchronization).
  virtual double collect() = 0;
};

// stream: Simulator::cuda_stream() (nullptr: the CPU backend, timed by the host clock);
// capacity: intervals between two collect() calls (>= 1).
std::unique_ptr<StreamTimer> make_stream_timer(void* stream, int capacity);

// The CUDA timer (learn/cuda/stream_timer.cu): events created on the current device at
// construction. A build without the CUDA backend throws std::runtime_error.
std::unique_ptr<StreamTimer> make_stream_timer_cuda(void* stream, int capacity);

}  // namespace stiffgrad::learn
