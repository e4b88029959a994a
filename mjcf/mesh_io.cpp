// stiffgrad — MJCF loader: reading mesh files (binary and ASCII STL, OBJ).
#include "mjcf/mesh_io.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::mjcf {
namespace {

constexpr size_t kStlHeader = 84;    // 80 bytes of text, then the uint32 triangle count
constexpr size_t kStlTriangle = 50;  // 12 float32 (normal, 3 vertices) + uint16 attribute
// Indices are int: more vertices than this could not be addressed.
constexpr long long kMaxVertices = INT_MAX;

[[noreturn]] void fail(const std::string& path, int line, const std::string& message) {
  throw MjcfError(path, line, message);
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

char to_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `word` equals the lower-case `keyword`, ignoring case: some exporters write "FACET NORMAL".
bool is_keyword(std::string_view word, std::string_view keyword) {
  if (word.size() != keyword.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (to_lower(word[i]) != keyword[i]) return false;
  return true;
}

// A word as it may appear in a message: quoted, cut short, with no control or binary bytes (a
// misnamed binary file would otherwise print garbage).
std::string shown(std::string_view word) {
  if (word.empty()) return "the end of the file";
  constexpr size_t kMax = 32;
  std::string out = "'";
  for (size_t i = 0; i < word.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(word[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (word.size() > kMax) out += "...";
  return out + "'";
}

// strtof over the whole word: float32, as binary STL stores coordinates, so that the text and
// binary forms of one mesh read the same. Takes "nan" and "inf", for the caller to reject as
// non-finite rather than as garbled.
bool parse_float(std::string_view word, float& out) {
  if (word.empty()) return false;
  const std::string buf(word);  // strtof needs the terminator right after the word
  char* end = nullptr;
  const float v = std::strtof(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return false;
  out = v;  // overflow is +-inf (ERANGE): caught by the finiteness check
  return true;
}

std::string read_file_bytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(path, 0, "cannot open mesh file: " + std::generic_category().message(errno));
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  const int err = std::ferror(f) ? errno : 0;  // a directory opens, then fails to read
  std::fclose(f);
  if (err != 0) fail(path, 0, "cannot read mesh file: " + std::generic_category().message(err));
  return data;
}

// Merges equal float triples (float ==, so 0 and -0 are one) into one vertex, as MuJoCo 2.2.2
// does for STL, whose triangles list their corners instead of sharing vertices. Which copy is
// kept differs: MuJoCo keeps one per group chosen by its (unstable) sort and compacts in file
// order, we keep the first appearance; the vertex set is the same (NaN never gets here).
class VertexMerger {
 public:
  explicit VertexMerger(MeshData& mesh) : mesh_(mesh) {}

  int add(const float xyz[3]) {
    // + 0.0f turns -0 into +0 and leaves every other value as it is
    const Key key{std::bit_cast<uint32_t>(xyz[0] + 0.0f), std::bit_cast<uint32_t>(xyz[1] + 0.0f),
                  std::bit_cast<uint32_t>(xyz[2] + 0.0f)};
    const int next = static_cast<int>(mesh_.vert.size() / 3);
    const auto [it, inserted] = index_.try_emplace(key, next);
    if (inserted)
      for (int j = 0; j < 3; ++j) mesh_.vert.push_back(static_cast<double>(xyz[j]));
    return it->second;
  }

 private:
  struct Key {
    uint32_t bits[3];
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.bits[0];
      h = h * 0x9E3779B97F4A7C15ull ^ k.bits[1];
      h = h * 0x9E3779B97F4A7C15ull ^ k.bits[2];
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  MeshData& mesh_;
  std::unordered_map<Key, int, KeyHash> index_;
};

// ---------------------------------------------------------------- binary STL

uint32_t le_u32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

MeshData read_binary_stl(const std::string& path, const std::string& data, uint32_t count) {
  // The size check already bounds count by the file size; this keeps 3 * count in an int.
  if (count > kMaxVertices / 3) fail(path, 0, "too many triangles: " + std::to_string(count));
  MeshData mesh;
  VertexMerger merger(mesh);
  mesh.face.reserve(3 * size_t{count});
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  for (uint32_t t = 0; t < count; ++t) {
    const unsigned char* corner = bytes + kStlHeader + kStlTriangle * t + 12;  // past the normal
    for (int k = 0; k < 3; ++k, corner += 12) {
      float xyz[3];
      for (int j = 0; j < 3; ++j) xyz[j] = std::bit_cast<float>(le_u32(corner + 4 * j));
      if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
        fail(path, 0, "non-finite coordinate in triangle " + std::to_string(t + 1));
      mesh.face.push_back(merger.add(xyz));
    }
  }
  return mesh;
}

// ---------------------------------------------------------------- ASCII STL

// Whitespace-separated words, each with its line.
class Words {
 public:
  explicit Words(std::string_view text) : text_(text) {}

  // The next word; empty at the end of the text.
  std::string_view next() {
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
    word_line_ = line_;
    const size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // Skips the rest of the current line (a solid's name).
  void skip_line() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }
  int line() const { return word_line_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int word_line_ = 1;
};

// solid NAME { facet normal N N N  outer loop  vertex X Y Z (x3)  endloop  endfacet }* endsolid,
// possibly several solids in a row. `not_binary` says why the file was not read as binary STL,
// for the case that it was meant to be (a binary header may start with "solid").
MeshData read_ascii_stl(const std::string& path, std::string_view text,
                        const std::string& not_binary) {
  Words words(text);
  auto fail_here = [&](const std::string& message) {
    fail(path, words.line(), message + not_binary);
  };
  auto expect = [&](std::string_view keyword) {
    const std::string_view w = words.next();
    if (!is_keyword(w, keyword))
      fail_here("expected '" + std::string(keyword) + "', found " + shown(w));
  };
  auto read_xyz = [&](float xyz[3]) {
    for (int j = 0; j < 3; ++j) {
      const std::string_view w = words.next();
      if (!parse_float(w, xyz[j])) fail_here("expected a number, found " + shown(w));
    }
  };

  MeshData mesh;
  VertexMerger merger(mesh);
  expect("solid");
  for (;;) {
    words.skip_line();
    for (;;) {
      const std::string_view w = words.next();
      if (is_keyword(w, "endsolid")) break;
      if (!is_keyword(w, "facet")) fail_here("expected 'facet' or 'endsolid', found " + shown(w));
      expect("normal");
      float normal[3];  // recomputed by the mesh compiler; read only to check the syntax
      read_xyz(normal);
      expect("outer");
      expect("loop");
      for (int k = 0; k < 3; ++k) {
        expect("vertex");
        float xyz[3];
        read_xyz(xyz);
        if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
          fail(path, words.line(), "non-finite vertex coordinate");
        if (mesh.face.size() >= size_t{kMaxVertices}) fail_here("too many triangles");
        mesh.face.push_back(merger.add(xyz));
      }
      expect("endloop");
      expect("endfacet");
    }
    words.skip_line();  // the name after endsolid
    const std::string_view w = words.next();
    if (w.empty()) break;
    if (!is_keyword(w, "solid"))
      fail_here("expected 'solid' or the end of the file, found " + shown(w));
  }
  return mesh;
}

MeshData read_stl(const std::string& path, const std::string& data) {
  // The size decides first: a binary file's 80-byte header is free text and often says "solid".
  const std::string size = std::to_string(data.size()) + " bytes";
  std::string not_binary;
  if (data.size() >= kStlHeader) {
    const uint32_t count = le_u32(reinterpret_cast<const unsigned char*>(data.data()) + 80);
    const uint64_t expected = kStlHeader + kStlTriangle * uint64_t{count};
    if (data.size() == expected) return read_binary_stl(path, data, count);
    not_binary = "binary STL of " + size + ", but its triangle count " + std::to_string(count) +
                 " needs " + std::to_string(expected);
  } else {
    not_binary = "binary STL of " + size + ", shorter than its 84-byte header";
  }
  Words first(data);
  if (is_keyword(first.next(), "solid"))
    return read_ascii_stl(path, data, " (nor is it a " + not_binary + ")");
  fail(path, 0, "truncated or malformed " + not_binary);
}

// ---------------------------------------------------------------- OBJ

// An OBJ index: [+-]digits, saturating far beyond any vertex count so that a huge index reads
// as out of range rather than overflowing.
bool parse_index(std::string_view s, long long& out) {
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++i;
  if (i == s.size()) return false;
  long long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = std::min(v * 10 + (s[i] - '0'), 10 * kMaxVertices);
  }
  out = negative ? -v : v;
  return true;
}

// The vertex index of one face corner: "a", "a/b", "a/b/c" or "a//c" (texture and normal
// indices are checked for form only: the mesh keeps positions alone).
bool parse_corner(std::string_view corner, long long& out) {
  const size_t slash = corner.find('/');
  if (!parse_index(corner.substr(0, slash), out)) return false;
  if (slash == std::string_view::npos) return true;
  const std::string_view rest = corner.substr(slash + 1);
  const size_t slash2 = rest.find('/');
  long long unused;
  if (slash2 == std::string_view::npos) return parse_index(rest, unused);  // a/b
  const std::string_view b = rest.substr(0, slash2);
  return (b.empty() || parse_index(b, unused)) && parse_index(rest.substr(slash2 + 1), unused);
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> out;
  Words words(line);
  for (std::string_view w = words.next(); !w.empty(); w = words.next()) out.push_back(w);
  return out;
}

MeshData read_obj(const std::string& path, std::string_view text) {
  MeshData mesh;
  // A positive index may name a vertex listed further down (tinyobjloader, MuJoCo's OBJ reader,
  // resolves it without looking at the count so far), so it is checked at the end against the
  // final count; the largest one, with its line, suffices.
  long long max_index = 0;
  int max_index_line = 0;
  std::string max_index_word;
  std::vector<int> polygon;
  int line = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view content = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    content = content.substr(0, content.find('#'));
    const std::vector<std::string_view> w = split_words(content);
    if (w.empty()) continue;
    if (w[0] == "v") {
      // x y z, then an optional w or a vertex colour (r g b [a]): read, not kept
      if (w.size() < 4 || w.size() > 8)
        fail(path, line,
             "'v' takes x y z and an optional w or colour, found " + std::to_string(w.size() - 1) +
                 " numbers");
      float xyz[3];
      for (size_t j = 1; j < w.size(); ++j) {
        float value;
        if (!parse_float(w[j], value)) fail(path, line, "bad number " + shown(w[j]) + " in 'v'");
        if (j <= 3) xyz[j - 1] = value;
      }
      if (!std::isfinite(xyz[0]) || !std::isfinite(xyz[1]) || !std::isfinite(xyz[2]))
        fail(path, line, "non-finite vertex coordinate");
      if (mesh.vert.size() / 3 >= size_t{kMaxVertices}) fail(path, line, "too many vertices");
      for (int j = 0; j < 3; ++j) mesh.vert.push_back(static_cast<double>(xyz[j]));
    } else if (w[0] == "f") {
      if (w.size() < 4)
        fail(path, line, "a face needs at least 3 vertices, found " + std::to_string(w.size() - 1));
      const long long nvert = static_cast<long long>(mesh.vert.size() / 3);
      polygon.clear();
      for (size_t j = 1; j < w.size(); ++j) {
        long long index;
        if (!parse_corner(w[j], index)) fail(path, line, "bad face vertex " + shown(w[j]));
        const std::string written = shown(w[j].substr(0, w[j].find('/')));  // for messages
        if (index == 0) fail(path, line, "face index '0' (OBJ indices start at 1)");
        if (index < 0) {
          // relative to the vertices listed so far: -1 is the last one
          if (nvert + index < 0)
            fail(path, line,
                 "face index " + written + " out of range: " + std::to_string(nvert) +
                     " vertices listed before this line");
          index += nvert + 1;
        }
        if (index > max_index) max_index = index, max_index_line = line, max_index_word = written;
        polygon.push_back(static_cast<int>(index - 1));
      }
      if (mesh.face.size() / 3 + polygon.size() > size_t{kMaxVertices})
        fail(path, line, "too many faces");
      for (size_t k = 1; k + 1 < polygon.size(); ++k)  // a fan around the first corner
        mesh.face.insert(mesh.face.end(), {polygon[0], polygon[k], polygon[k + 1]});
    }
    // Anything else (vn, vt, o, g, s, usemtl, mtllib, l, ...) carries no geometry the mesh keeps;
    // MuJoCo's reader skips it too.
  }
  const long long nvert = static_cast<long long>(mesh.vert.size() / 3);
  if (max_index > nvert)
    fail(path, max_index_line,
         "face index " + max_index_word + " out of range: the file has " + std::to_string(nvert) +
             " vertices");
  return mesh;
}

}  // namespace

MeshData read_mesh_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = to_lower(c);
  if (ext != ".stl" && ext != ".obj")
    fail(path, 0,
         "unknown mesh file extension " + (ext.empty() ? std::string("(none)") : shown(ext)) +
             ": expected .stl or .obj");
  const std::string data = read_file_bytes(path);
  MeshData mesh = ext == ".stl" ? read_stl(path, data) : read_obj(path, data);
  if (mesh.face.empty()) fail(path, 0, "mesh has no faces");
  return mesh;
}

}  // namespace stiffgrad::mjcf
