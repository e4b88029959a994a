// stiffgrad — the main-job demonstration (`stiffgrad demo`, run by scripts/run.sh).
#pragma once

namespace stiffgrad {

// Steps `--nenv` environments of one model with random controls (a new set every control step)
// from randomly perturbed initial states, first in double and then in float, and prints the
// throughput in environment-steps per second for each precision, plus a check that
// environment 0 of the batched double run equals the single-state host rollout.
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
// usage error. Prints to stdout, errors to stderr; a failure says why (no contacts yet,
// explicit servos at large timesteps).
int run_demo(int argc, char** argv);

}  // namespace stiffgrad
