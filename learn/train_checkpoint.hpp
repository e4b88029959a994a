// A training run's whole state on disk (TrainOptions::checkpoint_path / resume_from), so that a
// run longer than one sitting goes on where it stopped: named sections of numbers or text.
//
// File format (little-endian, version 1):
//   16 bytes  magic "SGTRAINCHECKPNT1"
//   u32       section count S, then S sections:
//     string  name (u32 length, then bytes)
//     u8      kind: 0 text, 1 f64, 2 f32, 3 i64
//     u64     count (bytes for text, elements otherwise), then the payload
//   u64       FNV-1a 64-bit hash of every byte before it
// read() checks the magic, every length against the file's size and the hash, and throws
// std::runtime_error naming the file and what is wrong; a missing section or one of the wrong
// kind or size is named the same way when it is asked for. write() writes `path`.tmp and
// renames it over path, so a run killed while writing leaves the previous checkpoint whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stiffgrad::learn {

class CheckpointFile {
 public:
  void put_text(const std::string& name, const std::string& text);
  void put(const std::string& name, const std::vector<double>& values);
  void put(const std::string& name, const std::vector<float>& values);
  void put(const std::string& name, const std::vector<std::int64_t>& values);
  void write(const std::string& path) const;

  static CheckpointFile read(const std::string& path);
  // The section `name` of its kind; `size` (when not npos) is the element count it must have.
  const std::string& text(const std::string& name) const;
  const std::vector<double>& f64(const std::string& name, std::size_t size = npos) const;
  const std::vector<float>& f32(const std::string& name, std::size_t size = npos) const;
  const std::vector<std::int64_t>& i64(const std::string& name, std::size_t size = npos) const;
  bool has(const std::string& name) const;
  const std::string& path() const { return path_; }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  struct Section {
    int kind = 0;  // the file format's kind (0 text, 1 f64, 2 f32, 3 i64): which member below holds it
    std::string text;
    std::vector<double> f64;
    std::vector<float> f32;
    std::vector<std::int64_t> i64;
  };
  const Section& get(const std::string& name, int kind) const;
  [[noreturn]] void fail(const std::string& what) const;
  std::map<std::string, Section> sections_;
  std::string path_;  // read(): the file it came from (for messages)
};

}  // namespace stiffgrad::learn
