// How much memory `stiffgrad grad` needs, checked before anything large is allocated: a
// request beyond the machine's memory must be refused with its size, not end in bad_alloc.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "apps/cli/cli.hpp"
#include "stiffgrad/rollout.hpp"

namespace stiffgrad::cli {

GradMemory grad_memory(Simulator& sim, int steps, const BundleOptions& bundles) {
  const Model& m = sim.model();
  const double nenv = sim.nenv(), T = steps;
  // Checkpoint storage grows by one state (with constraints, the solver's warm start too) and
  // one control per step; everything else in the Rollout (adjoint workspace, replay buffer) does
  // not depend on the horizon.
  const double one_step = static_cast<double>(Rollout(sim, 1).bytes_per_env());
  const bool warm = sim.capacity().contacts > 0 || sim.capacity().rows > 0;
  const double per_step =
      static_cast<double>(m.nq + m.nv + (warm ? m.nv : 0) + m.nu) * static_cast<double>(sim.real_size());
  GradMemory g;
  g.simulator = static_cast<double>(sim.bytes());
  g.rollout = nenv * (one_step + (T - 1) * per_step);
  if (bundles.enabled) {
    // branch states at every time index, perturbations per step, starts and running adjoints
    // (backends/cpu/rollout_cpu.cpp's pool): pool x B x ((T + 1)(nq + nv [+ nv]) + 2 T nv + 2 (nq + nv [+ nv]))
    const double pool = bundles.pool > 0 ? std::min<double>(bundles.pool, nenv) : nenv;
    const double state = m.nq + m.nv + (warm ? m.nv : 0);
    g.rollout += pool * bundles.branches * ((T + 1) * state + 2 * T * m.nv + 2 * state) *
                 static_cast<double>(sim.real_size());
  }
  g.host_arrays = sizeof(double) * nenv * ((T + 1) * (m.nq + m.nv) + T * m.nu + 2.0 * m.nv);
  return g;
}

MemoryLimit available_memory() {
  // STIFFGRAD_MEMORY_LIMIT (bytes) caps the figure: to share a machine, and for tests of the
  // refusal that must not depend on the machine's memory
  if (const char* cap = std::getenv("STIFFGRAD_MEMORY_LIMIT")) {
    char* end = nullptr;
    const double bytes = std::strtod(cap, &end);
    if (end != cap && *end == '\0' && bytes > 0) return {bytes, "STIFFGRAD_MEMORY_LIMIT"};
  }
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key;
    unsigned long long kib = 0;
    if (ss >> key >> kib && key == "MemAvailable:") return {1024.0 * static_cast<double>(kib), "MemAvailable in /proc/meminfo"};
  }
  return {static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE)), "physical memory"};
}

namespace {

std::string bytes_text(double bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.0f bytes = %.1f GiB", bytes, bytes / (1024.0 * 1024.0 * 1024.0));
  return b;
}

}  // namespace

void refuse_above(const GradMemory& need, const MemoryLimit& limit, int steps, int nenv) {
  if (need.total() <= limit.bytes) return;
  throw std::runtime_error("--steps " + std::to_string(steps) + " for " + std::to_string(nenv) +
                           " state(s) needs " + bytes_text(need.total()) + " (checkpoints and adjoint workspace " +
                           bytes_text(need.rollout) + "; gradient arrays " + bytes_text(need.host_arrays) +
                           "), more than the " + bytes_text(limit.bytes) + " available (" + limit.source +
                           "); use fewer steps or states");
}

}  // namespace stiffgrad::cli
