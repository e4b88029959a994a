#include "stiffgrad/learn/optim.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace stiffgrad::learn {

template <class S>
Adam<S>::Adam(std::size_t n, AdamOptions options) : options_(options), m_(n, 0.0), v_(n, 0.0) {}

template <class S>
void Adam<S>::step(S* params, const S* grad) {
  ++t_;
  const double beta1 = options_.beta1, beta2 = options_.beta2;
  // Bias corrections 1 - β^t (Kingma & Ba 2015, Algorithm 1).
  const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(t_));
  const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(t_));
  for (std::size_t i = 0; i < m_.size(); ++i) {
    const double g = static_cast<double>(grad[i]);
    m_[i] = beta1 * m_[i] + (1.0 - beta1) * g;
    v_[i] = beta2 * v_[i] + (1.0 - beta2) * g * g;
    const double m_hat = m_[i] / correction1;
    const double v_hat = v_[i] / correction2;
    params[i] = static_cast<S>(static_cast<double>(params[i]) - options_.lr * m_hat / (std::sqrt(v_hat) + options_.eps));
  }
}

template <class S>
void Adam<S>::set_state(std::vector<double> m, std::vector<double> v, long steps) {
  if (m.size() != m_.size() || v.size() != v_.size() || steps < 0)
    throw std::invalid_argument("Adam::set_state: " + std::to_string(m.size()) + " and " + std::to_string(v.size()) +
                                " moments for " + std::to_string(m_.size()) + " parameters");
  m_ = std::move(m);
  v_ = std::move(v);
  t_ = steps;
}

template <class S>
void Adam<S>::reset() {
  std::fill(m_.begin(), m_.end(), 0.0);
  std::fill(v_.begin(), v_.end(), 0.0);
  t_ = 0;
}

double linear_decay(double lr0, double lr_end, int iteration, int iterations) {
  if (iteration <= 0) return lr0;
  if (iteration >= iterations) return lr_end;
  const double fraction = static_cast<double>(iteration) / static_cast<double>(iterations);
  return lr0 + (lr_end - lr0) * fraction;
}

template <class S>
double clip_grad_norm(S* g, std::size_t n, double max_norm) {
  double sq = 0.0;
  for (std::size_t i = 0; i < n; ++i) sq += static_cast<double>(g[i]) * static_cast<double>(g[i]);
  const double norm = std::sqrt(sq);
  if (!std::isfinite(norm)) return norm;
  if (norm > max_norm) {
    const double scale = max_norm / norm;
    for (std::size_t i = 0; i < n; ++i) g[i] = static_cast<S>(static_cast<double>(g[i]) * scale);
  }
  return norm;
}

template class Adam<float>;
template class Adam<double>;
template double clip_grad_norm<float>(float*, std::size_t, double);
template double clip_grad_norm<double>(double*, std::size_t, double);

}  // namespace stiffgrad::learn
