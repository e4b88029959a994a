#include "learn/task_g1_imitate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "learn/task_common.hpp"
#include "kernels/tasks/imitation_add_adjoint.hpp"
#include "kernels/tasks/imitation_adjoint.hpp"
#include "kernels/tasks/task_kernel.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::learn {

namespace {

using LC = kern::Contiguous;
using DataC = kern::Data<double, LC>;

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

int body_id(const Model& m, const std::string& name) {
  for (int b = 0; b < m.nbody; ++b)
    if (m.body_name[sz(b)] == name) return b;
  throw std::runtime_error("g1-imitate: " + m.file + " has no body '" + name + "'");
}

}  // namespace

G1ImitateTask::G1ImitateTask(const std::string& clip, const TaskOptions& options)
    : clip_name_(clip),
      options_(options),
      model_([&] {
        auto m = std::make_shared<Model>(*load_mjcf(task_data_file(options, "models/unitree_g1/scene_mjx.xml")));
        m->opt.timestep = kTimestep;
        return std::shared_ptr<const Model>(std::move(m));
      }()),
      clip_(task_data_file(options, "motions/lafan1_g1/" + clip + ".csv"), model_->nq - 7) {
  const Model& m = *model_;
  if (m.njnt < 1 || m.jnt_type[0] != JointType::Free || m.jnt_qposadr[0] != 0 || m.nq != 7 + (m.njnt - 1) ||
      m.nv != 6 + (m.njnt - 1))
    throw std::runtime_error("g1-imitate: " + m.file + " is not a free root followed by hinge joints");
  for (int j = 1; j < m.njnt; ++j)
    if (m.jnt_type[sz(j)] != JointType::Hinge)
      throw std::runtime_error("g1-imitate: joint " + m.jnt_name[sz(j)] + " is not a hinge");
  model_kernels_ = std::make_unique<TaskKernelModel>(m);
  view_ = model_kernels_->view();
  layout_ = model_kernels_->layout();

  key_names_ = {"pelvis",          "torso_link",           "left_knee_link",        "right_knee_link",
                "left_ankle_roll_link", "right_ankle_roll_link", "left_elbow_link",  "right_elbow_link",
                "left_wrist_yaw_link",  "right_wrist_yaw_link"};
  for (const auto& n : key_names_) key_body_.push_back(body_id(m, n));
  spec_.njoint = m.njnt - 1;
  spec_.nkey = static_cast<int>(key_body_.size());
  spec_.key_body = key_body_.data();
  if (kern::imitation_add_dim(spec_) > kern::kImitationAddMaxDim)
    throw std::runtime_error("g1-imitate: " + m.file + " has too many joints for the ADD features");

  // servo targets around the home pose
  const int key = m.keyframe_id("home");
  const std::vector<double>& q_home = key >= 0 ? m.keyframes[sz(key)].qpos : m.qpos0;
  for (int i = 0; i < m.nu; ++i) {
    const int jnt = m.actuator_trnid[sz(i)];
    q_default_.push_back(q_home[sz(m.jnt_qposadr[sz(jnt)])]);
    ctrl_qposadr_.push_back(m.jnt_qposadr[sz(jnt)]);
    ctrl_limited_.push_back(m.actuator_ctrllimited[sz(i)]);
    ctrl_range_.push_back(m.actuator_ctrlrange[sz(2 * i)]);
    ctrl_range_.push_back(m.actuator_ctrlrange[sz(2 * i + 1)]);
  }
  const double dt = kSubsteps * kTimestep;
  // the clip window episodes start and run in (TaskOptions::clip_begin / clip_end)
  window_begin_ = options_.clip_begin;
  window_end_ = options_.clip_end > 0 ? options_.clip_end : clip_.duration();
  const int window_steps = static_cast<int>(std::floor((window_end_ - window_begin_) / dt + 1e-9));
  if (!(window_begin_ >= 0) || !(window_end_ <= clip_.duration() + 1e-9) || window_steps < 2) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "g1-imitate:%s: clip window [%g, %g] s must lie in the clip's [0, %g] s and span two control steps (0.04 s)",
                  clip.c_str(), window_begin_, window_end_, clip_.duration());
    throw std::invalid_argument(buf);
  }
  const int limit = options_.episode_steps > 0 ? options_.episode_steps : kMaxEpisodeSteps;
  max_steps_ = std::max(1, std::min(limit, window_steps - 1));
}

SimulatorOptions G1ImitateTask::sim_options() const {
  SimulatorOptions o;
  o.substeps = kSubsteps;
  o.contact_model = options_.contact;
  o.impulse.kappa = options_.kappa;
  // the servos' velocity gains implicit with either contact model: explicit, kv = 2 on the arm
  // and wrist joints (armature ~0.004 kg m²) gives h kv / I ≈ 2.5 > 2 at h = 5 ms, unstable to
  // first order (the force clamps keep the motion bounded, not its gradient, which then grows
  // ~1.8x per control step: bench/bench_shac_open_loop_growth)
  o.integrator = options_.explicit_servos && options_.contact == ContactModel::Impulse ? Integrator::SemiImplicitEuler
                                                                                       : Integrator::ImplicitDampingEuler;
  return o;
}

void G1ImitateTask::resize(int nenv) {
  start_.assign(sz(nenv), 0.0);
  work_.assign(sz(nenv), Work{});
  for (Work& w : work_) {
    w.d.assign(sz(layout_.size), 0.0);
    w.a.assign(sz(layout_.size), 0.0);
    w.r.assign(sz(layout_.size), 0.0);
    w.ref_qpos.assign(sz(model_->nq), 0.0);
    w.ref_qvel.assign(sz(model_->nv), 0.0);
    w.ref_key.assign(sz(3 * spec_.nkey), 0.0);
    w.ref_add.assign(sz(kern::imitation_add_dim(spec_)), 0.0);
  }
}

void G1ImitateTask::set_episode_data(const std::vector<double>& data) {
  if (data.size() != start_.size())
    throw std::invalid_argument("g1-imitate: episode data of " + std::to_string(data.size()) + " environments for " +
                                std::to_string(start_.size()));
  start_ = data;
}

void G1ImitateTask::reset_env(int e, std::mt19937_64& rng, double* qpos, double* qvel) {
  const double dt = kSubsteps * kTimestep;
  const double latest = std::max(window_begin_, window_end_ - (max_steps_ + 1) * dt);
  start_[sz(e)] = std::uniform_real_distribution<double>(window_begin_, latest)(rng);
  reference_state(e, 0, qpos, qvel);
}

void G1ImitateTask::reference_state(int e, int t, double* qpos, double* qvel) const {
  const double s = reference_time(e, t);
  clip_.qpos(s, qpos);
  clip_.qvel(s, qvel);
}

DataC G1ImitateTask::bind(std::vector<double>& buf) const {
  return DataC::bind(kern::View<double, LC>{buf.data(), LC{}}, layout_);
}

void G1ImitateTask::prepare_reference(int e, int t, Work& w) const {
  reference_state(e, t, w.ref_qpos.data(), w.ref_qvel.data());
  const DataC r = bind(w.r);
  for (int i = 0; i < model_->nq; ++i) r.qpos()[i] = w.ref_qpos[sz(i)];
  kern::fwd_kinematics_base_to_tip(view_, r);
  kern::imitation_key_positions(r, spec_, w.ref_key.data());
}

DataC G1ImitateTask::load_state(Work& w, const double* qpos, const double* qvel) const {
  const DataC d = bind(w.d);
  for (int i = 0; i < model_->nq; ++i) d.qpos()[i] = qpos[i];
  for (int i = 0; i < model_->nv; ++i) d.qvel()[i] = qvel[i];
  return d;
}

void G1ImitateTask::observe(int e, int t, const double* qpos, const double* qvel, double* obs) const {
  Work& w = work(e);
  prepare_reference(e, t + 1, w);
  const DataC d = load_state(w, qpos, qvel);
  kern::imitation_observe(view_, d, spec_, w.ref_qpos.data(), w.ref_key.data(), obs);
}

void G1ImitateTask::adj_observe(int e, int t, const double* qpos, const double* qvel, const double* adj_obs,
                                double* adj_qpos, double* adj_qvel) const {
  Work& w = work(e);
  prepare_reference(e, t + 1, w);
  const DataC d = load_state(w, qpos, qvel);
  const DataC a = bind(w.a);
  for (int i = 0; i < model_->nq; ++i) a.qpos()[i] = 0.0;
  for (int i = 0; i < model_->nv; ++i) a.qvel()[i] = 0.0;
  kern::adj_imitation_observe(view_, d, a, spec_, w.ref_qpos.data(), w.ref_key.data(), adj_obs);
  for (int i = 0; i < model_->nq; ++i) adj_qpos[i] += a.qpos()[i];
  for (int i = 0; i < model_->nv; ++i) adj_qvel[i] += a.qvel()[i];
}

kern::tasks::TaskKernel G1ImitateTask::action_kernel() const {
  kern::tasks::TaskKernel k;
  k.nu = k.na = model_->nu;
  k.action_map = action_map();
  k.ctrl_limited = ctrl_limited_.data();
  k.ctrl_range = ctrl_range_.data();
  k.ctrl_offset = q_default_.data();
  k.ctrl_ref_index = ctrl_qposadr_.data();
  k.action_scale = action_scale();
  return k;
}

int G1ImitateTask::action_map() const {
  return options_.servo_targets == TaskOptions::ServoTargets::Reference ? kern::tasks::kActionServoReference
                                                                        : kern::tasks::kActionServo;
}

const double* G1ImitateTask::action_reference(int e, int t) const {
  if (action_map() != kern::tasks::kActionServoReference) return nullptr;
  // the action of step t drives toward step t + 1's pose: the reference qpos only (the first
  // nq entries of observation_reference's row), without prepare_reference's key-body kinematics
  double* ref_qpos = work(e).ref_qpos.data();
  clip_.qpos(reference_time(e, t + 1), ref_qpos);
  return ref_qpos;
}

void G1ImitateTask::action_to_ctrl(int e, int t, const double* action, double* ctrl) const {
  kern::tasks::task_action_to_ctrl(action_kernel(), action, action_reference(e, t), ctrl);
}

void G1ImitateTask::adj_action_to_ctrl(int e, int t, const double* action, const double* adj_ctrl,
                                       double* adj_action) const {
  kern::tasks::adj_task_action_to_ctrl(action_kernel(), action, action_reference(e, t), adj_ctrl, adj_action);
}

TaskKernelDesc G1ImitateTask::kernel_desc() const {
  TaskKernelDesc d;
  d.kind = kern::tasks::kTaskKernelImitation;
  d.ref_dim = model_->nq + 3 * spec_.nkey;
  d.action_map = action_map();
  d.ctrl_limited = ctrl_limited_;
  d.ctrl_range = ctrl_range_;
  d.ctrl_offset = q_default_;
  d.ctrl_ref_index = ctrl_qposadr_;
  d.action_scale = action_scale();
  d.njoint = spec_.njoint;
  d.key_body = key_body_;
  return d;
}

void G1ImitateTask::observation_reference(int e, int t, double* ref) const {
  Work& w = work(e);
  prepare_reference(e, t + 1, w);  // observe(e, t) reads step t + 1's reference
  std::copy(w.ref_qpos.begin(), w.ref_qpos.end(), ref);
  std::copy(w.ref_key.begin(), w.ref_key.end(), ref + model_->nq);
}

double G1ImitateTask::reward(int e, int t, const double* qpos, const double* qvel, const double*) const {
  Work& w = work(e);
  prepare_reference(e, t, w);
  const DataC d = load_state(w, qpos, qvel);
  return kern::imitation_reward_state(view_, d, spec_, w.ref_qpos.data(), w.ref_qvel.data(), w.ref_key.data());
}

void G1ImitateTask::adj_reward(int e, int t, const double* qpos, const double* qvel, const double*, double adj_r,
                               double* adj_qpos, double* adj_qvel, double*) const {
  Work& w = work(e);
  prepare_reference(e, t, w);
  const DataC d = load_state(w, qpos, qvel);
  const DataC a = bind(w.a);
  for (int i = 0; i < model_->nq; ++i) a.qpos()[i] = 0.0;
  for (int i = 0; i < model_->nv; ++i) a.qvel()[i] = 0.0;
  kern::adj_imitation_reward_state(view_, d, a, spec_, w.ref_qpos.data(), w.ref_qvel.data(), w.ref_key.data(),
                                   adj_r);
  for (int i = 0; i < model_->nq; ++i) adj_qpos[i] += a.qpos()[i];
  for (int i = 0; i < model_->nv; ++i) adj_qvel[i] += a.qvel()[i];
  // the reward does not depend on the action: adj_action unchanged
}

double G1ImitateTask::tracking_error(int e, int t, const double* qpos, const double* qvel) const {
  Work& w = work(e);
  prepare_reference(e, t, w);
  const DataC d = load_state(w, qpos, qvel);
  kern::fwd_kinematics_base_to_tip(view_, d);
  double key[3 * kern::kImitationMaxKeys];
  kern::imitation_key_positions(d, spec_, key);
  return kern::imitation_key_error(spec_, key, w.ref_key.data());
}

bool G1ImitateTask::terminated(int e, int t, const double* qpos, const double* qvel) const {
  if (qpos[2] < kMinRootHeight) return true;
  return tracking_error(e, t, qpos, qvel) > kMaxKeyError;
}

void G1ImitateTask::add_delta(int e, int t, const double* qpos, const double* qvel, double* delta) const {
  Work& w = work(e);
  prepare_reference(e, t, w);
  const double* ref_qpos = w.ref_qpos.data();
  const double* ref_qvel = w.ref_qvel.data();
  kern::imitation_add_features(spec_, ref_qpos, ref_qvel, w.ref_key.data(), w.ref_add.data());
  const DataC d = load_state(w, qpos, qvel);
  kern::imitation_add_delta_state(view_, d, spec_, w.ref_add.data(), delta);
}

void G1ImitateTask::adj_add_delta(int e, int, const double* qpos, const double* qvel, const double* adj_delta,
                                  double* adj_qpos, double* adj_qvel) const {
  Work& w = work(e);  // Δ is affine in the state's features: the reference does not enter the adjoint
  const DataC d = load_state(w, qpos, qvel);
  const DataC a = bind(w.a);
  for (int i = 0; i < model_->nq; ++i) a.qpos()[i] = 0.0;
  for (int i = 0; i < model_->nv; ++i) a.qvel()[i] = 0.0;
  kern::adj_imitation_add_delta_state(view_, d, a, spec_, adj_delta);
  for (int i = 0; i < model_->nq; ++i) adj_qpos[i] += a.qpos()[i];
  for (int i = 0; i < model_->nv; ++i) adj_qvel[i] += a.qvel()[i];
}

std::string G1ImitateTask::mujoco_model_file() const {
  return task_data_file(options_, "models/unitree_g1/g1_mjx_mujoco222.xml");
}

std::vector<std::string> G1ImitateTask::foot_geoms() const {
  std::vector<std::string> out;
  for (const char* side : {"left", "right"})
    for (int k = 1; k <= 3; ++k) {
      const std::string n = std::string(side) + "_foot" + std::to_string(k) + "_collision";
      if (std::find(model_->geom_name.begin(), model_->geom_name.end(), n) != model_->geom_name.end())
        out.push_back(n);
    }
  return out;
}

std::unique_ptr<Task> make_g1_imitate(const std::string& clip, const TaskOptions& options) {
  return std::make_unique<G1ImitateTask>(clip, options);
}

}  // namespace stiffgrad::learn
