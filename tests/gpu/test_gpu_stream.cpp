// The stream contract of stiffgrad/simulator.hpp ("Streams") on the device (label `gpu`;
// skips without a CUDA device). Each test writes controls into a device buffer on some stream
// behind a 200 ms host-side stall (cudaLaunchHostFunc), so that a missing ordering would let
// step_backend_ctrl read the buffer's previous contents (zeros) and the result would differ
// from a run with the same controls staged from the host, which is required bit for bit.
#include <gtest/gtest.h>

#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <cstring>
#include <thread>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

#define SG_SKIP_WITHOUT_CUDA()                                                              \
  do {                                                                                      \
    if (!cuda_available())                                                                  \
      GTEST_SKIP() << "no CUDA device: the stream tests run on a device machine "           \
                      "(scripts/device_check.sh)";                                          \
  } while (0)

#define SG_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

constexpr int kNenv = 200, kSteps = 4;

void CUDART_CB stall(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

// Device buffer of controls (float, nu x nenv) plus a pinned host copy of the values.
struct DeviceCtrl {
  float* dev = nullptr;
  float* pinned = nullptr;
  std::size_t n = 0;
  ~DeviceCtrl() {
    if (dev) cudaFree(dev);
    if (pinned) cudaFreeHost(pinned);
  }
};

// Controls per step, environment-major doubles, exactly representable in float so that the
// host-staged reference and the device buffer hold the same values.
std::vector<double> controls(const Model& m, int t) {
  std::vector<double> u(static_cast<std::size_t>(kNenv) * m.nu);
  for (std::size_t k = 0; k < u.size(); ++k)
    u[k] = static_cast<float>(0.3 * std::sin(0.7 * static_cast<double>(k) + 1.3 * t));
  return u;
}

SimulatorOptions float_options() {
  SimulatorOptions opt;
  opt.backend = Backend::Cuda;
  opt.precision = Precision::Float;
  opt.nenv = kNenv;
  opt.substeps = 2;
  return opt;
}

std::vector<double> reference(const std::shared_ptr<const Model>& model) {
  Simulator sim(model, float_options());
  for (int t = 0; t < kSteps; ++t) sim.step(controls(*model, t).data());
  std::vector<double> q(kNenv * model->nq), v(kNenv * model->nv);
  sim.get_state(q.data(), v.data());
  q.insert(q.end(), v.begin(), v.end());
  return q;
}

enum class Writer { SimulatorStream, LegacyDefault, OtherStreamWithWait };

// The same rollout with controls written on `writer`'s stream, behind a stall, each step.
std::vector<double> via_device(const std::shared_ptr<const Model>& model, Writer writer) {
  const Model& m = *model;
  Simulator sim(model, float_options());
  cudaStream_t other = nullptr;
  if (writer == Writer::OtherStreamWithWait) cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking);
  const cudaStream_t s = writer == Writer::SimulatorStream ? static_cast<cudaStream_t>(sim.cuda_stream())
                         : writer == Writer::LegacyDefault ? cudaStreamLegacy
                                                           : other;
  DeviceCtrl buf;
  buf.n = static_cast<std::size_t>(m.nu) * kNenv;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&buf.dev), buf.n * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMallocHost(reinterpret_cast<void**>(&buf.pinned), kSteps * buf.n * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemset(buf.dev, 0, buf.n * sizeof(float)), cudaSuccess);
  for (int t = 0; t < kSteps; ++t) {
    const std::vector<double> u = controls(m, t);
    float* host = buf.pinned + t * buf.n;  // one slot per step: never rewritten while queued
    for (int e = 0; e < kNenv; ++e)
      for (int i = 0; i < m.nu; ++i) host[i * kNenv + e] = static_cast<float>(u[e * m.nu + i]);
    EXPECT_EQ(cudaLaunchHostFunc(s, stall, nullptr), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(buf.dev, host, buf.n * sizeof(float), cudaMemcpyHostToDevice, s), cudaSuccess);
    if (writer == Writer::OtherStreamWithWait) sim.wait_for_stream(other);
    sim.step_backend_ctrl(buf.dev);
    // the next step's write must not overtake this step's read of the buffer
    if (writer == Writer::OtherStreamWithWait) sim.make_stream_wait(other);
  }
  std::vector<double> q(kNenv * m.nq), v(kNenv * m.nv);
  sim.get_state(q.data(), v.data());
  if (other) {
    cudaStreamSynchronize(other);
    cudaStreamDestroy(other);
  }
  q.insert(q.end(), v.begin(), v.end());
  return q;
}

TEST(GpuStream, OwnStreamIsBlockingAndNonNull) {
  SG_SKIP_WITHOUT_CUDA();
  const auto model = load_mjcf(sgtest::humanoid_xml());
  SimulatorOptions opt;
  opt.backend = Backend::Cuda;
  opt.nenv = 4;
  Simulator sim(model, opt);
  ASSERT_NE(sim.cuda_stream(), nullptr);
  unsigned flags = 1234;
  SG_CUDA_OK(cudaStreamGetFlags(static_cast<cudaStream_t>(sim.cuda_stream()), &flags));
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamDefault))
      << "the simulator's own stream must be blocking: the legacy default stream is then ordered";
}

TEST(GpuStream, GivenStreamIsUsedAndNotDestroyed) {
  SG_SKIP_WITHOUT_CUDA();
  const auto model = load_mjcf(sgtest::humanoid_xml());
  cudaStream_t mine = nullptr;
  SG_CUDA_OK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking));
  {
    SimulatorOptions opt;
    opt.backend = Backend::Cuda;
    opt.nenv = 4;
    opt.cuda_stream = mine;
    Simulator sim(model, opt);
    EXPECT_EQ(sim.cuda_stream(), static_cast<void*>(mine));
    sim.step();
    sim.synchronize();
  }
  SG_CUDA_OK(cudaStreamQuery(mine));  // still a valid stream after the Simulator died
  SG_CUDA_OK(cudaStreamDestroy(mine));
}

TEST(GpuStream, ControlsWrittenOnSimulatorStreamAreOrdered) {
  SG_SKIP_WITHOUT_CUDA();
  const auto model = load_mjcf(sgtest::humanoid_xml());
  EXPECT_EQ(via_device(model, Writer::SimulatorStream), reference(model));
}

TEST(GpuStream, ControlsWrittenOnLegacyDefaultStreamAreOrdered) {
  SG_SKIP_WITHOUT_CUDA();
  const auto model = load_mjcf(sgtest::humanoid_xml());
  EXPECT_EQ(via_device(model, Writer::LegacyDefault), reference(model));
}

TEST(GpuStream, ControlsWrittenOnOtherStreamAreOrderedByWaitForStream) {
  SG_SKIP_WITHOUT_CUDA();
  const auto model = load_mjcf(sgtest::humanoid_xml());
  EXPECT_EQ(via_device(model, Writer::OtherStreamWithWait), reference(model));
}

}  // namespace

#else
TEST(GpuStream, SkippedWithoutCudaHeaders) {
  GTEST_SKIP() << "no CUDA device: this build has no CUDA runtime headers (CUDA backend off)";
}
#endif
