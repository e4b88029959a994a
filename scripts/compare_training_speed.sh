#!/usr/bin/env bash
# Training throughput of two builds of stiffgrad side by side, and whether they train alike.
#
#   scripts/compare_training_speed.sh OLD_STIFFGRAD NEW_STIFFGRAD [ROUNDS]
#
# OLD_STIFFGRAD, NEW_STIFFGRAD: two `stiffgrad` executables (e.g. a build of an earlier commit
# from `git worktree add` and this tree's build/stiffgrad). Runs, one thread each, alternating
# old and new ROUNDS times (default 3) so that both see the same machine:
#   SHAC on g1-imitate:run1_subject2, 16 environments, 5 iterations (2560 env-steps), the Impulse
#   floor (κ 300), one critic, no action-rate penalty (the g1_shac row's settings);
#   PPO on the same task, 16 environments, 20 iterations (10240 env-steps);
#   SHAC+BCG on the same task with the G1 stretch's settings (servo targets at the reference,
#   clip window 95-105 s; bundles at the default τ 400 N, B 10), 16 environments, 5 iterations.
# Prints each run's throughput (from the run's summary.json: env-steps/s, time fractions, wall
# time), and whether the two builds' last logs agree in every training column (log.csv without
# its time columns wall_s, sim_s, adjoint_s, network_s) and their policy files are identical.
# (A build from before summary.json: the same figures from its log.csv.)
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,17p "$0"; exit 2; }
OLD=$1 NEW=$2 ROUNDS=${3:-3}
TASK=g1-imitate:run1_subject2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# train quietly (its stderr kept for a failure), then one line from DIR/summary.json
train() {  # label, DIR, train arguments...
  local label=$1 dir=$2
  shift 2
  if ! OMP_NUM_THREADS=1 "$@" --out "$dir" > /dev/null 2> "$WORK/stderr.txt"; then
    cat "$WORK/stderr.txt" >&2
    exit 1
  fi
  python3 - "$label" "$dir" <<'EOF'
import csv, json, os, sys
label, d = sys.argv[1:]
if os.path.exists(d + "/summary.json"):
    s = json.load(open(d + "/summary.json"))
    rate, wall, f = s["env_steps_per_s"], s["wall_s"], s["time_fraction"]
else:  # a build from before summary.json: the same figures from log.csv, as train computes them
    log = list(csv.DictReader(open(d + "/log.csv")))
    wall = float(log[-1]["wall_s"])
    rate = int(log[-1]["env_steps"]) / wall
    f = {k: sum(float(r[c]) for r in log) / wall
         for k, c in (("simulation", "sim_s"), ("adjoint", "adjoint_s"), ("networks", "network_s"))}
pct = lambda x: "n/a" if x is None else f"{100 * x:.1f}%"
print(f"{label}: {rate:.0f} env-steps/s; time in simulation {pct(f['simulation'])}, "
      f"adjoint {pct(f['adjoint'])}, networks {pct(f['networks'])} ({wall:.1f} s)")
EOF
}

for round in $(seq 1 "$ROUNDS"); do
  for v in old new; do
    bin=$OLD
    [ "$v" = new ] && bin=$NEW
    train "shac $v round $round" "$WORK/shac_$v" "$bin" train "$TASK" --algo shac --envs 16 --iterations 5 --critics 1 --action-rate 0
    train "ppo  $v round $round" "$WORK/ppo_$v" "$bin" train "$TASK" --algo ppo --envs 16 --iterations 20
    train "bcg  $v round $round" "$WORK/bcg_$v" "$bin" train "$TASK" --algo shac-bcg --envs 16 --iterations 5 --critics 1 \
      --action-rate 0 --servo-targets reference --clip-window 95:105
  done
done
# the training columns of two logs, by name: every column but the times
same_training() {
  python3 - "$1" "$2" <<'EOF'
import csv, sys
times = {"wall_s", "sim_s", "adjoint_s", "network_s"}
def rows(path):
    with open(path) as f:
        return [{k: v for k, v in r.items() if k not in times} for r in csv.DictReader(f)]
sys.exit(0 if rows(sys.argv[1]) == rows(sys.argv[2]) else 1)
EOF
}
for algo in shac ppo bcg; do
  if same_training "$WORK/${algo}_old/log.csv" "$WORK/${algo}_new/log.csv" &&
     cmp -s "$WORK/${algo}_old/policy.sgp" "$WORK/${algo}_new/policy.sgp"; then
    echo "$algo: the two builds' logs (training columns) and policies are identical"
  else
    echo "$algo: the two builds train differently"
  fi
done
