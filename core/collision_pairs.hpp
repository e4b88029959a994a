// stiffgrad — candidate geom pairs for collision, compiled once per model.
#pragma once

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// Fills Model::ncpair and cpair_* from the geoms, the <pair>s, the <exclude>s, body_weldid and
// opt (collision mode, filterparent, override), in MuJoCo 2.2.2's contact order (facts §1).
// Empty when contacts cannot occur (contact or constraint flag off, fewer than 2 bodies).
// Throws std::invalid_argument when a candidate pair involves a mesh or a height field (no
// narrow phase here); the MJCF loader refuses those earlier with the file and line.
void compile_collision_pairs(Model& m);

// The most contacts the narrow phase returns for one pair of geom types, in either order;
// 0 when MuJoCo 2.2.2 has no routine for them (plane-plane, anything with a height field).
int max_contacts(GeomType a, GeomType b);

}  // namespace stiffgrad
