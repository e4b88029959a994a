#include "stiffgrad/learn/mlp.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/learn/elu_layer_norm.hpp"

namespace stiffgrad::learn {

namespace {


template <class S>
using RowMat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class S>
using MatMap = Eigen::Map<RowMat<S>>;
template <class S>
using ConstMatMap = Eigen::Map<const RowMat<S>>;
template <class S>
using VecMap = Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>>;
template <class S>
using ConstVecMap = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>;

// SplitMix64 (Steele, Lea & Flood 2014): a fixed, library-independent generator, so the same
// seed gives the same initial parameters with any standard library.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // U[0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

}  // namespace

MlpLayerOffsets mlp_layer_offsets(const std::vector<int>& sizes, int layer) {
  const int num_layers = static_cast<int>(sizes.size()) - 1;
  std::size_t offset = 0;
  for (int l = 0;; ++l) {
    const std::size_t in = static_cast<std::size_t>(sizes[l]);
    const std::size_t out = static_cast<std::size_t>(sizes[l + 1]);
    MlpLayerOffsets o{};
    o.weight = offset;
    o.bias = o.weight + out * in;
    o.gain = o.bias + out;
    o.shift = o.gain + out;
    o.end = (l < num_layers - 1) ? o.shift + out : o.gain;
    if (l == layer) return o;
    offset = o.end;
  }
}

namespace {
using LayerOffsets = MlpLayerOffsets;
LayerOffsets layer_offsets(const std::vector<int>& sizes, int layer) { return mlp_layer_offsets(sizes, layer); }
}  // namespace

template <class S>
Mlp<S>::Mlp(std::vector<int> sizes, std::uint64_t seed, double output_scale) : sizes_(std::move(sizes)) {
  if (sizes_.size() < 2) throw std::invalid_argument("Mlp: sizes needs at least {in, out}");
  for (int width : sizes_)
    if (width < 1) throw std::invalid_argument("Mlp: every layer width must be >= 1, got " + std::to_string(width));
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  params_.resize(layer_offsets(sizes_, num_layers - 1).end);

  SplitMix64 rng{seed};
  for (int l = 0; l < num_layers; ++l) {
    const LayerOffsets o = layer_offsets(sizes_, l);
    const int in = sizes_[l], out = sizes_[l + 1];
    // PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for W and b.
    double bound = 1.0 / std::sqrt(static_cast<double>(in));
    if (l == num_layers - 1) bound *= output_scale;
    for (std::size_t i = o.weight; i < o.gain; ++i) params_[i] = static_cast<S>(bound * (2.0 * rng.uniform() - 1.0));
    if (l < num_layers - 1) {
      for (int j = 0; j < out; ++j) {
        params_[o.gain + j] = S(1);
        params_[o.shift + j] = S(0);
      }
    }
  }
}

template <class S>
typename Mlp<S>::Workspace Mlp<S>::make_workspace(int max_batch) const {
  if (max_batch < 0) throw std::invalid_argument("Mlp::make_workspace: max_batch must be >= 0");
  if (sizes_.empty()) throw std::invalid_argument("Mlp::make_workspace: network has no layers");
  const std::size_t rows = static_cast<std::size_t>(max_batch);
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  std::size_t act = 0, hidden = 0;
  for (int l = 0; l < num_layers; ++l) act += static_cast<std::size_t>(sizes_[l]);
  for (int l = 1; l < num_layers; ++l) hidden += static_cast<std::size_t>(sizes_[l]);
  const std::size_t widest = static_cast<std::size_t>(*std::max_element(sizes_.begin(), sizes_.end()));
  Workspace ws;
  ws.max_batch = max_batch;
  ws.act.assign(rows * act, S(0));
  ws.pre.assign(rows * hidden, S(0));
  ws.norm.assign(rows * hidden, S(0));
  ws.rstd.assign(rows * static_cast<std::size_t>(num_layers - 1), S(0));
  ws.grad_a.assign(rows * widest, S(0));
  ws.grad_b.assign(rows * widest, S(0));
  return ws;
}

namespace {

// The workspace must come from make_workspace of a network of these sizes.
template <class S>
void check_workspace(const std::vector<int>& sizes, int n, const typename Mlp<S>::Workspace& ws, const char* who) {
  if (n < 0 || n > ws.max_batch)
    throw std::invalid_argument(std::string(who) + ": batch of " + std::to_string(n) + " rows exceeds the workspace's " +
                                std::to_string(ws.max_batch));
  std::size_t act = 0;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) act += static_cast<std::size_t>(sizes[l]);
  if (ws.act.size() != act * static_cast<std::size_t>(ws.max_batch))
    throw std::invalid_argument(std::string(who) + ": workspace was made for a different network");
}

}  // namespace

template <class S>
void Mlp<S>::forward(const S* x, int n, S* y, Workspace& ws) const {
  check_workspace<S>(sizes_, n, ws, "Mlp::forward");
  if (n == 0) return;
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  const std::size_t rows = static_cast<std::size_t>(ws.max_batch);

  std::copy(x, x + static_cast<std::size_t>(n) * sizes_[0], ws.act.begin());
  std::size_t act_offset = 0, hidden_offset = 0;
  for (int l = 0; l < num_layers; ++l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    const LayerOffsets o = layer_offsets(sizes_, l);
    ConstMatMap<S> input(ws.act.data() + act_offset, n, in);      // (n x in)
    ConstMatMap<S> weight(params_.data() + o.weight, out, in);     // (out x in)
    ConstVecMap<S> bias(params_.data() + o.bias, out);             // (out)
    const bool hidden = l < num_layers - 1;
    S* z_data = hidden ? ws.pre.data() + hidden_offset : y;
    MatMap<S> z(z_data, n, out);  // Linear output (n x out)
    z.noalias() = input * weight.transpose();
    z.rowwise() += bias.transpose();
    if (!hidden) break;

    // ELU then LayerNorm over the row's features (kernels/learn/elu_layer_norm.hpp).
    const S* gain = params_.data() + o.gain;
    const S* shift = params_.data() + o.shift;
    S* norm = ws.norm.data() + hidden_offset;                               // x̂ (n x out)
    S* rstd = ws.rstd.data() + static_cast<std::size_t>(l) * rows;          // (n)
    S* next = ws.act.data() + act_offset + rows * static_cast<std::size_t>(in);  // (n x out)
    // exp over the whole block first: Eigen's vectorized exp is several times faster than a
    // scalar call per element, and this is the costliest elementwise step.
    MatMap<S>(norm, n, out).array() = z.array().exp();
    for (int r = 0; r < n; ++r) {
      const std::size_t at = static_cast<std::size_t>(r) * out;
      rstd[r] = kern::elu_layer_norm_row(z_data + at, norm + at, gain, shift, next + at, out);
    }
    act_offset += rows * static_cast<std::size_t>(in);
    hidden_offset += rows * static_cast<std::size_t>(out);
  }
}

template <class S>
void Mlp<S>::backward(const S* dy, int n, S* grad_params, S* dx, Workspace& ws) const {
  check_workspace<S>(sizes_, n, ws, "Mlp::backward");
  if (n == 0) return;
  const int num_layers = static_cast<int>(sizes_.size()) - 1;
  const std::size_t rows = static_cast<std::size_t>(ws.max_batch);

  // Start offsets of the last layer's input and of the last hidden layer's records.
  std::size_t act_offset = 0, hidden_offset = 0;
  for (int l = 0; l < num_layers - 1; ++l) act_offset += rows * static_cast<std::size_t>(sizes_[l]);
  for (int l = 1; l < num_layers - 1; ++l) hidden_offset += rows * static_cast<std::size_t>(sizes_[l]);

  // g holds ∂L/∂(layer output) (n x out), then in place ∂L/∂z; the input gradient goes to the
  // other scratch buffer (or dx for the first layer).
  const S* g_in = dy;  // the output layer has no hidden stage, so dy is only read
  S* g = nullptr;
  S* other = ws.grad_a.data();
  for (int l = num_layers - 1; l >= 0; --l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    const LayerOffsets o = layer_offsets(sizes_, l);
    if (l < num_layers - 1) {
      // LayerNorm and ELU adjoints (kernels/learn/elu_layer_norm.hpp); the gain's and shift's
      // gradients sum over the rows here.
      const S* gain = params_.data() + o.gain;
      const S* z = ws.pre.data() + hidden_offset;
      const S* norm = ws.norm.data() + hidden_offset;
      const S* rstd = ws.rstd.data() + static_cast<std::size_t>(l) * rows;
      S* d_gain = grad_params ? grad_params + o.gain : nullptr;
      S* d_shift = grad_params ? grad_params + o.shift : nullptr;
      // exp(z) into the free scratch buffer (vectorized, as in forward).
      MatMap<S>(other, n, out).array() = ConstMatMap<S>(z, n, out).array().exp();
      for (int r = 0; r < n; ++r) {
        S* gr = g + static_cast<std::size_t>(r) * out;
        const S* xr = norm + static_cast<std::size_t>(r) * out;
        const S* zr = z + static_cast<std::size_t>(r) * out;
        const S* exp_zr = other + static_cast<std::size_t>(r) * out;
        if (d_gain) {
          for (int j = 0; j < out; ++j) {
            d_gain[j] += gr[j] * xr[j];
            d_shift[j] += gr[j];
          }
        }
        kern::adj_elu_layer_norm_row(gr, xr, zr, exp_zr, gain, rstd[r], out);
      }
    }

    ConstMatMap<S> dz(l < num_layers - 1 ? g : g_in, n, out);  // ∂L/∂z (n x out)
    ConstMatMap<S> input(ws.act.data() + act_offset, n, in);      // (n x in)
    ConstMatMap<S> weight(params_.data() + o.weight, out, in);    // (out x in)
    if (grad_params) {
      MatMap<S> d_weight(grad_params + o.weight, out, in);
      VecMap<S> d_bias(grad_params + o.bias, out);
      d_weight.noalias() += dz.transpose() * input;
      d_bias.noalias() += dz.colwise().sum().transpose();
    }
    if (l == 0) {
      if (dx) MatMap<S>(dx, n, in).noalias() = dz * weight;
      break;
    }
    MatMap<S>(other, n, in).noalias() = dz * weight;
    S* next_other = (other == ws.grad_a.data()) ? ws.grad_b.data() : ws.grad_a.data();
    g = other;
    other = next_other;
    act_offset -= rows * static_cast<std::size_t>(sizes_[l - 1]);
    if (l < num_layers - 1) hidden_offset -= rows * static_cast<std::size_t>(sizes_[l]);
  }
}

template <class S>
void Mlp<S>::polyak_from(const Mlp& other, double alpha) {
  if (other.sizes_ != sizes_) throw std::invalid_argument("Mlp::polyak_from: networks differ in sizes");
  for (std::size_t i = 0; i < params_.size(); ++i)
    params_[i] = static_cast<S>(alpha * static_cast<double>(params_[i]) +
                                (1.0 - alpha) * static_cast<double>(other.params_[i]));
}

template class Mlp<float>;
template class Mlp<double>;

}  // namespace stiffgrad::learn
