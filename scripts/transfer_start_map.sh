#!/usr/bin/env bash
# Where in a g1-imitate clip a policy falls, in stiffgrad and in MuJoCo 2.2.2: one deterministic
# episode (`stiffgrad eval --episodes 1`) from each start time S = B, B + STEP, ... up to
# E - 6.02 s. Each episode runs in the window S:S+6.02 s, which fits exactly one 300-step
# episode, so its start is S itself (start times are uniform in [S, S + 6.02 − 301·0.02]).
# Every other task option is the one the policy file records.
# Prints a Markdown table (start s | stiffgrad steps, fell | MuJoCo steps, fell | MuJoCo's end s),
# from each evaluation's `eval --json` object.
# Usage: scripts/transfer_start_map.sh BUILD_DIR POLICY.sgp B E [STEP (0.5)]
set -euo pipefail
if [[ $# -lt 4 ]]; then sed -n 2,9p "$0" >&2; exit 2; fi
SG="$1/stiffgrad"
POLICY=$2
BEGIN=$3
END=$4
STEP=${5:-0.5}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "policy: $POLICY, one episode of up to 300 steps (6 s) from each start"
echo
echo "| start (s) | stiffgrad steps | fell | MuJoCo steps | fell | MuJoCo's episode ends at (s) |"
echo "|---|---|---|---|---|---|"
for start in $(python3 -c "
b, e, s = $BEGIN, $END, $STEP
n = int((e - 6.02 - b) / s + 1e-9)
print(' '.join(f'{b + i * s:.2f}' for i in range(n + 1)))"); do
  window="$start:$(python3 -c "print(f'{$start + 6.02:.2f}')")"
  "$SG" eval "$POLICY" --in mujoco --episodes 1 --clip-window "$window" --json "$WORK/eval.json" \
    2> >(grep -v '^eval: note:' >&2) > /dev/null
  python3 - "$start" "$WORK/eval.json" <<'EOF'
import json, sys
start, path = sys.argv[1:]
e = json.load(open(path))
sg, mj = e["stiffgrad"], e["mujoco"]
fell = lambda r: "yes" if r["falls"] else "no"
print(f"| {start} | {sg['mean_episode_length']:.0f} | {fell(sg)} | {mj['mean_episode_length']:.0f} | {fell(mj)} | "
      f"{float(start) + mj['mean_episode_length'] * 0.02:.2f} |")
EOF
done
