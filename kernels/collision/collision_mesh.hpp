// Mesh geoms in the narrow phase, as MuJoCo 2.2.2 collides them (engine_collision_convex.c): a
// mesh is the convex hull of its vertices. Its support point in a direction is the vertex with
// the largest projection, found by hill-climbing the hull graph from the hull's first vertex
// (or, without a graph, by searching every vertex), as mjccd_support does; every pair with a
// mesh but the plane goes through the general convex routine (MPR, collision_convex.hpp) on that
// support. A plane against a mesh (mjc_PlaneConvex): the deepest vertex, then up to two of its
// hull neighbours within the margin, each at least 0.3 rbound from the first.
//
// Derivatives (kernels/collision/collision_adjoint.hpp runs this on dual numbers): the chosen
// vertices are found by comparing values, so the dual pass picks the same ones; a contact is
// then smooth in the two poses (a vertex is a constant of the model), and its derivative is that
// of the vertex set taken: one-sided where the deepest vertex changes.
#pragma once

#include "kernels/collision/collision_primitive.hpp"

namespace stiffgrad::kern {

namespace coll {

// mjc_PlaneConvex's constants (engine_collision_convex.c): contacts per plane-mesh pair, and the
// smallest distance of an added vertex from the first, relative to the mesh's bounding radius.
constexpr int kMaxPlaneMeshContacts = 3;
constexpr double kPlaneMeshTolerance = 0.3;

// Vertex `global` of a mesh geom, in its frame.
template <class Real>
SG_HD SG_INLINE void mesh_vertex(const GeomPose<Real>& g, int global, Real out[3]) {
  for (int i = 0; i < 3; ++i) out[i] = Real(sg_float_from_bits(g.mesh_vert[3 * global + i]));
}

// <vertex global, dir> with dir in the mesh frame.
template <class Real>
SG_HD SG_INLINE Real mesh_vertex_dot(const GeomPose<Real>& g, int global, const Real dir[3]) {
  Real v[3];
  mesh_vertex(g, global, v);
  return dir[0] * v[0] + dir[1] * v[1] + dir[2] * v[2];
}

// The hull graph's parts (Model::mesh_graph): numvert, then vert_edgeadr, vert_globalid,
// edge_localid.
struct MeshGraph {
  int numvert;
  const int* vert_edgeadr;
  const int* vert_globalid;
  const int* edge_localid;
};
SG_HD SG_INLINE MeshGraph mesh_graph_of(const int* graph) {
  const int n = graph[0];
  return MeshGraph{n, graph + 2, graph + 2 + n, graph + 2 + 2 * n};
}

// The support vertex of a mesh geom in direction dir (mesh frame, any length): the largest
// <v, dir>, the first found on ties. Returns its global id; *local gets its id in the hull graph
// (or the global id when there is no graph), MuJoCo's mjtCCD::meshindex.
template <class Real>
SG_HD SG_INLINE int mesh_support_vertex(const GeomPose<Real>& g, const Real dir[3], int* local) {
  if (g.mesh_graph == nullptr) {
    int best = -1;
    Real best_dot = Real(-1e10);
    for (int i = 0; i < g.mesh_nvert; ++i) {
      const Real v = mesh_vertex_dot(g, i, dir);
      if (v > best_dot) best_dot = v, best = i;
    }
    *local = best;
    return best;
  }
  const MeshGraph h = mesh_graph_of(g.mesh_graph);
  int best = 0;
  Real best_dot = mesh_vertex_dot(g, h.vert_globalid[0], dir);
  // hill-climb: move to a better neighbour until none is better (a convex hull has no other
  // local maximum)
  for (bool moved = true; moved;) {
    moved = false;
    for (int e = h.vert_edgeadr[best], next; (next = h.edge_localid[e]) >= 0; ++e) {
      const Real v = mesh_vertex_dot(g, h.vert_globalid[next], dir);
      if (v > best_dot) best_dot = v, best = next, moved = true;
    }
  }
  *local = best;
  return h.vert_globalid[best];
}

// One more plane-mesh contact at vertex `vertex` (mesh frame) unless it lies within
// kPlaneMeshTolerance rbound of the first contact's point (addplanemesh). Returns 1 if added.
template <class Real>
SG_HD SG_INLINE int add_plane_mesh_contact(const GeomPose<Real>& plane, const Real normal[3],
                                           const GeomPose<Real>& mesh, const Real vertex[3],
                                           const Real first[3], Real rbound, Contact<Real>& c) {
  Real p[3];
  mat_vec3(p, mesh.mat, vertex);
  p[0] += mesh.pos[0];
  p[1] += mesh.pos[1];
  p[2] += mesh.pos[2];
  Real gap[3];
  sub3(gap, p, first);
  if (sg_sqrt(dot3(gap, gap)) < Real(kPlaneMeshTolerance) * rbound) return 0;
  Real dif[3];
  sub3(dif, p, plane.pos);
  c.dist = dot3(normal, dif);
  for (int i = 0; i < 3; ++i) c.pos[i] = p[i] - Real(0.5) * c.dist * normal[i];
  copy3(c.frame, normal);
  c.frame[3] = Real(0);
  c.frame[4] = Real(0);
  c.frame[5] = Real(0);
  return 1;
}

}  // namespace coll

// Plane (g1) against a mesh (g2): mjc_PlaneConvex. The deepest vertex along -normal gives the
// first contact if within the margin; then the vertices beyond the margin-shifted plane among
// the first's hull neighbours (every vertex when the mesh has no graph), up to three contacts.
template <class Real>
SG_HD int collide_plane_mesh(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                             Contact<Real>* out) {
  const Real normal[3] = {g1.mat[2], g1.mat[5], g1.mat[8]};
  // the search direction -normal in the mesh frame
  const Real down[3] = {-normal[0], -normal[1], -normal[2]};
  Real dir[3];
  coll::mat_t_vec3(dir, g2.mat, down);
  int local = -1;
  const int deepest = coll::mesh_support_vertex(g2, dir, &local);
  Real v[3], p[3];
  coll::mesh_vertex(g2, deepest, v);
  mat_vec3(p, g2.mat, v);
  p[0] += g2.pos[0];
  p[1] += g2.pos[1];
  p[2] += g2.pos[2];
  Real dif[3];
  sub3(dif, p, g1.pos);
  const Real dist = dot3(normal, dif);
  if (dist > margin) return 0;
  Contact<Real>& c0 = out[0];
  c0.dist = dist;
  for (int i = 0; i < 3; ++i) c0.pos[i] = p[i] - Real(0.5) * dist * normal[i];
  copy3(c0.frame, normal);
  c0.frame[3] = Real(0);
  c0.frame[4] = Real(0);
  c0.frame[5] = Real(0);

  // the vertices deeper than the plane shifted out by the margin: <v, dir> > threshold
  Real centre[3];
  sub3(centre, g2.pos, g1.pos);
  const Real threshold = dot3(normal, centre) - margin;
  const Real rbound = sg_sqrt(dot3(g2.size, g2.size));  // MuJoCo's rbound of a mesh geom
  const Real first[3] = {c0.pos[0], c0.pos[1], c0.pos[2]};
  int count = 1;
  if (g2.mesh_graph == nullptr) {
    for (int i = 0; i < g2.mesh_nvert && count < coll::kMaxPlaneMeshContacts; ++i) {
      if (!(coll::mesh_vertex_dot(g2, i, dir) > threshold) || i == local) continue;
      coll::mesh_vertex(g2, i, v);
      count += coll::add_plane_mesh_contact(g1, normal, g2, v, first, rbound, out[count]);
    }
  } else {
    const coll::MeshGraph h = coll::mesh_graph_of(g2.mesh_graph);
    for (int e = h.vert_edgeadr[local], next;
         (next = h.edge_localid[e]) >= 0 && count < coll::kMaxPlaneMeshContacts; ++e) {
      const int global = h.vert_globalid[next];
      if (!(coll::mesh_vertex_dot(g2, global, dir) > threshold)) continue;
      coll::mesh_vertex(g2, global, v);
      count += coll::add_plane_mesh_contact(g1, normal, g2, v, first, rbound, out[count]);
    }
  }
  return count;
}

}  // namespace stiffgrad::kern
