// stiffgrad — MJCF loader: mesh assets (mjcf/mesh.hpp).
//
// The processing follows MuJoCo 2.2.2's mjCMesh::Process (read for its formulas; this is our
// own code) including its arithmetic: vertices are float and each step stores float, the face
// centres and edge vectors are float sums, the rest double. For every triangle (D, E, F) with
// area a, unit normal n and centre c = (D + E + F)/3:
//   centroid of the surface   f = Σ a c / Σ a
//   volume                    V = Σ v,  v = a (c − f)·n / 3   (|v| without exactmeshinertia)
//   centre of mass            C = Σ v (3c/4 + f/4) / V
//   second moments about C    P_jk = Σ v/20 (2(D_j D_k + E_j E_k + F_j F_k) + D_j E_k + D_k E_j
//                                             + D_j F_k + D_k F_j + E_j F_k + E_k F_j)
//                             with v recomputed about C (the vertices moved there first)
//   inertia per density       I = [[P11+P22, −P01, −P02], [., P00+P22, −P12], [., ., P00+P11]]
// Its principal axes (descending moments) are the mesh frame; the box with the same moments
// per volume has half-sizes boxsz_i = √(6 (λ_j + λ_k − λ_i) / V) / 2.
//
// Differences from MuJoCo, measured by tests/test_mesh_vs_mujoco.cpp: the eigendecomposition is
// Eigen's (MuJoCo's mju_eig3 stops at its own tolerance), so a frame can differ by rounding, and
// by a symmetry of the mesh where moments repeat (a cube); the world-frame geometry and the mass
// properties agree to rounding.
#include "mjcf/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <stdexcept>

extern "C" {
#include <libqhull_r/qhull_ra.h>
}

namespace stiffgrad::mjcf {
namespace {

constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL

// Area, unit normal and centre of a triangle, as MuJoCo computes them (the sums in float).
double area_normal_centre(const float* v1, const float* v2, const float* v3, double n[3],
                          double c[3]) {
  for (int i = 0; i < 3; ++i) c[i] = (v1[i] + v2[i] + v3[i]) / 3;
  const double b[3] = {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]};
  const double d[3] = {v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2]};
  n[0] = b[1] * d[2] - b[2] * d[1];
  n[1] = b[2] * d[0] - b[0] * d[2];
  n[2] = b[0] * d[1] - b[1] * d[0];
  const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (len < kMinVal) return 0;  // a degenerate face adds nothing
  for (int i = 0; i < 3; ++i) n[i] /= len;
  return len / 2;
}

}  // namespace

// qhull reports errors by longjmp to qh->errexit; nothing with a destructor may live between the
// setjmp and a qhull call, so the qhull work is in this plain function and the C++ work outside.
// Returns 0 on success (graph filled), else qhull's exit code (error text in `err`).
static int qhull_graph(qhT* qh, double* points, int nvert, char* options, FILE* err,
                       std::vector<int>* graph, int* bad_vertex) {
  qh_zero(qh, err);
  qh_init_A(qh, stdin, stdout, err, 0, nullptr);
  const int code = setjmp(qh->errexit);
  if (code != 0) return code;
  qh->NOerrexit = False;
  qh_initflags(qh, options);
  qh_init_B(qh, points, nvert, 3, False);
  qh_qhull(qh);
  qh_triangulate(qh);
  qh_vertexneighbors(qh);
  const int numvert = qh->num_vertices, numface = qh->num_facets;
  std::vector<int>& g = *graph;
  g.assign(static_cast<std::size_t>(2 + 3 * numvert + 6 * numface), -1);
  g[0] = numvert;
  g[1] = numface;
  int* vert_edgeadr = g.data() + 2;
  int* vert_globalid = g.data() + 2 + numvert;
  int* edge_localid = g.data() + 2 + 2 * numvert;
  int* face_globalid = g.data() + 2 + 3 * numvert + 3 * numface;
  int i = 0, adr = 0;
  vertexT* vertex;
  FORALLvertices {
    const int pid = qh_pointid(qh, vertex->point);
    vert_edgeadr[i] = adr;
    vert_globalid[i] = pid;
    // the other vertices of the facets around this one, each once, in qhull's order
    const int start = adr;
    facetT *facet, **facetp;
    FOREACHfacet_(vertex->neighbors) {
      vertexT *other, **otherp;
      int corners = 0;
      FOREACHsetelement_(vertexT, facet->vertices, other) {
        ++corners;
        const int pid1 = qh_pointid(qh, other->point);
        if (pid1 == pid) continue;
        bool seen = false;
        for (int j = start; j < adr && !seen; ++j) seen = edge_localid[j] == pid1;
        if (!seen) edge_localid[adr++] = pid1;
      }
      if (corners != 3) *bad_vertex = pid;
    }
    edge_localid[adr++] = -1;
    ++i;
  }
  if (adr != numvert + 3 * numface) *bad_vertex = -2;
  int f = 0;
  facetT* facet;
  FORALLfacets {
    // MuJoCo's orientation fix: swap the first two corners of a top-oriented facet
    int order[3] = {0, 1, 2};
    if (facet->toporient) order[0] = 1, order[1] = 0;
    int k = 0;
    vertexT *corner, **cornerp;
    FOREACHsetelement_(vertexT, facet->vertices, corner) {
      if (k < 3) face_globalid[f + order[k]] = qh_pointid(qh, corner->point);
      ++k;
    }
    f += 3;
  }
  qh->NOerrexit = True;
  return 0;
}

std::vector<int> convex_hull_graph(const std::vector<float>& vert, int maxhullvert) {
  const int nvert = static_cast<int>(vert.size() / 3);
  std::vector<int> graph;
  if (nvert < 4) return graph;  // MakeGraph: no graph for small meshes
  // MuJoCo 3's maxhullvert: qhull's TA counts the vertices added after the initial simplex
  std::string options = "qhull Qt";
  if (maxhullvert > -1) options += " TA" + std::to_string(maxhullvert - 4);
  std::vector<double> points(vert.begin(), vert.end());
  char* err_text = nullptr;
  std::size_t err_size = 0;
  FILE* err = open_memstream(&err_text, &err_size);
  qhT qh_storage;
  int bad_vertex = -1;
  const int code = qhull_graph(&qh_storage, points.data(), nvert, options.data(),
                               err ? err : stderr, &graph, &bad_vertex);
  int curlong = 0, totlong = 0;
  qh_freeqhull(&qh_storage, !qh_ALL);
  qh_memfreeshort(&qh_storage, &curlong, &totlong);
  std::string message;
  if (err) {
    std::fclose(err);
    if (err_text) message.assign(err_text, err_size);
    std::free(err_text);
  }
  if (code != 0) {
    const std::size_t eol = message.find('\n', message.find_first_not_of(" \n"));
    throw std::runtime_error(
        "qhull could not build its convex hull (" +
        (message.empty() ? std::string("error ") + std::to_string(code) : message.substr(0, eol)) +
        ")");
  }
  if (bad_vertex != -1) throw std::runtime_error("qhull returned a hull that is not triangulated");
  // neighbours as local ids (positions in vert_globalid)
  const int numvert = graph[0], numface = graph[1];
  std::vector<int> local(static_cast<std::size_t>(nvert), -1);
  for (int i = 0; i < numvert; ++i) local[static_cast<std::size_t>(graph[2 + numvert + i])] = i;
  int* edge_localid = graph.data() + 2 + 2 * numvert;
  for (int i = 0; i < numvert + 3 * numface; ++i)
    if (edge_localid[i] >= 0) edge_localid[i] = local[static_cast<std::size_t>(edge_localid[i])];
  return graph;
}

CompiledMesh compile_mesh(MeshData data, const MeshSpec& spec, bool exact, bool hull) {
  const Elem& e = spec.where;
  const std::string named = "mesh '" + spec.name + "'";
  CompiledMesh m;
  m.exact = exact;
  const int nvert = static_cast<int>(data.vert.size() / 3);
  m.vert.resize(data.vert.size());
  for (std::size_t i = 0; i < data.vert.size(); ++i) m.vert[i] = static_cast<float>(data.vert[i]);
  m.face = std::move(data.face);
  // the hull of the vertices as read (MuJoCo builds it before scaling and centring: the ids and
  // the neighbourhoods are what collision uses, and a transform keeps them)
  if (hull || m.face.empty()) {
    try {
      m.graph = convex_hull_graph(m.vert, spec.maxhullvert);
    } catch (const std::exception& ex) {
      m.hull_error = ex.what();
    }
  }
  // vertices without faces (inline data): the hull's triangles (MuJoCo's CopyGraph)
  const bool faces_from_hull = m.face.empty();
  if (faces_from_hull) {
    if (m.graph.empty())
      e.fail(named + ": no faces, and no convex hull to take them from" +
             (m.hull_error.empty() ? std::string() : " (" + m.hull_error + ")"));
    const int numvert = m.graph[0], numface = m.graph[1];
    const int* face_globalid = m.graph.data() + 2 + 3 * numvert + 3 * numface;
    m.face.assign(face_globalid, face_globalid + 3 * numface);
  }
  const int nface = static_cast<int>(m.face.size() / 3);
  // a left-handed scale mirrors the mesh: MuJoCo reverses each triangle's winding as it reads a
  // file (vertices 1 and 2 swapped), so that the normals still point out; inline faces and the
  // hull's are kept as they are
  if (spec.scale[0] * spec.scale[1] * spec.scale[2] < 0 && !spec.file.empty() && !faces_from_hull)
    for (int f = 0; f < nface; ++f) std::swap(m.face[3 * f + 1], m.face[3 * f + 2]);
  for (int i : m.face)
    if (i < 0 || i >= nvert) e.fail(named + ": vertex index out of range");
  float* v = m.vert.data();

  // refpos, refquat (the inverse rotation), scale
  if (spec.refpos[0] != 0 || spec.refpos[1] != 0 || spec.refpos[2] != 0) {
    const float rp[3] = {static_cast<float>(spec.refpos[0]), static_cast<float>(spec.refpos[1]),
                         static_cast<float>(spec.refpos[2])};
    for (int i = 0; i < nvert; ++i)
      for (int j = 0; j < 3; ++j) v[3 * i + j] -= rp[j];
  }
  if (spec.refquat[0] != 1 || spec.refquat[1] != 0 || spec.refquat[2] != 0 ||
      spec.refquat[3] != 0) {
    double q[4] = {spec.refquat[0], spec.refquat[1], spec.refquat[2], spec.refquat[3]};
    const double qn = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(qn > kMinVal)) e.fail(named + ": refquat must be nonzero");
    for (double& x : q) x /= qn;
    double R[9];
    quat_to_mat(q, R);
    for (int i = 0; i < nvert; ++i) {
      const double p[3] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
      for (int j = 0; j < 3; ++j)  // Rᵀ p
        v[3 * i + j] = static_cast<float>(R[j] * p[0] + R[3 + j] * p[1] + R[6 + j] * p[2]);
    }
  }
  if (spec.scale[0] != 1 || spec.scale[1] != 1 || spec.scale[2] != 1)
    for (int i = 0; i < nvert; ++i)
      for (int j = 0; j < 3; ++j) v[3 * i + j] = static_cast<float>(v[3 * i + j] * spec.scale[j]);

  // the surface's centroid
  double n[3], c[3], f[3] = {0, 0, 0}, area = 0;
  for (int t = 0; t < nface; ++t) {
    const int* F = &m.face[3 * t];
    const double a = area_normal_centre(v + 3 * F[0], v + 3 * F[1], v + 3 * F[2], n, c);
    for (int j = 0; j < 3; ++j) f[j] += a * c[j];
    area += a;
  }
  if (area < kMinVal) e.fail(named + ": the mesh has no area (all faces degenerate)");
  for (double& x : f) x /= area;

  // volume and centre of mass from the pyramids on the centroid
  double volume = 0, com[3] = {0, 0, 0};
  for (int t = 0; t < nface; ++t) {
    const int* F = &m.face[3 * t];
    const double a = area_normal_centre(v + 3 * F[0], v + 3 * F[1], v + 3 * F[2], n, c);
    const double d[3] = {c[0] - f[0], c[1] - f[1], c[2] - f[2]};
    double vol = (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]) * a / 3;
    if (!exact) vol = std::fabs(vol);
    volume += vol;
    for (int j = 0; j < 3; ++j) com[j] += vol * (c[j] * 3.0 / 4.0 + f[j] / 4.0);
  }
  if (volume < kMinVal)
    e.fail(named +
           ": the mesh has no volume (a flat or open mesh cannot give a mass; give its geoms "
           "density=\"0\" or a mass of zero)");
  for (int j = 0; j < 3; ++j) com[j] /= volume;
  for (int j = 0; j < 3; ++j) m.pos[j] = com[j];
  for (int i = 0; i < nvert; ++i)
    for (int j = 0; j < 3; ++j) v[3 * i + j] = static_cast<float>(v[3 * i + j] - com[j]);

  // second moments about the centre of mass, per unit density, and the volume again
  static const int k[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  double P[6] = {0, 0, 0, 0, 0, 0};
  volume = 0;
  for (int t = 0; t < nface; ++t) {
    const float* D = v + 3 * m.face[3 * t];
    const float* E = v + 3 * m.face[3 * t + 1];
    const float* F = v + 3 * m.face[3 * t + 2];
    const double a = area_normal_centre(D, E, F, n, c);
    double vol = (c[0] * n[0] + c[1] * n[1] + c[2] * n[2]) * a / 3;
    if (!exact) vol = std::fabs(vol);
    volume += vol;
    for (int j = 0; j < 6; ++j) {
      const int p = k[j][0], q = k[j][1];
      P[j] += vol / 20 *
              (2 * (D[p] * D[q] + E[p] * E[q] + F[p] * F[q]) + D[p] * E[q] + D[q] * E[p] +
               D[p] * F[q] + D[q] * F[p] + E[p] * F[q] + E[q] * F[p]);
    }
  }
  m.volume = volume;
  const double inertia[6] = {P[1] + P[2], P[0] + P[2], P[0] + P[1], -P[3], -P[4], -P[5]};
  double moments[3];
  if (!diagonalize(inertia, moments, m.quat) || !(moments[2] > 0))
    e.fail(named + ": the mesh's inertia is not positive definite");
  if (!satisfies_triangle(moments, 1e-12))
    e.fail(named + ": the mesh's principal moments violate A + B >= C");
  for (int i = 0; i < 3; ++i) {
    const double s = (moments[(i + 1) % 3] + moments[(i + 2) % 3] - moments[i]) * 6 / volume;
    m.boxsz[i] = std::sqrt(std::max(s, 0.0)) / 2;
  }

  // into the principal frame: v <- Rᵀ v
  double R[9];
  quat_to_mat(m.quat, R);
  for (int i = 0; i < nvert; ++i) {
    const double p[3] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    for (int j = 0; j < 3; ++j)
      v[3 * i + j] = static_cast<float>(R[j] * p[0] + R[3 + j] * p[1] + R[6 + j] * p[2]);
    for (int j = 0; j < 3; ++j)
      m.aabb[j] = std::max(m.aabb[j], static_cast<double>(std::fabs(v[3 * i + j])));
  }
  return m;
}

GeomMass mesh_geom_mass(const CompiledMesh& mesh, double density, bool has_mass, double mass) {
  GeomMass g;
  const double volume =
      mesh.exact ? mesh.volume : 8 * mesh.boxsz[0] * mesh.boxsz[1] * mesh.boxsz[2];
  g.mass = has_mass ? mass : density * volume;
  const double* b = mesh.boxsz;
  g.inertia[0] = g.mass * (b[1] * b[1] + b[2] * b[2]) / 3;
  g.inertia[1] = g.mass * (b[0] * b[0] + b[2] * b[2]) / 3;
  g.inertia[2] = g.mass * (b[0] * b[0] + b[1] * b[1]) / 3;
  return g;
}

bool fit_primitive_to_mesh(const CompiledMesh& mesh, GeomType type, double fitscale,
                           double size[3]) {
  const double* b = mesh.boxsz;
  switch (type) {
    case GeomType::Sphere:
      size[0] = (b[0] + b[1] + b[2]) / 3;
      break;
    case GeomType::Capsule:
      size[0] = (b[0] + b[1]) / 2;
      size[1] = std::max(0.0, b[2] - size[0] / 2);
      break;
    case GeomType::Cylinder:
      size[0] = (b[0] + b[1]) / 2;
      size[1] = b[2];
      break;
    case GeomType::Ellipsoid:
    case GeomType::Box:
      for (int i = 0; i < 3; ++i) size[i] = b[i];
      break;
    default:
      return false;
  }
  for (int i = 0; i < 3; ++i) size[i] *= fitscale;
  return true;
}

}  // namespace stiffgrad::mjcf
