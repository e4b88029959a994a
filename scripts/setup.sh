# Sourced by scripts/run.sh and scripts/test.sh: installs missing Debian packages, then
# configures and builds stiffgrad in Release in $BUILD_DIR (default build). Expects ROOT.
# Environment: BUILD_DIR, JOBS, SG_DATA, STIFFGRAD_MOTIONS_DIR, CMAKE_ARGS, SG_NO_APT (see
# scripts/test.sh).

PACKAGES=(cmake g++ make libeigen3-dev libtinyxml2-dev libgtest-dev libgmock-dev googletest
          libbenchmark-dev libmujoco-dev libmujoco-samples libomp-dev
          python3        # scripts/*.py and the readme_headline test
          libqhull-dev   # mesh convex hulls (mjcf/mesh.cpp); Debian's mujoco::mujoco names /usr/include/libqhull_r
          gnuplot-nox)   # the experiments' plots (scripts/experiments.py)

install_missing_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing missing packages: ${missing[*]}"
  if [ "${SG_NO_APT:-0}" = 1 ]; then
    echo "SG_NO_APT=1: not installing; the build may fail" >&2
    return 0
  fi
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}"
}

install_missing_packages

# The G1 reference clips (LAFAN1 retargeted) may not be copied into the repository (their
# licence: data/motions/README.md). They are read where they are: data/motions/lafan1_g1 is a
# link (ignored by git) to $STIFFGRAD_MOTIONS_DIR/lafan1_g1. Without them the G1 training
# tests fail, naming the missing file.
link_motions() {
  local link="$ROOT/data/motions/lafan1_g1"
  [ -e "$link" ] && return 0
  if [ -n "${STIFFGRAD_MOTIONS_DIR:-}" ] && [ -d "$STIFFGRAD_MOTIONS_DIR/lafan1_g1" ]; then
    ln -sfn "$(cd "$STIFFGRAD_MOTIONS_DIR/lafan1_g1" && pwd)" "$link"
    echo "== motions: $link -> $(readlink "$link")"
  else
    echo "== motions: $link is missing and STIFFGRAD_MOTIONS_DIR does not hold lafan1_g1/" \
         "(data/motions/README.md says where to get the clips); the G1 training tests will fail" >&2
  fi
}
link_motions

BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
config_args=(-DCMAKE_BUILD_TYPE=Release)
[ -n "${SG_DATA:-}" ] && config_args+=("-DSG_DATA=${SG_DATA}")
# CI (CI=true) has no GPU: it only checks that the CUDA backend compiles, so one architecture
# (sm_90, the device machine's) suffices; the constraint adjoint makes each architecture cost
# minutes of ptxas time on two cores. A CMAKE_CUDA_ARCHITECTURES in CMAKE_ARGS wins.
if [ "${CI:-}" = true ] && [[ "${CMAKE_ARGS:-}" != *CMAKE_CUDA_ARCHITECTURES* ]]; then
  config_args+=(-DCMAKE_CUDA_ARCHITECTURES=90)
fi
# shellcheck disable=SC2206
[ -n "${CMAKE_ARGS:-}" ] && config_args+=(${CMAKE_ARGS})

echo "== configure ($BUILD_DIR)"
cmake -S "$ROOT" -B "$BUILD_DIR" "${config_args[@]}"
echo "== build ($JOBS jobs)"
cmake --build "$BUILD_DIR" --parallel "$JOBS"
