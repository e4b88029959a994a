// stiffgrad — MJCF loader, private: XML access, includes, and strict attribute reading.
//
// Every element the loader looks at is an `Elem`: the tinyxml2 element plus the file it came
// from, so that every error can say "FILE:LINE: message" with the file of an <include>d part.
// Attribute readers are strict where MuJoCo 2.2.2 is strict (exact element counts for pos,
// quat, ...; "problem reading attribute" for text that is not a number) and stricter where it
// would silently accept garbage (non-finite numbers, fractional integers).
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tinyxml2.h>

#include "stiffgrad/mjcf.hpp"

namespace stiffgrad::mjcf {

// One parsed XML file (the main file or an included one). Owned by the IncludeContext.
struct Source {
  std::string path;  // as it should appear in error messages
  std::string dir;   // directory used to resolve <include file=...> inside this file
  tinyxml2::XMLDocument doc;
};

// An element together with the file it lives in.
struct Elem {
  const tinyxml2::XMLElement* el = nullptr;
  const Source* src = nullptr;

  std::string_view tag() const { return el->Name(); }
  int line() const { return el->GetLineNum(); }
  const std::string& file() const { return src->path; }

  [[noreturn]] void fail(const std::string& message) const;

  // ---- attribute access ----
  bool has(const char* name) const { return el->Attribute(name) != nullptr; }
  // Raw text; nullptr when absent.
  const char* raw(const char* name) const { return el->Attribute(name); }
  std::string str(const char* name, const std::string& fallback = "") const;

  // Reads up to `max` whitespace-separated finite doubles into out[0..n). Returns n, or 0 when
  // the attribute is absent (out untouched). Too many numbers, or fewer than `min` (when the
  // attribute is present), is an error. Entries past n keep their previous values: this is
  // MuJoCo's rule that a partial vector overrides only its leading entries.
  int doubles(const char* name, double* out, int max, int min) const;
  // Exactly n numbers (pos, quat, range, ...).
  bool exact(const char* name, double* out, int n) const { return doubles(name, out, n, n) > 0; }
  bool real(const char* name, double& out) const { return doubles(name, &out, 1, 1) > 0; }
  bool integer(const char* name, int& out) const;
  // A whitespace-separated list of finite numbers of any length (keyframe vectors, inline mesh
  // data); false when absent (out untouched).
  bool numbers(const char* name, std::vector<double>& out) const;
  // "true"/"false" into 0/1.
  bool boolean(const char* name, int& out) const;
  // "true"/"false"/"auto" into 1/0/2 (MuJoCo's tri-state limited flags).
  bool tristate(const char* name, int& out) const;
  // One of `words`, returned as its index.
  bool keyword(const char* name, std::initializer_list<const char*> words, int& out) const;
  // "enable"/"disable" into 1/0.
  bool enable(const char* name, int& out) const;

  // Every attribute must be in `known` (implemented or purely cosmetic); anything else reads
  // "unsupported attribute 'x' of <tag>", so that an attribute that would change the dynamics
  // is never silently dropped.
  void check_attributes(std::initializer_list<const char*> known) const;
  // Same, for a known list built at run time.
  void check_attributes(const std::vector<std::string_view>& known) const;

  [[noreturn]] void unsupported() const;  // "unsupported <tag>"
  [[noreturn]] void unsupported_attribute(const char* name) const;
};

// Parses numbers the strict way: a decimal literal ([+-]digits[.digits][e[+-]digits]),
// finite after conversion. Used for attributes and keyframe vectors alike.
bool parse_double(std::string_view token, double& out);
bool parse_int(std::string_view token, int& out);

// Loads files and expands <include file="..."/> while iterating children.
class IncludeContext {
 public:
  // Parses the main document (from a file or a string). Throws MjcfError on XML errors.
  const Source& load_main_file(const std::string& path);
  const Source& load_main_string(const std::string& xml, const std::string& virtual_path);

  // Calls fn(child) for every child element of `parent`, in document order, replacing each
  // <include file="F"/> by the children of F's <mujoco> root (recursively). Including a file
  // that is already being included is an error, as is an include that is not a leaf.
  void for_each_child(const Elem& parent, const std::function<void(const Elem&)>& fn);

 private:
  const Source& parse_file(const std::string& path, const std::string& shown, const Elem* from);
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<std::string> stack_;  // canonical paths of the includes being expanded
  int total_includes_ = 0;
};

}  // namespace stiffgrad::mjcf
