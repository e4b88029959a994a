// MlpDevice in a build without the CUDA backend: every entry point says so.
#ifndef STIFFGRAD_LEARN_WITH_CUDA
#include <stdexcept>

#include "stiffgrad/learn/mlp_device.hpp"

namespace stiffgrad::learn {

namespace {
[[noreturn]] void no_cuda() { throw std::runtime_error("MlpDevice: this build has no CUDA backend (STIFFGRAD_CUDA=OFF)"); }
}  // namespace

struct MlpDevice::State {};
struct MlpDevice::Workspace::Impl {};
MlpDevice::Workspace::Workspace() = default;
MlpDevice::Workspace::~Workspace() = default;
MlpDevice::Workspace::Workspace(Workspace&&) noexcept = default;
MlpDevice::Workspace& MlpDevice::Workspace::operator=(Workspace&&) noexcept = default;
int MlpDevice::Workspace::max_batch() const { return 0; }

bool mlp_device_available() { return false; }
DeviceFloats::DeviceFloats(std::size_t, int) { no_cuda(); }
DeviceFloats::~DeviceFloats() = default;
void DeviceFloats::upload(const std::vector<float>&) { no_cuda(); }
std::vector<float> DeviceFloats::download() const { no_cuda(); }
void DeviceFloats::zero() { no_cuda(); }
MlpDevice::MlpDevice(const Mlp<float>&, int) { no_cuda(); }
MlpDevice::~MlpDevice() = default;
float* MlpDevice::params() { no_cuda(); }
const float* MlpDevice::params() const { no_cuda(); }
void MlpDevice::upload(const Mlp<float>&) { no_cuda(); }
void MlpDevice::download(Mlp<float>&) const { no_cuda(); }
MlpDevice::Workspace MlpDevice::make_workspace(int) const { no_cuda(); }
void MlpDevice::forward(const float*, int, float*, Workspace&, void*) const { no_cuda(); }
void MlpDevice::backward(const float*, int, float*, float*, Workspace&, void*) const { no_cuda(); }

}  // namespace stiffgrad::learn
#endif
