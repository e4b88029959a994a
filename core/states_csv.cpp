#include "stiffgrad/states_csv.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stiffgrad {

namespace {

[[noreturn]] void fail(const std::string& path, int line, const std::string& msg) {
  throw std::runtime_error(path + ":" + std::to_string(line) + ": " + msg);
}

std::vector<double> parse_row(const std::string& text, const std::string& path, int line) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string field;
  while (std::getline(ss, field, ',')) {
    const auto b = field.find_first_not_of(" \t\r");
    const auto e = field.find_last_not_of(" \t\r");
    if (b == std::string::npos) fail(path, line, "empty value in column " + std::to_string(out.size() + 1));
    const std::string tok = field.substr(b, e - b + 1);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size() || errno == ERANGE || !std::isfinite(v))
      fail(path, line, "malformed number '" + tok + "' in column " + std::to_string(out.size() + 1));
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::vector<std::vector<double>> read_csv_rows(const std::string& path, int width) {
  // an ifstream opens a directory and then reads nothing: say so instead of "no rows"
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(path + ": is a directory, not a CSV file");
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open file");
  std::vector<std::vector<double>> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const auto b = text.find_first_not_of(" \t\r");
    // a model with nothing to set (no dofs, no actuators: a static mesh file) has empty rows
    if (b == std::string::npos && width == 0) {
      rows.emplace_back();
      continue;
    }
    if (b == std::string::npos || text[b] == '#') continue;
    auto row = parse_row(text, path, line);
    if (static_cast<int>(row.size()) != width)
      fail(path, line, "expected " + std::to_string(width) + " values, found " + std::to_string(row.size()));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw std::runtime_error(path + ": no data rows (the file is empty or holds only comments)");
  return rows;
}

std::vector<StateRow> read_states_csv(const std::string& path, const Model& m) {
  std::vector<StateRow> out;
  try {
    for (auto& r : read_csv_rows(path, m.nq + m.nv + m.nu)) {
      StateRow s;
      s.qpos.assign(r.begin(), r.begin() + m.nq);
      s.qvel.assign(r.begin() + m.nq, r.begin() + m.nq + m.nv);
      s.ctrl.assign(r.begin() + m.nq + m.nv, r.end());
      out.push_back(std::move(s));
    }
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (a state row is nq=" + std::to_string(m.nq) +
                             " qpos, nv=" + std::to_string(m.nv) + " qvel, nu=" +
                             std::to_string(m.nu) + " ctrl)");
  }
  return out;
}

std::string format_states_csv(const Model& m, const std::vector<StateRow>& states, const std::string& comment) {
  std::string out = "# " + m.name + ": nq=" + std::to_string(m.nq) + " qpos, nv=" + std::to_string(m.nv) +
                    " qvel, nu=" + std::to_string(m.nu) + " ctrl per row\n";
  if (!comment.empty()) out += "# " + comment + "\n";
  char num[32];
  for (const StateRow& s : states) {
    const char* sep = "";
    for (const auto* part : {&s.qpos, &s.qvel, &s.ctrl})
      for (double x : *part) {
        std::snprintf(num, sizeof num, "%s%.17g", sep, x);  // 17 digits: doubles round-trip
        out += num;
        sep = ",";
      }
    out += "\n";
  }
  return out;
}

}  // namespace stiffgrad
