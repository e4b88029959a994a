#!/usr/bin/env bash
# Build stiffgrad in Release and run the main job:
#   1. `stiffgrad demo`: 1024 environments of MuJoCo's humanoid stepped with random controls and
#      contacts on the CPU backend, double then float; prints environment-steps per second for
#      each, then checks environment 0 against the single-state host rollout (bitwise). The test
#      suite runs the same demo (ctest MainJob.DemoDefaults), so CI fails when the main job does.
#   2. The MuJoCo parity tests (`ctest -R Parity`), with their summary.
#
#   scripts/run.sh                       # defaults
#   scripts/run.sh --nenv 4096 --steps 500 --threads 2 --model path/to/model.xml
#
# Arguments are passed to `stiffgrad demo`. Environment: BUILD_DIR, JOBS, SG_DATA,
# CMAKE_ARGS, SG_NO_APT as for scripts/test.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

source "$ROOT/scripts/setup.sh"

echo
echo "== main job: stiffgrad demo $*"
demo_status=0
"$BUILD_DIR/stiffgrad" demo "$@" || demo_status=$?

echo
echo "== parity against MuJoCo 2.2.2 (ctest -R Parity)"
cd "$BUILD_DIR"
parity_log="parity_ctest.log"
parity_status=0
# Verbose, so that the figures the parity tests print ("[parity] ..." lines) are kept.
ctest -R Parity -V --output-on-failure --parallel "$JOBS" >"$parity_log" 2>&1 || parity_status=$?
if grep -q "No tests were found" "$parity_log"; then
  echo "no Parity tests in this build (was MuJoCo found at configure time?)"
  parity_status=1
else
  echo "-- figures: worst differences from MuJoCo per model"
  grep -E '^([0-9]+: )?\[parity\]' "$parity_log" | sed -E 's/^[0-9]+: //' | sort -u || true
  if [ "$parity_status" -ne 0 ]; then
    echo "-- failures"
    grep -E 'Failure|FAILED|Expected|Which is|error' "$parity_log" | sed -E 's/^[0-9]+: //' | head -n 150 || true
  fi
  echo "-- ctest summary"
  grep -E "^[0-9]+% tests passed|tests failed out of|Total Test time|\(Failed\)|\(Skipped\)|\(Disabled\)|\(Timeout\)|\(SEGFAULT\)|\(Not Run\)" "$parity_log" || true
fi
echo "(full parity log: $BUILD_DIR/$parity_log)"

if [ "$demo_status" -ne 0 ] || [ "$parity_status" -ne 0 ]; then
  echo "run.sh: FAILED (demo exit $demo_status, parity exit $parity_status)" >&2
  exit 1
fi
echo "run.sh: done"
