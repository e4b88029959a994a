// JSON text for the commands that write it (`info --json`, `eval --json`, train's summary.json):
// numbers at full precision and escaped strings, so that scripts read figures, not printed lines.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace stiffgrad::cli {

// x at 17 significant digits (exact for a double); JSON has no inf or nan, so those are null.
inline std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

// s as a JSON string: quotes, backslashes and control characters escaped.
inline std::string json_string(const std::string& s) {
  std::string out(1, '"');  // (not = "\"": GCC 12's -Wrestrict false positive on literal + s)
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

}  // namespace stiffgrad::cli
