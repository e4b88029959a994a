// stiffgrad — MJCF loader, private: mesh assets compiled as MuJoCo 2.2.2 compiles them
// (mjCMesh::Process, user_mesh.cc): the vertices moved into the mesh's own frame (centred at
// the centre of mass of its volume, axes along its principal axes of inertia), that frame's
// pose in the file's coordinates, and the mass properties of the volume.
#pragma once

#include <string>
#include <vector>

#include "mjcf/inertia.hpp"
#include "mjcf/mesh_io.hpp"
#include "mjcf/spec.hpp"

namespace stiffgrad::mjcf {

struct CompiledMesh {
  // 3 x nvert, in the mesh frame. float as MuJoCo keeps them (each step of the processing
  // rounds to float, so that the frame and the box below are computed from the same values).
  std::vector<float> vert;
  std::vector<int> face;  // 3 x nface
  double pos[3] = {0, 0,
                   0};  // the mesh frame in the file's coordinates (after refpos, refquat, scale)
  double quat[4] = {1, 0, 0, 0};
  double volume = 0;  // Σ of the faces' pyramid volumes about the centroid
  double boxsz[3] = {0, 0,
                     0};       // half-sizes of the box with the volume's principal moments per mass
  double aabb[3] = {0, 0, 0};  // max |v| per axis in the mesh frame (a mesh geom's size)
  bool exact =
      false;  // signed volumes (exactmeshinertia, inertia="exact"): its geoms' mass from `volume`
  // The convex hull's graph in MuJoCo 2.2.2's layout (mjCMesh::MakeGraph, qhull "Qt" on the
  // vertices as read): numvert, numface, vert_edgeadr[numvert], vert_globalid[numvert],
  // edge_localid[numvert + 3 numface] (each vertex's hull neighbours as local ids, -1 after
  // each), face_globalid[3 numface]. Empty for fewer than 4 vertices (collision then searches
  // every vertex) or when qhull fails; then hull_error says why, and a colliding geom fails.
  std::vector<int> graph;
  std::string hull_error;
};

// The convex hull graph of nvert float vertices (3 x nvert), as MuJoCo 2.2.2's MakeGraph builds
// it with qhull (options "qhull Qt", triangulated, vertex neighbours from the facets). Empty
// for fewer than 4 vertices. Throws std::runtime_error when qhull fails (flat or degenerate
// vertex sets).
// maxhullvert > -1 (MuJoCo 3): a hull of at most that many vertices (qhull "TA", as MuJoCo 3).
std::vector<int> convex_hull_graph(const std::vector<float>& vert, int maxhullvert = -1);

// Scales, re-centres and orients `data` (the file's vertices and triangles) as MuJoCo 2.2.2:
// refpos subtracted, refquat's inverse applied, scaled per axis (a left-handed scale flips the
// triangles' winding at read time, mesh_io does not: done here), the volume's centre of mass
// moved to the origin and its principal axes (descending moments) made the axes. `exact`: the
// compiler's exactmeshinertia (false in 2.2.2: every pyramid volume counted positive). Errors
// (degenerate area or volume, moments that violate the triangle inequality) name the mesh at
// `where`.
// `hull`: build the convex hull graph (compiler convexhull; always when there are no faces).
CompiledMesh compile_mesh(MeshData data, const MeshSpec& spec, bool exact, bool hull = true);

// The mass properties of a geom with this mesh (mjCGeom::GetVolume and SetInertia): the volume of
// the equivalent inertia box (8 Π boxsz, MuJoCo 2.2.2 without exactmeshinertia) or the mesh's own
// (mesh.exact), times the density, or the given mass; principal moments those of the box. pos and
// quat are left for the caller (the geom frame with the mesh frame accumulated).
GeomMass mesh_geom_mass(const CompiledMesh& mesh, double density, bool has_mass, double mass);

// mjCMesh::FitGeom without fitaabb: a primitive geom of `type` sized from the mesh's inertia box,
// scaled by `fitscale` (its frame is the mesh frame, as for a mesh geom). Returns false for a
// type that cannot be fitted.
bool fit_primitive_to_mesh(const CompiledMesh& mesh, GeomType type, double fitscale,
                           double size[3]);

}  // namespace stiffgrad::mjcf
