#!/usr/bin/env bash
# Device check: build with the CUDA backend and run the GPU tests on a machine with a GPU:
# CPU-vs-GPU agreement (finite bounds calibrated on the CPU), smooth and with contact (the
# *_contact cases and GpuRollout.ContactGradientsAgreeWithCpu: constraints on, from states in
# persistent contact), bitwise replay of the forward pass by the backward pass on the device
# with and without contact (GpuRollout.ReplayIsBitwise, required to pass), the stream-ordering
# contract (GpuStream.*), Bundled Contact Gradients against the CPU (GpuBundles.*), the
# networks on the device (GpuMlp.*), a policy in the loop with its VJP on the device
# (GpuPolicyRollout.*), SHAC on the CUDA backend against the CPU (GpuTrain.*), then the
# forward/backward benchmarks and training throughput.
#
# Run from the repository root on the device machine (H200, CUDA 13, fresh Debian):
#   scripts/device_check.sh
# Writes a short report to $OUT/device_report.txt and full logs to $OUT/*.log (at most 8
# files in all come back from a device run: the report plus 6 logs). Exits non-zero when the
# GPU tests fail, cannot be built, or find no device. Every phase runs under `timeout`; the
# whole script stays under 8 minutes.
#
# Environment:
#   OUT             where the report and logs go (default: ./device_out)
#   SG_DATA         the data folder (default: the repository's data/; the motion clips under
#                   data/motions/lafan1_g1 are a link that scripts/setup.sh makes, and the
#                   device machine needs them carried: scripts/device_pack.sh copies them)
#   SG_DEVICE_BUILD the build folder (default: ./build-device)
#   SG_JOBS         parallel build jobs (default: 16)
#   SG_DEBS_DIR     a folder of .deb files to install offline (the device machine has no
#                   network; apt-get can only use what is already there or carried)
#   SG_PREBUILT     a folder made here by scripts/device_pack.sh (the executables, the shared
#                   libraries they need, the data): no packages, no build; the GPU tests run in
#                   one process, each failure rerun alone (scripts/run_gtest_each.sh); the CPU suite is left to
#                   the machine that built them. The device machine has nvcc but none of the
#                   Debian packages, and no network: this is how the check runs there.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
OUT="${OUT:-$ROOT/device_out}"
mkdir -p "$OUT"
REPORT="$OUT/device_report.txt"
BUILD="${SG_DEVICE_BUILD:-$ROOT/build-device}"
START=$(date +%s)
JOBS="${SG_JOBS:-16}"
BUDGET=470          # seconds for the whole script (< 8 minutes)
FAILED=0

: >"$REPORT"
note() { echo "$*" | tee -a "$REPORT"; }
elapsed() { echo $(( $(date +%s) - START )); }
# Seconds a phase may take: its own limit, capped by what is left of the budget.
limit() {
  local want=$1 left=$(( BUDGET - $(date +%s) + START ))
  (( left < 5 )) && left=5
  (( want < left )) && echo "$want" || echo "$left"
}
# phase NAME LIMIT LOG CMD...: runs CMD under timeout, appending to LOG; returns CMD's status.
phase() {
  local name=$1 want=$2 log=$3; shift 3
  local t0 lim rc
  t0=$(date +%s); lim=$(limit "$want")
  echo "=== $name ($(date -u +%H:%M:%S), limit ${lim}s): $*" >>"$log"
  timeout --kill-after=10 "$lim" "$@" >>"$log" 2>&1
  rc=$?
  local msg="ok"
  (( rc == 124 || rc == 137 )) && msg="TIMED OUT after ${lim}s"
  (( rc != 0 && rc != 124 && rc != 137 )) && msg="FAILED (exit $rc)"
  note "$(printf '%-22s %-26s %4ss' "$name" "$msg" "$(( $(date +%s) - t0 ))")"
  return $rc
}

note "stiffgrad device check  $(date -u '+%Y-%m-%d %H:%M:%S UTC')  commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
note "host: $(uname -srm), $(nproc) cores"

# ---- GPU ----
note "--- nvidia-smi -L"
if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 30 nvidia-smi -L 2>&1 | tee -a "$REPORT"
  timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$REPORT"
else
  note "nvidia-smi not found"
fi

PREBUILT="${SG_PREBUILT:-}"
if [[ -n $PREBUILT ]]; then
  PREBUILT="$(cd "$PREBUILT" && pwd)" || { note "SG_PREBUILT: no such folder"; exit 2; }
  BUDGET=${SG_DEVICE_BUDGET:-500}
  # cuBLAS and the CUDA runtime are not packed: the device's CUDA 13 toolkit, else the CUDA 13
  # wheels beside its PyTorch.
  CUDA_LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib
  for d in /opt/torch/.venv/lib/python3*/site-packages/nvidia/{cu13,cublas,cuda_runtime}/lib; do
    [[ -d $d ]] && CUDA_LIBS+=":$d"
  done
  export LD_LIBRARY_PATH="$PREBUILT/lib:$CUDA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export SG_DATA="${SG_DATA:-$PREBUILT/data}"
  export SG_MUJOCO_MODELS="$PREBUILT/mujoco_models"
  note "prebuilt: $PREBUILT, built here from commit $(tr '\n' ' ' <"$PREBUILT/commit.txt")"
  note "SG_DATA=$SG_DATA"
  GPU_TESTS_BIN="$PREBUILT/bin/stiffgrad_gpu_tests"
  CLI="$PREBUILT/bin/stiffgrad"
  BENCH="$PREBUILT/bin/bench_forward"
  BENCH_BW="$PREBUILT/bin/bench_backward"
  BENCH_GC="$PREBUILT/bin/bench_gpu_contact"
  FLAGS_MAKE="$PREBUILT/flags.make"
  # A library the device lacks shows here, before any phase spends its time on it.
  MISSING_LIBS=$(for b in "$PREBUILT"/bin/*; do ldd "$b" | grep "not found" | sed "s|^|$(basename "$b"): |"; done)
  if [[ -n $MISSING_LIBS ]]; then
    note "missing shared libraries:"; note "$MISSING_LIBS"
    note "RESULT: FAIL (libraries)"; exit 4
  fi
  if ! "$GPU_TESTS_BIN" --gtest_list_tests >"$OUT/gpu_list.log" 2>&1; then
    note "the GPU test binary does not start:"; tail -n 20 "$OUT/gpu_list.log" | tee -a "$REPORT"
    note "RESULT: FAIL (start)"; exit 5
  fi
else
GPU_TESTS_BIN="$BUILD/tests/stiffgrad_gpu_tests"
CLI="$BUILD/stiffgrad"
BENCH="$BUILD/bench/bench_forward"
BENCH_BW="$BUILD/bench/bench_backward"
BENCH_GC="$BUILD/bench/bench_gpu_contact"
FLAGS_MAKE="$BUILD/CMakeFiles/stiffgrad.dir/flags.make"
# ---- packages (same list as scripts/test.sh); apt only for what is missing ----
PKGS=(cmake g++ make libeigen3-dev libtinyxml2-dev libgtest-dev libgmock-dev googletest
      libbenchmark-dev libmujoco-dev libmujoco-samples libomp-dev libqhull-dev)
MISSING=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || MISSING+=("$p")
done
SUDO=""
[[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1 && SUDO="sudo -n"
if [[ -n "${SG_DEBS_DIR:-}" && -d "${SG_DEBS_DIR}" ]]; then
  phase "install carried .debs" 120 "$OUT/apt.log" \
    env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "$(cd "$SG_DEBS_DIR" && pwd)"/*.deb
fi
if (( ${#MISSING[@]} )); then
  note "missing packages: ${MISSING[*]}"
  phase "apt-get update" 90 "$OUT/apt.log" env DEBIAN_FRONTEND=noninteractive $SUDO apt-get update -qq
  phase "apt-get install" 150 "$OUT/apt.log" \
    env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${MISSING[@]}"
else
  note "packages: all present"
fi

# ---- data (models vendored in data/; the motion clip must be carried) ----
export SG_DATA="${SG_DATA:-$ROOT/data}"
note "SG_DATA=$SG_DATA"
[[ -f "$SG_DATA/motions/lafan1_g1/run1_subject2.csv" ]] ||
  note "motion clip missing under $SG_DATA/motions/lafan1_g1 (the G1 training tests will fail)"

# ---- configure and build ----
NVCC=/usr/local/cuda/bin/nvcc
[[ -x $NVCC ]] || NVCC=$(command -v nvcc || true)
note "nvcc: ${NVCC:-not found} $( [[ -n $NVCC ]] && $NVCC --version | tail -n 2 | head -n 1)"
CMAKE_ARGS=(-S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTIFFGRAD_CUDA=ON
            -DCMAKE_CUDA_ARCHITECTURES=90 -DSTIFFGRAD_TESTS=ON -DSTIFFGRAD_BENCH=ON)
[[ -n $NVCC ]] && CMAKE_ARGS+=(-DCMAKE_CUDA_COMPILER="$NVCC")
[[ -n "${SG_DATA:-}" ]] && CMAKE_ARGS+=(-DSG_DATA="$SG_DATA")
# CMake < 3.26 does not know nvcc's C++20 flag (CUDA_STANDARD 20 fails at generation); tell it.
CMAKE_VER=$(cmake --version 2>/dev/null | head -n 1 | awk '{print $3}')
if [[ -n $CMAKE_VER ]] && [[ "$(printf '%s\n3.26\n' "$CMAKE_VER" | sort -V | head -n 1)" != "3.26" ]]; then
  CMAKE_ARGS+=(-DCMAKE_CUDA20_STANDARD_COMPILE_OPTION=-std=c++20
               -DCMAKE_CUDA20_EXTENSION_COMPILE_OPTION=-std=c++20)
fi
if ! phase "configure" 90 "$OUT/configure.log" cmake "${CMAKE_ARGS[@]}"; then
  if grep -q "libqhull_r" "$OUT/configure.log"; then
    # Debian's mujoco CMake package names /usr/include/libqhull_r (libqhull-dev) without
    # depending on it. The CPU test build requires MuJoCo (tests/CMakeLists.txt), so retry with
    # the GPU tests alone (STIFFGRAD_GPU_TESTS_ONLY) and say so in the report.
    note "configure: mujoco::mujoco needs /usr/include/libqhull_r (libqhull-dev); retrying with the GPU tests only (no MuJoCo, no CPU tests)"
    CMAKE_ARGS+=(-DCMAKE_DISABLE_FIND_PACKAGE_mujoco=ON -DSTIFFGRAD_GPU_TESTS_ONLY=ON)
    phase "configure (no mujoco)" 90 "$OUT/configure.log" cmake "${CMAKE_ARGS[@]}" || CONFIGURE_FAILED=1
  else
    CONFIGURE_FAILED=1
  fi
fi
if [[ -n "${CONFIGURE_FAILED:-}" ]]; then
  note "configure failed: see configure.log"; tail -n 20 "$OUT/configure.log" >>"$REPORT"
  note "RESULT: FAIL (configure)"; exit 2
fi
# The GPU tests first, so that a broken CPU test or benchmark cannot hide them.
if ! phase "build gpu tests" 240 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" --target stiffgrad_gpu_tests; then
  note "build of the GPU tests failed: see build.log"
  grep -E "error|Error" "$OUT/build.log" | head -n 20 >>"$REPORT"
  note "RESULT: FAIL (build)"; exit 3
fi
phase "build bench_forward" 90 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" --target bench_forward
phase "build bench_backward" 90 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" --target bench_backward
phase "build bench_gpu_contact" 60 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" --target bench_gpu_contact
phase "build all" 150 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" || FAILED_BUILD_ALL=1
fi  # not PREBUILT

# ---- bitwise replay needs -fmad=false on every .cu file (CMakeLists.txt): check the flags ----
CUDA_FLAGS_LINE=$(grep -h "^CUDA_FLAGS" "$FLAGS_MAKE" 2>/dev/null)
note "cuda flags: ${CUDA_FLAGS_LINE#CUDA_FLAGS = }"
if [[ $CUDA_FLAGS_LINE != *"-fmad=false"* || $CUDA_FLAGS_LINE == *"use_fast_math"* ]]; then
  FAILED=1
  note "backends/cuda/ is not compiled with -fmad=false (or uses --use_fast_math): bitwise replay is not guaranteed"
fi

# ---- static resource figures (ptxas -v, scripts/kernel_resources.sh): the table into the report
# (no file of its own: few files come back from a device run) ----
KR_TABLE=$(mktemp)
if "$ROOT/scripts/kernel_resources.sh" "${PREBUILT:-$BUILD}" >"$KR_TABLE" 2>&1; then
  note "--- kernel resources (registers, stack, spills per kernel; docs/gpu.md)"
  tee -a "$REPORT" <"$KR_TABLE"
else
  note "kernel resources: $(head -n 1 "$KR_TABLE")"
fi
rm -f "$KR_TABLE"

# ---- GPU tests ----
GPU_LOG="$OUT/gpu_tests.log"
# -V: the skip messages and the measured differences ("[ info ]" lines) go to the log.
if [[ -n $PREBUILT ]]; then
  phase "gpu tests" 270 "$GPU_LOG" "$ROOT/scripts/run_gtest_each.sh" "$GPU_TESTS_BIN" 220 120
else
  phase "gpu tests" 150 "$GPU_LOG" ctest --test-dir "$BUILD" -L gpu -V --output-on-failure --timeout 120
fi
GPU_RC=$?
note "--- gpu tests"
grep -E "tests passed|tests failed|Total Test time" "$GPU_LOG" | tee -a "$REPORT" >/dev/null
grep -E "\*\*\*Failed|\*\*\*Skipped|\*\*\*Timeout|\(Failed\)|\(Skipped\)|\(Timeout\)" "$GPU_LOG" | head -n 40 >>"$REPORT"
grep -E "^\[  (FAILED|SKIPPED) \] .* \([0-9]+ ms\)$|^\*\*\* |^gtest-each: alone|Failure$" "$GPU_LOG" | head -n 60 >>"$REPORT"
grep -E "\[ info     \]|\[gpu rollout\]|\[ calib    \]|\[ gpu mlp \]|\[ gpu policy-in-loop \]|\[ gpu shac \]" "$GPU_LOG" | head -n 90 >>"$REPORT"
# The assertions this check exists for must have run and passed, not skipped or vanished:
# bitwise replay on the device (forward kernel vs the backward pass's replay), run-to-run
# determinism, and the stream-ordering contract of step_backend_ctrl.
for t in 'GpuRollout\.ReplayIsBitwise' 'GpuRollout\.GradientsAgreeWithCpu' \
         'GpuRollout\.ContactGradientsAgreeWithCpu' 'GpuAgreement\.DoubleMatchesCpu/humanoid_contact' \
         'GpuAgreement\.DoubleMatchesCpu/g1_contact' 'GpuAgreement\.DoubleMatchesCpu/g1_contact_cold' \
         'GpuAgreement\.DoubleMatchesCpu/humanoid_contact_rk4' \
         'GpuAgreement\.DoubleMatchesCpu/humanoid_contact_tsit5' 'GpuRollout\.IntegratorsAndCfdAgreeWithCpu' \
         'GpuAgreement\.CudaIsDeterministic/humanoid' 'GpuStream\.OwnStreamIsBlockingAndNonNull' \
         'GpuStream\.ControlsWrittenOnLegacyDefaultStreamAreOrdered' \
         'GpuStream\.ControlsWrittenOnOtherStreamAreOrderedByWaitForStream' \
         'GpuImpulse\.RolloutAgreesWithCpu' 'GpuBundles\.AgreeWithCpu' \
         'GpuStaged\.ImpulseSolveInSharedMemoryEqualsGlobalMemoryBitwise' \
         'GpuBundles\.NeverTriggeredEqualsThePlainCudaRollout' 'GpuMlp\.AgreesWithTheCpuNetwork' \
         'GpuPolicyRollout\.CartpoleGradientMatchesTheCpuBackend' \
         'GpuPolicyRollout\.AntOnImpulseFloorGradientMatchesTheCpuBackend' \
         'GpuTrain\.ShacActorGradientMatchesTheCpuBackend' 'GpuTrain\.ShacBcgAndPpoRunOnCuda' \
         'GpuAgreement\.FloatMatchesCpu/humanoid_contact_tsit5' \
         'GpuStreamTimer\.EventsMeasureTheStreamsWorkNotItsEnqueue'; do
  if grep -qE "Test +#[0-9]+: ([A-Za-z0-9_]+/)?${t}[ .]+ +Passed" "$GPU_LOG" ||
     grep -qE "^\[       OK \] ([A-Za-z0-9_]+/)?${t} \(" "$GPU_LOG"; then
    note "required: ${t//\\/} passed"
  else
    FAILED=1
    note "required: ${t//\\/} did NOT pass (failed, skipped or missing)"
  fi
done
if (( GPU_RC != 0 )); then
  FAILED=1
  note "GPU tests FAILED (ctest exit $GPU_RC)"
fi
if grep -q "no CUDA device" "$GPU_LOG"; then
  FAILED=1
  note "GPU tests SKIPPED for lack of a CUDA device: the check did not run"
fi
if ! grep -qE "tests passed" "$GPU_LOG"; then
  FAILED=1
  note "no ctest summary for the GPU tests (not run?)"
fi
# float Tsit5 with contacts once wrote past its workspace (a step counter ptxas made
# warp-uniform, kernels/integrators/integrator_rk.hpp): memcheck its test where compute-sanitizer exists
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if [[ -n $SANITIZER && -x ${GPU_TESTS_BIN:-} ]]; then
  if phase "memcheck float tsit5" 120 "$OUT/memcheck_float_tsit5.log" "$SANITIZER" --tool memcheck --error-exitcode 3 \
      "$GPU_TESTS_BIN" --gtest_filter='Models/GpuAgreement.FloatMatchesCpu/humanoid_contact_tsit5'; then
    note "memcheck: float Tsit5 with contacts, no invalid access"
  else
    FAILED=1
    note "memcheck: float Tsit5 with contacts FAILED ($(grep -cE 'Invalid __global__' "$OUT/memcheck_float_tsit5.log") invalid global accesses)"
  fi
else
  note "memcheck: compute-sanitizer or the GPU test binary not found, not run"
fi

# ---- training on the CUDA backend: SHAC with its policy loop on the device (the default on
# CUDA) and on the host (state and controls crossing every step), PPO (host networks), side by
# side with the CPU backend on this machine; throughput on the G1 (the runs' folders go to /tmp:
# at most 8 files come back from $OUT) ----
DATA="${SG_DATA:-$ROOT/data}"
# The throughput line a phase printed (none if it was stopped first), not an earlier phase's.
throughput_of() { sed -n "/^=== $1 (/,\$p" "$OUT/train_cuda.log" | grep -E '^throughput' | tail -n 1; }
note "--- train g1-imitate:run1_subject2, 64 environments, 1 iteration (throughput lines)"
if [[ -x "$CLI" ]]; then
  for run in "shac cuda backend" "shac cuda host" "shac cpu host" "ppo cuda auto"; do
    set -- $run
    phase "train $1 $2 $3" 75 "$OUT/train_cuda.log" "$CLI" train g1-imitate:run1_subject2 --algo "$1" --backend "$2" \
      --policy-loop "$3" --envs 64 --iterations 1 --threads 16 --out "/tmp/sg_train_$1_$2_$3" --data "$DATA"
    note "$1 $2 (policy loop $3): $(throughput_of "train $1 $2 $3")"
  done
else
  note "the stiffgrad command was not built"
fi

# ---- benchmark ----
note "--- bench_forward --backend cuda"
if [[ -x "$BENCH" ]]; then
  phase "bench_forward" 90 "$OUT/bench.log" "$BENCH" --backend cuda
  tail -n 25 "$OUT/bench.log" >>"$REPORT"
else
  note "bench/bench_forward was not built (not in the tree yet, or the build failed)"
fi

note "--- bench_backward --backend cuda --quick"
if [[ -x "$BENCH_BW" ]]; then
  phase "bench_backward" 60 "$OUT/bench_backward.log" "$BENCH_BW" --backend cuda --quick
  tail -n 20 "$OUT/bench_backward.log" >>"$REPORT"
else
  note "bench/bench_backward was not built"
fi

# ---- contact on the GPU (issue 38): the G1 on its floor, soft contact through the staged
# pipeline and the fused kernel, and the Impulse model, CUDA against the CPU backend on all
# cores, 1024 / 4096 / 16384 environments; the staged and fused rows must be bitwise equal.
# Its rows go to bench.log (at most 8 files come back). Then, where the tools exist, nsys
# --stats over a 40-step G1 rollout at 1024 environments (staged soft and Impulse) and ncu
# (warp state, memory workload, occupancy) on the three staged stage kernels, into profile.log.
note "--- bench_gpu_contact (G1, 1 substep per step; CUDA vs CPU, all cores)"
if [[ -x "$BENCH_GC" ]]; then
  phase "bench_gpu_contact" 110 "$OUT/bench.log" "$BENCH_GC" --steps 20 --rounds 2 --threads 16
  sed -n '/^=== bench_gpu_contact/,$p' "$OUT/bench.log" | grep -E '^\|' >>"$REPORT"
  # the Impulse solve's working set in shared memory (one warp per block) or not: as much as a
  # block may have, 112 KiB (two blocks per SM), 0 (global memory, 8 warps per block)
  phase "bench_gpu_contact impulse shared" 60 "$OUT/bench.log" "$BENCH_GC" --steps 20 --rounds 2 --no-cpu \
    --contact impulse --precision float --nenv 1024,16384 --solve-shared -1,114688,0
  sed -n '/^=== bench_gpu_contact impulse shared/,$p' "$OUT/bench.log" | grep -E '^\| impulse' >>"$REPORT"
  # the gradient's cost with contact: the staged adjoint (tape + adjoint stages) against the CPU
  # backend
  phase "bench_gpu_contact --backward" 90 "$OUT/bench.log" "$BENCH_GC" --backward --steps 10 \
    --rounds 1 --threads 16 --nenv 1024,4096 --precision float --contact soft,impulse
  sed -n '/^the gradient/,$p' "$OUT/bench.log" >>"$REPORT"
  if command -v nsys >/dev/null 2>&1; then
    phase "nsys" 60 "$OUT/profile.log" nsys profile --stats=true --force-overwrite=true -o /tmp/sg_nsys \
      "$BENCH_GC" --nenv 1024 --steps 40 --rounds 1 --no-cpu --precision float --contact soft,impulse
    note "nsys: the ten most expensive kernels (profile.log has the rest)"
    grep -A 12 "cuda_gpu_kern_sum" "$OUT/profile.log" | head -n 14 >>"$REPORT"
  else
    note "nsys: not on this machine"
  fi
  if command -v ncu >/dev/null 2>&1; then
    phase "ncu" 90 "$OUT/profile.log" ncu --section WarpStateStats --section MemoryWorkloadAnalysis \
      --section Occupancy -k regex:'constraint_solve_kernel|narrow_kernel|smooth_kernel' -c 3 \
      "$BENCH_GC" --nenv 1024 --steps 1 --rounds 1 --no-cpu --precision float --contact soft
    phase "ncu impulse solve" 60 "$OUT/profile.log" ncu --section WarpStateStats --section MemoryWorkloadAnalysis \
      --section Occupancy -k regex:'impulse_solve_kernel' -c 2 \
      "$BENCH_GC" --nenv 1024 --steps 1 --rounds 1 --no-cpu --precision float --contact impulse
    note "ncu: see profile.log (warp state, memory workload, occupancy of the stage kernels)"
  else
    note "ncu: not on this machine"
  fi
else
  note "bench/bench_gpu_contact was not built"
fi

# ---- training at GPU scale, last: whatever time is left ----
if [[ -x "$CLI" ]]; then
  # At GPU scale: SHAC+BCG, 1024 environments, the policy loop on the device.
  phase "train shac-bcg cuda 1024" 150 "$OUT/train_cuda.log" "$CLI" train g1-imitate:run1_subject2 \
    --algo shac-bcg --backend cuda --envs 1024 --iterations 1 --threads 16 --out /tmp/sg_train_bcg_1024 --data "$DATA"
  note "shac-bcg cuda, 1024 environments: $(throughput_of "train shac-bcg cuda 1024")"
fi

# ---- CPU suite (quick) ----
CPU_LOG="$OUT/cpu_tests.log"
if [[ -n $PREBUILT ]]; then
  note "cpu tests: not run (prebuilt: the CPU suite runs where the binaries were built)"
elif [[ -z "${FAILED_BUILD_ALL:-}" ]]; then
  phase "cpu tests" 120 "$CPU_LOG" ctest --test-dir "$BUILD" -LE gpu -j8 --timeout 100
  note "--- cpu tests"
  grep -E "tests passed|tests failed" "$CPU_LOG" >>"$REPORT"
  grep -E "\(Failed\)|\(Timeout\)|\*\*\*Failed|\*\*\*Timeout" "$CPU_LOG" | head -n 20 >>"$REPORT"
else
  note "cpu tests: not run (full build failed; see build.log)"
  grep -E "error" "$OUT/build.log" | head -n 10 >>"$REPORT"
fi

note "--- total $(elapsed)s"
if (( FAILED )); then
  note "RESULT: FAIL"
  exit 1
fi
note "RESULT: PASS"
exit 0
