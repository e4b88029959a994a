// stiffgrad — progress of long command-line runs, on a terminal only.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace stiffgrad {

// Shows "what: done/total unit (pct), elapsed, ~left" on one rewritten line of stderr once a
// run has lasted `delay_s` (default 2 s, or the environment's STIFFGRAD_PROGRESS_AFTER_S),
// and only when stderr is a terminal: piped or redirected output never carries it. Redraws
// at most every 0.2 s; the last line is completed when the Progress is finished or destroyed.
class Progress {
 public:
  Progress(std::string what, long long total, const char* unit = "steps");
  // Explicit sink and switch, for tests.
  Progress(std::string what, long long total, const char* unit, std::FILE* out, bool enabled, double delay_s);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(long long done);
  // Prints the final count with a newline if anything was shown; idempotent.
  void finish();
  // Whether a line has been shown (a later phase can then announce itself).
  bool shown() const { return shown_; }

 private:
  using Clock = std::chrono::steady_clock;
  void draw(long long done, double elapsed);

  std::string what_;
  long long total_;
  const char* unit_;
  std::FILE* out_;
  bool enabled_;
  double delay_s_;
  Clock::time_point start_ = Clock::now();
  double last_draw_ = -1.0;
  long long done_ = 0;
  bool shown_ = false;
  bool finished_ = false;
};

}  // namespace stiffgrad
