#!/usr/bin/env bash
# The training figures of the README ("Policy learning"): SHAC, SHAC+BCG and PPO on
# cartpole-swingup, ant-run and g1-imitate:run1_subject2, each policy then evaluated in stiffgrad
# and in MuJoCo 2.2.2, and the summary table (scripts/train_summary.py). One CPU thread per run
# (OMP_NUM_THREADS=1) unless THREADS is set. Usage: scripts/train_experiments.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-results/train}
SG="$BUILD/stiffgrad"
export OMP_NUM_THREADS=${THREADS:-1}
mkdir -p "$OUT"
run() {  # name task algo envs iterations [extra options...]
  local name=$1 task=$2 algo=$3 envs=$4 iters=$5
  shift 5
  echo "== $name: train $task --algo $algo --envs $envs --iterations $iters $*" >&2
  "$SG" train "$task" --algo "$algo" --envs "$envs" --iterations "$iters" --seed 0 --out "$OUT/$name" "$@" \
    > "$OUT/$name/train.txt" 2> "$OUT/$name/progress.txt"
  local kappa=()
  for ((i = 1; i <= $#; i++)); do [[ ${!i} == --kappa ]] && { j=$((i + 1)); kappa=(--kappa "${!j}"); }; done
  "$SG" eval "$OUT/$name/policy.sgp" --in mujoco --episodes 5 "${kappa[@]}" > "$OUT/$name/eval.txt"
}
for d in cartpole_shac cartpole_ppo ant_shac ant_ppo g1_shac g1_shac_bcg g1_ppo g1_shac_bcg_k50 g1_shac_bcg_k100; do
  mkdir -p "$OUT/$d"
done
run cartpole_shac cartpole-swingup shac 64 800
run cartpole_ppo cartpole-swingup ppo 64 1500
run ant_shac ant-run shac 32 300
run ant_ppo ant-run ppo 32 1200
run g1_shac g1-imitate:run1_subject2 shac 16 60
run g1_shac_bcg g1-imitate:run1_subject2 shac-bcg 16 60
run g1_ppo g1-imitate:run1_subject2 ppo 16 600
run g1_shac_bcg_k50 g1-imitate:run1_subject2 shac-bcg 16 40 --kappa 50
run g1_shac_bcg_k100 g1-imitate:run1_subject2 shac-bcg 16 40 --kappa 100
python3 scripts/train_summary.py "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"
