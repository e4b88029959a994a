// learn::save_policy / load_policy: bit-exact round trip and rejection of damaged files.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "stiffgrad/learn/policy_file.hpp"
#include "stiffgrad/learn/task.hpp"

namespace {

using namespace stiffgrad::learn;

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "stiffgrad_policy_" + std::to_string(::getpid()) + "_" + name;
}

// Mlp parameter count written out independently of the library: {5, 4, 3} has
// W0 4x5 + b0 4 + gain/bias 2x4, then W1 3x4 + b1 3.
constexpr std::size_t kParams543 = 4 * 5 + 4 + 2 * 4 + 3 * 4 + 3;

PolicyFile sample_policy() {
  PolicyFile p;
  p.task = "g1-imitate:run1_subject2";
  p.algorithm = "shac";
  p.task_options = "contact=impulse kappa=300 servo-targets=reference";
  p.actor_sizes = {5, 4, 3};
  for (std::size_t i = 0; i < kParams543; ++i) p.actor_params.push_back(0.1f * static_cast<float>(i) - 1.3f);
  // Values whose bits a lossy writer would change.
  p.actor_params[0] = -0.0f;
  p.actor_params[1] = std::numeric_limits<float>::denorm_min();
  p.actor_params[2] = std::numeric_limits<float>::quiet_NaN();
  p.actor_params[3] = -std::numeric_limits<float>::infinity();
  p.log_std = {-0.5f, 0.125f, -1e-30f};
  p.obs_mean = {0.1, -0.2, 1e300, -0.0, 3.0};
  p.obs_var = {1.0, 2.5, 1e-300, 4.0, 0.3};
  p.obs_count = 123456.0001;
  p.obs_clip = 5.0;
  return p;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// load_policy must throw std::runtime_error naming the file.
void expect_load_error(const std::string& path, const std::string& case_name) {
  try {
    load_policy(path);
    ADD_FAILURE() << case_name << ": load_policy accepted the file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << case_name << ": " << e.what();
  }
}

TEST(PolicyFile, RoundTripIsBitExact) {
  const std::string path = temp_path("roundtrip.sgp");
  const PolicyFile p = sample_policy();
  save_policy(path, p);
  const PolicyFile q = load_policy(path);
  EXPECT_EQ(q.task, p.task);
  EXPECT_EQ(q.algorithm, p.algorithm);
  EXPECT_EQ(q.task_options, p.task_options);
  EXPECT_EQ(q.actor_sizes, p.actor_sizes);
  EXPECT_TRUE(same_bits(q.actor_params, p.actor_params));
  EXPECT_TRUE(same_bits(q.log_std, p.log_std));
  EXPECT_TRUE(same_bits(q.obs_mean, p.obs_mean));
  EXPECT_TRUE(same_bits(q.obs_var, p.obs_var));
  EXPECT_TRUE(std::memcmp(&q.obs_count, &p.obs_count, sizeof(double)) == 0);
  EXPECT_TRUE(std::memcmp(&q.obs_clip, &p.obs_clip, sizeof(double)) == 0);

  // The size is what the format in policy_file.hpp implies: nothing more, nothing less.
  const std::size_t expected_bytes = 8 + 4 + (4 + p.task.size()) + (4 + p.algorithm.size()) +
                                     (4 + p.task_options.size()) + 4 + 4 * 3 + 8 + 4 * kParams543 + 4 + 4 * 3 + 4 +
                                     8 * 5 * 2 + 8 + 8 + 8;
  const std::vector<char> bytes = read_bytes(path);
  EXPECT_EQ(bytes.size(), expected_bytes);
  EXPECT_EQ(std::string(bytes.data(), 8), "SGPOLICY");
  EXPECT_EQ(bytes[8], 2);  // version 2, little-endian
  EXPECT_EQ(bytes[9] | bytes[10] | bytes[11], 0);

  // Empty log_std and no normalizer are allowed too.
  PolicyFile bare = p;
  bare.log_std.clear();
  bare.obs_mean.clear();
  bare.obs_var.clear();
  save_policy(path, bare);
  const PolicyFile r = load_policy(path);
  EXPECT_TRUE(r.log_std.empty());
  EXPECT_TRUE(r.obs_mean.empty() && r.obs_var.empty());
  EXPECT_TRUE(same_bits(r.actor_params, p.actor_params));
  std::remove(path.c_str());
}

// FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3), written out here.
std::uint64_t fnv1a(const std::vector<char>& b, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(b[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

TEST(PolicyFile, VersionOneFilesStillLoad) {
  // a version-1 file, built from a version-2 one: version 1, no task-options string, the hash
  // recomputed; it loads with empty task options and everything else unchanged
  const std::string path = temp_path("v1.sgp");
  const PolicyFile p = sample_policy();
  save_policy(path, p);
  std::vector<char> b = read_bytes(path);
  const std::size_t options_at = 8 + 4 + (4 + p.task.size()) + (4 + p.algorithm.size());
  ASSERT_EQ(static_cast<unsigned char>(b[options_at]), p.task_options.size());
  b.erase(b.begin() + static_cast<std::ptrdiff_t>(options_at),
          b.begin() + static_cast<std::ptrdiff_t>(options_at + 4 + p.task_options.size()));
  b[8] = 1;
  const std::size_t body = b.size() - 8;
  const std::uint64_t h = fnv1a(b, body);
  for (int i = 0; i < 8; ++i) b[body + static_cast<std::size_t>(i)] = static_cast<char>(h >> (8 * i));
  write_bytes(path, b);
  const PolicyFile q = load_policy(path);
  EXPECT_TRUE(q.task_options.empty());
  EXPECT_EQ(q.task, p.task);
  EXPECT_EQ(q.algorithm, p.algorithm);
  EXPECT_TRUE(same_bits(q.actor_params, p.actor_params));
  EXPECT_TRUE(same_bits(q.obs_var, p.obs_var));
  // a version this build does not know is refused, naming the file
  b[8] = 3;
  write_bytes(path, b);
  expect_load_error(path, "version 3");
  std::remove(path.c_str());
}

TEST(TaskOptionsWords, RoundTripAndErrors) {
  TaskOptions o;
  o.contact = stiffgrad::ContactModel::Soft;
  o.kappa = 0.1 + 0.2;  // not a short decimal: the words must keep every bit
  o.episode_steps = 17;
  o.explicit_servos = true;
  o.servo_targets = TaskOptions::ServoTargets::Reference;
  o.action_scale = 1.0 / 3.0;
  o.clip_begin = 95.0 + 1.0 / 3.0;
  o.clip_end = 105.1;
  const std::string words = format_task_options(o);
  TaskOptions r;
  parse_task_options(words, &r);
  EXPECT_EQ(r.contact, o.contact);
  EXPECT_EQ(r.kappa, o.kappa);
  EXPECT_EQ(r.episode_steps, o.episode_steps);
  EXPECT_EQ(r.explicit_servos, o.explicit_servos);
  EXPECT_EQ(r.servo_targets, o.servo_targets);
  EXPECT_EQ(r.action_scale, o.action_scale);
  EXPECT_EQ(r.clip_begin, o.clip_begin);
  EXPECT_EQ(r.clip_end, o.clip_end);
  EXPECT_EQ(format_task_options(r), words);
  EXPECT_EQ(format_task_options(TaskOptions{}).find("servo-targets=home"), format_task_options(TaskOptions{}).find("servo-targets="));
  // words it does not name are left as they were
  TaskOptions partial = o;
  parse_task_options("kappa=50", &partial);
  EXPECT_EQ(partial.kappa, 50.0);
  EXPECT_EQ(partial.servo_targets, TaskOptions::ServoTargets::Reference);
  for (const char* bad : {"kappa=", "kappa=abc", "contact=rubber", "servo-targets=ref", "explicit-servos=2",
                          "episode-steps=1.5", "colour=red", "kappa", "clip-window=3", "clip-window=a:5",
                          "clip-window=5:2", "clip-window=-1:4", "clip-window=2:"}) {
    TaskOptions t;
    try {
      parse_task_options(bad, &t);
      ADD_FAILURE() << bad << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(PolicyFile, DamagedFilesAreRejectedNamingThePath) {
  const std::string good = temp_path("good.sgp");
  save_policy(good, sample_policy());
  const std::vector<char> bytes = read_bytes(good);
  ASSERT_GT(bytes.size(), 100u);

  const std::string truncated = temp_path("truncated.sgp");
  for (std::size_t keep : {std::size_t{0}, std::size_t{5}, std::size_t{12}, bytes.size() / 2, bytes.size() - 1}) {
    write_bytes(truncated, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    expect_load_error(truncated, "truncated to " + std::to_string(keep));
  }

  // A flipped byte anywhere after the magic: in a parameter (hash mismatch), in a length field.
  const std::string flipped = temp_path("flipped.sgp");
  for (std::size_t at : {bytes.size() / 2, std::size_t{12}, bytes.size() - 3}) {
    std::vector<char> damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    write_bytes(flipped, damaged);
    expect_load_error(flipped, "byte " + std::to_string(at) + " flipped");
  }

  const std::string magic = temp_path("magic.sgp");
  std::vector<char> wrong_magic = bytes;
  wrong_magic[0] = 'X';
  write_bytes(magic, wrong_magic);
  expect_load_error(magic, "wrong magic");

  const std::string extra = temp_path("extra.sgp");
  std::vector<char> longer = bytes;
  longer.insert(longer.end() - 8, 'z');  // an extra byte before the hash
  write_bytes(extra, longer);
  expect_load_error(extra, "trailing byte");

  expect_load_error(temp_path("does_not_exist.sgp"), "nonexistent");
  for (const auto& f : {good, truncated, flipped, magic, extra}) std::remove(f.c_str());
}

TEST(PolicyFile, InconsistentSizesAreRejectedOnSave) {
  const std::string path = temp_path("inconsistent.sgp");
  auto expect_reject = [&](const PolicyFile& p, const char* what) {
    try {
      save_policy(path, p);
      ADD_FAILURE() << what << ": save_policy accepted it";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  };
  PolicyFile p = sample_policy();
  p.actor_params.pop_back();
  expect_reject(p, "one parameter short");
  p = sample_policy();
  p.actor_params.push_back(0.f);
  expect_reject(p, "one parameter extra");
  p = sample_policy();
  p.actor_sizes = {5, 4, 2, 3};  // a layer more: the count no longer matches
  expect_reject(p, "sizes of another layout");
  p = sample_policy();
  p.actor_sizes = {5};
  expect_reject(p, "a single width");
  p = sample_policy();
  p.log_std.push_back(0.f);
  expect_reject(p, "log_std longer than the output");
  p = sample_policy();
  p.obs_var.pop_back();
  expect_reject(p, "mean and var differ");
  p = sample_policy();
  p.obs_mean.push_back(0.0);
  p.obs_var.push_back(1.0);
  expect_reject(p, "normalizer of another input size");
  std::ifstream none(path);
  EXPECT_FALSE(none.good()) << "a rejected save must not leave a file";
}

}  // namespace
