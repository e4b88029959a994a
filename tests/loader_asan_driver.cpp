// Driver for the AddressSanitizer/UBSan build of the MJCF loader (target stiffgrad_loader_asan,
// ctest label "asan"). Usage:
//   stiffgrad_loader_asan --corpus DIR ... --model FILE ...
// Every .xml under a corpus DIR must load or throw MjcfError (anything else, or a sanitizer
// report, fails); every --model FILE must load.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "stiffgrad/mjcf.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  int failures = 0, loaded = 0, rejected = 0;
  auto try_load = [&](const std::string& path, bool must_load) {
    try {
      auto m = stiffgrad::load_mjcf(path);
      ++loaded;
      if (m->nbody < 1) {
        std::printf("FAIL %s: model without world body\n", path.c_str());
        ++failures;
      }
    } catch (const stiffgrad::MjcfError& e) {
      ++rejected;
      if (must_load) {
        std::printf("FAIL %s: %s\n", path.c_str(), e.what());
        ++failures;
      }
    } catch (const std::exception& e) {
      std::printf("FAIL %s: unexpected exception: %s\n", path.c_str(), e.what());
      ++failures;
    }
  };
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], arg = argv[i + 1];
    if (flag == "--corpus") {
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.path().extension() == ".xml") try_load(entry.path().string(), false);
    } else if (flag == "--model") {
      if (fs::exists(arg)) try_load(arg, true);
      else std::printf("skip missing %s\n", arg.c_str());
    } else {
      std::printf("unknown argument %s\n", flag.c_str());
      return 2;
    }
  }
  std::printf("loader_asan: %d loaded, %d rejected with MjcfError, %d failures\n", loaded, rejected, failures);
  return failures == 0 ? 0 : 1;
}
