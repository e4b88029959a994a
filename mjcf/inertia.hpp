// stiffgrad — MJCF loader, private: geom mass properties and body inertia.
#pragma once

#include <vector>

#include "mjcf/spec.hpp"

namespace stiffgrad::mjcf {

// Mass properties of one geom about its own centre, in its own frame (principal axes).
struct GeomMass {
  double mass = 0;
  double inertia[3] = {0, 0, 0};
  double pos[3] = {0, 0, 0};   // in the body frame
  double quat[4] = {1, 0, 0, 0};
};

// Solid-body volume and principal moments of a primitive geom of uniform density, with the
// geom's compiled size (half-sizes; capsule/cylinder: radius, half-length). For a given
// `mass` (>= 0) the density is mass/volume, otherwise `density`.
GeomMass geom_mass(GeomType type, const double size[3], double density, bool has_mass, double mass);

struct BodyInertia {
  double mass = 0;
  double ipos[3] = {0, 0, 0};
  double iquat[4] = {1, 0, 0, 0};
  double inertia[3] = {0, 0, 0};
};

// Combines geoms into the body's inertia about the combined centre of mass and diagonalizes
// it (MuJoCo: a single geom is copied as is; several are summed with the parallel-axis
// theorem, then the principal axes are found). `where` is used for errors.
BodyInertia combine_geoms(const std::vector<GeomMass>& geoms, const Elem& where);

// Principal moments (descending) and the frame rotation R (iquat) with I = R diag(m) R^T, from
// a symmetric matrix given as xx yy zz xy xz yz. Returns false if not positive semi-definite.
bool diagonalize(const double full[6], double moments[3], double quat[4]);

// MuJoCo's check that principal moments can belong to a real body: A + B >= C for every
// permutation. `tol` is a relative slack for moments that come out of an eigen-solver.
bool satisfies_triangle(const double m[3], double tol);

}  // namespace stiffgrad::mjcf
