// MlpDevice (cuBLAS + the shared ELU/LayerNorm row kernels) against Mlp<float> on the CPU:
// forward outputs, parameter gradients and input gradients for several architectures and
// batch sizes, with gradients accumulated over two backward calls. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <fstream>
#include <string>

#include "stiffgrad/learn/mlp_device.hpp"
#ifdef SG_TEST_WITH_CUDA
#include "learn/cuda/cublas_loader.hpp"
#endif

namespace {

// cuBLAS is loaded at its first use, not linked (learn/cuda/cublas_loader.hpp): a process that
// never runs a device network does not load it (it cost every test process 0.5 s of start-up),
// and the loader finds the library and the four functions MlpDevice calls. No device needed.
TEST(CublasLoader, NotLoadedAtStartAndResolvesTheFunctionsMlpDeviceUses) {
#ifndef SG_TEST_WITH_CUDA
  GTEST_SKIP() << "this build has no CUDA backend: cuBLAS is not used";
#else
  const auto mapped = [] {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.find("libcublas") != std::string::npos) return true;
    return false;
  };
  EXPECT_FALSE(mapped()) << "cuBLAS was loaded before its first use (linked again?)";
  const stiffgrad::learn::CublasApi& api = stiffgrad::learn::cublas_api();
  EXPECT_NE(api.create, nullptr);
  EXPECT_NE(api.destroy, nullptr);
  EXPECT_NE(api.set_stream, nullptr);
  EXPECT_NE(api.sgemm, nullptr);
  EXPECT_TRUE(mapped()) << stiffgrad::learn::cublas_library_name() << " was not loaded";
#endif
}

using stiffgrad::learn::DeviceFloats;
using stiffgrad::learn::Mlp;
using stiffgrad::learn::MlpDevice;

std::vector<float> normals(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<float> N(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = N(g);
  return v;
}

// max |a − b| / max(max |b|, 1e-6)
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, m = 1e-6;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
    m = std::max(m, std::fabs(static_cast<double>(b[i])));
  }
  return d / m;
}

TEST(GpuMlp, AgreesWithTheCpuNetwork) {
  if (!stiffgrad::learn::mlp_device_available())
    GTEST_SKIP() << "no CUDA device: MlpDevice runs on a device machine (scripts/device_check.sh)";
  struct Case { std::vector<int> sizes; int n; };
  for (const Case& c : {Case{{5, 1}, 7}, Case{{134, 512, 256, 128, 29}, 64}, Case{{17, 64, 64, 1}, 1000}}) {
    Mlp<float> net(c.sizes, 42, 0.5);
    MlpDevice dev(net);
    const int in = c.sizes.front(), out = c.sizes.back();
    const std::vector<float> x = normals(static_cast<std::size_t>(c.n) * in, 1), dy = normals(static_cast<std::size_t>(c.n) * out, 2);
    // CPU
    auto ws = net.make_workspace(c.n);
    std::vector<float> y(static_cast<std::size_t>(c.n) * out), gp(net.num_params(), 0.0f), dx(x.size());
    net.forward(x.data(), c.n, y.data(), ws);
    net.backward(dy.data(), c.n, gp.data(), dx.data(), ws);
    net.backward(dy.data(), c.n, gp.data(), dx.data(), ws);  // accumulates: twice the gradient
    // device
    auto dws = dev.make_workspace(c.n);
    DeviceFloats dx_in(x.size()), dy_out(y.size()), ddy(dy.size()), dgp(net.num_params()), ddx(x.size());
    dx_in.upload(x);
    ddy.upload(dy);
    dgp.zero();
    dev.forward(dx_in.data(), c.n, dy_out.data(), dws);
    dev.backward(ddy.data(), c.n, dgp.data(), ddx.data(), dws);
    dev.backward(ddy.data(), c.n, dgp.data(), ddx.data(), dws);
    const double ey = rel_diff(dy_out.download(), y), eg = rel_diff(dgp.download(), gp), ex = rel_diff(ddx.download(), dx);
    std::printf("[ gpu mlp ] %zu layers, batch %d: output %.2e, parameter gradient %.2e, input gradient %.2e\n",
                c.sizes.size() - 1, c.n, ey, eg, ex);
    EXPECT_LT(ey, 1e-5);
    EXPECT_LT(eg, 1e-4);
    EXPECT_LT(ex, 1e-4);
    // round trip of the parameters
    Mlp<float> back(c.sizes, 7);
    dev.download(back);
    EXPECT_EQ(back.param_vector(), net.param_vector());
  }
}

}  // namespace
