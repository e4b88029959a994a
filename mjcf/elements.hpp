// stiffgrad — MJCF loader, private: attribute readers for the elements that carry physics.
//
// Each reader applies the attributes of one XML element on top of a spec that already holds
// the class defaults; the same reader serves <default> children (in_default = true, where
// names and references are not allowed) and real elements.
#pragma once

#include "mjcf/spec.hpp"

namespace stiffgrad::mjcf {

void read_joint(const Elem& e, const CompilerSpec& c, JointSpec& j, bool in_default);
void read_geom(const Elem& e, const CompilerSpec& c, GeomSpec& g, bool in_default);
void read_inertial(const Elem& e, const CompilerSpec& c, InertialSpec& in);
void read_tendon(const Elem& e, TendonSpec& t, bool in_default);
void read_pair(const Elem& e, PairSpec& p, bool in_default);
// <connect>, <weld>, <joint> or <tendon> of <equality> (the kind from the tag), or an
// <equality> default (solref, solimp, active only).
void read_equality(const Elem& e, EqualitySpec& q, bool in_default);
// <mesh> of <asset> (file, scale, refpos, refquat) or of a default class (scale only).
void read_mesh(const Elem& e, MeshSpec& m, bool in_default);
// kind comes from the tag (motor, position, velocity, general).
void read_actuator(const Elem& e, ActuatorKind kind, ActuatorSpec& a, bool in_default);

// Attributes that MuJoCo accepts and that would change the dynamics, but that stiffgrad only
// supports at their default value: present with any other value is "unsupported attribute".
void require_default(const Elem& e, const char* name, std::initializer_list<double> defaults);
void require_keyword(const Elem& e, const char* name, const char* only_value);

}  // namespace stiffgrad::mjcf
