// SHAC's iteration as an object, so that its actor-loss gradient can be tested on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "learn/policy_loop.hpp"
#include "learn/stream_timer.hpp"
#include "learn/train_core.hpp"
#include "stiffgrad/rollout.hpp"

namespace stiffgrad::learn {

class Shac {
 public:
  explicit Shac(TrainerCore& core);

  // One horizon with the policy in the loop from the simulator's current state: the actor loss
  // (SHAC eq. 5, see shac.cpp) and, with `gradient`, its gradient with respect to the actor's
  // parameters and log-std into grad() (actor parameters, then na log-std entries).
  double actor_pass(bool gradient);
  const std::vector<float>& grad() const { return grad_actor_; }
  // Whether the policy loop runs on the simulator's backend (TrainOptions::policy_loop).
  bool backend_loop() const { return loop_ != nullptr; }
  // Adam on the actor with the clipped gradient of the last actor_pass; returns its norm before
  // clipping.
  double update_actor();
  // TD(λ) targets of the last horizon (from the ensemble-mean target value) and every critic's
  // regression on them; returns the members' mean last-epoch loss.
  double fit_critic();
  // A whole iteration (actor pass, updates, bookkeeping) and its log.
  IterationLog iterate(int iteration);
  // The Philox key of this iteration's bundle perturbations (Rollout::begin(seed)): drawn anew
  // every iteration, so the branches of an environment's step t are not the same B
  // perturbations at every iteration (a fixed set would bias the bundled gradient the same way
  // each time instead of averaging over the noise).
  std::uint64_t bundle_seed() const;
  // The optimizers whose states go into training checkpoints (TrainerCore holds the rest).
  TrainerCore::NamedOptimizers optimizers();

 private:
  // one critic's epochs of minibatch regression on targets_/inputs_; the last epoch's loss
  double regress(Mlp<float>& critic, Adam<float>& opt, int samples, int mb);
  // actor_pass's forward horizon and backward sweep with the policy loop on the backend
  void forward_backend();
  void backward_backend();

  // Shapes: N = nenv, and H, na, no, nq, nv, nd as in TrainerCore::Sizes; rows are
  // environment-major, as TrainerCore's horizon buffers.
  TrainerCore& c_;                    // the run this object trains (sizes, networks, horizon buffers)
  Rollout rollout_;                   // records the horizon's steps for the backward sweep
  std::unique_ptr<PolicyLoop> loop_;  // the backend policy loop, or null (the host's)
  int ref_dim_ = 0;                   // the task's observation-reference width (TaskKernelDesc::ref_dim)
  std::vector<double> ref_;           // (H + 1) x N x ref_dim  observation references
  std::vector<int> status_rows_;      // H x N                  the simulator's status per step
  std::vector<Mlp<float>::Workspace> actor_ws_;   // H  the host loop's actor pass of each step (kept for backward)
  std::vector<Mlp<float>::Workspace> critic_ws_;  // per ensemble member: its target's pass over s_1 .. s_H
  Mlp<float>::Workspace train_ws_;    // up to H x N rows  the critics' regression minibatches
  std::size_t n_actor_;               // the actor's parameter count
  Adam<float> actor_opt_;             // n_actor + na  actor parameters, then log σ
  std::vector<Adam<float>> critic_opt_;  // one per ensemble member
  std::vector<float> member_value_, member_dx_;  // H x N, H x N x no  one member's values, input VJP
  std::vector<double> adj_r_add_, adj_delta_;    // N, N x nd          ADD reward adjoints of one step
  std::vector<float> grad_actor_;              // n_actor + na  ∂L/∂(actor parameters, log σ) of the last actor_pass
  std::vector<float> grad_critic_;             // critic parameters  one minibatch's regression gradient
  std::vector<double> dq_, dv_, dA_;           // (H + 1) x N x nq, nv; H x N x na  the loss's direct partials
  std::vector<float> next_value_;              // H x N  V'(s_{t+1})
  std::vector<float> dvalue_, dx_value_;       // H x N, H x N x no  ∂L/∂V'(s_{t+1}) and its VJP into x(s_{t+1})
  std::vector<double> dx_obs_, dobs_;          // H x N x no, (H + 1) x N x no  the same in double; ∂L/∂(raw observation)
  std::vector<float> d_mu_, dx_actor_;         // N x na, N x no  one step's ∂L/∂μ and the actor's VJP into x
  std::vector<double> dx_actor_d_, dobs_t_;    // N x no  dx_actor_ in double; its VJP into the raw observation
  std::vector<double> adj_a_;                  // na  one environment's ∂L/∂a at one step
  std::vector<double> rs_, nx_, G_;            // H each  one environment's scaled rewards r̃_t, V'(s_{t+1}), TD(λ) targets
  std::vector<float> targets_, inputs_;        // S, S x no  the critics' regression set (S <= H N active steps)
  std::vector<float> batch_x_, batch_y_, batch_dy_;  // mb x no, mb, mb  one minibatch's inputs, values, ∂loss/∂value
  std::vector<int> order_;                     // S  the regression samples in this epoch's shuffled order
  double sim_s_ = 0, adj_s_ = 0, net_s_ = 0;   // this iteration's seconds: simulation, adjoint sweep, networks
  // the forward steps' own time (CUDA events on the simulator's stream, the host clock on the
  // CPU), H intervals per horizon; the rest of the forward phase is the networks'
  std::unique_ptr<StreamTimer> step_timer_;
  int nonfinite_grad_ = 0;            // this actor_pass's non-finite action adjoints (zeroed, counted in the log)
  int iteration_ = 0;                  // the iteration being run (iterate's)
};

}  // namespace stiffgrad::learn
