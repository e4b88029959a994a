// The Impulse contact model's names, parameters and the Model it steps
// (stiffgrad/impulse_contact.hpp).
#include "stiffgrad/impulse_contact.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/model_arrays.hpp"

namespace stiffgrad {

namespace {

std::string number(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

constexpr struct {
  ContactModel contact_model;
  const char* name;
} kContactModelNames[] = {{ContactModel::Soft, "soft"}, {ContactModel::Impulse, "impulse"}};
}  // namespace

const char* contact_model_name(ContactModel contact_model) {
  for (const auto& e : kContactModelNames)
    if (e.contact_model == contact_model) return e.name;
  return "unknown";
}

bool parse_contact_model(const std::string& name, ContactModel* contact_model) {
  for (const auto& e : kContactModelNames)
    if (name == e.name) {
      *contact_model = e.contact_model;
      return true;
    }
  return false;
}

double impulse_capture_distance(double kappa) { return std::log(1e6) / kappa; }

Model impulse_contact_model(const Model& model, const ImpulseContact& c) {
  if (!(c.kappa > 0) || !std::isfinite(c.kappa))
    throw std::invalid_argument("impulse contact model: kappa must be a finite number > 0, got " + number(c.kappa));
  if (c.sweeps < 1 || c.sweeps > 1000)
    throw std::invalid_argument("impulse contact model: sweeps must be from 1 to 1000, got " +
                                std::to_string(c.sweeps));
  // Beyond `capture` the activation σ(−κ·dist) is below 1e-6: detecting contacts up to there
  // lets the soft activation act from distance without cutting it off at the pair's margin.
  const double capture = impulse_capture_distance(c.kappa);
  Model m = model;
  for (double& margin : m.cpair_margin) margin = std::max(margin, capture);
  return m;
}

std::unique_ptr<Model> impulse_model_for(const Model& model, ContactModel contact_model,
                                         const ImpulseContact& impulse) {
  if (contact_model != ContactModel::Impulse) return nullptr;
  return std::make_unique<Model>(impulse_contact_model(model, impulse));
}

}  // namespace stiffgrad
