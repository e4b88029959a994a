// The ADD discriminator (stiffgrad/learn/add.hpp): reward, its adjoint, loss and updates.
#include "stiffgrad/learn/add.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace stiffgrad::learn {

namespace {

constexpr double kMinScale = 1e-4;   // Δ̃'s floor of mean|Δ|
constexpr double kMinFake = 1e-4;    // the reward's floor of 1 − sigmoid

std::size_t sz(long i) { return static_cast<std::size_t>(i); }

double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }
// log(1 + e^z) without overflow: BCE(z, 0) = softplus(z), BCE(z, 1) = softplus(−z)
double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

std::vector<int> sizes_of(int dim, const std::vector<int>& hidden) {
  std::vector<int> s{dim};
  s.insert(s.end(), hidden.begin(), hidden.end());
  s.push_back(1);
  return s;
}

}  // namespace

AddDiscriminator::AddDiscriminator(int dim, int max_batch, const AddOptions& options, std::uint64_t seed)
    : dim_(dim), max_batch_(max_batch), o_(options), net_(sizes_of(dim, options.hidden), seed) {
  if (dim < 1) throw std::invalid_argument("ADD: the task has no reference features (add_dim() = 0)");
  if (max_batch < 1) throw std::invalid_argument("ADD: max_batch must be >= 1");
  if (o_.minibatches < 1) throw std::invalid_argument("ADD: minibatches must be >= 1");
  if (o_.replay_capacity < 0) throw std::invalid_argument("ADD: replay_capacity must be >= 0");
  opt_ = Adam<double>(net_.num_params(), AdamOptions{o_.lr, 0.9, 0.999, 1e-8});
  const int rows = 2 * max_batch + 1;  // a minibatch, as many replayed rows and the real sample Δ̃ = 0
  ws_ = net_.make_workspace(rows);
  mean_abs_.assign(sz(dim), 0.0);
  x_.assign(sz(rows) * dim, 0.0);
  xp_.assign(x_.size(), 0.0);
  g_.assign(x_.size(), 0.0);
  z_.assign(sz(rows), 0.0);
  gnorm_.assign(sz(rows), 0.0);
  dz_.assign(sz(rows), 0.0);
  grad_.assign(net_.num_params(), 0.0);
  batch_.assign(sz(2 * max_batch) * dim, 0.0);
  replay_.assign(sz(o_.replay_capacity) * dim, 0.0);
}

void AddDiscriminator::normalize(const double* delta, int n, double* out) const {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < dim_; ++k)
      out[sz(i) * dim_ + k] = delta[sz(i) * dim_ + k] / std::max(mean_abs_[sz(k)], kMinScale);
}

void AddDiscriminator::reward(const double* delta, int n, double* r) {
  if (n > max_batch_) throw std::invalid_argument("ADD: batch larger than max_batch");
  if (count_ == 0) absorb(delta, n);  // the statistics start from the first rows seen
  normalize(delta, n, x_.data());
  net_.forward(x_.data(), n, z_.data(), ws_);
  // −log(1 − sigmoid(z)) = softplus(z), clamped where 1 − sigmoid(z) < 1e-4
  const double cap = -std::log(kMinFake);
  for (int i = 0; i < n; ++i) r[i] = o_.reward_scale * std::min(softplus(z_[sz(i)]), cap);
}

void AddDiscriminator::adj_reward(const double* delta, int n, const double* adj_r, double* adj_delta) {
  if (n > max_batch_) throw std::invalid_argument("ADD: batch larger than max_batch");
  normalize(delta, n, x_.data());
  net_.forward(x_.data(), n, z_.data(), ws_);
  const double cap = -std::log(kMinFake);
  for (int i = 0; i < n; ++i) {
    const double z = z_[sz(i)];
    // d softplus / dz = sigmoid(z); zero where the clamp holds
    dz_[sz(i)] = softplus(z) < cap ? adj_r[i] * o_.reward_scale * sigmoid(z) : 0.0;
  }
  net_.backward(dz_.data(), n, nullptr, adj_delta, ws_);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < dim_; ++k) adj_delta[sz(i) * dim_ + k] /= std::max(mean_abs_[sz(k)], kMinScale);
}

double AddDiscriminator::loss(const double* x, int n, double* grad) {
  if (n < 1 || n > 2 * max_batch_) throw std::invalid_argument("ADD: loss needs 1 to 2 max_batch rows");
  const int rows = n + 1;  // row n is the real sample 0
  std::copy(x, x + sz(n) * dim_, x_.begin());
  std::fill(x_.begin() + static_cast<std::ptrdiff_t>(n) * dim_, x_.begin() + static_cast<std::ptrdiff_t>(rows) * dim_, 0.0);
  // weights of the rows in the averages: fake 1/M, real 1
  auto weight = [n](int i) { return i < n ? 1.0 / n : 1.0; };

  // input gradients g_i = ∇ₓ D(x_i) (one backward with unit output adjoints)
  net_.forward(x_.data(), rows, z_.data(), ws_);
  for (int i = 0; i < rows; ++i) dz_[sz(i)] = 1.0;
  net_.backward(dz_.data(), rows, nullptr, g_.data(), ws_);

  double L = 0.5 * softplus(-z_[sz(n)]);
  for (int i = 0; i < n; ++i) L += 0.5 * softplus(z_[sz(i)]) / n;
  const std::size_t np = net_.num_params();
  const std::size_t hidden = sz(net_.sizes()[net_.sizes().size() - 2]);
  const double* w_logit = net_.params() + (np - hidden - 1);  // the last layer's weights (1 x hidden)
  double wn2 = 0;
  for (std::size_t k = 0; k < hidden; ++k) wn2 += w_logit[k] * w_logit[k];
  L += o_.logit_decay * wn2;
  std::vector<double>& gnorm = gnorm_;
  for (int i = 0; i < rows; ++i) {
    double s = 0;
    for (int k = 0; k < dim_; ++k) s += g_[sz(i) * dim_ + k] * g_[sz(i) * dim_ + k];
    gnorm[sz(i)] = std::sqrt(s);
    L += o_.grad_penalty * 0.5 * weight(i) * s;
  }
  if (!grad) return L;

  std::fill(grad, grad + np, 0.0);
  // BCE terms (the workspace still holds the forward pass at x)
  for (int i = 0; i < n; ++i) dz_[sz(i)] = 0.5 * sigmoid(z_[sz(i)]) / n;
  dz_[sz(n)] = 0.5 * (sigmoid(z_[sz(n)]) - 1.0);
  net_.backward(dz_.data(), rows, grad, nullptr, ws_);
  for (std::size_t k = 0; k < hidden; ++k) grad[np - hidden - 1 + k] += 2 * o_.logit_decay * w_logit[k];
  // penalty: λ Σ w_i (∂g_i/∂θ)ᵀ g_i = λ Σ w_i [∇_θ D(x_i + ε_i g_i) − ∇_θ D(x_i − ε_i g_i)] / (2 ε_i)
  for (const double sign : {1.0, -1.0}) {
    for (int i = 0; i < rows; ++i) {
      const double eps = gnorm[sz(i)] > 0 ? o_.penalty_step / gnorm[sz(i)] : 0.0;
      for (int k = 0; k < dim_; ++k)
        xp_[sz(i) * dim_ + k] = x_[sz(i) * dim_ + k] + sign * eps * g_[sz(i) * dim_ + k];
      dz_[sz(i)] = eps > 0 ? sign * o_.grad_penalty * weight(i) / (2 * eps) : 0.0;
    }
    net_.forward(xp_.data(), rows, z_.data(), ws_);
    net_.backward(dz_.data(), rows, grad, nullptr, ws_);
  }
  return L;
}

double AddDiscriminator::update(const double* delta, int n, std::mt19937_64& rng) {
  if (n < 1) return 0.0;
  if (n > max_batch_) throw std::invalid_argument("ADD: batch larger than max_batch");
  order_.resize(sz(n));
  std::iota(order_.begin(), order_.end(), 0);
  std::shuffle(order_.begin(), order_.end(), rng);
  const int mb = std::max(1, n / o_.minibatches);
  const int replayed = std::min(mb, replay_size_);  // rows from the ring per minibatch
  std::uniform_int_distribution<int> pick(0, std::max(0, replay_size_ - 1));
  double total = 0;
  int batches = 0;
  for (int b0 = 0; b0 + mb <= n && batches < o_.minibatches; b0 += mb, ++batches) {
    for (int i = 0; i < mb; ++i) normalize(delta + sz(order_[sz(b0 + i)]) * dim_, 1, batch_.data() + sz(i) * dim_);
    for (int i = 0; i < replayed; ++i) normalize(replay_row(pick(rng)), 1, batch_.data() + sz(mb + i) * dim_);
    total += loss(batch_.data(), mb + replayed, grad_.data());
    opt_.step(net_.params(), grad_.data());
  }
  remember(delta, n);
  absorb(delta, n);
  return batches ? total / batches : 0.0;
}

const double* AddDiscriminator::replay_row(int i) const {
  if (i < 0 || i >= replay_size_) throw std::out_of_range("ADD: replay row out of range");
  // the oldest row sits at replay_next_ once the ring is full, at 0 before
  const int slot = replay_size_ < o_.replay_capacity ? i : (replay_next_ + i) % o_.replay_capacity;
  return replay_.data() + sz(slot) * dim_;
}

AddDiscriminator::State AddDiscriminator::state() const {
  State s;
  s.params = net_.param_vector();
  s.adam_m = opt_.first_moment();
  s.adam_v = opt_.second_moment();
  s.adam_steps = opt_.steps();
  s.mean_abs = mean_abs_;
  s.count = count_;
  s.replay.reserve(sz(replay_size_) * dim_);
  for (int i = 0; i < replay_size_; ++i) s.replay.insert(s.replay.end(), replay_row(i), replay_row(i) + dim_);
  return s;
}

void AddDiscriminator::set_state(const State& s) {
  const auto check = [](const char* what, std::size_t got, std::size_t want) {
    if (got != want)
      throw std::invalid_argument(std::string("ADD: state field ") + what + " has " + std::to_string(got) +
                                  " values, the discriminator " + std::to_string(want));
  };
  check("params", s.params.size(), net_.num_params());
  check("mean_abs", s.mean_abs.size(), sz(dim_));
  const std::size_t rows = s.replay.size() / sz(dim_);
  check("replay", s.replay.size(), rows * sz(dim_));
  if (rows > sz(o_.replay_capacity))
    throw std::invalid_argument("ADD: state holds " + std::to_string(rows) + " replay rows, the ring " +
                                std::to_string(o_.replay_capacity));
  if (!(s.count >= 0)) throw std::invalid_argument("ADD: state count must be >= 0");
  opt_.set_state(s.adam_m, s.adam_v, s.adam_steps);  // checks the moments' sizes
  net_.param_vector() = s.params;
  mean_abs_ = s.mean_abs;
  count_ = s.count;
  // oldest row in slot 0: replay_row(i) is then slot i whether the ring is full or not, and the
  // next row overwrites the oldest, as in the ring the state came from
  std::copy(s.replay.begin(), s.replay.end(), replay_.begin());
  replay_size_ = static_cast<int>(rows);
  replay_next_ = o_.replay_capacity == 0 ? 0 : static_cast<int>(rows % sz(o_.replay_capacity));
}

void AddDiscriminator::remember(const double* delta, int n) {
  if (o_.replay_capacity == 0) return;
  for (int i = 0; i < n; ++i) {
    std::copy(delta + sz(i) * dim_, delta + sz(i + 1) * dim_, replay_.begin() + static_cast<std::ptrdiff_t>(replay_next_) * dim_);
    replay_next_ = (replay_next_ + 1) % o_.replay_capacity;
    replay_size_ = std::min(replay_size_ + 1, o_.replay_capacity);
  }
}

void AddDiscriminator::absorb(const double* delta, int n) {
  for (int i = 0; i < n; ++i) {
    count_ += 1;
    for (int k = 0; k < dim_; ++k)
      mean_abs_[sz(k)] += (std::fabs(delta[sz(i) * dim_ + k]) - mean_abs_[sz(k)]) / count_;
  }
}

}  // namespace stiffgrad::learn
