// stiffgrad — the ADD reward: an adversarial differential discriminator (Zhang et al. 2025,
// "Physics-Based Motion Imitation with Adversarial Differential Discriminators"), the reward the
// BCG paper trains its G1 with (facts: docs/references/bcg-diffmjx-shac.md).
//
// The discriminator D (an Mlp<double>, one logit) sees the normalized difference
//   Δ̃ = Δ / max(mean|Δ|, 1e-4)        (per component; mean|Δ| a running mean over training)
// of the reference's and the simulated state's features (Task::add_delta). Real samples are
// Δ̃ = 0 (the simulator exactly on the reference), fake ones the simulator's. The reward is
//   r = −s · log(max(1 − sigmoid(D(Δ̃)), 1e-4)),  s = reward_scale,
// smooth in the state wherever the clamp is inactive, so SHAC differentiates it (adj_reward).
// The discriminator's loss per update on a minibatch of M fake rows x_i:
//   L = ½ [BCE(D(0), 1) + (1/M) Σ BCE(D(x_i), 0)] + logit_decay ‖W_logit‖²
//     + grad_penalty · ½ [(1/M) Σ ‖∇ₓD(x_i)‖² + ‖∇ₓD(0)‖²].
// The penalty's parameter gradient (∂g/∂θ)ᵀ g, g = ∇ₓD(x), is a mixed second derivative; it
// equals the directional derivative of ∇_θ D(x + ε g) at ε = 0, taken here by a central
// difference in the input (two more first-order passes per row, in double; error O(ε²)).
//
// Replay (AMP/ADD practice, MimicKit's disc_buffer_size): the raw Δ rows of past iterations are
// kept in a ring of `replay_capacity` rows, and each minibatch of an update adds as many rows
// drawn uniformly from it as it has current rows (fewer while the ring holds fewer). The rows are
// normalized with the statistics of the update, so old fakes are judged on today's scale. Without
// it the discriminator sees only the current policy's fakes and can forget those it has already
// separated, which lets the policy cycle; with it the fake class is the recent policies' mixture.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "stiffgrad/learn/mlp.hpp"
#include "stiffgrad/learn/optim.hpp"

namespace stiffgrad::learn {

struct AddOptions {
  std::vector<int> hidden{256, 128};  // Linear → ELU → LayerNorm blocks (Mlp)
  double lr = 2.5e-4;                 // the paper's discriminator rate (Adam β 0.9, 0.999)
  double reward_scale = 2.0;          // s
  double logit_decay = 0.01;          // weight decay on the logit layer's weights
  double grad_penalty = 2.0;          // weight of the gradient penalty
  int minibatches = 4;                // updates per iteration, each on a share of its samples
  double penalty_step = 1e-4;         // ε ‖g‖ of the penalty's central difference (normalized units)
  int replay_capacity = 65536;        // rows of past fakes kept (0: no replay); sized at construction
};

class AddDiscriminator {
 public:
  // dim: Task::add_dim(); max_batch: the most rows one call of reward, adj_reward or update sees
  // (loss takes up to 2 max_batch rows: a minibatch with as many replayed ones).
  AddDiscriminator(int dim, int max_batch, const AddOptions& options, std::uint64_t seed);

  int dim() const { return dim_; }
  const AddOptions& options() const { return o_; }
  Mlp<double>& net() { return net_; }
  const std::vector<double>& mean_abs() const { return mean_abs_; }

  // Δ̃ (n x dim) of raw Δ rows with the current statistics.
  void normalize(const double* delta, int n, double* normalized) const;
  // Rewards of n raw Δ rows. The first call (no statistics yet) starts mean|Δ| from its rows.
  void reward(const double* delta, int n, double* r);
  // adj_delta (n x dim) = adj_r_i ∂r_i/∂Δ_i (overwritten).
  void adj_reward(const double* delta, int n, const double* adj_r, double* adj_delta);

  // The loss L above over n normalized fake rows x and, when grad is not null, its gradient
  // with respect to net().params() (overwritten, num_params).
  double loss(const double* x, int n, double* grad);
  // One iteration's training on n raw fake rows: `minibatches` Adam steps on shuffled shares of
  // them, each with as many rows replayed from earlier iterations (see Replay above); then the
  // rows enter the replay ring and mean|Δ| (so rewards and their adjoints within an iteration see
  // the same statistics). Returns the mean minibatch loss.
  double update(const double* delta, int n, std::mt19937_64& rng);

  // The replay ring: rows held (at most replay_capacity) and row i (raw Δ, dim values; i counts
  // from the oldest row held).
  int replay_size() const { return replay_size_; }
  const double* replay_row(int i) const;

  // Everything update() and the first reward() change (a training checkpoint): the network's
  // parameters, Adam's moments and step count, mean|Δ| and the number of rows in it, and the
  // rows the replay ring holds, oldest first (replay_size() x dim). A discriminator given
  // another's state() goes on exactly as that one would.
  struct State {
    std::vector<double> params;          // net().num_params()
    std::vector<double> adam_m, adam_v;  // net().num_params()
    long adam_steps = 0;
    std::vector<double> mean_abs;        // dim
    double count = 0;
    std::vector<double> replay;          // rows x dim, rows <= replay_capacity
  };
  State state() const;
  // throws std::invalid_argument naming the field whose size does not fit this discriminator
  void set_state(const State& s);

 private:
  void absorb(const double* delta, int n);  // rows into mean|Δ|
  void remember(const double* delta, int n);  // rows into the replay ring

  int dim_, max_batch_;        // Δ's width; rows one update may take
  AddOptions o_;
  Mlp<double> net_;            // the discriminator D(Δ)
  Adam<double> opt_;           // its optimizer
  Mlp<double>::Workspace ws_;  // sized for max_batch_ rows
  std::vector<double> mean_abs_;   // dim  running mean of |Δ|
  double count_ = 0;
  // scratch, sized at construction for 2 max_batch + 1 rows (a minibatch, its replayed rows, the real one)
  std::vector<double> x_, z_, dz_, g_, xp_, gnorm_, grad_, batch_;
  std::vector<int> order_;
  std::vector<double> replay_;     // replay_capacity x dim  raw Δ rows, a ring
  int replay_size_ = 0, replay_next_ = 0;  // rows held; the slot the next row goes to
};

}  // namespace stiffgrad::learn
