// cartpole-swingup: dm_control's cartpole (swing-up variant), 1000 steps of 0.01 s.
#include <cmath>
#include <random>

#include "learn/task_common.hpp"
#include "kernels/tasks/task_kernel.hpp"
#include "kernels/tasks/cartpole.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::learn {
namespace {

class CartpoleSwingup final : public Task {
 public:
  explicit CartpoleSwingup(const TaskOptions& o)
      : path_(task_data_file(o, "models/dm_control/cartpole.xml")),
        model_(load_mjcf(path_)),
        episode_steps_(o.episode_steps),
        options_words_(format_task_options(o)) {}

  std::string name() const override { return "cartpole-swingup"; }
  std::string options_words() const override { return options_words_; }
  std::shared_ptr<const Model> model() const override { return model_; }
  SimulatorOptions sim_options() const override {
    SimulatorOptions s;
    s.substeps = 1;  // the model's 0.01 s, dm_control's control step
    return s;
  }
  int obs_dim() const override { return kern::tasks::kCartpoleObs; }
  int act_dim() const override { return model_->nu; }
  int max_episode_steps() const override { return episode_steps_ > 0 ? episode_steps_ : 1000; }
  void resize(int) override {}

  // swing-up start (cartpole.py, initialize_episode): x ~ 0.01 N(0,1), θ ~ π + 0.01 N(0,1),
  // velocities ~ 0.01 N(0,1)
  void reset_env(int, std::mt19937_64& rng, double* qpos, double* qvel) override {
    std::normal_distribution<double> n(0.0, 1.0);
    qpos[0] = 0.01 * n(rng);
    qpos[1] = M_PI + 0.01 * n(rng);
    qvel[0] = 0.01 * n(rng);
    qvel[1] = 0.01 * n(rng);
  }

  void observe(int, int, const double* qpos, const double* qvel, double* obs) const override {
    kern::tasks::cartpole_observe(qpos, qvel, obs);
  }
  void adj_observe(int, int, const double* qpos, const double* qvel, const double* adj_obs, double* adj_qpos,
                   double* adj_qvel) const override {
    kern::tasks::adj_cartpole_observe(qpos, qvel, adj_obs, adj_qpos, adj_qvel);
  }
  void action_to_ctrl(int, int, const double* a, double* ctrl) const override { squash_action(*model_, a, ctrl); }
  void adj_action_to_ctrl(int, int, const double* a, const double* adj_ctrl, double* adj_a) const override {
    adj_squash_action(*model_, a, adj_ctrl, adj_a);
  }
  double reward(int, int, const double* qpos, const double* qvel, const double* a) const override {
    double u;
    squash_action(*model_, a, &u);
    return kern::tasks::cartpole_reward(qpos, qvel, u);
  }
  void adj_reward(int, int, const double* qpos, const double* qvel, const double* a, double adj_r, double* adj_qpos,
                  double* adj_qvel, double* adj_a) const override {
    double u, adj_u = 0;
    squash_action(*model_, a, &u);
    kern::tasks::adj_cartpole_reward(qpos, qvel, u, adj_r, adj_qpos, adj_qvel, &adj_u);
    adj_squash_action(*model_, a, &adj_u, adj_a);
  }
  bool terminated(int, int, const double*, const double*) const override { return false; }
  bool can_fall() const override { return false; }  // a cart on a rail: nothing ends an episode
  TaskKernelDesc kernel_desc() const override { return squash_kernel_desc(*model_, kern::tasks::kTaskKernelCartpole); }
  std::string mujoco_model_file() const override { return path_; }

 private:
  std::string path_;
  std::shared_ptr<const Model> model_;
  int episode_steps_;
  std::string options_words_;
};

}  // namespace

std::unique_ptr<Task> make_cartpole_swingup(const TaskOptions& options) {
  return std::make_unique<CartpoleSwingup>(options);
}

}  // namespace stiffgrad::learn
