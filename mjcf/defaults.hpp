// stiffgrad — MJCF loader, private: default classes.
//
// A class holds one spec per element kind, copied from its parent class when it is created
// and then modified by its own children (MuJoCo XML reference, "default"). Elements start
// from their class's spec: the explicit class attribute, else the innermost childclass of
// the enclosing bodies, else "main".
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "mjcf/spec.hpp"

namespace stiffgrad::mjcf {

struct DefaultClass {
  std::string name;
  int parent = -1;
  JointSpec joint;
  GeomSpec geom;
  ActuatorSpec actuator;
  TendonSpec tendon;
  PairSpec pair;
  MeshSpec mesh;
  EqualitySpec equality;  // solref, solimp, active
};

class Defaults {
 public:
  Defaults();  // just "main" with MuJoCo's built-in values

  // A top-level <default> (class absent or "main").
  void parse_top(const Elem& e, IncludeContext& ctx, const CompilerSpec& c);

  // Index of the class named by e's `class` attribute, or `fallback` when it has none.
  // Unknown class names are errors.
  int class_of(const Elem& e, int fallback) const;
  // Index of a class by name as written in `attr` of e (e.g. childclass); error if unknown.
  int lookup(const Elem& e, const char* attr) const;
  const DefaultClass& get(int i) const { return classes_[i]; }

 private:
  void parse_class(const Elem& e, int self, IncludeContext& ctx, const CompilerSpec& c);
  std::vector<DefaultClass> classes_;
  std::unordered_map<std::string, int> index_;
};

}  // namespace stiffgrad::mjcf
