// stiffgrad — saving and loading a trained policy.
#pragma once

#include <string>
#include <vector>

namespace stiffgrad::learn {

// What `stiffgrad eval` and users need to run a policy: the task it was trained on, the
// observation normalizer's statistics, and the actor network (Mlp sizes and flat parameters,
// layout in learn/mlp.hpp) with its Gaussian log-std. The deterministic action is the actor's
// output on the normalized observation.
//
// File format (little-endian, version 2; load_policy also reads version 1, which has no
// task options):
//   8 bytes  magic "SGPOLICY"
//   u32      version (2)
//   string   task spec  (u32 length, then bytes)
//   string   algorithm  (u32 length, then bytes)
//   string   task options (version 2: format_task_options's words, learn/task.hpp)
//   u32 L, then L x i32  actor sizes {in, hidden..., out}
//   u64 P, then P x f32  actor parameters
//   u32 k, then k x f32  log_std
//   u32 d, then d x f64  observation mean, then d x f64 variance, f64 count, f64 clip
//   u64      FNV-1a 64-bit hash of every byte before it
// load_policy checks every length against the sizes it implies and the hash, and throws
// std::runtime_error naming the file and what is wrong.
//
// Consistency (save_policy throws std::invalid_argument naming the file, load_policy
// std::runtime_error): actor_sizes has >= 2 widths, all >= 1; actor_params has exactly the
// Mlp parameter count the sizes imply; log_std is empty (a deterministic actor) or has
// actor_sizes.back() values; obs_mean and obs_var have the same size, either 0 (no
// normalizer) or actor_sizes.front(). save_policy writes `path`.tmp and renames it over path.
struct PolicyFile {
  std::string task;
  std::string algorithm;
  std::string task_options;  // the training's TaskOptions (format_task_options; learn::train fills it
                             // from Task::options_words); empty: not recorded
  std::vector<int> actor_sizes;
  std::vector<float> actor_params;
  std::vector<float> log_std;
  std::vector<double> obs_mean, obs_var;
  double obs_count = 0;
  double obs_clip = 5.0;
};

void save_policy(const std::string& path, const PolicyFile& policy);
PolicyFile load_policy(const std::string& path);

}  // namespace stiffgrad::learn
