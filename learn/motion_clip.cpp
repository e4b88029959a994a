#include "learn/motion_clip.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace stiffgrad::learn {

namespace {

[[noreturn]] void fail(const std::string& path, int line, const std::string& what) {
  throw std::runtime_error("motion clip " + path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " +
                           what);
}

// r = a * b (w x y z)
void qmul(const double a[4], const double b[4], double r[4]) {
  r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

// Slerp from unit a to unit b on the shorter arc.
void slerp(const double a[4], const double b_in[4], double t, double r[4]) {
  double b[4], c = 0;
  for (int k = 0; k < 4; ++k) c += a[k] * b_in[k];
  const double sign = c < 0 ? -1.0 : 1.0;
  for (int k = 0; k < 4; ++k) b[k] = sign * b_in[k];
  c = std::min(1.0, sign * c);
  double wa = 1 - t, wb = t;
  const double theta = std::acos(c);
  if (theta > 1e-8) {
    const double s = std::sin(theta);
    wa = std::sin((1 - t) * theta) / s;
    wb = std::sin(t * theta) / s;
  }
  double n = 0;
  for (int k = 0; k < 4; ++k) {
    r[k] = wa * a[k] + wb * b[k];
    n += r[k] * r[k];
  }
  n = std::sqrt(n);
  for (int k = 0; k < 4; ++k) r[k] /= n;
}

}  // namespace

MotionClip::MotionClip(const std::string& path, int njoint) : path_(path), njoint_(njoint) {
  std::ifstream in(path);
  if (!in) fail(path, 0, "cannot open the file");
  const int ncol = 7 + njoint;
  std::string line;
  int lineno = 0;
  std::vector<double> row(static_cast<std::size_t>(ncol));
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
    int col = 0;
    const char* p = line.c_str();
    while (true) {
      char* end = nullptr;
      errno = 0;
      const double x = std::strtod(p, &end);
      if (end == p || errno == ERANGE || !std::isfinite(x))
        fail(path, lineno, "field " + std::to_string(col + 1) + " is not a finite number");
      if (col >= ncol) fail(path, lineno, "more than " + std::to_string(ncol) + " columns");
      row[static_cast<std::size_t>(col++)] = x;
      p = end;
      while (*p == ' ' || *p == '\t') ++p;
      if (*p == '\0') break;
      if (*p != ',') fail(path, lineno, "expected ',' after field " + std::to_string(col));
      ++p;
    }
    if (col != ncol)
      fail(path, lineno, std::to_string(col) + " columns, expected " + std::to_string(ncol));
    // x y z w -> w x y z, normalized
    const double qx = row[3], qy = row[4], qz = row[5], qw = row[6];
    const double n = std::sqrt(qw * qw + qx * qx + qy * qy + qz * qz);
    if (!(n > 1e-6)) fail(path, lineno, "null root quaternion");
    qpos_.insert(qpos_.end(), {row[0], row[1], row[2], qw / n, qx / n, qy / n, qz / n});
    qpos_.insert(qpos_.end(), row.begin() + 7, row.end());
    ++nframe_;
  }
  if (nframe_ < 2) fail(path, 0, "fewer than 2 frames");
}

void MotionClip::qpos(double s, double* out) const {
  const double f = std::clamp(s * kFps, 0.0, static_cast<double>(nframe_ - 1));
  int i = static_cast<int>(std::floor(f));
  if (i > nframe_ - 2) i = nframe_ - 2;
  const double t = f - i;
  const double* a = frame(i);
  const double* b = frame(i + 1);
  const int n = nq();
  for (int k = 0; k < n; ++k) out[k] = (1 - t) * a[k] + t * b[k];
  if (t == 0.0) {
    for (int k = 3; k < 7; ++k) out[k] = a[k];
  } else if (t == 1.0) {
    for (int k = 3; k < 7; ++k) out[k] = b[k];
  } else {
    slerp(a + 3, b + 3, t, out + 3);
  }
}

void MotionClip::qvel(double s, double* out) const {
  const double h = 1.0 / kFps;
  const double s0 = std::clamp(s - h, 0.0, duration()), s1 = std::clamp(s + h, 0.0, duration());
  const double sc = std::clamp(s, 0.0, duration());
  const int n = nq();
  std::vector<double> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n));
  qpos(s0, a.data());
  qpos(s1, b.data());
  qpos(sc, c.data());
  const double dt = s1 - s0;
  for (int k = 0; k < 3; ++k) out[k] = (b[k] - a[k]) / dt;
  for (int j = 0; j < njoint_; ++j) out[6 + j] = (b[7 + j] - a[7 + j]) / dt;
  // world angular velocity from the rotation between the two times, q1 = dq q0 (dq = q1 q0*),
  // then in the root frame at s: ω_local = q(s)* ω q(s)
  const double q0c[4] = {a[3], -a[4], -a[5], -a[6]};
  double dq[4];
  qmul(b.data() + 3, q0c, dq);
  if (dq[0] < 0)
    for (double& x : dq) x = -x;
  const double sn = std::sqrt(dq[1] * dq[1] + dq[2] * dq[2] + dq[3] * dq[3]);
  const double angle = 2 * std::atan2(sn, dq[0]);
  double w[4] = {0, 0, 0, 0};
  if (sn > 1e-300)
    for (int k = 0; k < 3; ++k) w[1 + k] = dq[1 + k] / sn * angle / dt;
  const double* qc = c.data() + 3;
  const double qcc[4] = {qc[0], -qc[1], -qc[2], -qc[3]};
  double tmp[4], wl[4];
  qmul(qcc, w, tmp);
  qmul(tmp, qc, wl);
  for (int k = 0; k < 3; ++k) out[3 + k] = wl[1 + k];
}

}  // namespace stiffgrad::learn
