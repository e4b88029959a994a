// SHAC's policy in the loop, per environment, where the simulator runs (learn/policy_loop.hpp
// launches these on the CPU backend, learn/cuda/policy_loop.cu on the device). Between the
// pieces below the actor network runs over the whole batch (Mlp / MlpDevice):
//
//   forward, step t:  policy_observe_env  state_t → obs_t (double) → x_t = normalize(obs_t) (float)
//                     [actor]             x_t → μ_t
//                     policy_act_env      a_t = μ_t + σ ⊙ ε_t,  ctrl_t = task map(a_t)
//   backward, step t (the Rollout's BackendControlVjp):
//                     policy_adj_act_env  adj_a = dL/da_t (direct) + (∂ctrl/∂a)ᵀ adj_ctrl_t → dμ_t,
//                                         and the log σ terms adj_a ⊙ σ ⊙ ε_t
//                     [actor backward]    dμ_t → dx_t (and the parameters' gradient)
//                     policy_adj_observe_env  dx_t → adj_obs → adj_state_t
//
// The same arithmetic, in the same order, as the host trainer (learn/train_core.cpp,
// learn/shac.cpp), so the CPU policy loop reproduces it bit for bit.
#pragma once

#include "kernels/learn/normalize.hpp"
#include "kernels/tasks/task_kernel.hpp"

namespace stiffgrad::kern {

// Observation normalization: per feature mean and std (sqrt(var + ε)), the clip; normalize =
// false copies the observation.
struct ObsNormalization {
  bool normalize = false;
  const double* mean = nullptr;  // no
  const double* std_dev = nullptr;  // no
  double clip = 5.0;
};

// obs (no, double) of the state (qpos, qvel: views of environment e), zeroed when not finite (a
// diverged environment: its rows are masked later), and x = normalized obs in float. The state
// is also copied to (save_q, save_v) for the backward pass. `ref`: the task's reference row;
// `d`: the environment's Data scratch (imitation).
template <class QP, class QV, class SQ, class SV, class L>
SG_HD void policy_observe_env(const tasks::TaskKernel& k, const ModelView<double>& m, const ObsNormalization& n,
                              const QP& qpos, const QV& qvel, SQ save_q, SV save_v, const double* ref,
                              const Data<double, L>& d, double* obs, float* x) {
  for (int i = 0; i < k.nq; ++i) save_q[i] = qpos[i];
  for (int i = 0; i < k.nv; ++i) save_v[i] = qvel[i];
  tasks::task_observe(k, m, qpos, qvel, ref, d, obs);
  bool finite = true;
  for (int j = 0; j < k.no; ++j) finite = finite && sg_isfinite(obs[j]);
  if (!finite)
    for (int j = 0; j < k.no; ++j) obs[j] = 0.0;
  for (int j = 0; j < k.no; ++j)
    x[j] = static_cast<float>(n.normalize ? normalize_value(obs[j], n.mean[j], n.std_dev[j], n.clip) : obs[j]);
}

// a = μ + exp(log σ) ε (double) and the controls (ctrl: a view of environment e's nu controls;
// `ref`: the reference row the observation of this step read).
template <class C>
SG_HD void policy_act_env(const tasks::TaskKernel& k, const float* mu, const float* log_std, const float* eps,
                          const double* ref, double* a, C ctrl) {
  for (int j = 0; j < k.na; ++j)
    a[j] = static_cast<double>(mu[j]) + sg_exp(static_cast<double>(log_std[j])) * eps[j];
  tasks::task_action_to_ctrl(k, a, ref, ctrl);
}

// The action's adjoint at step t of an active environment: adj_a (na scratch) = dA (the loss's
// direct dL/da_t) + (∂ctrl/∂a)ᵀ adj_ctrl; then d_mu = adj_a (float) and log_std_terms =
// adj_a exp(log σ) ε (float; a = μ + σ ε). A non-finite adj_a is contained: d_mu and the terms
// are zero and the function returns false. An inactive environment (its episode ended before
// t) contributes zeros.
template <class AC>
SG_HD bool policy_adj_act_env(const tasks::TaskKernel& k, bool active, const double* a, const double* dA,
                              const double* ref, const AC& adj_ctrl, const float* log_std, const float* eps,
                              double* adj_a, float* d_mu, float* log_std_terms) {
  for (int j = 0; j < k.na; ++j) { d_mu[j] = 0.0f; log_std_terms[j] = 0.0f; }
  if (!active) return true;
  for (int j = 0; j < k.na; ++j) adj_a[j] = dA[j];
  tasks::adj_task_action_to_ctrl(k, a, ref, adj_ctrl, adj_a);
  bool finite = true;
  for (int j = 0; j < k.na; ++j) finite = finite && sg_isfinite(adj_a[j]);
  if (!finite) return false;
  for (int j = 0; j < k.na; ++j) {
    d_mu[j] = static_cast<float>(adj_a[j]);
    log_std_terms[j] = static_cast<float>(adj_a[j] * sg_exp(static_cast<double>(log_std[j])) * eps[j]);
  }
  return true;
}

// adj_state_t += the observation's VJP of dx (no, float: the actor's input gradient) through
// the normalization, for an active environment. The VJP is summed in (sq, sv: nq, nv scratch,
// overwritten) before it is added to the running adjoint (adj_qpos, adj_qvel: views of
// environment e), as the host hook's output is added. adj_obs: no scratch; `d`, `a`: Data scratch.
template <class QP, class QV, class AQ, class AV, class L>
SG_HD void policy_adj_observe_env(const tasks::TaskKernel& k, const ModelView<double>& m,
                                  const ObsNormalization& n, bool active, const QP& qpos, const QV& qvel,
                                  const double* ref, const double* obs, const float* dx, const Data<double, L>& d,
                                  const Data<double, L>& a, double* adj_obs, double* sq, double* sv, AQ adj_qpos,
                                  AV adj_qvel) {
  if (!active) return;
  for (int j = 0; j < k.no; ++j) {
    const double dy = static_cast<double>(dx[j]);
    adj_obs[j] = n.normalize ? adj_normalize_value(obs[j], n.mean[j], n.std_dev[j], n.clip, dy) : dy;
  }
  for (int i = 0; i < k.nq; ++i) sq[i] = 0.0;
  for (int i = 0; i < k.nv; ++i) sv[i] = 0.0;
  tasks::adj_task_observe(k, m, qpos, qvel, ref, d, a, adj_obs, sq, sv);
  for (int i = 0; i < k.nq; ++i) adj_qpos[i] += sq[i];
  for (int i = 0; i < k.nv; ++i) adj_qvel[i] += sv[i];
}

}  // namespace stiffgrad::kern
