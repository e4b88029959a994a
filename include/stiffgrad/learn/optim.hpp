// stiffgrad — optimizers and their helpers: Adam, linear learning-rate decay, gradient clipping.
#pragma once

#include <cstddef>
#include <vector>

namespace stiffgrad::learn {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

// Adam (Kingma & Ba 2015, Algorithm 1, with bias correction): m ← β1 m + (1-β1) g,
// v ← β2 v + (1-β2) g², θ ← θ - lr · m̂ / (sqrt(v̂) + ε). Moments in double.
template <class S>
class Adam {
 public:
  Adam() = default;
  Adam(std::size_t n, AdamOptions options);
  void step(S* params, const S* grad);
  void set_lr(double lr) { options_.lr = lr; }
  double lr() const { return options_.lr; }
  long steps() const { return t_; }
  void reset();
  // The moments and the step count (a training checkpoint); set_state throws
  // std::invalid_argument when m or v has another size than the parameters.
  const std::vector<double>& first_moment() const { return m_; }
  const std::vector<double>& second_moment() const { return v_; }
  void set_state(std::vector<double> m, std::vector<double> v, long steps);

 private:
  AdamOptions options_;
  std::vector<double> m_, v_;  // n  Adam's first and second moment estimates
  long t_ = 0;                 // steps taken (the bias corrections' exponent)
};

// lr0 → lr_end linearly over `iterations` (iteration 0 gives lr0, iteration >= iterations
// gives lr_end).
double linear_decay(double lr0, double lr_end, int iteration, int iterations);

// The Euclidean norm of g (n) before clipping; scales g to norm max_norm when it is larger.
// A non-finite norm leaves g unchanged and is returned as is (the caller skips the update).
template <class S>
double clip_grad_norm(S* g, std::size_t n, double max_norm);

extern template class Adam<float>;
extern template class Adam<double>;

}  // namespace stiffgrad::learn
