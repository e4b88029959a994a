// Output of the paper-reproduction experiments (bench_diffmjx_*, bench_bcg_*, bench_shac_*): an
// output folder, CSV files with a header row, and a figure drawn by gnuplot from a script written
// beside the CSV.
//
// The folder is `--out DIR`, or default_out_dir(EXPERIMENT) = `out/experiments/EXPERIMENT/` under
// the current working directory (out/ is git-ignored: bulky outputs stay out of the source tree).
// scripts/experiments.py runs the experiments of experiments/*.json with --out given.
// Figures are optional: without gnuplot on the PATH the script and the CSV are still written
// and a note says so; the experiment's exit status never depends on the plotting.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace stiffgrad::bench {

// The folder a bench writes to without --out: out/experiments/<experiment>.
inline std::string default_out_dir(const std::string& experiment) {
  return "out/experiments/" + experiment;
}

class ExperimentOutput {
 public:
  explicit ExperimentOutput(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& file) const { return dir_ + "/" + file; }

  // Creates the folder (and its parents); throws when that is impossible.
  void create() const {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_))
      throw std::runtime_error("cannot create the output folder '" + dir_ + "': " + ec.message());
  }

  // Writes <dir>/<name>.gp and runs gnuplot on it (from the current working directory, so the
  // script names files as path() does). Returns true when <dir>/<name>.png was drawn.
  bool plot(const std::string& name, const std::string& script) const {
    const std::string gp = path(name + ".gp"), png = path(name + ".png");
    {
      std::ofstream f(gp);
      f << script;
      if (!f) {
        std::fprintf(stderr, "note: could not write %s; no figure\n", gp.c_str());
        return false;
      }
    }
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
      std::printf("note: gnuplot not found on the PATH: %s written, %s not drawn "
                  "(install gnuplot-nox and run `gnuplot %s`)\n", gp.c_str(), png.c_str(), gp.c_str());
      return false;
    }
    std::error_code ec;
    std::filesystem::remove(png, ec);  // so that a stale figure never passes for a new one
    const std::string cmd = "gnuplot '" + gp + "'";
    if (std::system(cmd.c_str()) != 0 || !std::filesystem::exists(png)) {
      std::printf("note: `%s` failed; %s not drawn\n", cmd.c_str(), png.c_str());
      return false;
    }
    std::printf("wrote %s (from %s)\n", png.c_str(), gp.c_str());
    return true;
  }

  // The png terminal line every script starts with.
  std::string terminal(const std::string& name, int width = 1000, int height = 650) const {
    return "set terminal pngcairo size " + std::to_string(width) + "," + std::to_string(height) +
           " enhanced font 'Sans,10'\nset output '" + path(name + ".png") + "'\n";
  }

 private:
  std::string dir_;
};

// A CSV file with a header row; values are written with full double precision.
class CsvWriter {
 public:
  CsvWriter(const std::string& file, const std::vector<std::string>& header) : file_(file), f_(file) {
    if (!f_) throw std::runtime_error("cannot write " + file);
    for (std::size_t i = 0; i < header.size(); ++i) f_ << (i ? "," : "") << header[i];
    f_ << "\n";
  }
  // One row; each cell already formatted (see num()).
  void row(const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) f_ << (i ? "," : "") << cells[i];
    f_ << "\n";
  }
  static std::string num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  }
  const std::string& file() const { return file_; }
  ~CsvWriter() {
    f_.close();
    if (f_) std::printf("wrote %s\n", file_.c_str());
  }

 private:
  std::string file_;
  std::ofstream f_;
};

}  // namespace stiffgrad::bench
