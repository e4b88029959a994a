// "1,2.5,3e-2": a comma-separated list of numbers (the CLI's --cfd, --bundle).
#pragma once

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace stiffgrad {

// The numbers of `text`; throws std::invalid_argument("<flag>: '<item>' is not a number").
inline std::vector<double> parse_number_list(const std::string& text, const std::string& flag) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0') throw std::invalid_argument(flag + ": '" + item + "' is not a number");
    v.push_back(x);
  }
  return v;
}

}  // namespace stiffgrad
