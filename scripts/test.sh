#!/usr/bin/env bash
# Build stiffgrad in Release and run the whole test suite (ctest).
#
#   scripts/test.sh            # build in ./build, run every test
#
# Environment:
#   BUILD_DIR       build directory (default: build, relative to the repository root)
#   JOBS            parallel build and test jobs (default: nproc)
#   SG_DATA         the data folder (default: the repository's data/)
#   STIFFGRAD_MOTIONS_DIR  a folder holding lafan1_g1/ (the G1 reference clips, which their
#                   licence keeps out of the repository): setup.sh links data/motions/lafan1_g1
#                   to it (docs/building.md, "Data")
#   CMAKE_ARGS      extra arguments for the configure step, e.g. "-DSTIFFGRAD_CUDA=OFF"
#   SG_NO_APT=1     never call apt-get (just report missing packages)
#
# Missing Debian packages are installed with apt-get first. CUDA is used when nvcc is found
# (/usr/local/cuda); GPU tests skip themselves without a device.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

source "$ROOT/scripts/setup.sh"

echo "== test"
cd "$BUILD_DIR"
# ctest runs JOBS tests at once: each gets nproc / JOBS OpenMP threads by default (a test that
# asks for a thread count still gets it). With OpenMP's default of every core, two processes
# with two threads each on two cores ran a 6 s training test for 24 to 78 s (barriers waiting
# on a thread the other process had preempted). Set OMP_NUM_THREADS to override.
if [ -z "${OMP_NUM_THREADS:-}" ]; then
  omp_threads=$(( $(nproc) / JOBS ))
  export OMP_NUM_THREADS=$(( omp_threads > 0 ? omp_threads : 1 ))
fi
# --no-tests=error: a build that registered no test (a wrong build directory, a test binary
# whose discovery failed) is a failure, not a pass.
ctest --output-on-failure --no-tests=error --parallel "$JOBS"
