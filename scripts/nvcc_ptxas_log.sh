#!/usr/bin/env bash
# CMake's CUDA compiler launcher (CMAKE_CUDA_COMPILER_LAUNCHER, set by CMakeLists.txt when
# STIFFGRAD_CUDA_RESOURCE_LOG is on): runs the nvcc command line it is given, which carries
# -Xptxas=-v, and keeps ptxas's per-kernel resource lines (registers, stack frame, spills) in
# OBJECT.ptxas.txt beside the object file, out of the build log. scripts/kernel_resources.sh
# reads those files, with the compile's wall time (last line "# nvcc wall seconds: S", which
# kernel_resources.sh --times lists: the CUDA objects dominate a clean build). Everything else
# nvcc prints reaches stderr as before; the exit status is nvcc's.
out="" prev=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && out="$arg"
  prev="$arg"
done
[ -z "$out" ] && exec "$@"   # not a compilation to an object: nothing to keep
log="$out.ptxas.txt"
start=$(date +%s.%N)
"$@" 2> "$log.tmp"
status=$?
end=$(date +%s.%N)
grep -v -E '^ptxas info|^ +[0-9]+ bytes stack frame' "$log.tmp" >&2
awk -v s="$start" -v e="$end" 'BEGIN { printf "# nvcc wall seconds: %.1f\n", e - s }' >> "$log.tmp"
mv -f "$log.tmp" "$log"
exit $status
