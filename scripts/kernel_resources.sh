#!/usr/bin/env bash
# Static resource figures of every CUDA kernel in a build, from ptxas -v (no GPU needed):
# registers per thread, stack (the kernel's frame and the cumulative stack with its callees) and
# spill stores/loads, one row per kernel and architecture. The figures come from the
# OBJECT.ptxas.txt files that scripts/nvcc_ptxas_log.sh keeps beside each CUDA object
# (CMake option STIFFGRAD_CUDA_RESOURCE_LOG, on by default).
#
#   scripts/kernel_resources.sh BUILD_DIR            print the table (Markdown)
#   scripts/kernel_resources.sh --check BUILD_DIR    also fail (exit 1) on a kernel over the
#                                                    limits that the allow-list does not name, an
#                                                    allow-list entry that names no such kernel, or
#                                                    a log older than its object (stale figures)
#   scripts/kernel_resources.sh --times BUILD_DIR    the nvcc wall time of each CUDA object
#                                                    instead (the launcher records it), longest
#                                                    first: what a clean build waits for
#
# Limits (issue 38): at most 128 registers, no spill stores, at most 2048 bytes of cumulative
# stack. The allow-list, scripts/kernel_resources_allow.txt, holds lines "PATTERN | REASON":
# PATTERN is an extended regular expression matched against the demangled kernel name. An entry
# that no longer matches a kernel over the limits must be removed (the list only shrinks).
set -euo pipefail
check=0 times=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
if [ "${1:-}" = --times ]; then times=1; shift; fi
build=${1:?usage: scripts/kernel_resources.sh [--check] BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
allow_file="$root/scripts/kernel_resources_allow.txt"
readonly kMaxRegisters=128 kMaxStack=2048

mapfile -t logs < <(find "$build" -name '*.ptxas.txt' | sort)
if [ ${#logs[@]} -eq 0 ]; then
  echo "kernel_resources: no *.ptxas.txt under $build: build with STIFFGRAD_CUDA=ON and" \
       "STIFFGRAD_CUDA_RESOURCE_LOG=ON (scripts/nvcc_ptxas_log.sh keeps them)" >&2
  exit 2
fi

# A log older than its object describes an earlier compile: nvcc wrote the object but the
# launcher was stopped before it moved the new log in (an interrupted build). Its figures would be
# stale, so it is reported (and counted as a problem by --check) until the object is rebuilt.
stale_logs=()
for log in "${logs[@]}"; do
  object="${log%.ptxas.txt}"
  if [ -f "$object" ] && [ "$object" -nt "$log" ]; then
    stale_logs+=("$log")
    echo "kernel_resources: stale log (its object was rebuilt after it; rebuild the object):" \
         "$log" >&2
  fi
done

if [ $times = 1 ]; then
  echo "| object | nvcc wall seconds | kernels |"
  echo "|---|---|---|"
  for log in "${logs[@]}"; do
    secs=$(sed -n 's/^# nvcc wall seconds: //p' "$log")
    printf '%s\t%s\t%s\n' "$(basename "${log%.ptxas.txt}")" "${secs:-?}" "$(grep -c 'Compiling entry function' "$log")"
  done | sort -t$'\t' -k2,2nr | awk -F'\t' '{ printf "| %s | %s | %s |\n", $1, $2, $3; total += $2 }
    END { printf "\ntotal %.0f s of nvcc (on 2 cores a clean build overlaps them)\n", total }'
  exit 0
fi

# One tab-separated line per kernel: object, arch, registers, frame, cumulative stack, spill
# stores, spill loads, mangled name. ptxas lists, after a kernel's own figures, the functions it
# kept out of line for that kernel (its callees, compiled with it); their spills are the kernel's
# too, so each kernel's spill columns add its callees'.
rows=$(for log in "${logs[@]}"; do
  awk -v object="$(basename "${log%.ptxas.txt}")" '
    function flush() {
      if (entry != "")
        printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", object, arch, regs, kframe, cumulative, stores, loads, entry
      entry = ""
    }
    /Compiling entry function/ { flush(); match($0, /'\''[^'\'']*'\''/); entry = substr($0, RSTART + 1, RLENGTH - 2)
                                 n = split($0, q, "'\''"); arch = q[n - 1]
                                 regs = 0; kframe = 0; cumulative = 0; stores = 0; loads = 0; next }
    /Function properties for/  { props = $NF; next }
    /bytes stack frame/ && entry != "" { if (props == entry) kframe = $1
                                         stores += $5; loads += $9; next }
    /Used [0-9]+ registers/ && entry != "" {
      match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15)
      cumulative = kframe
      if (match($0, /[0-9]+ bytes cumulative stack size/)) cumulative = substr($0, RSTART, RLENGTH) + 0 }
    END { flush() }
  ' "$log"
done)
[ -n "$rows" ] || { echo "kernel_resources: the logs hold no kernel" >&2; exit 2; }

# Demangled names (c++filt, from binutils), kept in the row's order.
names=$(cut -f8 <<<"$rows" | c++filt)
rows=$(paste <(cut -f1-7 <<<"$rows") <(printf '%s\n' "$names"))

echo "| object | arch | registers | stack frame (B) | cumulative stack (B) | spill stores (B) | spill loads (B) | kernel |"
echo "|---|---|---|---|---|---|---|---|"
# The table names each kernel without "void", its parameter list and its template arguments'
# namespaces (the allow-list matches the whole demangled name).
sort -t$'\t' -k3,3nr -k5,5nr <<<"$rows" | awk -F'\t' '{ name = $8; sub(/^void /, "", name); gsub(/\(anonymous namespace\)/, "{anonymous}", name)
  cut = index(name, "("); if (cut > 0) name = substr(name, 1, cut - 1)
  gsub(/, stiffgrad::([a-z_]+::)*/, ", ", name)  # template arguments without their namespaces
  if (length(name) > 110) name = substr(name, 1, 107) "..."
  printf "| %s | %s | %s | %s | %s | %s | %s | `%s` |\n", $1, $2, $3, $4, $5, $6, $7, name }'

[ $check = 1 ] || exit 0

patterns=()
if [ -f "$allow_file" ]; then
  while IFS= read -r line; do
    [[ -z "$line" || "$line" == \#* ]] && continue
    patterns+=("$(sed 's/ | .*$//' <<<"$line")")  # the first " | " ends the pattern
  done < "$allow_file"
fi
over=$(awk -F'\t' -v r=$kMaxRegisters -v s=$kMaxStack '$3 > r || $5 > s || $6 > 0' <<<"$rows")
failures=${#stale_logs[@]}
used=()
while IFS=$'\t' read -r object arch regs frame cumulative stores loads name; do
  [ -z "$object" ] && continue
  allowed=0
  for i in "${!patterns[@]}"; do
    if grep -qE -- "${patterns[$i]}" <<<"$name"; then allowed=1; used[$i]=1; fi
  done
  if [ $allowed = 0 ]; then
    echo "over the limits and not in the allow-list: $name ($object, $arch): $regs registers," \
         "$cumulative B stack, $stores B spill stores" >&2
    failures=$((failures + 1))
  fi
done <<<"$over"
for i in "${!patterns[@]}"; do
  if [ -z "${used[$i]:-}" ]; then
    echo "stale allow-list entry (no kernel over the limits matches it; remove it): ${patterns[$i]}" >&2
    failures=$((failures + 1))
  fi
done
echo
echo "limits: <= $kMaxRegisters registers, <= $kMaxStack B cumulative stack, no spill stores;" \
     "$(wc -l <<<"$rows") kernels, $( [ -n "$over" ] && wc -l <<<"$over" || echo 0) over the limits," \
     "${#patterns[@]} allow-list entries, $failures problems"
[ $failures = 0 ]
