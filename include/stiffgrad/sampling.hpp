// stiffgrad — seeded states: near the reference configuration (demos, benchmarks, examples) and
// spread over the joint and control ranges (`stiffgrad states --random`).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "stiffgrad/model.hpp"
#include "stiffgrad/states_csv.hpp"

namespace stiffgrad {

// nenv states near qpos0, environment-major (nenv x nq, nenv x nv): hinge/slide coordinates
// offset by U(-pos_scale, pos_scale), free-joint positions by U(-pos_scale/2, pos_scale/2),
// quaternions (ball, free) perturbed componentwise by U(-pos_scale/2, pos_scale/2) and
// renormalized; velocities U(-vel_scale, vel_scale).
void sample_states_near_qpos0(const Model& model, int nenv, std::mt19937_64& rng, double pos_scale,
                              double vel_scale, std::vector<double>* qpos, std::vector<double>* qvel);

// nenv control sets (nenv x nu, environment-major): U(ctrlrange) for a ctrl-limited actuator,
// else U(-1, 1).
void sample_controls(const Model& model, int nenv, std::mt19937_64& rng, double* ctrl);

// `count` states spread over the model's ranges, the same for the same seed (on one standard
// library: the distributions are libstdc++'s):
//   limited hinge/slide   U(jnt_range);  unlimited ones qpos0 + U(-0.1, 0.1) (rad or m);
//   ball                  a uniformly random unit quaternion; limited: a random axis and an
//                         angle U(0, jnt_range[1]) (MuJoCo's ball limit bounds that angle);
//   free                  position qpos0 + U(-0.1, 0.1) m, orientation a uniform unit quaternion;
//   qvel                  U(-0.1, 0.1) per dof;  ctrl as sample_controls.
std::vector<StateRow> sample_states_in_range(const Model& model, int count, std::uint64_t seed);

}  // namespace stiffgrad
