// stiffgrad — MJCF loading.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// Thrown for malformed or unsupported input. what() reads "FILE:LINE: message", naming the
// file (an included file where the problem is there) and the line of the offending element.
class MjcfError : public std::runtime_error {
 public:
  MjcfError(std::string file, int line, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string message_;
};

struct LoadNotes {
  // One-line notes about accepted-but-reinterpreted input, e.g. the MJCF asked for the RK4
  // integrator ("file:line: note: integrator RK4 requested; ...").
  std::vector<std::string> notes;
};

// Parse and compile an MJCF file into an immutable Model. Throws MjcfError on bad input;
// never crashes. `notes`, when given, receives the one-line notes.
std::shared_ptr<const Model> load_mjcf(const std::string& path, LoadNotes* notes = nullptr);

// Same, from an XML string; `virtual_path` names the source in errors and is the base
// directory for <include file=...>.
std::shared_ptr<const Model> load_mjcf_string(const std::string& xml,
                                              const std::string& virtual_path,
                                              LoadNotes* notes = nullptr);

}  // namespace stiffgrad
