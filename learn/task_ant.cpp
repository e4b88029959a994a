// ant-run: Gymnasium's Ant on a stiff floor (the Impulse contact model by default), 0.02 s
// control steps of 4 substeps, 1000 steps, reward ẋ + 1 - 0.5 Σ u² (kernels/tasks/locomotion.hpp).
#include <random>
#include <vector>

#include "learn/task_common.hpp"
#include "kernels/tasks/task_kernel.hpp"
#include "kernels/tasks/locomotion.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::learn {
namespace {

class AntRun final : public Task {
 public:
  explicit AntRun(const TaskOptions& o) : options_(o), episode_steps_(o.episode_steps) {
    path_ = task_data_file(o, "models/gymnasium/ant.xml");
    auto m = std::make_shared<Model>(*load_mjcf(path_));
    m->opt.timestep = 0.005;
    model_ = m;
  }

  std::string name() const override { return "ant-run"; }
  std::string options_words() const override { return format_task_options(options_); }
  std::shared_ptr<const Model> model() const override { return model_; }
  SimulatorOptions sim_options() const override {
    SimulatorOptions s;
    s.substeps = 4;
    s.contact_model = options_.contact;
    s.impulse.kappa = options_.kappa;
    return s;
  }
  int obs_dim() const override { return model_->nq - 2 + model_->nv; }
  int act_dim() const override { return model_->nu; }
  int max_episode_steps() const override { return episode_steps_ > 0 ? episode_steps_ : 1000; }
  void resize(int) override {}

  // Gymnasium's reset noise: qpos0 + U(-0.1, 0.1), qvel 0.1 N(0, 1) (the quaternion normalized)
  void reset_env(int, std::mt19937_64& rng, double* qpos, double* qvel) override {
    std::uniform_real_distribution<double> u(-0.1, 0.1);
    std::normal_distribution<double> n(0.0, 1.0);
    for (int i = 0; i < model_->nq; ++i) qpos[i] = model_->qpos0[i] + u(rng);
    double norm = 0;
    for (int i = 3; i < 7; ++i) norm += qpos[i] * qpos[i];
    norm = std::sqrt(norm);
    for (int i = 3; i < 7; ++i) qpos[i] /= norm;
    for (int i = 0; i < model_->nv; ++i) qvel[i] = 0.1 * n(rng);
  }

  void observe(int, int, const double* qpos, const double* qvel, double* obs) const override {
    kern::tasks::locomotion_observe(model_->nq, model_->nv, qpos, qvel, obs);
  }
  void adj_observe(int, int, const double*, const double*, const double* adj_obs, double* adj_qpos,
                   double* adj_qvel) const override {
    kern::tasks::adj_locomotion_observe(model_->nq, model_->nv, adj_obs, adj_qpos, adj_qvel);
  }
  void action_to_ctrl(int, int, const double* a, double* ctrl) const override { squash_action(*model_, a, ctrl); }
  void adj_action_to_ctrl(int, int, const double* a, const double* adj_ctrl, double* adj_a) const override {
    adj_squash_action(*model_, a, adj_ctrl, adj_a);
  }
  double reward(int, int, const double*, const double* qvel, const double* a) const override {
    std::vector<double>& u = ctrl_scratch();
    squash_action(*model_, a, u.data());
    return kern::tasks::locomotion_reward(params_, model_->nu, qvel, u.data());
  }
  void adj_reward(int, int, const double*, const double*, const double* a, double adj_r, double*, double* adj_qvel,
                  double* adj_a) const override {
    std::vector<double>& u = ctrl_scratch();
    squash_action(*model_, a, u.data());
    thread_local std::vector<double> adj_u;
    adj_u.assign(model_->nu, 0.0);
    kern::tasks::adj_locomotion_reward(params_, model_->nu, u.data(), adj_r, adj_qvel, adj_u.data());
    adj_squash_action(*model_, a, adj_u.data(), adj_a);
  }
  // Gymnasium's healthy range of the torso height: [0.2, 1.0] m
  bool terminated(int, int, const double* qpos, const double*) const override {
    return !(qpos[2] >= 0.2 && qpos[2] <= 1.0);
  }
  TaskKernelDesc kernel_desc() const override { return squash_kernel_desc(*model_, kern::tasks::kTaskKernelLocomotion); }
  std::string mujoco_model_file() const override { return path_; }
  std::vector<std::string> foot_geoms() const override {
    std::vector<std::string> feet;
    for (const auto& g : model_->geom_name)
      if (g.find("ankle") != std::string::npos) feet.push_back(g);
    return feet;
  }

 private:
  std::vector<double>& ctrl_scratch() const {
    thread_local std::vector<double> u;
    u.resize(model_->nu);
    return u;
  }
  TaskOptions options_;
  std::string path_;
  std::shared_ptr<const Model> model_;
  kern::tasks::LocomotionParams params_;
  int episode_steps_;
};

}  // namespace

std::unique_ptr<Task> make_ant_run(const TaskOptions& options) { return std::make_unique<AntRun>(options); }

}  // namespace stiffgrad::learn
