// stiffgrad — MJCF loader: default classes.
#include "mjcf/defaults.hpp"

#include "mjcf/elements.hpp"

namespace stiffgrad::mjcf {

Defaults::Defaults() {
  DefaultClass main;
  main.name = "main";
  classes_.push_back(main);
  index_["main"] = 0;
}

void Defaults::parse_top(const Elem& e, IncludeContext& ctx, const CompilerSpec& c) {
  e.check_attributes({"class"});
  if (e.has("class") && e.str("class") != "main")
    e.fail("the top-level <default> must be class \"main\" (got \"" + e.str("class") + "\")");
  parse_class(e, 0, ctx, c);
}

// MuJoCo reads a class's own elements before its nested classes, so a nested class inherits
// everything its parent sets regardless of the order in the file.
void Defaults::parse_class(const Elem& e, int self, IncludeContext& ctx, const CompilerSpec& c) {
  ctx.for_each_child(e, [&](const Elem& child) {
    const std::string_view tag = child.tag();
    DefaultClass& d = classes_[self];
    if (tag == "default") return;
    if (tag == "joint") {
      read_joint(child, c, d.joint, true);
    } else if (tag == "geom") {
      read_geom(child, c, d.geom, true);
    } else if (tag == "motor") {
      read_actuator(child, ActuatorKind::Motor, d.actuator, true);
    } else if (tag == "position") {
      read_actuator(child, ActuatorKind::Position, d.actuator, true);
    } else if (tag == "velocity") {
      read_actuator(child, ActuatorKind::Velocity, d.actuator, true);
    } else if (tag == "general") {
      read_actuator(child, ActuatorKind::General, d.actuator, true);
    } else if (tag == "tendon") {
      read_tendon(child, d.tendon, true);
    } else if (tag == "pair") {
      read_pair(child, d.pair, true);
    } else if (tag == "mesh") {
      read_mesh(child, d.mesh, true);
    } else if (tag == "equality") {
      read_equality(child, d.equality, true);
    } else if (tag == "site" || tag == "camera" || tag == "light" || tag == "material") {
      // Rendering-only defaults.
    } else {
      // Includes the other actuator shortcuts (cylinder, muscle, ...): they would modify the
      // class's shared actuator default that motor/position/velocity/general start from.
      child.unsupported();
    }
  });
  ctx.for_each_child(e, [&](const Elem& child) {
    if (child.tag() != "default") return;
    child.check_attributes({"class"});
    if (!child.has("class")) child.fail("nested <default> needs a 'class' attribute");
    const std::string name = child.str("class");
    if (name.empty()) child.fail("empty default class name");
    if (index_.count(name)) child.fail("repeated default class name '" + name + "'");
    DefaultClass d = classes_[self];  // copy: inherit everything the parent has set
    d.name = name;
    d.parent = self;
    classes_.push_back(std::move(d));
    const int id = static_cast<int>(classes_.size()) - 1;
    index_[name] = id;
    parse_class(child, id, ctx, c);
  });
}

int Defaults::lookup(const Elem& e, const char* attr) const {
  const std::string name = e.str(attr);
  auto it = index_.find(name);
  if (it == index_.end()) e.fail("unknown default class '" + name + "'");
  return it->second;
}

int Defaults::class_of(const Elem& e, int fallback) const {
  return e.has("class") ? lookup(e, "class") : fallback;
}

}  // namespace stiffgrad::mjcf
