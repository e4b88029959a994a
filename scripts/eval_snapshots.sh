#!/usr/bin/env bash
# Evaluates every policy snapshot of a training run (train --policy-every: DIR/policy_itN.sgp) in
# stiffgrad and in MuJoCo 2.2.2 (`stiffgrad eval --in mujoco --json`), and writes, for EPISODES = 5,
#   DIR/snapshots_mujoco/itN.json   each snapshot's `eval --json` object
#   DIR/snapshots_mujoco.csv        one row per snapshot: iteration, env_steps (DIR/log.csv), then
#                                   per simulator (stiffgrad_*, mujoco_*) falls, episodes,
#                                   episode_length, tracking_error_m, return, penetration_mm, and
#                                   delta_d_mm (empty where the JSON has null)
#   DIR/snapshots_mujoco.md         the same as a Markdown table (printed at the end)
# (snapshots_mujoco_eN* for EPISODES = N other than 5). scripts/train_summary.py reads the CSV.
# Usage: scripts/eval_snapshots.sh BUILD_DIR RUN_DIR EPISODES [eval options, e.g. --servo-targets
#        reference --clip-window 95:105: by default eval uses the task settings the policy records]
set -euo pipefail
if [[ $# -lt 3 ]]; then sed -n 2,13p "$0" >&2; exit 2; fi
BUILD=$1 DIR=$2 EPISODES=$3
shift 3
SG="$BUILD/stiffgrad"
STEM="$DIR/snapshots_mujoco"
[[ $EPISODES == 5 ]] || STEM="${STEM}_e$EPISODES"
mkdir -p "$STEM"
iterations=()
for f in $(ls "$DIR"/policy_it*.sgp | sort -V); do
  it=${f##*policy_it}; it=${it%.sgp}
  "$SG" eval "$f" --in mujoco --episodes "$EPISODES" "$@" --json "$STEM/it$it.json" > /dev/null
  iterations+=("$it")
done
python3 - "$DIR" "$STEM" "$EPISODES" "$*" "${iterations[@]}" <<'EOF'
import csv, json, sys
run, stem, episodes, options, *its = sys.argv[1:]
with open(f"{run}/log.csv") as f:  # env-steps after iteration N = the row of iteration N - 1
    steps = {int(r["iteration"]) + 1: r["env_steps"] for r in csv.DictReader(f)}
fields = ["falls", "episodes", "mean_episode_length", "tracking_error", "mean_return", "mean_penetration_mm"]
names = ["falls", "episodes", "episode_length", "tracking_error_m", "return", "penetration_mm"]
blank = lambda x: "" if x is None else x
with open(f"{stem}.csv", "w", newline="") as c, open(f"{stem}.md", "w") as md:
    w = csv.writer(c)
    w.writerow(["iteration", "env_steps"] + [f"{s}_{n}" for s in ("stiffgrad", "mujoco") for n in names] + ["delta_d_mm"])
    md.write(f"policy snapshots of `{run}`, {episodes} deterministic episodes each "
             f"(`stiffgrad eval POLICY --in mujoco --episodes {episodes} {options}`)\n\n"
             "| iteration | env-steps | stiffgrad: falls, length, tracking (m), return | "
             "MuJoCo 2.2.2: falls, length, tracking (m), return | delta_d (mm) |\n|---|---|---|---|---|\n")
    for it in its:
        with open(f"{stem}/it{it}.json") as f:
            e = json.load(f)
        n = int(it)
        w.writerow([n, steps.get(n, "")] + [blank(e[s][k]) for s in ("stiffgrad", "mujoco") for k in fields] +
                   [blank(e["delta_d_mm"])])
        num = lambda x, spec: "n/a" if x is None else format(x, spec)
        cell = lambda s: (f"{num(s['falls'], 'd')}/{s['episodes']}, {s['mean_episode_length']:.1f}, "
                          f"{num(s['tracking_error'], '.4f')}, {num(s['mean_return'], '.6g')}")
        md.write(f"| {n} | {steps.get(n, '?')} | {cell(e['stiffgrad'])} | {cell(e['mujoco'])} | "
                 f"{num(e['delta_d_mm'], '.4f')} |\n")
print(open(f"{stem}.md").read(), end="")
EOF
