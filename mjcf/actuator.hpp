// stiffgrad — MJCF loader, private: actuator compilation and the shared "limited" rule.
#pragma once

#include <string>
#include <unordered_map>

#include "mjcf/spec.hpp"

namespace stiffgrad::mjcf {

using NameIndex = std::unordered_map<std::string, int>;

// Resolves a tri-state limited flag against its range (see the definition for the rule).
int resolve_limited(int flag, const double range[2], bool autolimits, const Elem& where,
                    const char* what, const char* range_name, const char* limited_name);

// Appends the actuator_* arrays. Needs the joints compiled (types, limits, ranges in radians).
void compile_actuators(const ParsedModel& pm, const NameIndex& joints, Model& m);

}  // namespace stiffgrad::mjcf
