// stiffgrad — the command line's shared pieces: option parsing, the one --steps rule, output
// files, and the commands implemented outside apps/cli/main.cpp. Internal to the CLI (and its tests).
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/options/options.hpp"
#include "stiffgrad/bundle.hpp"
#include "stiffgrad/model.hpp"
#include "stiffgrad/simulator.hpp"

namespace stiffgrad::cli {

// The option parser is shared with the benchmarks (apps/options/options.hpp).
using options::Args;
using options::parse_int_in;
using options::UsageError;

// argv[2..] (after the command's name): `flags` take no value, `valued` take one; `-o` is
// short for `--output`.
inline Args parse_args(int argc, char** argv, const std::vector<std::string>& flags,
                       const std::vector<std::string>& valued) {
  return options::parse_args(argc, argv, 2, flags, valued);
}

// The one rule for every command that steps (rollout, grad, gradcheck, demo): a number of
// control steps from kMinSteps to kMaxSteps. Zero steps would compute nothing (and a
// gradient needs at least one recorded step), so no command accepts it.
constexpr long kMinSteps = 1;
constexpr long kMaxSteps = 1000000000;
extern const char* const kStepsRule;  // the rule as the help texts state it
int parse_steps(const std::string& s);

const std::string& model_path(const Args& a);
// load_mjcf, printing the load notes on stderr.
std::shared_ptr<const Model> load_with_notes(const std::string& path);

// Writes `text` to --output/-o FILE when given (all or nothing: an error names the file),
// else to stdout.
void write_output(const Args& a, const std::string& text);

// Memory `grad` needs for `steps` control steps of `sim` (apps/cli/memory.cpp): the
// simulator, the Rollout's checkpoints and adjoint workspace (Rollout::bytes_per_env, measured
// on a one-step Rollout and extended by one checkpoint per further step), and the command's
// host arrays (dL/dstate rows for every step, dL/dctrl).
// In double: a large request must not wrap around std::size_t.
struct GradMemory {
  double simulator = 0, rollout = 0, host_arrays = 0;
  double total() const { return simulator + rollout + host_arrays; }
};
// With bundles (enabled) the pool's branch states count too (stiffgrad/bundle.hpp's formula).
GradMemory grad_memory(Simulator& sim, int steps, const BundleOptions& bundles = {});

// Memory the request may use: MemAvailable of /proc/meminfo, else the physical memory; the
// environment's STIFFGRAD_MEMORY_LIMIT (bytes), when set, instead.
struct MemoryLimit {
  double bytes = 0;
  std::string source;  // where the figure comes from, for the message
};
MemoryLimit available_memory();

// Throws std::runtime_error saying how many bytes `need` is and what it exceeds.
void refuse_above(const GradMemory& need, const MemoryLimit& limit, int steps, int nenv);

int cmd_info(const Args& a);    // apps/cli/info.cpp
int cmd_states(const Args& a);  // apps/cli/states.cpp
extern const char* const kInfoHelp;
extern const char* const kStatesHelp;

}  // namespace stiffgrad::cli
