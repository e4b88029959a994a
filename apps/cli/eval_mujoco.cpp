// `stiffgrad eval --in mujoco`: a trained policy in MuJoCo 2.2.2 itself (sim-to-sim transfer).
// The task's observation, action map, reward and termination run on MuJoCo's state; MuJoCo
// steps with its own soft contact and Newton solver, the task's timestep and substeps, and the
// integrator closest to the task's: semi-implicit Euler (mjINT_EULER, joint damping implicit)
// for SemiImplicitEuler, and for ImplicitDampingEuler (g1-imitate: the servos' kv implicit)
// mjINT_IMPLICIT, MuJoCo 2.2.2's velocity-implicit Euler (it also takes the actuators' velocity
// gains implicitly; it adds the Coriolis terms' velocity derivative, which stiffgrad leaves out).
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "apps/cli/train.hpp"

namespace stiffgrad::learn {

EvalResult evaluate_in_mujoco(Task& task, const PolicyFile& policy, int episodes, std::uint64_t seed) {
  const std::string file = task.mujoco_model_file();
  if (file.empty()) throw std::runtime_error("eval --in mujoco: task " + task.name() + " has no MuJoCo model file");
  char error[1000] = "";
  std::unique_ptr<mjModel, void (*)(mjModel*)> m(mj_loadXML(file.c_str(), nullptr, error, sizeof(error)), mj_deleteModel);
  if (!m) throw std::runtime_error("eval --in mujoco: MuJoCo cannot load " + file + ": " + error);
  const Model& sg = *task.model();
  if (m->nq != sg.nq || m->nv != sg.nv || m->nu != sg.nu)
    throw std::runtime_error("eval --in mujoco: " + file + " does not have the task model's nq, nv, nu");
  m->opt.timestep = sg.opt.timestep;
  m->opt.integrator =
      task.sim_options().integrator == Integrator::ImplicitDampingEuler ? mjINT_IMPLICIT : mjINT_EULER;
  std::unique_ptr<mjData, void (*)(mjData*)> d(mj_makeData(m.get()), mj_deleteData);
  PolicyRunner runner(policy);
  if (runner.obs_dim() != task.obs_dim() || runner.act_dim() != task.act_dim())
    throw std::invalid_argument("eval: the policy's sizes do not match task " + task.name());
  const int nq = sg.nq, nv = sg.nv, nu = sg.nu, no = task.obs_dim(), na = task.act_dim();
  const int substeps = task.sim_options().substeps;
  int root_z = -1;
  for (int j = 0; j < m->njnt; ++j)
    if (m->jnt_type[j] == mjJNT_FREE) { root_z = m->jnt_qposadr[j] + 2; break; }
  task.resize(episodes);
  std::mt19937_64 rng(seed);  // the same initial states as evaluate_in_stiffgrad with this seed
  std::vector<double> q0(static_cast<std::size_t>(episodes) * nq), v0(static_cast<std::size_t>(episodes) * nv);
  for (int e = 0; e < episodes; ++e) task.reset_env(e, rng, q0.data() + static_cast<std::size_t>(e) * nq, v0.data() + static_cast<std::size_t>(e) * nv);
  std::vector<double> obs(no), act(na), ctrl(nu);
  EvalResult r;
  r.episodes = episodes;
  double track_sum = 0, pen_sum = 0;
  int track_episodes = 0;
  for (int e = 0; e < episodes; ++e) {
    mj_resetData(m.get(), d.get());
    std::copy(q0.begin() + static_cast<std::ptrdiff_t>(e) * nq, q0.begin() + static_cast<std::ptrdiff_t>(e + 1) * nq, d->qpos);
    std::copy(v0.begin() + static_cast<std::ptrdiff_t>(e) * nv, v0.begin() + static_cast<std::ptrdiff_t>(e + 1) * nv, d->qvel);
    mj_forward(m.get(), d.get());
    double ret = 0, track = 0, pen = 0;
    int len = 0, track_n = 0;
    bool fell = false;
    for (int t = 0; t < task.max_episode_steps(); ++t) {
      task.observe(e, t, d->qpos, d->qvel, obs.data());
      runner.act(obs.data(), 1, act.data());
      task.action_to_ctrl(e, t, act.data(), ctrl.data());
      std::copy(ctrl.begin(), ctrl.end(), d->ctrl);
      double deepest = 0;
      for (int s = 0; s < substeps; ++s) {
        mj_step(m.get(), d.get());
        for (int c = 0; c < d->ncon; ++c) deepest = std::max(deepest, -static_cast<double>(d->contact[c].dist));
      }
      bool finite = true;
      for (int i = 0; i < nq; ++i) finite = finite && std::isfinite(d->qpos[i]);
      if (!finite) { fell = true; break; }
      ret += task.reward(e, t + 1, d->qpos, d->qvel, act.data());
      ++len;
      pen += deepest;
      const double te = task.tracking_error(e, t + 1, d->qpos, d->qvel);
      if (std::isfinite(te)) { track += te; ++track_n; }
      if (root_z >= 0 && d->qpos[root_z] < 0.3) fell = true;
      if (task.fallen(e, t + 1, d->qpos, d->qvel)) break;
    }
    r.mean_return += ret / episodes;
    r.mean_length += static_cast<double>(len) / episodes;
    r.falls += fell ? 1 : 0;
    pen_sum += len ? pen / len : 0.0;
    if (track_n) { track_sum += track / track_n; ++track_episodes; }
  }
  r.tracking_error = track_episodes ? track_sum / track_episodes : std::numeric_limits<double>::quiet_NaN();
  r.mean_penetration = pen_sum / episodes;
  return r;
}

}  // namespace stiffgrad::learn
