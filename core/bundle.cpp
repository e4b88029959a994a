// BundleOptions' checks (stiffgrad/bundle.hpp).
#include "stiffgrad/bundle.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/number_list.hpp"

namespace stiffgrad {

void validate(const BundleOptions& o) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("BundleOptions: " + what); };
  if (o.branches < 1 || o.branches > 4096) fail("branches must be from 1 to 4096, got " + std::to_string(o.branches));
  if (o.steps < 1) fail("steps (H) must be >= 1, got " + std::to_string(o.steps));
  if (std::isnan(o.tau) || o.tau < 0) fail("tau must be >= 0 (+inf: never)");
  if (!(o.sigma_p >= 0) || !std::isfinite(o.sigma_p)) fail("sigma_p must be finite and >= 0");
  if (!(o.sigma_v >= 0) || !std::isfinite(o.sigma_v)) fail("sigma_v must be finite and >= 0");
  if (!(o.lambda > 0) || !std::isfinite(o.lambda)) fail("lambda must be finite and > 0");
  if (o.pool < 0) fail("pool must be >= 0 (0: one bundle per environment)");
}

BundleOptions parse_bundle_options(const std::string& text) {
  const std::vector<double> v = parse_number_list(text, "--bundle");
  if (v.size() != 3 && v.size() != 5)
    throw std::invalid_argument("--bundle takes B,H,TAU or B,H,TAU,SIGMA_P,SIGMA_V");
  for (int i : {0, 1})
    if (v[i] != std::floor(v[i]) || !(std::abs(v[i]) < 1e9))
      throw std::invalid_argument(std::string("--bundle: ") + (i == 0 ? "B" : "H") + " must be an integer");
  BundleOptions b;
  b.enabled = true;
  b.branches = static_cast<int>(v[0]);
  b.steps = static_cast<int>(v[1]);
  b.tau = v[2];
  if (v.size() == 5) {
    b.sigma_p = v[3];
    b.sigma_v = v[4];
  }
  validate(b);
  return b;
}

}  // namespace stiffgrad
