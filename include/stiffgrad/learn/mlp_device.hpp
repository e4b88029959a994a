// stiffgrad — the MLP of stiffgrad/learn/mlp.hpp on a CUDA device (float): the Linear layers by
// cuBLAS (SGEMM), the ELU + LayerNorm stage by small kernels running the same per-row body as
// the CPU network (kernels/learn/elu_layer_norm.hpp). Same parameter layout and batch layout as
// Mlp<float> (row-major n x dim, here in device memory), so a network moves between the two by
// copying its flat parameter array.
//
// All work is enqueued on the given CUDA stream (a cudaStream_t passed as void*; null: the
// default stream): forward and backward neither allocate nor synchronize. Results agree with
// Mlp<float> to float rounding (the GEMMs sum in a different order), not bit for bit.
// Built only with the CUDA backend; elsewhere the constructor throws std::runtime_error.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "stiffgrad/learn/mlp.hpp"

namespace stiffgrad::learn {

class MlpDevice {
 public:
  // What one forward pass keeps for its backward pass (device memory), for up to max_batch rows.
  class Workspace {
   public:
    Workspace();
    ~Workspace();
    Workspace(Workspace&&) noexcept;
    Workspace& operator=(Workspace&&) noexcept;
    int max_batch() const;
    struct Impl;
    std::unique_ptr<Impl> impl;
  };

  // A device copy of `net` (its sizes and parameters) on CUDA device `device`.
  explicit MlpDevice(const Mlp<float>& net, int device = 0);
  ~MlpDevice();
  MlpDevice(const MlpDevice&) = delete;
  MlpDevice& operator=(const MlpDevice&) = delete;

  const std::vector<int>& sizes() const { return sizes_; }
  std::size_t num_params() const { return num_params_; }
  float* params();  // device, num_params (layout of Mlp<float>)
  const float* params() const;
  // Parameters from / to a host network of the same sizes (synchronous copies).
  void upload(const Mlp<float>& net);
  void download(Mlp<float>& net) const;

  Workspace make_workspace(int max_batch) const;

  // y = f(x); x: n x in, y: n x out, device memory; n <= ws.max_batch() (std::invalid_argument).
  void forward(const float* x, int n, float* y, Workspace& ws, void* stream = nullptr) const;
  // After forward(x, n, ..., ws): grad_params (device, num_params) += (∂y/∂θ)ᵀ dy, and, when dx
  // is not null, dx (n x in) = (∂y/∂x)ᵀ dy. grad_params may be null. dy: n x out, device.
  void backward(const float* dy, int n, float* grad_params, float* dx, Workspace& ws, void* stream = nullptr) const;

 private:
  struct State;
  std::vector<int> sizes_;
  std::size_t num_params_ = 0;
  std::unique_ptr<State> state_;
};

// A float array in device memory, for callers without CUDA headers (copies are synchronous).
class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t n, int device = 0);
  ~DeviceFloats();
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* data() { return p_; }
  const float* data() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<float>& host);  // host.size() == size()
  std::vector<float> download() const;
  void zero();

 private:
  float* p_ = nullptr;   // device buffer of n_ floats
  std::size_t n_ = 0;
  int device_ = 0;       // the device it lives on
};

// Whether this build has the CUDA network (and a device is visible).
bool mlp_device_available();

}  // namespace stiffgrad::learn
