// `stiffgrad states`: starting states in the CSV format that dynamics, rollout and grad read.
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"
#include "stiffgrad/sampling.hpp"
#include "stiffgrad/states_csv.hpp"

namespace stiffgrad::cli {

const char* const kStatesHelp =
    "usage: stiffgrad states MODEL.xml [--qpos0 | --keyframe NAME | --random N [--seed S]]\n"
    "                       [-o FILE]\n"
    "Writes starting states as the STATES.csv that dynamics, rollout and grad read (one row per\n"
    "state: nq qpos, nv qvel, nu ctrl; 17 significant digits) to stdout or to FILE.\n"
    "  --qpos0          (default) one state: qpos0, zero velocity, zero control\n"
    "  --keyframe NAME  one state: the keyframe's qpos, qvel and ctrl (NAME or its index)\n"
    "  --random N       N states, the same for the same seed S (default 1): limited hinge and\n"
    "                   slide joints uniform within their range, unlimited ones qpos0 +\n"
    "                   U(-0.1, 0.1); ball and free joints uniformly random unit quaternions\n"
    "                   (a limited ball joint: angle within its range), free positions qpos0 +\n"
    "                   U(-0.1, 0.1) m; velocities U(-0.1, 0.1); controls uniform within\n"
    "                   ctrlrange (U(-1, 1) for an actuator without one)\n";

namespace {

constexpr long kMaxRandomStates = 10000000;

StateRow rest_state(const Model& m) {
  return StateRow{m.qpos0, std::vector<double>(m.nv, 0.0), std::vector<double>(m.nu, 0.0)};
}

std::string keyframe_names(const Model& m) {
  if (m.keyframes.empty()) return "the model has no keyframes";
  std::string names = "available:";
  for (std::size_t k = 0; k < m.keyframes.size(); ++k)
    names += " " + (m.keyframes[k].name.empty() ? "(unnamed, index " + std::to_string(k) + ")"
                                                : m.keyframes[k].name);
  return names;
}

// A keyframe by name, or by index for unnamed ones; an unknown one lists what there is.
const Keyframe& find_keyframe(const Model& m, const std::string& key) {
  const int id = m.keyframe_id(key);
  if (id >= 0) return m.keyframes[id];
  const bool digits = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
  if (digits && key.size() < 9 && std::stoul(key) < m.keyframes.size()) return m.keyframes[std::stoul(key)];
  throw std::runtime_error("no keyframe '" + key + "' in " + m.file + "; " + keyframe_names(m));
}

// Exactly one of the three modes; --seed only with --random.
void check_mode(const Args& a) {
  const int modes = a.has("qpos0") + a.has("keyframe") + a.has("random");
  if (modes > 1) throw UsageError("give only one of --qpos0, --keyframe, --random");
  if (a.has("seed") && !a.has("random")) throw UsageError("--seed applies only to --random");
}

}  // namespace

int cmd_states(const Args& a) {
  const std::string& path = model_path(a);
  check_mode(a);
  const long count = a.has("random") ? parse_int_in(a.get("random"), "--random", 1, kMaxRandomStates) : 0;
  const long seed = a.has("seed") ? parse_int_in(a.get("seed"), "--seed", 0, 0x7fffffffL) : 1;
  const auto m = load_with_notes(path);
  std::vector<StateRow> states;
  std::string comment;
  if (a.has("keyframe")) {
    const Keyframe& k = find_keyframe(*m, a.get("keyframe"));
    states.push_back(StateRow{k.qpos, k.qvel, k.ctrl});
    comment = "keyframe " + a.get("keyframe");
  } else if (count > 0) {
    states = sample_states_in_range(*m, static_cast<int>(count), static_cast<std::uint64_t>(seed));
    comment = "random " + std::to_string(count) + ", seed " + std::to_string(seed);
  } else {
    states.push_back(rest_state(*m));
    comment = "qpos0, zero qvel and ctrl";
  }
  write_output(a, format_states_csv(*m, states, comment));
  return 0;
}

}  // namespace stiffgrad::cli
