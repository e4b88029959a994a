// Running the built `stiffgrad` binary (SG_CLI) from tests: exit status, stdout, stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Run {
  int status;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Unique per process: ctest runs the tests of this file as separate, concurrent processes.
std::string unique_temp(const std::string& name) {
  return ::testing::TempDir() + "/sg_cli_" + std::to_string(getpid()) + "_" + name;
}

// `env` is prefixed to the command line (e.g. "VAR=1 ").
Run run_cli(const std::string& args, const std::string& env = "") {
  const std::string err_path = unique_temp("stderr.txt");
  const std::string cmd = env + std::string(SG_CLI) + " " + args + " 2>" + err_path;
  Run r{0, "", ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  return r;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = unique_temp(name);
  std::ofstream(path) << text;
  return path;
}

// Pulls the numbers of `"key": [ ... ]` out of one JSON line.
std::vector<double> json_array(const std::string& line, const std::string& key) {
  const auto at = line.find("\"" + key + "\": [");
  if (at == std::string::npos) return {};
  const auto b = line.find('[', at) + 1, e = line.find(']', b);
  std::vector<double> out;
  std::stringstream ss(line.substr(b, e - b));
  std::string tok;
  while (std::getline(ss, tok, ',')) out.push_back(std::strtod(tok.c_str(), nullptr));
  return out;
}

}  // namespace
