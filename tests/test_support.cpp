#include "test_support.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>

namespace sgtest {

std::string data_dir() {
  if (const char* env = std::getenv("SG_DATA")) return env;
  return SG_DATA;
}

// SG_MUJOCO_MODELS overrides the configured folder: a build run on another machine (the
// device machine runs binaries built here) finds libmujoco-samples' models elsewhere.
std::string mujoco_models() {
  if (const char* env = std::getenv("SG_MUJOCO_MODELS")) return env;
  return SG_MUJOCO_MODELS;
}

std::string humanoid_xml() { return mujoco_models() + "/humanoid/humanoid.xml"; }

std::vector<std::string> mujoco_loadable_models() {
  std::vector<std::string> out = {humanoid_xml()};
  for (const std::string& rel : data_models())
    if (rel.find("scene_mjx.xml") == std::string::npos) out.push_back(data_dir() + "/" + rel);
  return out;
}

std::string model_test_name(const std::string& path) {
  std::string s = path;
  const std::string shared = data_dir() + "/models/";
  if (s.rfind(shared, 0) == 0) s = s.substr(shared.size());
  else s = "mujoco_" + s.substr(s.find_last_of('/') + 1);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

std::vector<std::string> data_models() {
  return {
      "models/brax/ant.xml",
      "models/brax/half_cheetah.xml",
      "models/brax/hopper.xml",
      "models/brax/humanoid.xml",
      "models/brax/walker2d.xml",
      "models/dm_control/acrobot.xml",
      "models/dm_control/cartpole.xml",
      "models/dm_control/cheetah.xml",
      "models/dm_control/hopper.xml",
      "models/dm_control/humanoid.xml",
      "models/dm_control/humanoid_CMU.xml",
      "models/dm_control/pendulum.xml",
      "models/dm_control/walker.xml",
      "models/gymnasium/ant.xml",
      "models/gymnasium/half_cheetah.xml",
      "models/gymnasium/hopper.xml",
      "models/gymnasium/humanoid.xml",
      "models/gymnasium/inverted_double_pendulum.xml",
      "models/gymnasium/inverted_pendulum.xml",
      "models/gymnasium/walker2d.xml",
      "models/unitree_g1/g1_mjx_mujoco222.xml",
      "models/unitree_g1/scene_mjx.xml",
  };
}

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

std::string test_data() { return SG_TEST_DATA; }

void inertia_tensor(const double q[4], const double I[3], double out[9]) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  const double R[9] = {w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y),
                       2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x),
                       2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      out[3 * r + c] = R[3 * r] * I[0] * R[3 * c] + R[3 * r + 1] * I[1] * R[3 * c + 1] +
                       R[3 * r + 2] * I[2] * R[3 * c + 2];
}

}  // namespace sgtest
