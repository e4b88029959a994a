// Types shared by the narrow phase (kernels/collision_*.hpp) and the constraint builder: a geom's
// world pose and a contact, in MuJoCo 2.2.2's conventions (docs/references/mujoco-2.2.2-constraints.md
// §1-2). Plain fixed-size structs: they live in registers or local memory on the device.
#pragma once

#include "kernels/base/config.hpp"

namespace stiffgrad::kern {

// Geom type ids, equal to stiffgrad::GeomType / MuJoCo's mjtGeom. MuJoCo orders a pair so that
// type(geom1) <= type(geom2) (plane < hfield < sphere < capsule < ellipsoid < cylinder < box).
enum : int {
  kGeomPlane = 0, kGeomHField = 1, kGeomSphere = 2, kGeomCapsule = 3, kGeomEllipsoid = 4,
  kGeomCylinder = 5, kGeomBox = 6, kGeomMesh = 7
};

// A geom placed in the world (or in any common frame: the narrow phase only uses differences).
//   pos   centre (3)
//   mat   rotation, row-major 3x3: column k is the geom's local axis k in the world frame
//   size  MuJoCo's geom_size: sphere (r), capsule (r, half-length), cylinder (r, half-height),
//         ellipsoid (3 semi-axes), box (3 half-sizes), plane (ignored: infinite, normal = local z),
//         mesh (the largest |vertex| per axis: MuJoCo's mesh aabb)
//   mesh_vert, mesh_nvert, mesh_graph  a mesh geom's vertices in its frame (float bit patterns,
//         3 x mesh_nvert) and its convex-hull graph (Model::mesh_graph's layout, or null: every
//         vertex is searched); null / 0 for other geoms. Constants of the model: a dual-number
//         pose shares them with its primal.
template <class Real>
struct GeomPose {
  int type;
  Real pos[3];
  Real mat[9];
  Real size[3];
  const int* mesh_vert;
  const int* mesh_graph;
  int mesh_nvert;
};

// One contact as MuJoCo reports it (mjContact's geometric part):
//   dist   signed distance, < 0 when penetrating
//   pos    midpoint between the two surface points
//   frame  rows (normal, tangent1, tangent2), row-major 3x3; the normal points from geom1 to
//          geom2 (a positive normal force pushes geom2 along +normal). The narrow phase fills
//          the normal (frame[0..2]) and, for plane-capsule only, the prefilled tangent
//          frame[3..5] (the capsule axis); make_contact_frame completes the frame.
template <class Real>
struct Contact {
  Real dist;
  Real pos[3];
  Real frame[9];
};

// Largest number of contacts any narrow-phase routine returns for one geom pair (box-box: 9
// observed in MuJoCo 2.2.2, see the facts). Callers size their buffers with it.
constexpr int kMaxContactsPerPair = 9;

}  // namespace stiffgrad::kern
