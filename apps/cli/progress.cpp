#include "apps/cli/progress.hpp"

#include <unistd.h>

#include <cstdlib>

namespace stiffgrad {

namespace {

constexpr double kDefaultDelayS = 2.0;
constexpr double kRedrawS = 0.2;

// STIFFGRAD_PROGRESS_AFTER_S overrides the 2 s delay (tests use 0).
double delay_from_environment() {
  const char* s = std::getenv("STIFFGRAD_PROGRESS_AFTER_S");
  if (!s || !*s) return kDefaultDelayS;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  return (*end == '\0' && v >= 0) ? v : kDefaultDelayS;
}

}  // namespace

Progress::Progress(std::string what, long long total, const char* unit)
    : Progress(std::move(what), total, unit, stderr, isatty(fileno(stderr)) != 0, delay_from_environment()) {}

Progress::Progress(std::string what, long long total, const char* unit, std::FILE* out, bool enabled,
                   double delay_s)
    : what_(std::move(what)), total_(total), unit_(unit), out_(out), enabled_(enabled), delay_s_(delay_s) {}

void Progress::update(long long done) {
  done_ = done;
  if (!enabled_ || finished_) return;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  if (elapsed < delay_s_ || (shown_ && elapsed - last_draw_ < kRedrawS)) return;
  draw(done, elapsed);
}

void Progress::draw(long long done, double elapsed) {
  const double frac = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  std::fprintf(out_, "\r%s: %lld/%lld %s (%.0f%%), %.1f s", what_.c_str(), done, total_, unit_, 100.0 * frac,
               elapsed);
  if (frac > 0 && frac < 1) std::fprintf(out_, ", ~%.0f s left", elapsed * (1.0 - frac) / frac);
  std::fprintf(out_, "\033[K");  // clear what a longer previous line left
  std::fflush(out_);
  last_draw_ = elapsed;
  shown_ = true;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!shown_) return;
  draw(done_, std::chrono::duration<double>(Clock::now() - start_).count());
  std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace stiffgrad
