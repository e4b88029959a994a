// What the CPU and CUDA policy loops (learn/policy_loop.hpp) both derive from a task and a
// simulator: the TaskKernel's sizes and kind, the host copies of its arrays (a loop points the
// kernel at them, or at its device copies), the model's kernel arrays and Data layout for the
// imitation observation, and the normalizer's statistics in the form the kernels read.
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/task_kernel_model.hpp"
#include "kernels/learn/policy_loop.hpp"
#include "stiffgrad/learn/normalizer.hpp"
#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::learn {

struct PolicyLoopSetup {
  PolicyLoopSetup(const Task& task, const Simulator& sim, int horizon, bool normalize_obs)
      : normalize(normalize_obs) {
    const TaskKernelDesc desc = task.kernel_desc();
    const Model& m = sim.model();
    if (desc.kind == kern::tasks::kTaskKernelNone)
      throw std::invalid_argument("policy loop: task " + task.name() + " has no backend kernels");
    if (horizon < 1) throw std::invalid_argument("policy loop: horizon must be >= 1");
    kernel.kind = desc.kind;
    kernel.nq = m.nq;
    kernel.nv = m.nv;
    kernel.nu = m.nu;
    kernel.na = task.act_dim();
    kernel.no = task.obs_dim();
    kernel.ref_dim = desc.ref_dim;
    kernel.action_map = desc.action_map;
    kernel.action_scale = desc.action_scale;
    if (kernel.na != m.nu) throw std::invalid_argument("policy loop: the task's actions must be the controls");
    ctrl_limited = desc.ctrl_limited;
    ctrl_range = desc.ctrl_range;
    ctrl_offset = desc.ctrl_offset;
    if (ctrl_offset.empty()) ctrl_offset.assign(static_cast<std::size_t>(m.nu), 0.0);
    ctrl_ref_index = desc.ctrl_ref_index;
    if (ctrl_ref_index.empty()) ctrl_ref_index.assign(static_cast<std::size_t>(m.nu), 0);
    if (kernel.action_map == kern::tasks::kActionServoReference)
      for (int i : ctrl_ref_index)
        if (i < 0 || i >= kernel.ref_dim)
          throw std::invalid_argument("policy loop: a servo target outside the task's reference row");
    key_body = desc.key_body;
    if (key_body.empty()) key_body.push_back(0);  // a valid pointer for tasks without key bodies
    kernel.imitation.njoint = desc.njoint;
    kernel.imitation.nkey = static_cast<int>(desc.key_body.size());
    if (kernel.imitation.nkey > kern::kImitationMaxKeys)
      throw std::invalid_argument("policy loop: too many key bodies");
    model_kernels = std::make_unique<TaskKernelModel>(m);
    layout = model_kernels->layout();
    mean.assign(static_cast<std::size_t>(kernel.no), 0.0);
    std_dev.assign(static_cast<std::size_t>(kernel.no), 1.0);
  }

  // mean and std (sqrt(var + ε), RunningMeanStd::scale) of the current statistics
  void set_normalization(const RunningMeanStd& rms) {
    if (!normalize) return;
    for (int j = 0; j < kernel.no; ++j) {
      mean[static_cast<std::size_t>(j)] = rms.mean()[static_cast<std::size_t>(j)];
      std_dev[static_cast<std::size_t>(j)] = rms.scale(j);
    }
    clip = rms.clip();
  }
  kern::ObsNormalization normalization(const double* mean_ptr, const double* std_ptr) const {
    kern::ObsNormalization n;
    n.normalize = normalize;
    n.mean = mean_ptr;
    n.std_dev = std_ptr;
    n.clip = clip;
    return n;
  }

  bool normalize;     // whether the loop normalizes its observations (TrainOptions::normalize_obs)
  double clip = 5.0;  // the normalized observations' clamp (RunningMeanStd::clip)
  kern::tasks::TaskKernel kernel;  // sizes and kind; its pointers are set by the loop
  std::vector<int> ctrl_limited, ctrl_ref_index;  // nu, nu  (TaskKernelDesc's)
  std::vector<double> ctrl_range, ctrl_offset;    // 2 nu (lo, hi), nu  (TaskKernelDesc's)
  std::vector<int> key_body;                      // nkey (at least 1 entry)  imitation key bodies
  std::unique_ptr<TaskKernelModel> model_kernels;  // the model as the kernels read it (host)
  kern::DataLayout layout{};                      // one Data's layout for this model (size: its doubles)
  std::vector<double> mean, std_dev;  // no
};

}  // namespace stiffgrad::learn
