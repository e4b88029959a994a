#!/usr/bin/env bash
# MuJoCo Menagerie coverage (issue 39): every MJCF file of a Menagerie checkout through the
# stiffgrad command: does it load (`stiffgrad info`), and does it step N steps from qpos0 (or
# its first keyframe) without a non-finite value (`stiffgrad rollout`). Prints one line per file
# and a summary: files, robots (top-level folders with a file that loads), the `_mjx` files, and
# the first blocker of the files that do not load, counted.
#
#   scripts/menagerie_survey.sh MENAGERIE_DIR [--cli PATH] [--steps N] [--list]
#
# A file that asks for MuJoCo's implicit or implicitfast integrator is stepped with
# --integrator implicit-actuators (stiffgrad's integrator is a simulator option), the others
# with euler; where the simulator refuses implicit damping for a tendon servo across branches of
# the tree, with euler (the line says so).
# --cli: the stiffgrad command (default build/stiffgrad beside this script's checkout);
# --steps: control steps per file (default 1000; 0: load only); --list: the per-file lines too.
# Files that are not models (keyframe or actuator fragments meant to be included) are counted
# like the rest: Menagerie ships them beside the models, and they fail to load on their own.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: scripts/menagerie_survey.sh MENAGERIE_DIR [--cli PATH] [--steps N] [--list]}
shift
cli="$root/build/stiffgrad" steps=1000 list=0
while [ $# -gt 0 ]; do
  case $1 in
    --cli) cli=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --list) list=1; shift ;;
    *) echo "menagerie_survey: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$cli" ] || { echo "menagerie_survey: no stiffgrad command at $cli (build it, or give --cli)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

files=0 loads=0 stepped=0 mjx=0 mjx_loads=0 mjx_stepped=0
declare -A robots robots_ok
: >"$tmp/blockers"
while IFS= read -r -d '' f; do
  rel=${f#"$dir"/}
  robot=${rel%%/*}
  files=$((files + 1))
  robots[$robot]=1
  is_mjx=0
  [[ $(basename "$rel") == *mjx* ]] && is_mjx=1 && mjx=$((mjx + 1))
  if ! (cd "$dir" && timeout 60 "$cli" info "$rel") >/dev/null 2>"$tmp/err"; then
    # the blocker without the file and line, numbers and quoted names folded
    tail -n 1 "$tmp/err" | sed -E 's/^stiffgrad [a-z]+: error: [^ ]+:[0-9]+: //; s/^stiffgrad [a-z]+: error: //' |
      sed -E "s/'[^']*'/'…'/g" >>"$tmp/blockers"
    [ $list = 1 ] && echo "FAIL  $rel: $(tail -n 1 "$tmp/err")"
    continue
  fi
  loads=$((loads + 1))
  robots_ok[$robot]=1
  [ $is_mjx = 1 ] && mjx_loads=$((mjx_loads + 1))
  status=loads
  if [ "$steps" -gt 0 ]; then
    # the first keyframe if the model has one, else qpos0
    if ! (cd "$dir" && timeout 60 "$cli" states "$rel" --keyframe 0 -o "$tmp/s.csv") >/dev/null 2>&1; then
      (cd "$dir" && timeout 60 "$cli" states "$rel" -o "$tmp/s.csv") >/dev/null 2>&1
    fi
    # a file asking for MuJoCo's implicit or implicitfast integrator (stiff position servos that
    # explicit Euler cannot step) gets stiffgrad's implicit actuator damping
    integrator=euler
    grep -q "note: integrator implicit" "$tmp/err" && integrator=implicit-actuators
    run_rollout() {
      (cd "$dir" && timeout 300 "$cli" rollout "$rel" --states "$tmp/s.csv" --steps "$steps" \
        --integrator "$1") >"$tmp/out" 2>"$tmp/err"
    }
    rc=0
    run_rollout "$integrator" || rc=$?
    # implicit actuator damping cannot couple two branches of the tree (a tendon servo on sibling
    # fingers): such a file is stepped with euler, and the line says so
    if [ $rc != 0 ] && [ "$integrator" = implicit-actuators ] &&
       grep -q "couples joints on different branches" "$tmp/err"; then
      integrator="euler (implicit refused: a tendon servo across branches)"
      rc=0
      run_rollout euler || rc=$?
    fi
    if [ $rc = 0 ] && ! grep -qiE 'nan|inf' "$tmp/out"; then
      stepped=$((stepped + 1))
      [ $is_mjx = 1 ] && mjx_stepped=$((mjx_stepped + 1))
      status="steps $steps, $integrator"
    else
      status="does NOT step $steps: $(tail -n 1 "$tmp/err" | cut -c1-160)"
    fi
  fi
  [ $list = 1 ] && echo "OK    $rel ($status)"
done < <(find "$dir" -name '*.xml' -not -path '*/.git/*' -print0 | sort -z)

echo "menagerie survey of $dir ($(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))"
echo "| | files | load | step $steps |"
echo "|---|---|---|---|"
echo "| all MJCF files | $files | $loads | $stepped |"
echo "| _mjx files | $mjx | $mjx_loads | $mjx_stepped |"
echo "| robots (folders) | ${#robots[@]} | ${#robots_ok[@]} | |"
echo
echo "first blocker of the files that do not load:"
sort "$tmp/blockers" | uniq -c | sort -rn
