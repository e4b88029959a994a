#include "test_support.hpp"

#include <cstdlib>
#include <fstream>

namespace sgtest {

std::string shared_data() {
  if (const char* env = std::getenv("SG_SHARED_DATA")) return env;
  return SG_SHARED_DATA;
}

std::string mujoco_models() { return SG_MUJOCO_MODELS; }

std::string humanoid_xml() { return mujoco_models() + "/humanoid/humanoid.xml"; }

std::vector<std::string> shared_models() {
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

}  // namespace sgtest
