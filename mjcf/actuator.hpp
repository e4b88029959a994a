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

// Appends the actuator_* arrays. Needs the joints and tendons compiled (types, limits, ranges in
// radians; tendons: their names' index).
void compile_actuators(const ParsedModel& pm, const NameIndex& joints, const NameIndex& tendons,
                       Model& m);
// <position dampratio> (MuJoCo >= 3, its mj_setConst): kv = dampratio · 2 √(kp · m), m the inertia
// the actuator sees at qpos0 through its transmission (the joint dof's diagonal of M, armature
// included, over gear²): dampratio 1 is critical damping of the servo on that inertia alone.
// Needs the finished model (its mass matrix at qpos0).
void apply_dampratios(const ParsedModel& pm, Model& m);

}  // namespace stiffgrad::mjcf
