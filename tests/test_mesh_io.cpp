// Mesh file reader (mjcf/mesh_io.hpp): binary and ASCII STL, OBJ, and the error for each kind of
// bad file ("FILE[:LINE]: message").
//
// Every fixture is written by the test itself into a temporary directory; the expected
// vertices and faces are worked out by hand (or, for the cube, by a first-appearance search
// written here), never by the code under test.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mjcf/mesh_io.hpp"
#include "stiffgrad/mjcf.hpp"

namespace {

using stiffgrad::MjcfError;
using stiffgrad::mjcf::MeshData;
using stiffgrad::mjcf::read_mesh_file;

// A file under the test's own temporary folder; names carry the test's name so that tests run
// in parallel (ctest -j) never share a file.
std::string write_file(const std::string& name, const std::string& bytes) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sg_mesh_io";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (std::string(info->name()) + "_" + name)).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

using Vec3 = std::array<float, 3>;
using Triangle = std::array<Vec3, 3>;

void append_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// Binary STL, little-endian as the format says: header (padded to 80 bytes), count, then per
// triangle a zero normal, the three corners and a zero attribute.
std::string binary_stl(const std::string& header, const std::vector<Triangle>& triangles) {
  std::string out = header;
  out.resize(80, ' ');
  append_u32(out, static_cast<uint32_t>(triangles.size()));
  for (const Triangle& t : triangles) {
    for (int j = 0; j < 3; ++j) append_u32(out, 0);
    for (const Vec3& v : t)
      for (float x : v) append_u32(out, std::bit_cast<uint32_t>(x));
    out += std::string(2, '\0');
  }
  return out;
}

// The mesh's vertex `i`, as doubles.
std::array<double, 3> vertex(const MeshData& m, int i) {
  return {m.vert[3 * i], m.vert[3 * i + 1], m.vert[3 * i + 2]};
}

std::array<double, 3> widened(const Vec3& v) { return {double{v[0]}, double{v[1]}, double{v[2]}}; }

// Reading must fail with an MjcfError naming `path` (and `line`, when not 0) and containing
// `words`.
void expect_mesh_error(const std::string& path, int line, const std::string& words) {
  try {
    read_mesh_file(path);
    ADD_FAILURE() << "expected an error containing '" << words << "' for " << path;
  } catch (const MjcfError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), path) << what;
    EXPECT_EQ(e.line(), line) << what;
    const std::string prefix = line > 0 ? path + ":" + std::to_string(line) + ": " : path + ": ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_NE(what.find(words), std::string::npos) << "'" << words << "' not in: " << what;
  }
}

const Vec3 kA{0, 0, 0}, kB{1, 0, 0}, kC{0, 1, 0}, kD{0, 0, 0.1f};
// Outward-facing tetrahedron: every vertex appears in three triangles.
const std::vector<Triangle> kTetra = {{kA, kC, kB}, {kA, kB, kD}, {kA, kD, kC}, {kB, kC, kD}};

TEST(MeshIo, BinaryStlTetrahedronMergesVertices) {
  // Upper-case extension: the extension is matched without regard to case.
  const std::string path = write_file("tetra.STL", binary_stl("binary tetrahedron", kTetra));
  const MeshData m = read_mesh_file(path);
  // First appearance: A, C, B (triangle 1), then D (triangle 2).
  ASSERT_EQ(m.vert.size(), 12u);
  EXPECT_EQ(vertex(m, 0), widened(kA));
  EXPECT_EQ(vertex(m, 1), widened(kC));
  EXPECT_EQ(vertex(m, 2), widened(kB));
  EXPECT_EQ(vertex(m, 3), widened(kD));
  // float32 widened, not the decimal 0.1
  EXPECT_EQ(m.vert[11], static_cast<double>(0.1f));
  EXPECT_NE(m.vert[11], 0.1);
  EXPECT_EQ(m.face, (std::vector<int>{0, 1, 2, 0, 2, 3, 0, 3, 1, 2, 1, 3}));
}

TEST(MeshIo, BinaryStlWithSolidHeader) {
  // Many exporters begin the binary header with "solid": the size decides, not the text.
  const Vec3 e{1, 1, 0};
  const std::string path = write_file(
      "square.stl", binary_stl("solid square exported as binary", {{kA, kB, kC}, {kB, e, kC}}));
  const MeshData m = read_mesh_file(path);
  ASSERT_EQ(m.vert.size(), 12u);
  EXPECT_EQ(vertex(m, 0), widened(kA));
  EXPECT_EQ(vertex(m, 1), widened(kB));
  EXPECT_EQ(vertex(m, 2), widened(kC));
  EXPECT_EQ(vertex(m, 3), widened(e));
  EXPECT_EQ(m.face, (std::vector<int>{0, 1, 2, 1, 3, 2}));
}

TEST(MeshIo, BinaryStlMergesEqualVertices) {
  // 0 and -0 are equal floats: MuJoCo 2.2.2 merges them (float ==), and so do we, keeping the
  // first appearance (-0 here)
  const Vec3 negative_zero{-0.0f, 0, 0};
  const std::string path =
      write_file("zeros.stl", binary_stl("zeros", {{negative_zero, kB, kC}, {kA, kC, kB}}));
  const MeshData m = read_mesh_file(path);
  ASSERT_EQ(m.vert.size(), 9u);
  EXPECT_TRUE(std::signbit(m.vert[0]));
  EXPECT_EQ(m.face, (std::vector<int>{0, 1, 2, 0, 2, 1}));
}

// A unit cube moved by 0.1 (not a float32 number: checks the float reading), 12 triangles
// with outward normals, in ASCII STL with Windows line ends.
std::vector<Triangle> cube_triangles() {
  auto p = [](int x, int y, int z) { return Vec3{x + 0.1f, y + 0.1f, z + 0.1f}; };
  std::vector<Triangle> t;
  auto quad = [&](Vec3 a, Vec3 b, Vec3 c, Vec3 d) {
    t.push_back({a, b, c});
    t.push_back({a, c, d});
  };
  quad(p(0, 0, 0), p(0, 1, 0), p(1, 1, 0), p(1, 0, 0));  // z = 0
  quad(p(0, 0, 1), p(1, 0, 1), p(1, 1, 1), p(0, 1, 1));  // z = 1
  quad(p(0, 0, 0), p(1, 0, 0), p(1, 0, 1), p(0, 0, 1));  // y = 0
  quad(p(0, 1, 0), p(0, 1, 1), p(1, 1, 1), p(1, 1, 0));  // y = 1
  quad(p(0, 0, 0), p(0, 0, 1), p(0, 1, 1), p(0, 1, 0));  // x = 0
  quad(p(1, 0, 0), p(1, 1, 0), p(1, 1, 1), p(1, 0, 1));  // x = 1
  return t;
}

std::string ascii_stl(const std::vector<Triangle>& triangles) {
  std::string out = "solid cube made by hand\r\n";
  for (const Triangle& t : triangles) {
    out += "  facet normal 0 0 0\r\n    outer loop\r\n";
    for (const Vec3& v : t) {
      out += "      vertex";
      // "%f": 0.100000, read back as 0.1f. Appended piecewise: GCC 12 warns falsely on " " + s.
      for (float x : v) out.append(1, ' ').append(std::to_string(x));
      out += "\r\n";
    }
    out += "    endloop\r\n  endfacet\r\n";
  }
  return out + "endsolid cube made by hand\r\n";
}

TEST(MeshIo, AsciiStlCube) {
  const std::vector<Triangle> triangles = cube_triangles();
  ASSERT_EQ(triangles.size(), 12u);
  const std::string path = write_file("cube.stl", ascii_stl(triangles));
  const MeshData m = read_mesh_file(path);

  // Expected: the distinct corners in order of first appearance, faces indexing them.
  std::vector<Vec3> corners;
  std::vector<int> faces;
  for (const Triangle& t : triangles)
    for (const Vec3& v : t) {
      size_t i = 0;
      while (i < corners.size() && corners[i] != v) ++i;
      if (i == corners.size()) corners.push_back(v);
      faces.push_back(static_cast<int>(i));
    }
  ASSERT_EQ(corners.size(), 8u);
  ASSERT_EQ(m.vert.size(), 24u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(vertex(m, i), widened(corners[i])) << "vertex " << i;
  EXPECT_EQ(m.face, faces);
  EXPECT_EQ(m.vert[0], static_cast<double>(0.1f));
}

TEST(MeshIo, ObjQuadSlashesNegativeIndices) {
  const std::string path = write_file("quad.obj",
                                      "# a quad, a pentagon and a triangle\n"
                                      "mtllib quad.mtl\n"
                                      "o quad\n"
                                      "v 0 0 0\n"
                                      "v 1 0 0\n"
                                      "v 1 1 0\n"
                                      "v 0 1 0 1.0\n"  // with w
                                      "vt 0 0\n"
                                      "vn 0 0 1\n"
                                      "usemtl plain\n"
                                      "s off\n"
                                      "f 1/1/1 2/1 3//1 4\n"
                                      "\n"
                                      "g more   # a trailing comment\n"
                                      "v 0.1 0.2 0.3\r\n"
                                      "f -1 -4 -3/1\n"
                                      "f 1 2 3 4 5\n");
  const MeshData m = read_mesh_file(path);
  ASSERT_EQ(m.vert.size(), 15u);  // not merged, w dropped
  EXPECT_EQ(vertex(m, 3), (std::array<double, 3>{0, 1, 0}));
  EXPECT_EQ(vertex(m, 4), widened({0.1f, 0.2f, 0.3f}));
  // quad fan (1,2,3), (1,3,4); -1 -4 -3 after 5 vertices = 5 2 3; pentagon fan of 3 triangles
  EXPECT_EQ(m.face, (std::vector<int>{0, 1, 2, 0, 2, 3, 4, 1, 2, 0, 1, 2, 0, 2, 3, 0, 3, 4}));
}

TEST(MeshIo, ErrorMissingFile) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "sg_mesh_io_no_such_file.stl").string();
  std::filesystem::remove(path);
  expect_mesh_error(path, 0, "cannot open mesh file");
  // MjcfError is a std::runtime_error, as the callers expect
  EXPECT_THROW(read_mesh_file(path), std::runtime_error);
}

TEST(MeshIo, ErrorUnknownExtension) {
  expect_mesh_error(write_file("tetra.ply", binary_stl("x", kTetra)), 0,
                    "unknown mesh file extension '.ply'");
  expect_mesh_error(write_file("tetra", binary_stl("x", kTetra)), 0,
                    "unknown mesh file extension (none)");
}

TEST(MeshIo, ErrorTruncatedBinaryStl) {
  std::string bytes = binary_stl("binary tetrahedron", kTetra);
  bytes.resize(bytes.size() - 10);
  expect_mesh_error(write_file("cut.stl", bytes), 0,
                    "truncated or malformed binary STL of 274 bytes");
  expect_mesh_error(write_file("header.stl", bytes.substr(0, 40)), 0,
                    "shorter than its 84-byte header");
  // A "solid" header makes it look like ASCII: the message then says why it is not binary.
  std::string solid = binary_stl("solid tetrahedron", kTetra);
  solid.resize(solid.size() - 10);
  expect_mesh_error(write_file("cut_solid.stl", solid), 1,
                    "(nor is it a binary STL of 274 bytes, but its triangle count 4 needs 284)");
}

TEST(MeshIo, ErrorObjIndexOutOfRange) {
  expect_mesh_error(write_file("beyond.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 9\n"), 5,
                    "face index '9' out of range: the file has 3 vertices");
  expect_mesh_error(write_file("negative.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n"), 4,
                    "face index '-4' out of range");
  expect_mesh_error(write_file("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"), 4,
                    "face index '0' (OBJ indices start at 1)");
  expect_mesh_error(
      write_file("huge.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n"), 4,
      "face index '99999999999999999999' out of range");
  // A forward reference is fine when the vertex comes later (MuJoCo's reader allows it).
  const MeshData m =
      read_mesh_file(write_file("forward.obj", "f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 1 0\n"));
  EXPECT_EQ(m.face, (std::vector<int>{0, 1, 2}));
}

TEST(MeshIo, ErrorObjNanCoordinate) {
  expect_mesh_error(write_file("nan.obj", "v 0 0 0\nv 1 nan 0\nv 0 1 0\nf 1 2 3\n"), 2,
                    "non-finite vertex coordinate");
  expect_mesh_error(write_file("inf.obj", "v 0 0 0\nv 1 0 1e39\nv 0 1 0\nf 1 2 3\n"), 2,
                    "non-finite vertex coordinate");
  expect_mesh_error(write_file("junk.obj", "v 0 0 0\nv 1 0 0\nv 0 1x 0\nf 1 2 3\n"), 3,
                    "bad number '1x'");
}

TEST(MeshIo, ErrorEmptyMesh) {
  expect_mesh_error(write_file("points.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n"), 0,
                    "mesh has no faces");
  expect_mesh_error(write_file("empty.obj", ""), 0, "mesh has no faces");
  expect_mesh_error(write_file("none.stl", binary_stl("no triangles", {})), 0, "mesh has no faces");
  expect_mesh_error(write_file("none_ascii.stl", "solid nothing\nendsolid nothing\n"), 0,
                    "mesh has no faces");
}

TEST(MeshIo, ErrorMalformedAsciiStl) {
  const std::string cube = ascii_stl(cube_triangles());
  std::string no_corners = cube;
  no_corners.erase(no_corners.find("      vertex"),
                   cube.find("    endloop") - cube.find("      vertex"));
  // the first facet now goes from "outer loop" (line 3) straight to "endloop" (line 4)
  expect_mesh_error(write_file("no_corners.stl", no_corners), 4,
                    "expected 'vertex', found 'endloop'");
  expect_mesh_error(write_file("no_end.stl", cube.substr(0, cube.rfind("endsolid"))), 86,
                    "expected 'facet' or 'endsolid', found the end of the file");
}

// Prefixes of good files, and single-byte changes, either read into a consistent mesh or throw
// MjcfError: no crash, no other exception, no index out of range. Sampled with a stride (each
// case is a file write, about 1 ms here) but covering every part of each format.
TEST(MeshIo, DamagedFilesFailCleanly) {
  struct Case {
    std::string name, bytes;
    size_t prefix_stride, change_stride;
  };
  const std::vector<Case> files = {
      {"cube.stl", ascii_stl(cube_triangles()), 29, 89},
      {"tetra.stl", binary_stl("solid tetrahedron", kTetra), 3, 7},
      {"quad.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1/1/1 2//2 -2 -1\n", 1, 1}};
  int read = 0, failed = 0;
  auto check = [&](const std::string& name, const std::string& bytes) {
    const std::string path = write_file(name, bytes);
    try {
      const MeshData m = read_mesh_file(path);
      ++read;
      ASSERT_FALSE(m.face.empty());
      ASSERT_EQ(m.face.size() % 3, 0u);
      ASSERT_EQ(m.vert.size() % 3, 0u);
      for (int f : m.face) ASSERT_TRUE(f >= 0 && 3 * static_cast<size_t>(f) < m.vert.size()) << f;
      for (double x : m.vert) ASSERT_TRUE(std::isfinite(x));
    } catch (const MjcfError& e) {
      ++failed;
      ASSERT_EQ(e.file(), path);
    }
  };
  for (const Case& f : files) {
    for (size_t n = 0; n < f.bytes.size(); n += f.prefix_stride)
      check(f.name, f.bytes.substr(0, n));
    for (size_t i = 0; i < f.bytes.size(); i += f.change_stride)
      for (char c : {'\0', '\n', '-', '/', '9'}) {
        std::string damaged = f.bytes;
        damaged[i] = c;
        check(f.name, damaged);
      }
  }
  EXPECT_GT(failed, 0);
  EXPECT_GT(read, 0);  // e.g. an OBJ cut after its face line, or a harmless byte change
}

}  // namespace
