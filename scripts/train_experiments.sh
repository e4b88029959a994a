#!/usr/bin/env bash
# The training figures ("Policy learning"): SHAC, SHAC+BCG and PPO on
# cartpole-swingup, ant-run and g1-imitate:run1_subject2, each policy then evaluated in stiffgrad
# and in MuJoCo 2.2.2 (`stiffgrad eval --in mujoco`, 5 episodes), and the summary table
# (scripts/train_summary.py into OUT_ROOT/train/summary.md). One CPU thread per run (OMP_NUM_THREADS=1)
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
# The *_snapshots row reruns g1_shac_bcg_lr2e3_n64_w95_800 with policy snapshots every 40
# iterations (--policy-every, which changes nothing in training: its log must equal that run's),
# to evaluate the run in MuJoCo at a tenth of PPO's budget. Every run is given --seed 0 but those
# with their own --seed (train refuses an option given twice).
# The runs are data: one file per run, experiments/train/RUN.json (its train and eval commands,
# and for the runs with policy snapshots the scripts/eval_snapshots.sh tables), run by
# scripts/experiments.py; this script is a thin wrapper that runs them all (or the RUNs named)
# and then experiments/train_summary.json. Each run writes OUT_ROOT/train/RUN/: log.csv,
# summary.json, policy.sgp, train.txt (stdout), progress.txt (stderr), eval.json and eval.txt
# (`stiffgrad eval --in mujoco --episodes 5 --json`), command.json (command, commit, machine);
# the summary OUT_ROOT/train/summary.md and plots OUT_ROOT/train/*.png.
# RESUME=1: a run whose checkpoint.sgc exists (rows with --checkpoint-every) goes on from it
# (train --resume), its progress appended to progress.txt (experiments.py run --resume).
# EVAL_ONLY=1: no training, only the evaluations of the policies already there (runs without
# policy.sgp are skipped with a message; experiments.py run --steps eval,snapshots,snapshots_e20).
# THREADS=N: OMP_NUM_THREADS for every run (default 1, the runs' setting).
# Usage: scripts/train_experiments.sh [BUILD_DIR (build)] [OUT_ROOT (out/experiments)] [RUN ...]
#        (default: every run; `scripts/experiments.py list 'train/*'` lists them)
# Before the runs became data, OUT_DIR was the folder of the runs itself (results/train); it is
# now the experiments' root, the runs going to OUT_ROOT/train/RUN.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/experiments}
shift $(($# < 2 ? $# : 2))
HERE=$(dirname "$0")
runs=()
if [[ $# -eq 0 ]]; then runs=('train/*'); else for r in "$@"; do runs+=("train/$r"); done; fi
opts=(--build "$BUILD" --out "$OUT")
[[ ${RESUME:-0} == 1 ]] && opts+=(--resume)
[[ ${EVAL_ONLY:-0} == 1 ]] && opts+=(--steps "eval,snapshots,snapshots_e20" --keep-going)
[[ -n ${THREADS:-} ]] && opts+=(--env "OMP_NUM_THREADS=$THREADS")
python3 "$HERE/experiments.py" run "${runs[@]}" "${opts[@]}"
python3 "$HERE/experiments.py" run train_summary --build "$BUILD" --out "$OUT"

