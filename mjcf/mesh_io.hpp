// stiffgrad — MJCF loader, private: reading mesh files (STL, OBJ) into vertices and triangles.
//
// The reading follows MuJoCo 2.2.2's, so that a <mesh file=...> gives the vertices MuJoCo
// gives: coordinates are float32 widened to double (MuJoCo stores float), STL triangles share
// no vertex so exactly equal ones are merged, OBJ vertices are kept as listed. What MuJoCo
// would reject or silently misread (truncated files, indices out of range, non-finite
// coordinates) is an error naming the file, and the line for the text formats.
#pragma once

#include <string>
#include <vector>

namespace stiffgrad::mjcf {

struct MeshData {
  std::vector<double> vert;  // nvert x 3, as read (no scaling or centering)
  std::vector<int> face;     // nface x 3, 0-based indices into vert, triangles
};

// Reads a mesh file chosen by its extension (case-insensitive): .stl (binary or ASCII) or .obj.
//   STL: a file is binary when its size is 84 + 50 * (its triangle count), whatever its header
//        says (binary headers may start with "solid"); otherwise it must be ASCII STL.
//        Bitwise-equal vertices are merged, in order of first appearance.
//   OBJ: "v x y z [w]" (a w or a vertex colour after x y z is ignored) and "f" with 1-based or
//        negative (from the end) indices in any of the forms a, a/b, a/b/c, a//c; polygons
//        become fans (a,b,c), (a,c,d), ...; other statements (vn, vt, o, g, s, usemtl, mtllib,
//        ...), comments and blank lines are skipped. Vertices are not merged.
// Throws MjcfError (a std::runtime_error, "FILE[:LINE]: message") when the file is missing or
// unreadable, has an unknown extension, is malformed or truncated, has an index out of range
// or a non-finite coordinate, or has no face.
MeshData read_mesh_file(const std::string& path);

}  // namespace stiffgrad::mjcf
