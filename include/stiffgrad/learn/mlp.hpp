// stiffgrad — multilayer perceptron for policies and critics, with a hand-written backward pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stiffgrad::learn {

// A fully connected network  x -> [Linear -> ELU -> LayerNorm] x (L-1) -> Linear  (the SHAC
// architecture: DiffRL's MLP puts the activation before the LayerNorm; LayerNorm has a learned
// gain and bias, ε = 1e-5 as in PyTorch). sizes = {in, hidden_1, ..., out}, at least {in, out}.
//
// Parameters are one flat array, layer by layer:
//   W_l (sizes[l+1] x sizes[l], row-major), b_l (sizes[l+1]), and for every hidden layer
//   gain_l (sizes[l+1]) and bias_l (sizes[l+1]).
// Initialisation (seeded, reproducible): W, b ~ U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's Linear),
// gain 1, bias 0; the output layer's W and b are scaled by `output_scale` (a policy mean near
// zero at the start). Batches are row-major n x dim. S is float (training) or double (tests).
// Where layer l's parameters start in the flat array of a network of these sizes (the layout
// above); gain and shift exist for hidden layers only (end = gain for the output layer).
struct MlpLayerOffsets {
  std::size_t weight, bias, gain, shift, end;
};
MlpLayerOffsets mlp_layer_offsets(const std::vector<int>& sizes, int layer);

template <class S>
class Mlp {
 public:
  // Memory one forward pass keeps for its backward pass, for batches of up to max_batch rows:
  // sized once (make_workspace), no allocation in forward/backward.
  struct Workspace {
    int max_batch = 0;
    std::vector<S> act;    // per layer l: the layer's input (n x sizes[l]), as forward saw it
    std::vector<S> pre;    // per hidden layer: Linear output z (n x width)
    std::vector<S> norm;   // per hidden layer: normalized ELU output x̂ (n x width)
    std::vector<S> rstd;   // per hidden layer: 1/sqrt(var + eps) per row (n)
    std::vector<S> grad_a, grad_b;  // backward scratch (n x max width)
  };

  Mlp() = default;
  Mlp(std::vector<int> sizes, std::uint64_t seed, double output_scale = 1.0);

  const std::vector<int>& sizes() const { return sizes_; }
  int in_dim() const { return sizes_.front(); }
  int out_dim() const { return sizes_.back(); }
  std::size_t num_params() const { return params_.size(); }
  S* params() { return params_.data(); }
  const S* params() const { return params_.data(); }
  std::vector<S>& param_vector() { return params_; }
  const std::vector<S>& param_vector() const { return params_; }

  Workspace make_workspace(int max_batch) const;

  // y = f(x), x: n x in, y: n x out; n <= ws.max_batch (std::invalid_argument otherwise).
  // Records in ws what backward needs.
  void forward(const S* x, int n, S* y, Workspace& ws) const;
  // After forward(x, n, ..., ws): grad_params (num_params) += (∂y/∂θ)ᵀ dy, and, when dx is not
  // null, dx (n x in) = (∂y/∂x)ᵀ dy (overwritten). grad_params may be null.
  void backward(const S* dy, int n, S* grad_params, S* dx, Workspace& ws) const;

  // θ ← α θ + (1 - α) θ_other (target networks); same sizes required.
  void polyak_from(const Mlp& other, double alpha);

 private:
  std::vector<int> sizes_;
  std::vector<S> params_;
};

extern template class Mlp<float>;
extern template class Mlp<double>;

}  // namespace stiffgrad::learn
