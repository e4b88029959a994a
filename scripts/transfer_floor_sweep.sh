#!/usr/bin/env bash
# Where a policy trained on the Impulse floor stops transferring: the same policy, its
# deterministic episodes (`stiffgrad eval`, to a fall), on stiffgrad's Impulse floor at rising
# kappa (less resting penetration), on stiffgrad's soft floor (MuJoCo 2.2.2's soft constraints,
# ported) and in MuJoCo 2.2.2 itself. Every other task option is the one the policy file records.
# Prints a Markdown table (floor | falls | episode length | tracking error | penetration | return),
# from each evaluation's `eval --json` object.
# Usage: scripts/transfer_floor_sweep.sh BUILD_DIR POLICY.sgp [EPISODES (20)] [KAPPA ...]
#        (default kappas: 300 600 1000 3000)
set -euo pipefail
if [[ $# -lt 2 ]]; then sed -n 2,9p "$0" >&2; exit 2; fi
SG="$1/stiffgrad"
POLICY=$2
EPISODES=${3:-20}
shift $(($# < 3 ? $# : 3))
KAPPAS=("$@")
[[ ${#KAPPAS[@]} -eq 0 ]] && KAPPAS=(300 600 1000 3000)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# eval's notes (task options given here over the policy's) are expected: not shown
evaluate() { "$SG" eval "$POLICY" --episodes "$EPISODES" "$@" 2> >(grep -v '^eval: note:' >&2) > /dev/null; }

# one table row: floor label, eval's JSON file, simulator ("stiffgrad" or "mujoco")
row() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
label, path, sim = sys.argv[1:]
r = json.load(open(path))[sim]
num = lambda x, spec: "n/a" if x is None else format(x, spec)
print(f"| {label} | {num(r['falls'], 'd')}/{r['episodes']} | {r['mean_episode_length']:.1f} | "
      f"{num(r['tracking_error'], '.4f')} | {num(r['mean_penetration_mm'], '.4f')} | {num(r['mean_return'], '.6g')} |")
EOF
}

echo "policy: $POLICY, $EPISODES episodes each"
echo
echo "| floor | falls | episode length | tracking error (m) | mean penetration (mm) | mean return |"
echo "|---|---|---|---|---|---|"
for k in "${KAPPAS[@]}"; do
  evaluate --contact impulse --kappa "$k" --json "$WORK/k$k.json"
  row "stiffgrad Impulse, kappa $k" "$WORK/k$k.json" stiffgrad
done
evaluate --contact soft --json "$WORK/soft.json"
row "stiffgrad soft (MuJoCo's model)" "$WORK/soft.json" stiffgrad
# --in mujoco evaluates in MuJoCo 2.2.2 with the contact settings of its own model file
evaluate --in mujoco --json "$WORK/mujoco.json"
row "MuJoCo 2.2.2" "$WORK/mujoco.json" mujoco
