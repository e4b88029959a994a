#include "learn/train_checkpoint.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace stiffgrad::learn {

namespace {

constexpr char kMagic[17] = "SGTRAINCHECKPNT1";
enum Kind : int { kText = 0, kF64 = 1, kF32 = 2, kI64 = 3 };
const char* kind_name(int k) { return k == kText ? "text" : k == kF64 ? "f64" : k == kF32 ? "f32" : "i64"; }

// FNV-1a, 64-bit (Fowler, Noll, Vo): offset basis and prime from the reference.
std::uint64_t fnv1a64(const unsigned char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

template <class T>
void append(std::vector<unsigned char>& buf, const T& x) {
  const auto* p = reinterpret_cast<const unsigned char*>(&x);
  buf.insert(buf.end(), p, p + sizeof(T));
}

void append_bytes(std::vector<unsigned char>& buf, const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  buf.insert(buf.end(), b, b + n);
}

}  // namespace

void CheckpointFile::put_text(const std::string& name, const std::string& text) {
  Section s;
  s.kind = kText;
  s.text = text;
  sections_[name] = std::move(s);
}
void CheckpointFile::put(const std::string& name, const std::vector<double>& values) {
  Section s;
  s.kind = kF64;
  s.f64 = values;
  sections_[name] = std::move(s);
}
void CheckpointFile::put(const std::string& name, const std::vector<float>& values) {
  Section s;
  s.kind = kF32;
  s.f32 = values;
  sections_[name] = std::move(s);
}
void CheckpointFile::put(const std::string& name, const std::vector<std::int64_t>& values) {
  Section s;
  s.kind = kI64;
  s.i64 = values;
  sections_[name] = std::move(s);
}

void CheckpointFile::write(const std::string& path) const {
  std::vector<unsigned char> buf;
  append_bytes(buf, kMagic, 16);
  append(buf, static_cast<std::uint32_t>(sections_.size()));
  for (const auto& [name, s] : sections_) {
    append(buf, static_cast<std::uint32_t>(name.size()));
    append_bytes(buf, name.data(), name.size());
    append(buf, static_cast<std::uint8_t>(s.kind));
    switch (s.kind) {
      case kText: append(buf, static_cast<std::uint64_t>(s.text.size())); append_bytes(buf, s.text.data(), s.text.size()); break;
      case kF64: append(buf, static_cast<std::uint64_t>(s.f64.size())); append_bytes(buf, s.f64.data(), s.f64.size() * 8); break;
      case kF32: append(buf, static_cast<std::uint64_t>(s.f32.size())); append_bytes(buf, s.f32.data(), s.f32.size() * 4); break;
      default: append(buf, static_cast<std::uint64_t>(s.i64.size())); append_bytes(buf, s.i64.data(), s.i64.size() * 8); break;
    }
  }
  append(buf, fnv1a64(buf.data(), buf.size()));
  // beside the target, then renamed over it: a run killed while writing keeps its last checkpoint
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write the training checkpoint " + tmp);
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    out.flush();
    if (!out) throw std::runtime_error("writing the training checkpoint " + tmp + " failed (disk full?)");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + ec.message());
}

CheckpointFile CheckpointFile::read(const std::string& path) {
  CheckpointFile f;
  f.path_ = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("training checkpoint " + path + ": cannot open it");
  const std::vector<unsigned char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (buf.size() < 16 + 4 + 8 || std::memcmp(buf.data(), kMagic, 16) != 0)
    f.fail("not a stiffgrad training checkpoint (magic " + std::string(kMagic) + " expected)");
  const std::size_t body_end = buf.size() - 8;
  std::size_t pos = 16;
  const auto take = [&](void* out, std::size_t n) {
    if (n > body_end - pos) f.fail("truncated (a length points past the end of the file)");
    std::memcpy(out, buf.data() + pos, n);
    pos += n;
  };
  std::uint32_t count = 0;
  take(&count, 4);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t name_len = 0;
    take(&name_len, 4);
    std::string name(name_len, '\0');
    take(name.data(), name_len);
    std::uint8_t kind = 0;
    take(&kind, 1);
    std::uint64_t n = 0;
    take(&n, 8);
    if (kind > kI64) f.fail("section '" + name + "' has an unknown kind " + std::to_string(kind));
    const std::size_t width = kind == kText ? 1 : kind == kF32 ? 4 : 8;
    if (n > (body_end - pos) / width) f.fail("truncated (section '" + name + "' points past the end of the file)");
    Section s;
    s.kind = kind;
    switch (kind) {
      case kText: s.text.resize(n); take(s.text.data(), n); break;
      case kF64: s.f64.resize(n); take(s.f64.data(), n * 8); break;
      case kF32: s.f32.resize(n); take(s.f32.data(), n * 4); break;
      default: s.i64.resize(n); take(s.i64.data(), n * 8); break;
    }
    f.sections_[name] = std::move(s);
  }
  if (pos != body_end) f.fail("trailing bytes after the last section");
  std::uint64_t stored = 0;
  std::memcpy(&stored, buf.data() + body_end, 8);
  if (stored != fnv1a64(buf.data(), body_end)) f.fail("hash mismatch (file is corrupt)");
  return f;
}

void CheckpointFile::fail(const std::string& what) const {
  throw std::runtime_error("training checkpoint " + (path_.empty() ? std::string("(in memory)") : path_) + ": " + what);
}

const CheckpointFile::Section& CheckpointFile::get(const std::string& name, int kind) const {
  const auto it = sections_.find(name);
  if (it == sections_.end()) fail("no section '" + name + "'");
  if (it->second.kind != kind)
    fail("section '" + name + "' is " + kind_name(it->second.kind) + ", expected " + kind_name(kind));
  return it->second;
}

bool CheckpointFile::has(const std::string& name) const { return sections_.count(name) != 0; }

const std::string& CheckpointFile::text(const std::string& name) const { return get(name, kText).text; }

const std::vector<double>& CheckpointFile::f64(const std::string& name, std::size_t size) const {
  const auto& v = get(name, kF64).f64;
  if (size != npos && v.size() != size)
    fail("section '" + name + "' has " + std::to_string(v.size()) + " values, this run needs " + std::to_string(size));
  return v;
}
const std::vector<float>& CheckpointFile::f32(const std::string& name, std::size_t size) const {
  const auto& v = get(name, kF32).f32;
  if (size != npos && v.size() != size)
    fail("section '" + name + "' has " + std::to_string(v.size()) + " values, this run needs " + std::to_string(size));
  return v;
}
const std::vector<std::int64_t>& CheckpointFile::i64(const std::string& name, std::size_t size) const {
  const auto& v = get(name, kI64).i64;
  if (size != npos && v.size() != size)
    fail("section '" + name + "' has " + std::to_string(v.size()) + " values, this run needs " + std::to_string(size));
  return v;
}

}  // namespace stiffgrad::learn
