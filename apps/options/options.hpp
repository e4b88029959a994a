// stiffgrad — the one command-line option parser, shared by the `stiffgrad` commands
// (apps/cli) and the benchmark binaries (bench/): positional arguments and `--key [value]`
// options, each option given at most once, numbers range-checked with a message that names
// the option. A malformed command line is a UsageError (exit status 2 by convention).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace stiffgrad::options {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Positional arguments and --key [value] options of one command.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
  bool has(const std::string& k) const { return options.count(k) > 0; }
  // The value of a required option; throws UsageError when it is missing.
  std::string get(const std::string& k) const;
  // The value of an option, or `fallback` when it was not given.
  std::string get_or(const std::string& k, const std::string& fallback) const;
};

// argv[first..]: `flags` take no value, `valued` take one; `-o` is short for `--output` when
// `output` is valued, and `-h` for `--help` when `help` is a flag.
Args parse_args(int argc, char** argv, int first, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued);

// An integer within [lo, hi]; throws UsageError naming `what` otherwise.
long parse_int_in(const std::string& s, const std::string& what, long lo, long hi);
// A finite number within [lo, hi]; throws UsageError naming `what` otherwise.
double parse_double_in(const std::string& s, const std::string& what, double lo, double hi);
// A comma-separated list (empty items are an error naming `what`).
std::vector<std::string> parse_list(const std::string& s, const std::string& what);

}  // namespace stiffgrad::options
