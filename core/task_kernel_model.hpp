// The task-kernel interface: the one door through which code outside the simulator (learn/'s
// tasks and policy loops) runs per-environment kernels on a model.
//
// A learning task computes observations, rewards and their adjoints with kernels of its own
// (kernels/tasks/, kernels/learn/), and some of them need the model's kinematics of a state
// (key-body positions for imitation). Those kernels read the model as every kernel does, as a
// kern::ModelView<double>, and work in a per-environment kern::Data laid out by a
// kern::DataLayout. TaskKernelModel builds both from a public stiffgrad::Model and owns the
// arrays behind the view, so that learn/ uses the public API, the kernels' own types and this
// class, and never the simulator's internals (core/model_arrays.hpp, the backends).
//
// The view is the model's plain one (Euler, soft contact): task kernels evaluate functions of a
// state (kinematics), never a step. For a device, copy reals() and ints() and bind() the copies.
#pragma once

#include <memory>
#include <vector>

#include "kernels/base/data.hpp"
#include "kernels/base/model_view.hpp"
#include "stiffgrad/model.hpp"

namespace stiffgrad {

template <class Real>
class ModelArrays;

class TaskKernelModel {
 public:
  // `model` must outlive this object (the arrays are built from it once, here).
  explicit TaskKernelModel(const Model& model);
  ~TaskKernelModel();
  TaskKernelModel(const TaskKernelModel&) = delete;
  TaskKernelModel& operator=(const TaskKernelModel&) = delete;

  // The model as the kernels read it, pointing at this object's host arrays.
  const kern::ModelView<double>& view() const { return view_; }
  // The layout of one environment's Data for view(): layout().size doubles per environment.
  const kern::DataLayout& layout() const { return layout_; }

  // The two blocks behind view() (copy them to a device once), and a view of such copies.
  const std::vector<double>& reals() const;
  const std::vector<int>& ints() const;
  kern::ModelView<double> bind(const double* reals_copy, const int* ints_copy) const;

 private:
  std::unique_ptr<ModelArrays<double>> arrays_;
  kern::ModelView<double> view_{};
  kern::DataLayout layout_{};
};

}  // namespace stiffgrad
