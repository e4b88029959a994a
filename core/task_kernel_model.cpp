// The task-kernel interface (core/task_kernel_model.hpp).
#include "core/task_kernel_model.hpp"

#include "core/model_arrays.hpp"

namespace stiffgrad {

TaskKernelModel::TaskKernelModel(const Model& model)
    : arrays_(std::make_unique<ModelArrays<double>>(model)),
      view_(arrays_->host_view()),
      layout_(kern::DataLayout::make(view_)) {}

TaskKernelModel::~TaskKernelModel() = default;

const std::vector<double>& TaskKernelModel::reals() const { return arrays_->reals(); }
const std::vector<int>& TaskKernelModel::ints() const { return arrays_->ints(); }

kern::ModelView<double> TaskKernelModel::bind(const double* reals_copy, const int* ints_copy) const {
  return arrays_->bind(reals_copy, ints_copy);
}

}  // namespace stiffgrad
