// stiffgrad — the main-job demonstration (`stiffgrad demo`, run by scripts/run.sh).
#pragma once

#include "stiffgrad/simulator.hpp"

namespace stiffgrad {

// Steps `--nenv` environments of one model with random controls (a new set every control step)
// from randomly perturbed initial states, first in double and then in float, and prints the
// throughput in environment-steps per second for each precision, plus a check that
// environment 0 of the batched double run equals, bit for bit, the single-state host rollout.
//
// Options (argv[0] and a leading "demo" are skipped):
//   --model PATH     MJCF file (default: MuJoCo's humanoid.xml from libmujoco-samples)
//   --nenv N         environments (default 1024)
//   --steps N        control steps per precision (default 300; one substep each)
//   --threads T      CPU threads (default 0: OpenMP's default, normally every core)
//   --backend B      cpu (default) or cuda
//   --seed S         random seed (default 1)
//   --implicit-actuators  Integrator::ImplicitDampingEuler (stiff servos at large timesteps)
// Returns the process exit status: 0 on success, 1 on bad input or a failed run, 2 on a
// usage error. Prints to stdout; load notes, warnings and errors to stderr; a failure says why
// (explicit servos at large timesteps, bodies falling forever without contacts).
int run_demo(int argc, char** argv);

// `stiffgrad demo --help`.
const char* demo_help();

// Float runs count as faster above this ratio of rates; below it the demo says why not.
constexpr double kFloatFaster = 1.1;
// Why float is not faster than double on `backend` when rate_float <= kFloatFaster rate_double
// (env-steps per second), else null.
const char* float_rate_note(Backend backend, double rate_double, double rate_float);

}  // namespace stiffgrad
