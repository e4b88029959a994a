// stiffgrad — MJCF loader, private: the orientation forms of MJCF and small quaternion math.
//
// MJCF lets a frame be given as quat, axisangle, euler, xyaxes or zaxis (at most one per
// element; MuJoCo documents "frame orientations"). All are converted to a unit quaternion
// (w x y z) at parse time, using the compiler's angle unit and eulerseq.
#pragma once

#include "mjcf/xml.hpp"

namespace stiffgrad::mjcf {

struct AngleSettings {
  bool degree = true;                 // compiler angle="degree" (MuJoCo's default)
  char eulerseq[3] = {'x', 'y', 'z'}; // compiler eulerseq (lowercase = rotating axes)
  double to_radians(double a) const;  // converts an angle read from the file
};

// Reads the orientation attributes of `e` into q (w x y z, unit). Returns false (q untouched)
// when the element has none; more than one form is an error, as in MuJoCo.
bool read_orientation(const Elem& e, const AngleSettings& angles, double q[4]);

// Minimal rotation taking +z onto `vec` (MuJoCo's zaxis and fromto frames). Returns false
// when vec is (numerically) zero.
bool z_to_quat(const double vec[3], double q[4]);

// Rotation matrix (row-major 3x3, columns are the frame axes) to unit quaternion.
void mat_to_quat(const double m[9], double q[4]);
void quat_to_mat(const double q[4], double m[9]);
void quat_mul(const double a[4], const double b[4], double out[4]);
// Normalizes in place; returns false for a zero quaternion.
bool quat_normalize(double q[4]);

}  // namespace stiffgrad::mjcf
