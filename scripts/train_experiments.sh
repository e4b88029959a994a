#!/usr/bin/env bash
# The training figures of the README ("Policy learning"): SHAC, SHAC+BCG and PPO on
# cartpole-swingup, ant-run and g1-imitate:run1_subject2, each policy then evaluated in stiffgrad
# and in MuJoCo 2.2.2 (`stiffgrad eval --in mujoco`, 5 episodes), and the summary table
# (scripts/train_summary.py into OUT/summary.md). One CPU thread per run (OMP_NUM_THREADS=1)
# unless THREADS is set. The g1 rows without --reward add keep the settings they were first run
# with (one critic, no action-rate penalty); the *_add rows use the G1 defaults (BCG's: ADD reward
# given explicitly, action-rate penalty 0.8, SHAC's critic ensemble of 3). The *_explicit rows
# were run before g1-imitate made its servos' velocity gains implicit on the Impulse floor
# (--explicit-servos keeps the earlier setting). The *_add rows run before the discriminator had a
# replay ring give --disc-replay 0 (the setting they had); the *_replay rows use the default ring.
# The *_ref rows hold a zero action at the reference's next joint angles (--servo-targets reference).
# The *_w95 rows do too, and draw their episodes from seconds 95 to 105 of the clip (--clip-window);
# the *_w95_110 rows from seconds 95 to 110, a 15 s motion as long as each of the BCG paper's.
# The *_w95_110_k50 / _k100 rows are BCG's Table 1 (the same SHAC+BCG run at kappa 50 and 100;
# kappa 300 is the row without a suffix); their snapshots are compared by scripts/eval_snapshots.sh.
# RESUME=1: a run whose OUT_DIR/RUN/checkpoint.sgc exists (rows with --checkpoint-every) goes on
# from it (train --resume), its progress appended to progress.txt.
# EVAL_ONLY=1: no training, only the evaluations of the policies already in OUT_DIR (runs without
# OUT_DIR/RUN/policy.sgp are skipped with a message).
# The *_snapshots row reruns g1_shac_bcg_lr2e3_n64_w95_800 with policy snapshots every 40
# iterations (--policy-every, which changes nothing in training: its log must equal that run's),
# to evaluate the run in MuJoCo at a tenth of PPO's budget.
# A row's own --seed overrides the --seed 0 given to every run (the last one counts).
# Usage: scripts/train_experiments.sh [BUILD_DIR] [OUT_DIR] [RUN ...]   (default: every run)
set -euo pipefail
# The body is one brace group: bash reads it whole before running it, so editing this file while a
# run is going cannot change what that run executes.
{
BUILD=${1:-build}
OUT=${2:-results/train}
shift $(($# < 2 ? $# : 2))
SG="$BUILD/stiffgrad"
export OMP_NUM_THREADS=${THREADS:-1}
G1=g1-imitate:run1_subject2
# name | task | algorithm | environments | iterations | extra options
RUNS="
cartpole_shac    cartpole-swingup shac     64 800
cartpole_ppo     cartpole-swingup ppo      64 1500
ant_shac         ant-run          shac     32 300
ant_ppo          ant-run          ppo      32 1200
ant_shac_bcg     ant-run          shac-bcg 32 300 --tau 20
g1_shac          $G1              shac     16 150 --critics 1 --action-rate 0 --eval-every 10
g1_shac_bcg      $G1              shac-bcg 16 150 --critics 1 --action-rate 0 --eval-every 10
g1_ppo           $G1              ppo      16 1500 --action-rate 0 --eval-every 100
g1_shac_k50      $G1              shac     16 150 --kappa 50 --critics 1 --action-rate 0
g1_shac_k100     $G1              shac     16 150 --kappa 100 --critics 1 --action-rate 0
g1_shac_bcg_k50  $G1              shac-bcg 16 150 --kappa 50 --critics 1 --action-rate 0
g1_shac_bcg_k100 $G1              shac-bcg 16 150 --kappa 100 --critics 1 --action-rate 0
g1_shac_explicit $G1              shac     16 150 --explicit-servos --critics 1 --action-rate 0
g1_shac_bcg_explicit $G1          shac-bcg 16 150 --explicit-servos --critics 1 --action-rate 0
g1_ppo_explicit  $G1              ppo      16 1500 --explicit-servos --action-rate 0
g1_shac_bcg_k50_explicit $G1      shac-bcg 16 100 --explicit-servos --kappa 50 --critics 1 --action-rate 0
g1_shac_bcg_k100_explicit $G1     shac-bcg 16 50 --explicit-servos --kappa 100 --critics 1 --action-rate 0
g1_shac_h8_explicit $G1           shac     16 600 --explicit-servos --horizon 8 --critics 1 --action-rate 0
g1_shac_h16_explicit $G1          shac     16 300 --explicit-servos --horizon 16 --critics 1 --action-rate 0
g1_shac_soft     $G1              shac     16 150 --contact soft --critics 1 --action-rate 0
g1_ppo_soft      $G1              ppo      16 1500 --contact soft --action-rate 0
g1_shac_soft_long $G1             shac     16 600 --contact soft --critics 1 --action-rate 0
g1_shac_long     $G1              shac     16 600 --critics 1 --action-rate 0 --eval-every 25
g1_shac_lr2e3    $G1              shac     16 150 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 10
g1_shac_lr1e3    $G1              shac     16 150 --actor-lr 1e-3 --critics 1 --action-rate 0 --eval-every 10
g1_shac_seed1    $G1              shac     16 150 --critics 1 --action-rate 0 --eval-every 10 --seed 1
g1_shac_lr2e3_seed1 $G1           shac     16 150 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 10 --seed 1
g1_shac_n64      $G1              shac     64 150 --critics 1 --action-rate 0 --eval-every 10
g1_shac_lr2e3_n64 $G1             shac     64 150 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 10
g1_shac_lr2e3_n64_c3 $G1          shac     64 150 --actor-lr 2e-3 --critics 3 --action-rate 0 --eval-every 10
g1_shac_lr2e3_n64_seed1 $G1       shac     64 150 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 10 --seed 1
g1_shac_lr2e3_n128 $G1            shac     128 75 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 5
g1_shac_h8       $G1              shac     16 600 --horizon 8 --critics 1 --action-rate 0 --eval-every 40
g1_shac_h16      $G1              shac     16 300 --horizon 16 --critics 1 --action-rate 0 --eval-every 20
g1_shac_bcg_soft $G1              shac-bcg 16 150 --contact soft --critics 1 --action-rate 0
g1_shac_soft_add $G1              shac     16 150 --contact soft --reward add --disc-replay 0 --eval-every 10
g1_shac_soft_add_p0 $G1           shac     16 150 --contact soft --reward add --action-rate 0 --disc-replay 0 --eval-every 10
g1_shac_add_explicit $G1          shac     16 150 --explicit-servos --reward add --disc-replay 0
g1_shac_bcg_add_explicit $G1      shac-bcg 16 40 --explicit-servos --reward add --disc-replay 0
g1_ppo_add_explicit $G1           ppo      16 480 --explicit-servos --reward add --disc-replay 0
g1_shac_soft_add_replay $G1       shac     16 150 --contact soft --reward add --eval-every 10
g1_shac_soft_add_p0_replay $G1    shac     16 150 --contact soft --reward add --action-rate 0 --eval-every 10
g1_shac_soft_add_replay_m1 $G1    shac     16 150 --contact soft --reward add --disc-minibatches 1 --eval-every 10
g1_shac_soft_add_replay_long $G1  shac     16 600 --contact soft --reward add --eval-every 40
g1_shac_soft_add_seed1 $G1        shac     16 150 --contact soft --reward add --disc-replay 0 --eval-every 10 --seed 1
g1_shac_soft_add_replay_seed1 $G1 shac     16 150 --contact soft --reward add --eval-every 10 --seed 1
g1_shac_soft_add_seed2 $G1        shac     16 150 --contact soft --reward add --disc-replay 0 --eval-every 10 --seed 2
g1_shac_soft_add_replay_seed2 $G1 shac     16 150 --contact soft --reward add --eval-every 10 --seed 2
g1_shac_bcg_add_replay $G1        shac-bcg 16 150 --reward add --eval-every 10
g1_shac_add      $G1              shac     16 150 --reward add --disc-replay 0 --eval-every 10
g1_shac_add_replay $G1            shac     16 150 --reward add --eval-every 10
g1_shac_ref      $G1              shac     16 150 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference
g1_shac_lr2e3_n64_ref $G1         shac     64 150 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference
g1_ppo_ref       $G1              ppo      16 1500 --action-rate 0 --eval-every 100 --servo-targets reference
g1_shac_ref_s05  $G1              shac     16 150 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference --action-scale 0.5
g1_shac_ref_seed1 $G1             shac     16 150 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference --seed 1
g1_ppo_ref_seed1 $G1              ppo      16 1500 --action-rate 0 --eval-every 100 --servo-targets reference --seed 1
g1_shac_lr2e3_n64_ref_long $G1    shac     64 300 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 20 --servo-targets reference
g1_shac_bcg_ref  $G1              shac-bcg 16 150 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference
g1_shac_w95      $G1              shac     16 150 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference --clip-window 95:105
g1_shac_lr2e3_n64_w95 $G1         shac     64 150 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference --clip-window 95:105
g1_shac_lr2e3_n64_w95_long $G1    shac     64 400 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 20 --servo-targets reference --clip-window 95:105
g1_shac_lr2e3_n64_w95_long_seed1 $G1 shac   64 400 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 20 --servo-targets reference --clip-window 95:105 --seed 1
g1_shac_lr2e3_n64_w95_800 $G1     shac     64 800 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 40 --servo-targets reference --clip-window 95:105
g1_shac_lr2e3_n64_w95_long_k1000 $G1 shac 64 400 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 20 --servo-targets reference --clip-window 95:105 --kappa 1000
g1_shac_lr2e3_n64_w95_long_k100 $G1 shac 64 400 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 20 --servo-targets reference --clip-window 95:105 --kappa 100
g1_shac_lr2e3_n64_w95_long_k50 $G1 shac 64 400 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 20 --servo-targets reference --clip-window 95:105 --kappa 50 --checkpoint-every 20
g1_shac_bcg_lr2e3_n64_w95_800 $G1 shac-bcg 64 800 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 40 --servo-targets reference --clip-window 95:105 --checkpoint-every 10
g1_shac_bcg_lr2e3_n64_w95_800_snapshots $G1 shac-bcg 64 800 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 40 --servo-targets reference --clip-window 95:105 --checkpoint-every 20 --policy-every 40
g1_shac_bcg_lr2e3_n64_w95_110 $G1 shac-bcg 64 800 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 40 --servo-targets reference --clip-window 95:110 --checkpoint-every 20 --policy-every 40
g1_shac_bcg_lr2e3_n64_w95_110_k50 $G1 shac-bcg 64 800 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 40 --servo-targets reference --clip-window 95:110 --checkpoint-every 20 --policy-every 40 --kappa 50
g1_shac_bcg_lr2e3_n64_w95_110_k100 $G1 shac-bcg 64 800 --actor-lr 2e-3 --critics 1 --action-rate 0 --eval-every 40 --servo-targets reference --clip-window 95:110 --checkpoint-every 20 --policy-every 40 --kappa 100
g1_ppo_n64_w95_110_4000 $G1     ppo      64 4000 --action-rate 0 --eval-every 50 --servo-targets reference --clip-window 95:110 --checkpoint-every 50 --policy-every 400
g1_ppo_n64_w95   $G1              ppo      64 400 --action-rate 0 --eval-every 20 --servo-targets reference --clip-window 95:105
g1_ppo_n64_w95_4000 $G1           ppo      64 4000 --action-rate 0 --eval-every 50 --servo-targets reference --clip-window 95:105 --checkpoint-every 50
g1_ppo_w95       $G1              ppo      16 1500 --action-rate 0 --eval-every 100 --servo-targets reference --clip-window 95:105
g1_shac_bcg_w95  $G1              shac-bcg 16 150 --critics 1 --action-rate 0 --eval-every 10 --servo-targets reference --clip-window 95:105
"
wanted() { [[ $# -eq 0 ]] && return 0; local n; for n in "${SELECTED[@]}"; do [[ $n == "$1" ]] && return 0; done; return 1; }
SELECTED=("$@")
while read -r name task algo envs iters extra; do
  [[ -z ${name:-} ]] && continue
  if [[ ${#SELECTED[@]} -gt 0 ]] && ! wanted "$name"; then continue; fi
  mkdir -p "$OUT/$name"
  if [[ ${EVAL_ONLY:-0} == 1 ]]; then
    if [[ ! -f $OUT/$name/policy.sgp ]]; then echo "== $name: no policy.sgp, not evaluated" >&2; continue; fi
    echo "== $name: eval" >&2
  else
    resume=()
    if [[ ${RESUME:-0} == 1 && -f $OUT/$name/checkpoint.sgc ]]; then resume=(--resume "$OUT/$name/checkpoint.sgc"); fi
    echo "== $name: train $task --algo $algo --envs $envs --iterations $iters $extra ${resume[*]}" >&2
    if [[ ${#resume[@]} -eq 0 ]]; then : > "$OUT/$name/progress.txt"; fi
    # shellcheck disable=SC2086  # $extra is a list of options
    "$SG" train "$task" --algo "$algo" --envs "$envs" --iterations "$iters" --seed 0 --out "$OUT/$name" $extra "${resume[@]}" \
      > "$OUT/$name/train.txt" 2>> "$OUT/$name/progress.txt"
  fi
  # the evaluation simulates with the training's task settings (its --contact / --kappa /
  # --explicit-servos / --servo-targets / --action-scale / --clip-window)
  read -r -a opts <<< "${extra:-}"
  eval_opts=()
  for ((i = 0; i < ${#opts[@]}; i++)); do
    if [[ ${opts[i]} == --kappa || ${opts[i]} == --contact || ${opts[i]} == --servo-targets || ${opts[i]} == --action-scale || ${opts[i]} == --clip-window ]]; then eval_opts+=("${opts[i]}" "${opts[i + 1]}"); ((i++)) || true
    elif [[ ${opts[i]} == --explicit-servos ]]; then eval_opts+=("${opts[i]}"); fi
  done
  "$SG" eval "$OUT/$name/policy.sgp" --in mujoco --episodes 5 "${eval_opts[@]}" > "$OUT/$name/eval.txt"
done <<< "$RUNS"
python3 "$(dirname "$0")/train_summary.py" "$OUT" > "$OUT/summary.md"
# comparison plots (OUT/*.png) from the plots.gp train_summary.py writes
if command -v gnuplot > /dev/null; then (cd "$OUT" && gnuplot plots.gp); fi
cat "$OUT/summary.md"
exit
}
