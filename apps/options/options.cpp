// The shared option parser (apps/options/options.hpp).
#include "apps/options/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace stiffgrad::options {

std::string Args::get(const std::string& k) const {
  auto it = options.find(k);
  if (it == options.end() || it->second.empty()) throw UsageError("missing required option --" + k);
  return it->second;
}

std::string Args::get_or(const std::string& k, const std::string& fallback) const {
  auto it = options.find(k);
  return it == options.end() ? fallback : it->second;
}

Args parse_args(int argc, char** argv, int first, const std::vector<std::string>& flags,
                const std::vector<std::string>& valued) {
  auto listed = [](const std::vector<std::string>& v, const std::string& k) {
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  Args a;
  for (int i = first; i < argc; ++i) {
    const std::string s = argv[i];
    const bool short_output = s == "-o" && listed(valued, "output");
    const bool short_help = s == "-h" && listed(flags, "help");
    if (s.rfind("--", 0) != 0 && !short_output && !short_help) {
      a.positional.push_back(s);
      continue;
    }
    const std::string k = short_output ? "output" : short_help ? "help" : s.substr(2);
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
    throw UsageError(what + " must be an integer from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + s + "'");
  return v;
}

namespace {
// A number as %g writes it (3600, 0.001, 1e+06), for messages.
std::string shortest(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}
}  // namespace

double parse_double_in(const std::string& s, const std::string& what, double lo, double hi) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v) || v < lo ||
      v > hi)
    throw UsageError(what + " must be a number from " + shortest(lo) + " to " + shortest(hi) +
                     ", got '" + s + "'");
  return v;
}

std::vector<std::string> parse_list(const std::string& s, const std::string& what) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError(what + ": empty item in '" + s + "'");
    items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace stiffgrad::options
