// The linear-tanh policy of tests/closed_loop.hpp on the device, for the device-hook test in
// test_gpu_policy.cpp: ctrl_t = tanh(K [qpos_t; qvel_t] + b) from the simulator's backend state,
// and its VJP as a BackendControlVjp (everything on the simulator's stream; no host copies
// until gradient()). Compiled only with the CUDA backend (SG_TEST_WITH_CUDA).
#pragma once

#include <memory>
#include <vector>

namespace sgtest_gpu {

class DevicePolicy {
 public:
  // theta: nu x (nq + nv + 1), row i = (K_i, b_i); T steps of nenv environments, double.
  DevicePolicy(int nq, int nv, int nu, int nenv, int T, const std::vector<double>& theta);
  ~DevicePolicy();
  // Controls of step t (nu x nenv, device) from the state (device, nq x nenv and nv x nenv),
  // recording the state and the controls for vjp.
  void act(int t, const void* qpos, const void* qvel, void* stream);
  const void* ctrl() const;
  // The hook of step t: adds the policy's VJP (through the dynamics' adj_ctrl and the loss's
  // ½|u|² term) into adj_qpos / adj_qvel and the parameter gradient per environment.
  void vjp(int t, const void* adj_ctrl, void* adj_qpos, void* adj_qvel, void* stream);
  // dL/dθ summed over environments (synchronizes).
  std::vector<double> gradient() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgtest_gpu
