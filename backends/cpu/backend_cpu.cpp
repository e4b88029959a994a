#include "backends/cpu/backend_cpu.hpp"

namespace stiffgrad {

template class CpuBackend<float>;
template class CpuBackend<double>;

std::unique_ptr<BackendImpl> make_cpu_backend(const Model& model, const SimulatorOptions& opt) {
  if (opt.precision == Precision::Float) return std::make_unique<CpuBackend<float>>(model, opt);
  return std::make_unique<CpuBackend<double>>(model, opt);
}

}  // namespace stiffgrad
