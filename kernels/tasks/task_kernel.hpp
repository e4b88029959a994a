// What a learning task computes where the simulator runs (the policy loop of
// learn/policy_loop.hpp): its observation and its action-to-control map, with adjoints, for
// one environment. The host Task classes (learn/task_*.cpp) call these same functions, so a
// policy loop on the backend and one on the host compute the same numbers.
//
// A TaskKernel is plain data: sizes, the task's kind and the pointers its functions read
// (backend memory: device memory on a GPU). State arguments are anything indexable: raw pointers
// on the host, kern::View<double, Strided> into the simulator's environment-minor batch on the
// backend (kernels/base/view.hpp).
#pragma once

#include "kernels/base/config.hpp"
#include "kernels/tasks/cartpole.hpp"
#include "kernels/tasks/imitation.hpp"
#include "kernels/tasks/imitation_adjoint.hpp"
#include "kernels/tasks/locomotion.hpp"

namespace stiffgrad::kern::tasks {

enum TaskKernelKind : int {
  kTaskKernelNone = 0,     // the task has no backend kernels (its loop runs on the host)
  kTaskKernelCartpole = 1, // kernels/tasks/cartpole.hpp
  kTaskKernelLocomotion = 2,  // kernels/tasks/locomotion.hpp
  kTaskKernelImitation = 3,   // kernels/tasks/imitation.hpp (needs a Data and a reference row)
};

enum ActionMapKind : int {
  // ctrl_i = mid_i + half_i tanh(a_i) for a limited actuator (mid, half from its ctrlrange),
  // ctrl_i = a_i otherwise: every action is a valid control, with a gradient everywhere.
  kActionSquash = 0,
  // ctrl_i = offset_i + scale a_i, clamped to the ctrlrange of a limited actuator (position
  // servos around a home pose; no gradient where clamped).
  kActionServo = 1,
  // ctrl_i = ref[ctrl_ref_index_i] + scale a_i, clamped as kActionServo: position servos around
  // the task's reference row (imitation: the next step's reference joint angle), so a zero
  // action replays the reference's targets and the policy learns the correction (no gradient
  // where clamped; the reference is a constant).
  kActionServoReference = 2,
};

struct TaskKernel {
  int kind = kTaskKernelNone;
  int nq = 0, nv = 0, nu = 0;
  int na = 0;                     // action size (== nu)
  int no = 0;                     // observation size
  int ref_dim = 0;                // reference row the observation reads (imitation: nq + 3 nkey)
  int action_map = kActionSquash;
  const int* ctrl_limited = nullptr;   // nu
  const double* ctrl_range = nullptr;  // 2 nu: lo, hi
  const double* ctrl_offset = nullptr; // nu: kActionServo's offsets
  const int* ctrl_ref_index = nullptr; // nu: kActionServoReference's entries of the reference row
  double action_scale = 1.0;           // the servo maps' scale
  ImitationSpec imitation;             // kTaskKernelImitation (key_body: backend memory)
};

// ---- action map

// The servo maps' target of actuator i at zero action: its offset, or its entry of the
// reference row `ref` (ref_dim; may be null for the other maps).
SG_HD SG_INLINE double task_servo_center(const TaskKernel& k, const double* ref, int i) {
  return k.action_map == kActionServoReference ? ref[k.ctrl_ref_index[i]] : k.ctrl_offset[i];
}

// ctrl (nu) of an action (na). `ref`: the task's reference row at this step (read by
// kActionServoReference only; null is fine for the other maps).
template <class C>
SG_HD void task_action_to_ctrl(const TaskKernel& k, const double* action, const double* ref, C ctrl) {
  for (int i = 0; i < k.nu; ++i) {
    const bool limited = k.ctrl_limited[i] != 0;
    const double lo = k.ctrl_range[2 * i], hi = k.ctrl_range[2 * i + 1];
    if (k.action_map == kActionServo || k.action_map == kActionServoReference) {
      double c = task_servo_center(k, ref, i) + k.action_scale * action[i];
      if (limited) c = c < lo ? lo : (c > hi ? hi : c);
      ctrl[i] = c;
    } else {
      ctrl[i] = limited ? 0.5 * (lo + hi) + 0.5 * (hi - lo) * sg_tanh(action[i]) : action[i];
    }
  }
}

// adj_action (na) += (∂ctrl/∂action)ᵀ adj_ctrl (the reference row as in task_action_to_ctrl).
template <class AC>
SG_HD void adj_task_action_to_ctrl(const TaskKernel& k, const double* action, const double* ref, const AC& adj_ctrl,
                                   double* adj_action) {
  for (int i = 0; i < k.nu; ++i) {
    const bool limited = k.ctrl_limited[i] != 0;
    const double lo = k.ctrl_range[2 * i], hi = k.ctrl_range[2 * i + 1];
    if (k.action_map == kActionServo || k.action_map == kActionServoReference) {
      const double c = task_servo_center(k, ref, i) + k.action_scale * action[i];
      if (limited && (c < lo || c > hi)) continue;  // clamped
      adj_action[i] += k.action_scale * adj_ctrl[i];
    } else if (limited) {
      const double th = sg_tanh(action[i]);
      adj_action[i] += 0.5 * (hi - lo) * (1 - th * th) * adj_ctrl[i];
    } else {
      adj_action[i] += adj_ctrl[i];
    }
  }
}

// ---- observation

// obs (no) of the state (qpos, qvel). Imitation reads `ref` (ref_dim: the reference qpos (nq),
// then its key-body positions (3 nkey)) and needs `d`, a Data whose qpos/qvel it overwrites with
// the state (forward kinematics run in it); the other kinds ignore both.
template <class QP, class QV, class L>
SG_HD void task_observe(const TaskKernel& k, const ModelView<double>& m, const QP& qpos, const QV& qvel,
                        const double* ref, const Data<double, L>& d, double* obs) {
  switch (k.kind) {
    case kTaskKernelCartpole: cartpole_observe(qpos, qvel, obs); break;
    case kTaskKernelLocomotion: locomotion_observe(k.nq, k.nv, qpos, qvel, obs); break;
    case kTaskKernelImitation:
      for (int i = 0; i < k.nq; ++i) d.qpos()[i] = qpos[i];
      for (int i = 0; i < k.nv; ++i) d.qvel()[i] = qvel[i];
      imitation_observe(m, d, k.imitation, ref, ref + k.nq, obs);
      break;
    default: break;
  }
}

// adj_qpos (nq) += (∂obs/∂qpos)ᵀ adj_obs, adj_qvel (nv) += (∂obs/∂qvel)ᵀ adj_obs. Imitation uses
// `d` as task_observe does and `a`, a second Data, for the adjoint (both overwritten).
template <class QP, class QV, class L, class AQ, class AV>
SG_HD void adj_task_observe(const TaskKernel& k, const ModelView<double>& m, const QP& qpos, const QV& qvel,
                            const double* ref, const Data<double, L>& d, const Data<double, L>& a,
                            const double* adj_obs, AQ adj_qpos, AV adj_qvel) {
  switch (k.kind) {
    case kTaskKernelCartpole: adj_cartpole_observe(qpos, qvel, adj_obs, adj_qpos, adj_qvel); break;
    case kTaskKernelLocomotion: adj_locomotion_observe(k.nq, k.nv, adj_obs, adj_qpos, adj_qvel); break;
    case kTaskKernelImitation:
      for (int i = 0; i < k.nq; ++i) {
        d.qpos()[i] = qpos[i];
        a.qpos()[i] = 0.0;
      }
      for (int i = 0; i < k.nv; ++i) {
        d.qvel()[i] = qvel[i];
        a.qvel()[i] = 0.0;
      }
      adj_imitation_observe(m, d, a, k.imitation, ref, ref + k.nq, adj_obs);
      for (int i = 0; i < k.nq; ++i) adj_qpos[i] += a.qpos()[i];
      for (int i = 0; i < k.nv; ++i) adj_qvel[i] += a.qvel()[i];
      break;
    default: break;
  }
}

}  // namespace stiffgrad::kern::tasks
