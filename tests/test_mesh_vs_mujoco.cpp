// Mesh assets (mjcf/mesh.hpp, issue 39) against MuJoCo 2.2.2's compiler (mj_loadXML): a model
// written by the test with its mesh files (binary STL and OBJ with quads: MuJoCo 2.2.2 reads no
// ASCII STL, which stiffgrad also reads, tests/test_mesh_io.cpp), with scale,
// refpos, refquat and a mirroring scale, visual mesh geoms that give their bodies mass, and
// primitives fitted to meshes. Compared: every body's mass, centre of mass and inertia tensor
// (body frame), and the fitted primitives' sizes, positions and axes.
//
// Where MuJoCo 2.2.2 is inexact: its mesh frame and a body's principal frame come from
// mju_eig3, an iterative eigendecomposition that stops at its tolerance, ours from Eigen's
// (exact to rounding). Measured with this model (2026-12-08, printed by the test):
//   masses 5.9e-14, centres of mass 5.5e-14 (relative), fitted sizes 2.0e-13 (relative), fitted
//   positions 0: the volumes, centres and principal moments agree to rounding;
//   fitted axes 1.1e-7 rad: the mesh frame's eigenvectors, at mju_eig3's tolerance;
//   inertia tensors (body frame) 1.4e-8 to 2.3e-7 of the largest entry: every body here has two
//   or more geoms, whose sum MuJoCo diagonalizes with mju_eig3, and R diag(I) Rᵀ misses the sum
//   by that much (the same error as PrincipalAxes.MujocoReconstructsFullinertiaTo2e7WeExactly).
// The bounds are these with a factor of about 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "mujoco_bridge.hpp"
#include "stiffgrad/mjcf.hpp"
#include "test_support.hpp"

namespace {

struct Tri {
  float v[3][3];
};

void write_binary_stl(const std::string& path, const std::vector<Tri>& tris) {
  std::ofstream f(path, std::ios::binary);
  char header[80] = {};
  f.write(header, 80);
  const std::uint32_t n = static_cast<std::uint32_t>(tris.size());
  f.write(reinterpret_cast<const char*>(&n), 4);
  for (const Tri& t : tris) {
    const float normal[3] = {0, 0, 0};
    f.write(reinterpret_cast<const char*>(normal), 12);
    f.write(reinterpret_cast<const char*>(t.v), 36);
    const std::uint16_t attr = 0;
    f.write(reinterpret_cast<const char*>(&attr), 2);
  }
}

// An irregular tetrahedron, outward winding.
std::vector<Tri> wedge() {
  const float A[3] = {0, 0, 0}, B[3] = {0.3f, 0, 0}, C[3] = {0, 0.2f, 0},
              D[3] = {0.05f, 0.04f, 0.15f};
  auto tri = [](const float* a, const float* b, const float* c) {
    Tri t;
    for (int i = 0; i < 3; ++i) t.v[0][i] = a[i], t.v[1][i] = b[i], t.v[2][i] = c[i];
    return t;
  };
  return {tri(A, C, B), tri(A, B, D), tri(B, C, D), tri(C, A, D)};
}

// A skewed box as an OBJ of quads (the loader splits each into two triangles).
const char* kPrismObj =
    "# skewed box\n"
    "v 0 0 0\nv 0.4 0 0\nv 0.45 0.2 0\nv 0.05 0.2 0\n"
    "v 0.02 0.01 0.1\nv 0.42 0.01 0.1\nv 0.47 0.21 0.1\nv 0.07 0.21 0.1\n"
    "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";

// An octahedron-like solid, elongated along a tilted axis.
std::vector<Tri> spindle() {
  const float p[6][3] = {{0.3f, 0.1f, 0},    {-0.3f, -0.1f, 0}, {0, 0.08f, 0},
                         {0.02f, -0.07f, 0}, {0, 0, 0.05f},     {0.01f, 0, -0.06f}};
  const int f[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
                       {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  std::vector<Tri> out;
  for (const auto& t : f) {
    Tri tri;
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 3; ++i) tri.v[k][i] = p[t[k]][i];
    out.push_back(tri);
  }
  return out;
}

const char* kModel = R"(<mujoco model="meshes">
  <compiler angle="radian" meshdir="assets" exactmeshinertia="EXACT"/>
  <asset>
    <mesh name="wedge" file="wedge.stl" scale="1 2 0.5"/>
    <mesh name="wedge_moved" file="wedge.stl" refpos="0.1 0.05 0.02" refquat="0.9 0.1 -0.3 0.2"/>
    <mesh name="wedge_mirrored" file="wedge.stl" scale="-1 1 1"/>
    <mesh file="prism.obj"/>
    <mesh name="spindle" file="spindle.stl"/>
  </asset>
  <default>
    <default class="visual"><geom type="mesh" contype="0" conaffinity="0"/></default>
  </default>
  <worldbody>
    <body name="a" pos="0 0 1">
      <freejoint/>
      <geom class="visual" mesh="wedge" pos="0.1 0 0" quat="0.8 0.2 0.1 -0.3"/>
      <geom type="sphere" size="0.05" pos="0 0.1 0"/>
    </body>
    <body name="b" pos="1 0 1">
      <joint type="hinge" axis="0 1 0"/>
      <geom class="visual" mesh="prism" density="500"/>
      <geom type="box" mesh="spindle" pos="0 0 0.2"/>
    </body>
    <body name="c" pos="2 0 1" euler="0.3 0.2 0.1">
      <joint type="slide" axis="1 0 0"/>
      <geom class="visual" mesh="wedge_moved" mass="0.7"/>
      <geom type="capsule" mesh="prism" fitscale="1.1" euler="0 0.4 0"/>
      <geom type="cylinder" mesh="wedge" pos="0 0 -0.3"/>
      <geom type="sphere" mesh="spindle" pos="0.3 0 0"/>
    </body>
    <body name="d" pos="3 0 1">
      <joint type="ball"/>
      <geom class="visual" mesh="wedge_mirrored"/>
      <geom type="ellipsoid" mesh="wedge_mirrored" pos="0 0 0.2"/>
    </body>
  </worldbody>
</mujoco>
)";

// Writes the model and its meshes under a fresh directory; returns the model's path.
// exact: compiler exactmeshinertia (signed pyramid volumes, the mesh's own volume for the mass).
std::string write_model(bool exact) {
  const std::string dir = ::testing::TempDir() + "/sg_mesh_vs_mujoco" + (exact ? "_exact" : "");
  std::string cmd = "mkdir -p '" + dir + "/assets'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  write_binary_stl(dir + "/assets/wedge.stl", wedge());
  std::ofstream(dir + "/assets/prism.obj") << kPrismObj;
  write_binary_stl(dir + "/assets/spindle.stl", spindle());
  std::string xml = kModel;
  xml.replace(xml.find("EXACT"), 5, exact ? "true" : "false");
  std::ofstream(dir + "/meshes.xml") << xml;
  return dir + "/meshes.xml";
}

double rel(double a, double b) {
  return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300});
}

void check_model(bool exact) {
  SCOPED_TRACE(exact ? "exactmeshinertia" : "legacy mesh inertia");
  const std::string path = write_model(exact);
  std::string err;
  const auto mm = sgtest::mujoco_load(path, &err);
  ASSERT_TRUE(mm) << err;
  const auto ours = stiffgrad::load_mjcf(path);
  ASSERT_EQ(ours->nbody, mm->nbody);

  double mass_err = 0, com_err = 0, tensor_err = 0;
  for (int b = 1; b < mm->nbody; ++b) {
    SCOPED_TRACE("body " + ours->body_name[b]);
    mass_err = std::max(mass_err, rel(ours->body_mass[b], mm->body_mass[b]));
    double scale = 0;
    for (int k = 0; k < 3; ++k) scale = std::max(scale, std::abs(mm->body_ipos[3 * b + k]));
    for (int k = 0; k < 3; ++k)
      com_err = std::max(com_err, std::abs(ours->body_ipos[3 * b + k] - mm->body_ipos[3 * b + k]) /
                                      std::max(scale, 1e-3));
    double to[9], tm[9];
    sgtest::inertia_tensor(&ours->body_iquat[4 * b], &ours->body_inertia[3 * b], to);
    sgtest::inertia_tensor(mm->body_iquat + 4 * b, mm->body_inertia + 3 * b, tm);
    double tscale = 0, terr = 0;
    for (int k = 0; k < 9; ++k) tscale = std::max(tscale, std::abs(tm[k]));
    for (int k = 0; k < 9; ++k) terr = std::max(terr, std::abs(to[k] - tm[k]));
    tensor_err = std::max(tensor_err, terr / tscale);
    std::printf("[mesh vs MuJoCo 2.2.2] body %s: inertia tensor %.2e of its largest entry\n",
                ours->body_name[b].c_str(), terr / tscale);
  }

  // the fitted primitives: MuJoCo keeps the visual meshes as geoms, we drop them, so geoms are
  // matched by body and type
  double size_err = 0, pos_err = 0, axis_err = 0;
  for (int g = 0; g < ours->ngeom; ++g) {
    int match = -1;
    for (int h = 0; h < mm->ngeom; ++h)
      if (mm->geom_bodyid[h] == ours->geom_bodyid[g] &&
          mm->geom_type[h] == static_cast<int>(ours->geom_type[g]) &&
          std::abs(mm->geom_size[3 * h] - ours->geom_size[3 * g]) <
              1e-3 * std::max(1.0, mm->geom_size[3 * h]))
        match = h;
    ASSERT_GE(match, 0) << "geom " << g << " has no counterpart in MuJoCo's model";
    for (int k = 0; k < 3; ++k) {
      size_err = std::max(size_err, rel(ours->geom_size[3 * g + k], mm->geom_size[3 * match + k]));
      pos_err =
          std::max(pos_err, std::abs(ours->geom_pos[3 * g + k] - mm->geom_pos[3 * match + k]));
    }
    // the axes up to sign (a principal frame is unique up to axis signs)
    mjtNum Ro[9], Rm[9], qo[4];
    for (int k = 0; k < 4; ++k) qo[k] = ours->geom_quat[4 * g + k];
    mju_quat2Mat(Ro, qo);
    mju_quat2Mat(Rm, mm->geom_quat + 4 * match);
    for (int col = 0; col < 3; ++col) {  // the angle between the axes: |a x b| for unit a, b
      const double a[3] = {Ro[col], Ro[3 + col], Ro[6 + col]},
                   c[3] = {Rm[col], Rm[3 + col], Rm[6 + col]};
      const double x[3] = {a[1] * c[2] - a[2] * c[1], a[2] * c[0] - a[0] * c[2],
                           a[0] * c[1] - a[1] * c[0]};
      axis_err = std::max(axis_err, std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
    }
  }
  EXPECT_EQ(ours->ngeom,
            6);  // one plain sphere and five fitted primitives (the visual meshes dropped)
  std::printf(
      "[mesh vs MuJoCo 2.2.2] exactmeshinertia %s, %d bodies, %d geoms: mass %.2e, centre of mass "
      "%.2e, inertia tensor %.2e "
      "(relative); fitted sizes %.2e (relative), positions %.2e m, axes %.2e rad\n",
      exact ? "true" : "false", mm->nbody - 1, ours->ngeom, mass_err, com_err, tensor_err, size_err,
      pos_err, axis_err);
  EXPECT_LE(mass_err, 2e-13);
  EXPECT_LE(com_err, 2e-13);
  EXPECT_LE(tensor_err, 7e-7);
  EXPECT_LE(size_err, 6e-13);
  EXPECT_LE(pos_err, 1e-15);
  EXPECT_LE(axis_err, 3e-7);
}

TEST(MeshVsMujoco, MassPropertiesAndFittedPrimitivesMatch) {
  check_model(false);
  check_model(true);
}

}  // namespace
