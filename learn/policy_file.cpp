#include "stiffgrad/learn/policy_file.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace stiffgrad::learn {

namespace {

constexpr char kMagic[8] = {'S', 'G', 'P', 'O', 'L', 'I', 'C', 'Y'};
constexpr std::uint32_t kVersion = 2;  // 2 added the task options; 1 is still read

// FNV-1a, 64-bit (Fowler, Noll, Vo): offset basis and prime from the reference.
std::uint64_t fnv1a64(const unsigned char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Parameter count of the Mlp layout in learn/mlp.hpp: W and b per layer, gain and bias per
// hidden layer.
std::uint64_t mlp_param_count(const std::vector<int>& sizes) {
  std::uint64_t count = 0;
  for (std::size_t l = 0; l + 1 < sizes.size(); ++l) {
    const std::uint64_t in = static_cast<std::uint64_t>(sizes[l]), out = static_cast<std::uint64_t>(sizes[l + 1]);
    count += out * in + out;
    if (l + 2 < sizes.size()) count += 2 * out;
  }
  return count;
}

// Little-endian writer: values go byte by byte, so the format does not depend on the host.
class Writer {
 public:
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    buf_.insert(buf_.end(), c, c + n);
  }
  void u32(std::uint32_t v) { unsigned_le(v, 4); }
  void u64(std::uint64_t v) { unsigned_le(v, 8); }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void string(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  std::vector<unsigned char>& buffer() { return buf_; }

 private:
  void unsigned_le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) buf_.push_back(static_cast<unsigned char>(v >> (8 * i)));
  }
  std::vector<unsigned char> buf_;  // the bytes written so far
};

// Bounds-checked little-endian reader; every failure names the file.
class Reader {
 public:
  Reader(const std::string& path, const std::vector<unsigned char>& buf, std::size_t end)
      : path_(path), buf_(buf), end_(end) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("load_policy: " + path_ + ": " + what);
  }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return end_ - pos_; }
  void need(std::uint64_t n, const char* what) const {
    if (n > remaining())
      fail(std::string("truncated or corrupt: ") + what + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", " + std::to_string(remaining()) + " left");
  }
  std::uint64_t unsigned_le(int n, const char* what) {
    need(static_cast<std::uint64_t>(n), what);
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(buf_[pos_ + i]) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  void skip(std::size_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(unsigned_le(4, what)); }
  std::uint64_t u64(const char* what) { return unsigned_le(8, what); }
  std::int32_t i32(const char* what) { return static_cast<std::int32_t>(u32(what)); }
  float f32(const char* what) { return std::bit_cast<float>(u32(what)); }
  double f64(const char* what) { return std::bit_cast<double>(u64(what)); }
  std::string string(const char* what) {
    const std::uint32_t n = u32(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(buf_.data() + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const std::string& path_;                // the file (for messages)
  const std::vector<unsigned char>& buf_;  // its bytes
  std::size_t end_;                        // where reading must stop (before the trailing hash)
  std::size_t pos_ = 0;                    // the next byte to read
};

// The sizes every field must agree on; `fail` reports a mismatch.
template <class Fail>
void check_consistent(const PolicyFile& p, Fail&& fail) {
  if (p.actor_sizes.size() < 2) fail("actor_sizes needs at least {in, out}, has " + std::to_string(p.actor_sizes.size()));
  for (int w : p.actor_sizes)
    if (w < 1) fail("actor_sizes has a width " + std::to_string(w) + " < 1");
  const std::uint64_t expected = mlp_param_count(p.actor_sizes);
  if (p.actor_params.size() != expected)
    fail("actor_params has " + std::to_string(p.actor_params.size()) + " values, actor_sizes imply " +
         std::to_string(expected));
  const std::size_t out = static_cast<std::size_t>(p.actor_sizes.back());
  const std::size_t in = static_cast<std::size_t>(p.actor_sizes.front());
  if (!p.log_std.empty() && p.log_std.size() != out)
    fail("log_std has " + std::to_string(p.log_std.size()) + " values, the actor outputs " + std::to_string(out));
  if (p.obs_mean.size() != p.obs_var.size())
    fail("obs_mean has " + std::to_string(p.obs_mean.size()) + " values, obs_var " + std::to_string(p.obs_var.size()));
  if (!p.obs_mean.empty() && p.obs_mean.size() != in)
    fail("obs_mean has " + std::to_string(p.obs_mean.size()) + " values, the actor takes " + std::to_string(in));
}

}  // namespace

void save_policy(const std::string& path, const PolicyFile& policy) {
  check_consistent(policy, [&](const std::string& what) -> void {
    throw std::invalid_argument("save_policy: " + path + ": " + what);
  });
  constexpr std::size_t kMax32 = std::numeric_limits<std::uint32_t>::max();
  if (policy.task.size() > kMax32 || policy.algorithm.size() > kMax32 || policy.task_options.size() > kMax32)
    throw std::invalid_argument("save_policy: " + path + ": task, algorithm or task options string too long");

  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kVersion);
  w.string(policy.task);
  w.string(policy.algorithm);
  w.string(policy.task_options);
  w.u32(static_cast<std::uint32_t>(policy.actor_sizes.size()));
  for (int s : policy.actor_sizes) w.i32(s);
  w.u64(policy.actor_params.size());
  for (float v : policy.actor_params) w.f32(v);
  w.u32(static_cast<std::uint32_t>(policy.log_std.size()));
  for (float v : policy.log_std) w.f32(v);
  w.u32(static_cast<std::uint32_t>(policy.obs_mean.size()));
  for (double v : policy.obs_mean) w.f64(v);
  for (double v : policy.obs_var) w.f64(v);
  w.f64(policy.obs_count);
  w.f64(policy.obs_clip);
  std::vector<unsigned char>& buf = w.buffer();
  w.u64(fnv1a64(buf.data(), buf.size()));

  // Write beside the target and rename, so a reader never sees a half-written policy.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("save_policy: cannot open " + tmp + " for writing");
    out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    out.close();
    if (!out) throw std::runtime_error("save_policy: failed writing " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("save_policy: cannot move " + tmp + " to " + path);
  }
}

PolicyFile load_policy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("load_policy: cannot open " + path);
  const std::vector<unsigned char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("load_policy: error reading " + path);

  constexpr std::size_t kHashBytes = 8;
  if (buf.size() < sizeof kMagic || std::memcmp(buf.data(), kMagic, sizeof kMagic) != 0)
    throw std::runtime_error("load_policy: " + path + ": not a stiffgrad policy file (bad magic)");
  if (buf.size() < sizeof kMagic + 4 + kHashBytes)
    throw std::runtime_error("load_policy: " + path + ": truncated (" + std::to_string(buf.size()) + " bytes)");

  // Parse everything before the trailing hash; a length pointing past it reports truncation.
  const std::size_t body_end = buf.size() - kHashBytes;
  Reader r(path, buf, body_end);
  r.skip(sizeof kMagic, "magic");  // checked above
  const std::uint32_t version = r.u32("version");
  if (version != 1 && version != kVersion)
    r.fail("version " + std::to_string(version) + ", this build reads versions 1 to " + std::to_string(kVersion));

  PolicyFile p;
  p.task = r.string("task spec");
  p.algorithm = r.string("algorithm");
  if (version >= 2) p.task_options = r.string("task options");
  const std::uint32_t num_sizes = r.u32("actor size count");
  r.need(4ull * num_sizes, "actor sizes");
  p.actor_sizes.resize(num_sizes);
  for (auto& s : p.actor_sizes) s = r.i32("actor sizes");
  const std::uint64_t num_params = r.u64("actor parameter count");
  if (num_params > r.remaining() / 4) r.fail("truncated or corrupt: " + std::to_string(num_params) +
                                             " actor parameters do not fit in the file");
  p.actor_params.resize(static_cast<std::size_t>(num_params));
  for (auto& v : p.actor_params) v = r.f32("actor parameters");
  const std::uint32_t num_log_std = r.u32("log_std count");
  r.need(4ull * num_log_std, "log_std");
  p.log_std.resize(num_log_std);
  for (auto& v : p.log_std) v = r.f32("log_std");
  const std::uint32_t obs_dim = r.u32("observation dimension");
  r.need(16ull * obs_dim + 16, "observation statistics");
  p.obs_mean.resize(obs_dim);
  p.obs_var.resize(obs_dim);
  for (auto& v : p.obs_mean) v = r.f64("observation mean");
  for (auto& v : p.obs_var) v = r.f64("observation variance");
  p.obs_count = r.f64("observation count");
  p.obs_clip = r.f64("observation clip");
  if (r.position() != body_end)
    r.fail(std::to_string(body_end - r.position()) + " unexpected bytes after the observation statistics");

  std::uint64_t stored = 0;
  for (std::size_t i = 0; i < kHashBytes; ++i) stored |= static_cast<std::uint64_t>(buf[body_end + i]) << (8 * i);
  if (stored != fnv1a64(buf.data(), body_end)) r.fail("hash mismatch (file is corrupt)");

  check_consistent(p, [&](const std::string& what) -> void { r.fail(what); });
  return p;
}

}  // namespace stiffgrad::learn
