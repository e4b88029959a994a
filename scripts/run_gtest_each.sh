#!/usr/bin/env bash
# Run the tests of a GoogleTest binary where there is no build tree for ctest
# (scripts/device_check.sh with SG_PREBUILT), so that a crash or a hang in one test is that
# test's failure and does not hide the others: one process runs them all (a process per test
# would repeat the CUDA start-up each time); if it dies or hangs inside a test, that test is
# reported as failed and each test it had not reached runs in a process of its own. A CUDA
# error such as an illegal address is sticky: it fails every later test of the process too, so
# each failed test is run once more alone, and that run's verdict counts (both are printed).
#
#   scripts/run_gtest_each.sh BINARY [WHOLE_RUN_TIMEOUT_S] [PER_TEST_TIMEOUT_S] [GTEST_FILTER]
#
# Prints the tests' own output, a "*** NAME ..." line for each test the whole run failed or lost
# (crashed, hung), a "gtest-each: alone, NAME VERDICT" line for each rerun alone (the verdict
# that counts, as in ctest, which runs every test in a process of its own), and a last line
# "gtest-each: P tests passed, F failed, S skipped, out of N".
# Exits 1 when a test failed or died, or when the binary lists no test.
set -uo pipefail

BIN=$1
WHOLE=${2:-200}
PER_TEST=${3:-120}
FILTER=${4:-*}

# --gtest_list_tests prints "Suite." lines and indented "Test" lines; parameterized ones carry
# a "# GetParam() = ..." comment after the name.
mapfile -t TESTS < <("$BIN" --gtest_list_tests --gtest_filter="$FILTER" |
                     awk '/^[^ ]/ {suite = $1} /^  / {print suite $1}')
if (( ${#TESTS[@]} == 0 )); then
  echo "gtest-each: $BIN lists no test (filter $FILTER)"
  exit 1
fi

passed=0 failed=0 skipped=0
# verdict OUTPUT NAME: passed / skipped / failed, or nothing when NAME did not finish.
verdict() {
  if grep -qF "[       OK ] $2 (" <<<"$1"; then echo passed
  elif grep -qF "[  SKIPPED ] $2 (" <<<"$1"; then echo skipped
  elif grep -qF "[  FAILED  ] $2 (" <<<"$1"; then echo failed
  fi
}
count() {
  case $1 in passed) ((++passed)) ;; skipped) ((++skipped)) ;; *) ((++failed)) ;; esac
}

out=$(timeout --kill-after=5 "$WHOLE" "$BIN" --gtest_filter="$FILTER" --gtest_color=no 2>&1)
rc=$?
echo "$out"
ALONE=()
for t in "${TESTS[@]}"; do
  v=$(verdict "$out" "$t")
  if [[ $v == passed || $v == skipped ]]; then
    count "$v"
  else
    # failed, crashed or hung, or never reached (the run died first): once more, alone
    if [[ $v == failed ]]; then
      echo "*** $t failed in the whole run; running it alone"
    elif grep -qF "[ RUN      ] $t" <<<"$out"; then
      echo "*** $t crashed or hung in the whole run (its status $rc); running it alone"
    fi
    ALONE+=("$t")
  fi
done
for t in "${ALONE[@]}"; do
  out=$(timeout --kill-after=5 "$PER_TEST" "$BIN" --gtest_filter="$t" --gtest_color=no 2>&1)
  rc=$?
  echo "$out"
  v=$(verdict "$out" "$t")
  [[ -z $v ]] && echo "*** $t crashed or hung alone (status $rc)"
  echo "gtest-each: alone, $t ${v:-crashed or hung}"
  count "${v:-failed}"
done
echo "gtest-each: $passed tests passed, $failed failed, $skipped skipped, out of ${#TESTS[@]}"
(( failed == 0 ))
