// Option parsing and output shared by the commands of the `stiffgrad` command line.
#include <fstream>

#include "apps/cli/cli.hpp"
#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::cli {

const char* const kStepsRule =
    "N (--steps) counts control steps and must be from 1 to 1000000000 for every command.\n";

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
