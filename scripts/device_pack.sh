#!/usr/bin/env bash
# Pack a CUDA build made on this machine for the device machine, so that the device's minutes
# go to running the GPU tests and benchmarks rather than to building them (the device machine
# has nvcc but none of the Debian packages the build needs, and no network to fetch them).
#
#   scripts/device_pack.sh [BUILD_DIR] [PACK_DIR]     # defaults: build, .device-pack
#
# BUILD_DIR must be configured with -DSTIFFGRAD_CUDA=ON and CMAKE_CUDA_ARCHITECTURES holding 90
# (the H200), with stiffgrad_gpu_tests, stiffgrad_cli, bench_forward, bench_backward and bench_gpu_contact built.
# Configure it with -DBUILD_SHARED_LIBS=ON -DCMAKE_CUDA_ARCHITECTURES=90-real: a static build
# puts the ~23 MB of device code in each of the four executables, and a device call carries at
# most 64 MiB with the working tree (the shared pack is about 27 MB).
# PACK_DIR (ignored by git; never committed) receives:
#   bin/   the five executables
#   lib/   the shared libraries they need that are not glibc's or the CUDA driver's, as ldd
#          resolves them here (libmujoco, libtinyxml2, libbenchmark, libgomp, libstdc++, ...)
#   data/  the shared models and the run1_subject2 clip (read by the G1 tests and the training
#          throughput runs), and MuJoCo's humanoid from libmujoco-samples
#   flags.make  the CUDA compile flags of the library (device_check.sh checks -fmad=false)
# Then on the device machine: SG_PREBUILT=.device-pack scripts/device_check.sh, carrying
# PACK_DIR. The motion data's licence forbids copying it into the project: the pack is a
# transient, ignored folder.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
PACK="${2:-$ROOT/.device-pack}"
DATA="${SG_DATA:-$ROOT/data}"
MJ_MODELS="${SG_MUJOCO_MODELS:-/usr/share/mujoco/model}"

grep -q "CMAKE_CUDA_ARCHITECTURES:.*90" "$BUILD/CMakeCache.txt" ||
  { echo "device_pack: $BUILD is not configured for sm_90 (CMAKE_CUDA_ARCHITECTURES)" >&2; exit 2; }

bins=("$BUILD/tests/stiffgrad_gpu_tests" "$BUILD/stiffgrad" "$BUILD/bench/bench_forward"
      "$BUILD/bench/bench_backward" "$BUILD/bench/bench_gpu_contact")
for b in "${bins[@]}"; do
  [[ -x $b ]] || { echo "device_pack: $b is not built" >&2; exit 2; }
done

rm -rf "$PACK"
mkdir -p "$PACK/bin" "$PACK/lib" "$PACK/data/motions/lafan1_g1" "$PACK/mujoco_models"
cp "${bins[@]}" "$PACK/bin/"
strip --strip-debug "$PACK"/bin/* 2>/dev/null || true

# Libraries: everything ldd resolves except glibc's own (the loader, libc, libm, libpthread,
# libdl, librt; the device's are newer, and glibc is backward compatible), the CUDA driver
# (libcuda, which must be the device's own) and the CUDA toolkit's (cuBLAS is hundreds of MB;
# the device has the same CUDA 13 under /usr/local/cuda).
for b in "${bins[@]}"; do ldd "$b"; done | awk '/=> \// {print $1, $3}' | sort -u |
  while read -r name path; do
    case "$name" in
      ld-linux*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|libcuda.so*|linux-vdso*) ;;
      *) [[ $path == /usr/local/cuda* ]] || cp -L "$path" "$PACK/lib/$name" ;;
    esac
  done

cp -rL "$DATA/models" "$PACK/data/"
cp -L "$DATA/motions/lafan1_g1/run1_subject2.csv" "$DATA/motions/lafan1_g1/LICENSE" \
   "$DATA/motions/lafan1_g1/README.md" "$PACK/data/motions/lafan1_g1/"
cp -r "$MJ_MODELS/humanoid" "$PACK/mujoco_models/"
cp "$BUILD/CMakeFiles/stiffgrad.dir/flags.make" "$PACK/flags.make"
chmod -R u+w "$PACK"
git -C "$ROOT" rev-parse --short HEAD > "$PACK/commit.txt"
git -C "$ROOT" diff --quiet || echo "(dirty)" >> "$PACK/commit.txt"

du -sh "$PACK" "$PACK"/*
echo "packed $(ls "$PACK/lib" | wc -l) libraries: $(ls "$PACK/lib" | tr '\n' ' ')"
