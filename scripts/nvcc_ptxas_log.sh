#!/usr/bin/env bash
# CMake's CUDA compiler launcher (CMAKE_CUDA_COMPILER_LAUNCHER, set by CMakeLists.txt when
# STIFFGRAD_CUDA_RESOURCE_LOG is on): runs the nvcc command line it is given, which carries
# -Xptxas=-v, and keeps ptxas's per-kernel resource lines (registers, stack frame, spills) in
# OBJECT.ptxas.txt beside the object file, out of the build log. scripts/kernel_resources.sh
# reads those files. Everything else nvcc prints reaches stderr as before; the exit status is
# nvcc's.
out="" prev=""
for arg in "$@"; do
  [ "$prev" = "-o" ] && out="$arg"
  prev="$arg"
done
[ -z "$out" ] && exec "$@"   # not a compilation to an object: nothing to keep
log="$out.ptxas.txt"
"$@" 2> "$log.tmp"
status=$?
grep -v -E '^ptxas info|^ +[0-9]+ bytes stack frame' "$log.tmp" >&2
mv -f "$log.tmp" "$log"
exit $status
