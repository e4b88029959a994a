// Option parsing and output shared by the commands of the `stiffgrad` command line.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "apps/cli/cli.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::cli {

const char* const kStepsRule =
    "N (--steps) counts control steps and must be from 1 to 1000000000 for every command.\n";

std::string Args::get(const std::string& k) const {
  auto it = options.find(k);
  if (it == options.end() || it->second.empty()) throw UsageError("missing required option --" + k);
  return it->second;
}

Args parse_args(int argc, char** argv, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued) {
  auto listed = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  Args a;
  for (int i = 2; i < argc; ++i) {
    const std::string s = argv[i];
    const bool short_output = s == "-o" && listed(valued, "output");
    if (s.rfind("--", 0) != 0 && !short_output) {
      a.positional.push_back(s);
      continue;
    }
    const std::string k = short_output ? "output" : s.substr(2);
    // a second value would silently win over the first: ask which one was meant
    if (a.options.count(k) && (listed(flags, k) || listed(valued, k)))
      throw UsageError("option --" + k + " given more than once");
    if (listed(flags, k)) {
      a.options[k] = std::string(1, '1');  // (not = "1": GCC 12's -Wrestrict false positive)
    } else if (listed(valued, k)) {
      if (i + 1 >= argc) throw UsageError("option " + s + " needs a value");
      a.options[k] = argv[++i];
    } else {
      throw UsageError("unknown option " + s);
    }
  }
  return a;
}

long parse_int_in(const std::string& s, const std::string& what, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || v < lo || v > hi)
    throw UsageError(what + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + s + "'");
  return v;
}

int parse_steps(const std::string& s) {
  return static_cast<int>(parse_int_in(s, "--steps", kMinSteps, kMaxSteps));
}

const std::string& model_path(const Args& a) {
  if (a.positional.size() != 1) throw UsageError("expected exactly one MODEL.xml argument");
  return a.positional[0];
}

std::shared_ptr<const Model> load_with_notes(const std::string& path) {
  LoadNotes notes;
  auto m = load_mjcf(path, &notes);
  for (const auto& n : notes.notes) std::fprintf(stderr, "%s\n", n.c_str());
  return m;
}

void write_output(const Args& a, const std::string& text) {
  if (!a.has("output")) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  const std::string path = a.get("output");
  std::ofstream out(path, std::ios::binary);
  if (!(out << text) || !out.flush()) throw std::runtime_error(path + ": cannot write file");
}

}  // namespace stiffgrad::cli
