// stiffgrad — Model helpers.
#include <numeric>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

double Model::total_mass() const {
  return std::accumulate(body_mass.begin(), body_mass.end(), 0.0);
}

int Model::keyframe_id(const std::string& key_name) const {
  for (size_t i = 0; i < keyframes.size(); ++i)
    if (keyframes[i].name == key_name) return static_cast<int>(i);
  return -1;
}

}  // namespace stiffgrad
