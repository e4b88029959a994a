// stiffgrad — seeded states near the reference configuration (demos, benchmarks, examples).
#pragma once

#include <random>
#include <vector>

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// nenv states near qpos0, environment-major (nenv x nq, nenv x nv): hinge/slide coordinates
// offset by U(-pos_scale, pos_scale), free-joint positions by U(-pos_scale/2, pos_scale/2),
// quaternions (ball, free) perturbed componentwise by U(-pos_scale/2, pos_scale/2) and
// renormalized; velocities U(-vel_scale, vel_scale).
void sample_states_near_qpos0(const Model& model, int nenv, std::mt19937_64& rng, double pos_scale,
                              double vel_scale, std::vector<double>* qpos, std::vector<double>* qvel);

}  // namespace stiffgrad
