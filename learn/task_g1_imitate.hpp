// g1-imitate:CLIP — the Unitree G1 (scene_mjx.xml) imitating a LAFAN1 clip, the BCG paper's
// setting with the DeepMimic tracking reward in place of its ADD discriminator.
//
//   Simulation  model timestep 0.005 s, 4 substeps (control 0.02 s), TaskOptions' contact model
//               (default Impulse, κ = TaskOptions::kappa); integrator SemiImplicitEuler with
//               Impulse (which requires it), ImplicitDampingEuler with Soft (the servos' kv).
//   Actions     29 position-servo targets: ctrl = q_home + 0.25 rad · action (the scale:
//               TaskOptions::action_scale where > 0), hard-clamped to
//               each actuator's ctrlrange (zero gradient outside it). q_home: the `home`
//               keyframe's joint angles (qpos0 without one). With TaskOptions::servo_targets
//               Reference: ctrl = q̂(t + 1) + 0.25 rad · action at episode step t, the
//               reference's joint angles at the step the action drives to (a residual policy;
//               a zero action replays the reference's targets open loop).
//   Episodes    reference-state initialization: a start time uniform in
//               [B, E − (T + 1)·0.02 s]; the state is the reference there. Episode step t
//               reads the reference at start + 0.02 t. T = max_episode_steps =
//               min(300 (6 s), window steps − 1). [B, E]: the clip window, the whole clip
//               unless TaskOptions::clip_begin / clip_end narrow it (std::invalid_argument for
//               a window outside the clip or shorter than two control steps).
//   Observation kern::imitation_observation (kernels/tasks/imitation.hpp) with the reference at
//               step t + 1 (the next control target): 3·29 + 3·10 + 17 = 134 numbers.
//   Reward      kern::imitation_reward with the reference at step t: DeepMimic exponentials,
//               weights 0.5 pose (k 2), 0.1 joint velocity (k 0.1), 0.2 key bodies (mean squared
//               distance, k 40), 0.1 root position (k 10), 0.1 root orientation (k 5); in [0, 1];
//               independent of the action.
//   Key bodies  pelvis, torso_link, knees, ankle roll links (feet), elbows, wrist yaw links (hands).
//   Termination root height < 0.3 m, or mean key-body distance to the reference > 0.5 m.
//   ADD         add_delta: kern::imitation_add_delta_state (kernels/tasks/imitation_add.hpp), the
//               reference at step t: 15 + 2·29 + 3·10 = 103 numbers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "learn/motion_clip.hpp"
#include "core/task_kernel_model.hpp"
#include "kernels/tasks/imitation.hpp"
#include "kernels/tasks/imitation_add.hpp"
#include "kernels/tasks/task_kernel.hpp"
#include "stiffgrad/learn/task.hpp"

namespace stiffgrad::learn {

std::unique_ptr<Task> make_g1_imitate(const std::string& clip, const TaskOptions& options);

class G1ImitateTask final : public Task {
 public:
  static constexpr double kTimestep = 0.005;
  static constexpr int kSubsteps = 4;
  static constexpr double kActionScale = kG1ActionScale;  // rad per unit action (TaskOptions::action_scale: another)
  static constexpr int kMaxEpisodeSteps = 300;   // 6 s
  static constexpr double kMinRootHeight = 0.3;  // m
  static constexpr double kMaxKeyError = 0.5;    // m, mean key-body distance

  // Loads options.data_dir/models/unitree_g1/scene_mjx.xml and
  // options.data_dir/motions/lafan1_g1/<clip>.csv (std::runtime_error naming a missing file).
  G1ImitateTask(const std::string& clip, const TaskOptions& options);

  std::string name() const override { return "g1-imitate:" + clip_name_; }
  std::shared_ptr<const Model> model() const override { return model_; }
  std::string options_words() const override { return format_task_options(options_); }
  SimulatorOptions sim_options() const override;
  int obs_dim() const override { return kern::imitation_obs_dim(spec_); }
  int act_dim() const override { return model_->nu; }
  int max_episode_steps() const override { return max_steps_; }

  void resize(int nenv) override;
  void reset_env(int e, std::mt19937_64& rng, double* qpos, double* qvel) override;

  void observe(int e, int t, const double* qpos, const double* qvel, double* obs) const override;
  void adj_observe(int e, int t, const double* qpos, const double* qvel, const double* adj_obs, double* adj_qpos,
                   double* adj_qvel) const override;
  void action_to_ctrl(int e, int t, const double* action, double* ctrl) const override;
  void adj_action_to_ctrl(int e, int t, const double* action, const double* adj_ctrl,
                          double* adj_action) const override;
  double reward(int e, int t, const double* qpos, const double* qvel, const double* action) const override;
  void adj_reward(int e, int t, const double* qpos, const double* qvel, const double* action, double adj_r,
                  double* adj_qpos, double* adj_qvel, double* adj_action) const override;
  bool terminated(int e, int t, const double* qpos, const double* qvel) const override;
  // evaluation runs to a fall (root below kMinRootHeight), through losses of track
  bool fallen(int, int, const double* qpos, const double*) const override { return qpos[2] < kMinRootHeight; }
  int add_dim() const override { return kern::imitation_add_dim(spec_); }
  void add_delta(int e, int t, const double* qpos, const double* qvel, double* delta) const override;
  void adj_add_delta(int e, int t, const double* qpos, const double* qvel, const double* adj_delta, double* adj_qpos,
                     double* adj_qvel) const override;
  double tracking_error(int e, int t, const double* qpos, const double* qvel) const override;
  TaskKernelDesc kernel_desc() const override;
  void observation_reference(int e, int t, double* ref) const override;
  std::vector<std::string> foot_geoms() const override;
  // the one-file variant MuJoCo 2.2.2 compiles (same joints, servos as affine `general` actuators)
  std::string mujoco_model_file() const override;

  // ---- beyond Task (tests, tools) ----
  const MotionClip& clip() const { return clip_; }
  const std::vector<std::string>& key_body_names() const { return key_names_; }
  const kern::ImitationSpec& spec() const { return spec_; }
  const std::vector<double>& default_ctrl() const { return q_default_; }
  // rad per unit action: TaskOptions::action_scale, or kActionScale where that is 0
  double action_scale() const { return options_.action_scale > 0 ? options_.action_scale : kActionScale; }
  // The clip window [begin, end] (s) episodes start and run in.
  double window_begin() const { return window_begin_; }
  double window_end() const { return window_end_; }
  double start_time(int e) const { return start_[static_cast<std::size_t>(e)]; }
  std::vector<double> episode_data() const override { return start_; }  // the start times
  void set_episode_data(const std::vector<double>& data) override;
  void set_start_time(int e, double s) { start_[static_cast<std::size_t>(e)] = s; }
  // Clip time of episode step t of environment e.
  double reference_time(int e, int t) const { return start_time(e) + t * kSubsteps * kTimestep; }
  // The reference state (qpos nq, qvel nv) at episode step t of environment e.
  void reference_state(int e, int t, double* qpos, double* qvel) const;

 private:
  struct Work {
    std::vector<double> d, a, r;        // Data buffers: state, its adjoint, the reference
    // the reference at one episode step: qpos (nq), qvel (nv), key-body positions (3 x nkey) and
    // the ADD reference features (kern::imitation_add_dim)
    std::vector<double> ref_qpos, ref_qvel, ref_key, ref_add;
  };
  Work& work(int e) const { return work_[static_cast<std::size_t>(e)]; }
  kern::tasks::TaskKernel action_kernel() const;  // the servo action map (host pointers)
  int action_map() const;                         // kern::tasks::ActionMapKind of the options
  // The reference row the action map reads at episode step t of environment e (the reference
  // qpos at t + 1; null with home targets). Per-environment workspace, as observe's.
  const double* action_reference(int e, int t) const;
  kern::Data<double, kern::Contiguous> bind(std::vector<double>& buf) const;
  // ref_qpos, ref_qvel and ref_key of w at episode step t of environment e.
  void prepare_reference(int e, int t, Work& w) const;
  // w.d's qpos and qvel from the given state.
  kern::Data<double, kern::Contiguous> load_state(Work& w, const double* qpos, const double* qvel) const;

  std::string clip_name_;
  TaskOptions options_;
  std::shared_ptr<const Model> model_;
  MotionClip clip_;
  std::unique_ptr<TaskKernelModel> model_kernels_;  // owns the arrays behind view_
  kern::ModelView<double> view_{};
  kern::DataLayout layout_{};
  std::vector<std::string> key_names_;
  std::vector<int> key_body_;
  kern::ImitationSpec spec_{};
  std::vector<double> q_default_, ctrl_range_;  // nu, 2 nu (lo, hi)
  std::vector<int> ctrl_limited_;
  std::vector<int> ctrl_qposadr_;  // nu  qpos address of each actuator's joint
  int max_steps_ = 0;
  double window_begin_ = 0, window_end_ = 0;  // s  the clip window episodes lie in
  std::vector<double> start_;   // nenv  clip time of episode step 0
  mutable std::vector<Work> work_;  // nenv  per-environment workspace (concurrent calls per env)
};

}  // namespace stiffgrad::learn
