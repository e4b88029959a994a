#!/usr/bin/env bash
# Evaluates every policy snapshot of a training run (train --policy-every: DIR/policy_itN.sgp) in
# stiffgrad and in MuJoCo 2.2.2 (`stiffgrad eval --in mujoco`), and writes the table
# DIR/snapshots_mujoco.md (DIR/snapshots_mujoco_eN.md for EPISODES = N other than 5): iteration,
# env-steps (from DIR/log.csv), then per simulator falls, mean episode length, tracking error and
# mean return, and Δd.
# Usage: scripts/eval_snapshots.sh BUILD_DIR RUN_DIR EPISODES [eval options, e.g. --servo-targets
#        reference --clip-window 95:105: the training's task settings]
set -euo pipefail
BUILD=$1 DIR=$2 EPISODES=$3
shift 3
SG="$BUILD/stiffgrad"
OUT="$DIR/snapshots_mujoco.md"
[[ $EPISODES == 5 ]] || OUT="$DIR/snapshots_mujoco_e$EPISODES.md"
{
  echo "policy snapshots of \`$DIR\`, $EPISODES deterministic episodes each (\`stiffgrad eval POLICY --in mujoco --episodes $EPISODES $*\`)"
  echo
  echo "| iteration | env-steps | stiffgrad: falls, length, tracking (m), return | MuJoCo 2.2.2: falls, length, tracking (m), return | delta_d (mm) |"
  echo "|---|---|---|---|---|"
} > "$OUT"
for f in $(ls "$DIR"/policy_it*.sgp | sort -V); do
  it=${f##*policy_it}; it=${it%.sgp}
  steps=$(awk -F, -v it="$it" 'NR > 1 && $1 == it - 1 { print $2 }' "$DIR/log.csv")
  res=$("$SG" eval "$f" --in mujoco --episodes "$EPISODES" "$@")
  cell() {  # falls, length, tracking, return of one simulator's line
    echo "$res" | awk -v s="$1:" '$1 == s {
      for (i = 1; i <= NF; ++i) {
        if ($i == "return") r = $(i + 1); if ($i == "length") l = $(i + 1);
        if ($i == "falls") f = $(i + 1); if ($i == "error") t = $(i + 1) }
      sub(/,$/, "", r); sub(/,$/, "", l); sub(/,$/, "", f)
      printf "%s, %s, %s, %s", f, l, t, r }'
  }
  dd=$(echo "$res" | awk '/^delta_d/ { print $(NF - 1) }')
  echo "| $it | ${steps:-?} | $(cell stiffgrad) | $(cell mujoco) | $dd |" >> "$OUT"
done
cat "$OUT"
