// stiffgrad — reading state files for the command line and tests.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

struct StateRow {
  std::vector<double> qpos;  // nq (quaternions w x y z)
  std::vector<double> qvel;  // nv
  std::vector<double> ctrl;  // nu
};

// One state per line: nq qpos values, nv qvel values, nu ctrl values, comma-separated;
// blank lines and lines starting with '#' are skipped. Throws std::runtime_error naming the
// file (and line) for a directory, an unreadable file, a file without data rows, a wrong value
// count or a malformed number.
std::vector<StateRow> read_states_csv(const std::string& path, const Model& model);

// A file of one or more rows of exactly `width` comma-separated numbers (same rules).
std::vector<std::vector<double>> read_csv_rows(const std::string& path, int width);

// The text read_states_csv reads back exactly: a comment line naming the model and the row
// layout, `comment` as a second comment line (if not empty), then one row per state with
// every number at 17 significant digits.
std::string format_states_csv(const Model& model, const std::vector<StateRow>& states,
                              const std::string& comment = "");

}  // namespace stiffgrad
