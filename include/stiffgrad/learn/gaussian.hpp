// stiffgrad — diagonal Gaussian policy head: sampling, log-probability, entropy and their gradients.
#pragma once

#include <cstdint>

namespace stiffgrad::learn {

// An action a ~ N(mu, diag(exp(log_std))²), all arrays n x k row-major (log_std: k, shared by
// the rows). Actions are unsquashed here: a task maps them to controls (Task::action_to_ctrl).

// a = mu + exp(log_std) ⊙ eps (the reparameterisation SHAC differentiates through).
template <class S>
void gaussian_sample(const S* mu, const S* log_std, const S* eps, int n, int k, S* a);

// log N(a; mu, σ²) per row, summed over the k dimensions: out (n).
template <class S>
void gaussian_log_prob(const S* mu, const S* log_std, const S* a, int n, int k, S* out);

// Gradient of Σ_rows w_r · log_prob_r: d_mu (n x k) = w_r (a - mu)/σ², overwritten;
// d_log_std (k) += Σ_r w_r ((a - mu)²/σ² - 1).
template <class S>
void adj_gaussian_log_prob(const S* mu, const S* log_std, const S* a, int n, int k, const S* w, S* d_mu,
                           S* d_log_std);

// Entropy of the distribution (same for every row): Σ_k (log_std_k + ½ log(2πe)).
template <class S>
S gaussian_entropy(const S* log_std, int k);

}  // namespace stiffgrad::learn
