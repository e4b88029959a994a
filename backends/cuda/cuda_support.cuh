// CUDA support shared by the backend (backends/cuda/) and the learning library's device code
// (learn/cuda/): error checks, the block size, RAII owners of device and pinned memory, the
// current-device guard and NVTX ranges. No physics and no simulator state: learn/cuda/ includes
// this file, not the backend's class (backend_cuda.cuh).
#pragma once

#if !defined(STIFFGRAD_CUDA_NO_FMAD) || defined(__USE_FAST_MATH__)
#error "stiffgrad's CUDA sources must be compiled with -fmad=false and without --use_fast_math (see CMakeLists.txt): forward and replay would otherwise not agree bit for bit"
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(STIFFGRAD_WITH_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

// Throws std::runtime_error naming the failed call, CUDA's message and the source line.
#define SG_CUDA_CHECK(expr) ::stiffgrad::cuda_detail::check((expr), #expr, __FILE__, __LINE__)

namespace stiffgrad {

namespace cuda_detail {

inline void check(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(err) + " (" +
                           cudaGetErrorName(err) + ") in " + what + " at " + file + ":" +
                           std::to_string(line));
}

// Captures what enqueue() launches on `stream` into an instantiated CUDA graph, or returns null
// (the failed capture's error cleared: it is not the user's) where the stream cannot be captured,
// e.g. the legacy default stream. Thread-local capture mode: other threads' CUDA calls are
// unaffected. The graph bakes in the launches' arguments.
template <class Enqueue>
cudaGraphExec_t capture_graph(cudaStream_t stream, Enqueue&& enqueue) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (ok) {
    enqueue();
    ok = cudaStreamEndCapture(stream, &g) == cudaSuccess;
    ok = ok && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess;
    if (g) cudaGraphDestroy(g);
  }
  if (!ok) {
    cudaGetLastError();
    if (exec) cudaGraphExecDestroy(exec);
    return nullptr;
  }
  return exec;
}

}  // namespace cuda_detail

namespace cuda_detail {

// Threads per block. Each thread runs a whole control step of one environment with a large
// per-thread register footprint (3x3 matrices, spatial vectors, quaternions held in
// registers), so small blocks are preferable: 128 threads = 4 warps keeps the register
// demand of one block modest (several blocks fit per SM for occupancy), still gives the
// scheduler 4 warps per block to hide global-memory latency, and for small batches
// (a few hundred environments) spreads the work over more SMs than 256 or 512 would.
// SG_CUDA_BLOCK_SIZE overrides it at build time (-DSG_CUDA_BLOCK_SIZE=32 in CMAKE_CUDA_FLAGS), to
// measure small batches: with 128, 64 environments run as one block on one of the H200's 132 SMs.
#ifdef SG_CUDA_BLOCK_SIZE
constexpr int kBlockSize = SG_CUDA_BLOCK_SIZE;
#else
constexpr int kBlockSize = 128;
#endif
static_assert(kBlockSize % 32 == 0, "whole warps only");

// Blocks of kBlockSize threads that must fit an SM together for a kernel to stay within 128
// registers per thread (65536 registers per SM), the limit scripts/kernel_resources.sh checks.
// Given as __launch_bounds__(kBlockSize, kBlocksAt128Registers) to the stage kernels that fit:
// with the block size alone ptxas chose 56 to 72 registers for the Impulse stages and spilled 8
// to 36 bytes; with this bound it used more registers (up to the 128) and spilled none, and the
// narrow-phase kernels lost their 8 to 12 bytes of spills (sm_90, CUDA 13; docs/gpu.md "Static
// resource figures").
constexpr int blocks_at_128_registers(int block_size) {
  return 65536 / (128 * block_size) > 0 ? 65536 / (128 * block_size) : 1;
}
constexpr int kBlocksAt128Registers = blocks_at_128_registers(kBlockSize);

// Device memory and page-locked host memory (staging for asynchronous copies) differ only in
// the calls that allocate and free them.
struct DeviceMemory {
  static constexpr const char* kWhat = "device memory";
  static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
  static void release(void* p) noexcept { cudaFree(p); }
};
struct PinnedMemory {
  static constexpr const char* kWhat = "pinned host memory";
  static cudaError_t allocate(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
  static void release(void* p) noexcept { cudaFreeHost(p); }
};

// RAII owner of n elements of T in `Memory` (freed without throwing). A failed allocation throws
// std::runtime_error naming `name` and the size.
template <class T, class Memory>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  explicit CudaBuffer(std::size_t n, const char* name) : n_(std::max<std::size_t>(n, 1)) {
    const cudaError_t err = Memory::allocate(reinterpret_cast<void**>(&p_), n_ * sizeof(T));
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear the (non-sticky) allocation error
      p_ = nullptr;
      throw std::runtime_error(std::string("CUDA backend: cannot allocate ") +
                               std::to_string(n_ * sizeof(T)) + " bytes of " + Memory::kWhat +
                               " for " + name + ": " + cudaGetErrorString(err));
    }
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  CudaBuffer(CudaBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  CudaBuffer& operator=(CudaBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~CudaBuffer() { reset(); }

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  void reset() noexcept {
    if (p_) Memory::release(p_);
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;     // n_ elements, or null
  std::size_t n_ = 0;  // at least 1 once allocated (a zero-sized array still gets an address)
};

template <class T>
using DeviceArray = CudaBuffer<T, DeviceMemory>;
template <class T>
using PinnedArray = CudaBuffer<T, PinnedMemory>;

// Makes the backend's device current for the lifetime of the guard (a host-side call only:
// it neither synchronizes nor allocates).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    SG_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) SG_CUDA_CHECK(cudaSetDevice(device));
    else previous_ = -1;
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  int previous_ = -1;
};

// NVTX range for profilers (Nsight Systems); compiled out without NVTX.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name) {
#if defined(STIFFGRAD_WITH_NVTX)
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
  ~NvtxRange() {
#if defined(STIFFGRAD_WITH_NVTX)
    nvtxRangePop();
#endif
  }
};

}  // namespace cuda_detail

}  // namespace stiffgrad
