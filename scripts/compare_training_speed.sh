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
# Prints each run's throughput line, and whether the two builds' last logs agree in every
# training column (wall-time columns excluded) and their policy files are identical.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,15p "$0"; exit 2; }
OLD=$1 NEW=$2 ROUNDS=${3:-3}
TASK=g1-imitate:run1_subject2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for v in old new; do
    bin=$OLD
    [ "$v" = new ] && bin=$NEW
    OMP_NUM_THREADS=1 "$bin" train "$TASK" --algo shac --envs 16 --iterations 5 --critics 1 --action-rate 0 \
      --out "$WORK/shac_$v" 2>&1 | grep -a '^throughput' | sed "s/^/shac $v round $round: /"
    OMP_NUM_THREADS=1 "$bin" train "$TASK" --algo ppo --envs 16 --iterations 20 \
      --out "$WORK/ppo_$v" 2>&1 | grep -a '^throughput' | sed "s/^/ppo  $v round $round: /"
    OMP_NUM_THREADS=1 "$bin" train "$TASK" --algo shac-bcg --envs 16 --iterations 5 --critics 1 --action-rate 0 \
      --servo-targets reference --clip-window 95:105 \
      --out "$WORK/bcg_$v" 2>&1 | grep -a '^throughput' | sed "s/^/bcg  $v round $round: /"
  done
done
# log.csv columns 3 (wall_s) and 12-14 (sim_s, adjoint_s, network_s) are times
for algo in shac ppo bcg; do
  if cmp -s <(cut -d, -f1,2,4-11,15- "$WORK/${algo}_old/log.csv") <(cut -d, -f1,2,4-11,15- "$WORK/${algo}_new/log.csv") &&
     cmp -s "$WORK/${algo}_old/policy.sgp" "$WORK/${algo}_new/policy.sgp"; then
    echo "$algo: the two builds' logs (training columns) and policies are identical"
  else
    echo "$algo: the two builds train differently"
  fi
done
