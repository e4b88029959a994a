#!/usr/bin/env bash
# Where a policy trained on the Impulse floor stops transferring: the same policy, its
# deterministic episodes (`stiffgrad eval`, to a fall), on stiffgrad's Impulse floor at rising
# kappa (less resting penetration), on stiffgrad's soft floor (MuJoCo 2.2.2's soft constraints,
# ported) and in MuJoCo 2.2.2 itself. Every other task option is the one the policy file records.
# Prints a Markdown table (floor | falls | episode length | tracking error | penetration).
# Usage: scripts/transfer_floor_sweep.sh BUILD_DIR POLICY.sgp [EPISODES (20)] [KAPPA ...]
#        (default kappas: 300 600 1000 3000)
set -euo pipefail
if [[ $# -lt 2 ]]; then sed -n 2,8p "$0" >&2; exit 2; fi
SG="$1/stiffgrad"
POLICY=$2
EPISODES=${3:-20}
shift $(($# < 3 ? $# : 3))
KAPPAS=("$@")
[[ ${#KAPPAS[@]} -eq 0 ]] && KAPPAS=(300 600 1000 3000)

# "<sim>: mean return R, mean episode length L, falls F/N, tracking error T m, mean penetration P mm"
row() {  # floor label, one eval line
  sed -E 's/^[a-z]+: mean return ([^,]+), mean episode length ([^,]+), falls ([^,]+), tracking error ([^ ]+) m, mean penetration ([^ ]+) mm.*/| '"$1"' | \3 | \2 | \4 | \5 | \1 |/' <<< "$2"
}

echo "policy: $POLICY, $EPISODES episodes each"
echo
echo "| floor | falls | episode length | tracking error (m) | mean penetration (mm) | mean return |"
echo "|---|---|---|---|---|---|"
for k in "${KAPPAS[@]}"; do
  line=$("$SG" eval "$POLICY" --episodes "$EPISODES" --contact impulse --kappa "$k" 2> >(grep -v '^eval: note:' >&2) | grep '^stiffgrad:')
  row "stiffgrad Impulse, kappa $k" "$line"
done
line=$("$SG" eval "$POLICY" --episodes "$EPISODES" --contact soft 2> >(grep -v '^eval: note:' >&2) | grep '^stiffgrad:')
row "stiffgrad soft (MuJoCo's model)" "$line"
# --in mujoco evaluates in MuJoCo 2.2.2 with the contact settings of its own model file
line=$("$SG" eval "$POLICY" --episodes "$EPISODES" --in mujoco 2> >(grep -v '^eval: note:' >&2) | grep '^mujoco:')
row "MuJoCo 2.2.2" "$line"
