// stiffgrad — learning tasks: observation, action map, reward and termination with adjoints.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "stiffgrad/impulse_contact.hpp"
#include "stiffgrad/model.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::learn {

// A task's backend kernels, described on the host (see Task::kernel_desc): the fields of
// kern::tasks::TaskKernel with its arrays as vectors.
struct TaskKernelDesc {
  int kind = 0;                     // kern::tasks::TaskKernelKind; 0: none
  int ref_dim = 0;                  // observation reference row
  int action_map = 0;               // kern::tasks::ActionMapKind
  std::vector<int> ctrl_limited;    // nu
  std::vector<double> ctrl_range;   // 2 nu
  std::vector<double> ctrl_offset;  // nu (servo map)
  std::vector<int> ctrl_ref_index;  // nu (reference servo map: entries of the reference row)
  double action_scale = 1.0;        // servo maps
  int njoint = 0;                   // imitation: hinge joints after the root
  std::vector<int> key_body;        // imitation: key body ids
};

// One task for nenv environments. Every function works on one environment e and its state
// (qpos: nq raw coordinates, quaternions w x y z; qvel: nv), in double. `t` is the episode step
// of the state (0 at reset): a task whose targets move in time (motion imitation) reads its
// reference at t, so the adjoints of a whole horizon can be taken after the horizon.
// Adjoint functions accumulate (+=) into their outputs. A task keeps per-environment episode
// data (e.g. the clip and start frame) set by reset_env and constant until the next reset.
class Task {
 public:
  virtual ~Task() = default;

  virtual std::string name() const = 0;
  virtual std::shared_ptr<const Model> model() const = 0;
  // Simulator options of the task (substeps, contact model, integrator); the caller sets
  // backend, precision, nenv and threads.
  virtual SimulatorOptions sim_options() const = 0;
  virtual int obs_dim() const = 0;
  virtual int act_dim() const = 0;
  // Episodes end at this many control steps (truncation, not a failure).
  virtual int max_episode_steps() const = 0;
  // Control step length in seconds (substeps x model timestep).
  double control_dt() const;

  // Sizes per-environment episode data for nenv environments.
  virtual void resize(int nenv) = 0;
  // A new episode of environment e: its initial state (qpos nq, qvel nv).
  virtual void reset_env(int e, std::mt19937_64& rng, double* qpos, double* qvel) = 0;
  // The per-environment episode data reset_env sets (e.g. a clip's start time), flattened, and
  // its restoration (a training checkpoint): set_episode_data(episode_data()) after resize(nenv)
  // leaves every environment's episode as it was; std::invalid_argument for a wrong size.
  // Tasks without such data keep the defaults (empty).
  virtual std::vector<double> episode_data() const { return {}; }
  virtual void set_episode_data(const std::vector<double>& data);

  // Observation (obs_dim) of environment e at episode step t.
  virtual void observe(int e, int t, const double* qpos, const double* qvel, double* obs) const = 0;
  // adj_qpos (nq) += (∂obs/∂qpos)ᵀ adj_obs, adj_qvel (nv) += (∂obs/∂qvel)ᵀ adj_obs.
  virtual void adj_observe(int e, int t, const double* qpos, const double* qvel, const double* adj_obs,
                           double* adj_qpos, double* adj_qvel) const = 0;

  // Controls (nu) for a policy action (act_dim), e.g. a squashed, scaled action.
  virtual void action_to_ctrl(int e, int t, const double* action, double* ctrl) const = 0;
  // adj_action (act_dim) += (∂ctrl/∂action)ᵀ adj_ctrl.
  virtual void adj_action_to_ctrl(int e, int t, const double* action, const double* adj_ctrl,
                                  double* adj_action) const = 0;

  // Reward of the control step from episode step t - 1 to t, taken with `action` and ending
  // in (qpos, qvel) at step t (t >= 1).
  virtual double reward(int e, int t, const double* qpos, const double* qvel, const double* action) const = 0;
  // adj_qpos += adj_r ∂r/∂qpos, adj_qvel += adj_r ∂r/∂qvel, adj_action += adj_r ∂r/∂action.
  virtual void adj_reward(int e, int t, const double* qpos, const double* qvel, const double* action,
                          double adj_r, double* adj_qpos, double* adj_qvel, double* adj_action) const = 0;

  // Early termination of a training episode in this state at episode step t: a fall, or a
  // state the task does not learn from (an imitation that has lost its reference).
  virtual bool terminated(int e, int t, const double* qpos, const double* qvel) const = 0;
  // The end of an evaluation episode (`eval`, in stiffgrad and in MuJoCo): a fall only, so that
  // falls, return and tracking error are measured over the whole episode and not cut short where
  // training stops learning. Defaults to terminated().
  virtual bool fallen(int e, int t, const double* qpos, const double* qvel) const { return terminated(e, t, qpos, qvel); }
  // Whether the task can fall at all (fallen() can be true): `eval` reports falls only then.
  virtual bool can_fall() const { return true; }

  // ADD reward (the BCG paper's adversarial differential discriminator, stiffgrad/learn/add.hpp):
  // tasks with a reference motion give the difference Δ = f(reference) − f(state) of add_dim()
  // features at episode step t. add_dim() == 0: the task has none (the default), and add_delta /
  // adj_add_delta throw std::logic_error.
  virtual int add_dim() const { return 0; }
  virtual void add_delta(int e, int t, const double* qpos, const double* qvel, double* delta) const;
  // adj_qpos (nq) += (∂Δ/∂qpos)ᵀ adj_delta, adj_qvel (nv) += (∂Δ/∂qvel)ᵀ adj_delta.
  virtual void adj_add_delta(int e, int t, const double* qpos, const double* qvel, const double* adj_delta,
                             double* adj_qpos, double* adj_qvel) const;

  // The task's observation and action map as backend kernels (kernels/tasks/task_kernel.hpp),
  // for a policy loop that runs where the simulator does (learn/policy_loop.hpp): kind 0
  // (the default) when the task has none. The pointers in it are host memory owned by the task;
  // a loop copies what they address.
  virtual TaskKernelDesc kernel_desc() const { return {}; }
  // The reference row (kernel_desc().ref_dim) that observe(e, t, ...) reads: state-independent
  // targets (imitation: the reference qpos, then its key-body positions, of step t + 1), so a
  // loop can prepare a whole horizon's rows before it starts.
  virtual void observation_reference(int e, int t, double* ref) const;

  // Mean tracking error (m, key bodies) for imitation tasks; NaN for others.
  virtual double tracking_error(int e, int t, const double* qpos, const double* qvel) const;
  // The MJCF file MuJoCo 2.2.2 itself loads for this task (`eval --in mujoco`), the same robot
  // with the same coordinates and actuators; empty when there is none.
  virtual std::string mujoco_model_file() const { return ""; }
  // Geoms whose penetration `eval` reports as foot penetration (empty: none).
  virtual std::vector<std::string> foot_geoms() const { return {}; }
  // format_task_options of the TaskOptions the task was made with (make_task), which a policy
  // file records so that `eval` runs the policy on the same task; empty for a task made otherwise.
  virtual std::string options_words() const { return {}; }
};

// g1-imitate's servo target change per unit action (rad) when TaskOptions::action_scale is 0.
inline constexpr double kG1ActionScale = 0.25;

struct TaskOptions {
  std::string data_dir;        // the repository's data/ (models, motions; docs/building.md)
  ContactModel contact = ContactModel::Impulse;  // locomotion and imitation tasks
  double kappa = ImpulseContact{}.kappa;  // Impulse model stiffness (1/m): its one default
  int episode_steps = 0;       // > 0: episodes end after this many control steps instead of the task's own
  // g1-imitate on the Impulse floor: the servos' velocity gains explicit (SemiImplicitEuler), the
  // setting of the earlier training runs, in place of implicit (ImplicitDampingEuler)
  bool explicit_servos = false;
  // g1-imitate: the servo targets a zero action gives. Home (the paper's setting): the home
  // pose; Reference: the reference's joint angles at the step the action drives to.
  enum class ServoTargets { Home, Reference } servo_targets = ServoTargets::Home;
  // g1-imitate: servo target (rad) per unit action; 0: the task's own (kG1ActionScale)
  double action_scale = 0.0;
  // g1-imitate: the stretch of the clip episodes start and run in, seconds [clip_begin,
  // clip_end] of clip time; clip_end 0: the clip's end. The whole clip by default.
  double clip_begin = 0.0;
  double clip_end = 0.0;
};

// TaskOptions as words `key=value` separated by spaces, keys the command line's option names
// (contact, kappa, episode-steps, explicit-servos, servo-targets, action-scale, clip-window=B:E;
// data_dir is left out): what a policy file keeps so that `eval` runs the policy on the task it
// was trained on.
std::string format_task_options(const TaskOptions& options);
// Sets the fields `text` names (format_task_options's words), leaving the others; throws
// std::invalid_argument naming an unknown key or a bad value.
void parse_task_options(const std::string& text, TaskOptions* options);

// Tasks by name: "cartpole-swingup", "ant-run", "g1-imitate:CLIP" (CLIP a file stem in
// data_dir/motions/lafan1_g1, e.g. run1_subject2). std::invalid_argument for an unknown name,
// std::runtime_error (naming the file) for missing data.
std::unique_ptr<Task> make_task(const std::string& spec, const TaskOptions& options);
std::vector<std::string> task_names();

}  // namespace stiffgrad::learn
