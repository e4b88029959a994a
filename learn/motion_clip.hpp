// A retargeted motion clip (data/motions/lafan1_g1: 30 fps CSV, no header, one frame
// per line: root x y z, root quaternion x y z w, then the joint angles in the model's joint
// order), read at run time (the data's licence forbids copying it into the project), and the
// reference state it defines at any time.
#pragma once

#include <string>
#include <vector>

namespace stiffgrad::learn {

class MotionClip {
 public:
  static constexpr double kFps = 30.0;

  // Reads `path`; `njoint` joint columns follow the 7 root columns (G1: 29). Throws
  // std::runtime_error naming the file (and the line, for a malformed line: wrong column count
  // or a field that is not a finite number) when the file is missing, malformed or has fewer
  // than 2 frames.
  explicit MotionClip(const std::string& path, int njoint = 29);

  const std::string& path() const { return path_; }
  int frames() const { return nframe_; }
  int njoint() const { return njoint_; }
  int nq() const { return 7 + njoint_; }
  int nv() const { return 6 + njoint_; }
  // Seconds from the first to the last frame: (frames - 1) / 30.
  double duration() const { return (nframe_ - 1) / kFps; }

  // Frame i as MuJoCo qpos (nq): root position, unit root quaternion w x y z, joint angles.
  const double* frame(int i) const { return qpos_.data() + static_cast<std::size_t>(i) * nq(); }

  // Reference qpos (nq) at time s (seconds, clamped to [0, duration]): positions and joint
  // angles interpolated linearly between the neighbouring frames, the root quaternion by slerp
  // on the shorter arc (the result is unit). At a frame time it is that frame.
  void qpos(double s, double* out) const;
  // Reference qvel (nv) at time s: central differences of qpos over s ± 1/30 s (one-sided,
  // over the part inside the clip, at the ends). Root linear velocity in the world frame, root
  // angular velocity in the root frame at s (MuJoCo's free-joint convention), joint velocities.
  void qvel(double s, double* out) const;

 private:
  std::string path_;
  int njoint_ = 0;
  int nframe_ = 0;
  std::vector<double> qpos_;  // nframe x nq
};

}  // namespace stiffgrad::learn
