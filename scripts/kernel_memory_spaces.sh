#!/usr/bin/env bash
# Which memory a kernel's loads and stores address, read from its PTX (no GPU needed): per kernel
# the count of ld/st instructions on shared, global, local and generic addresses (generic: a
# pointer whose memory nvcc could not tell, resolved at run time). Checks statically that a
# kernel meant to work in shared memory does (issue 38: the Impulse solve's working set), where
# the ptxas figures (scripts/kernel_resources.sh) give registers and stack only.
#
#   scripts/kernel_memory_spaces.sh BUILD_DIR [SOURCE [KERNEL_REGEX]]
#
# SOURCE: a CUDA source of the library (default backends/cuda/staged_step_float.cu), compiled to
# PTX with BUILD_DIR's flags for the library (about 10 s); KERNEL_REGEX (default impulse_solve)
# selects the kernels by their mangled names. Every device function in a kernel's call tree is
# inlined or listed as a row of its own (.func).
set -euo pipefail
build=${1:?usage: scripts/kernel_memory_spaces.sh BUILD_DIR [SOURCE [KERNEL_REGEX]]}
root=$(cd "$(dirname "$0")/.." && pwd)
source_file=${2:-backends/cuda/staged_step_float.cu}
pattern=${3:-impulse_solve}
build=$(cd "$build" && pwd)
flags_file="$build/CMakeFiles/stiffgrad.dir/flags.make"
[ -f "$flags_file" ] || { echo "kernel_memory_spaces: no $flags_file: configure with STIFFGRAD_CUDA=ON" >&2; exit 2; }
nvcc=$(sed -n 's/^# compile CUDA with //p' "$flags_file")
defines=$(sed -n 's/^CUDA_DEFINES = //p' "$flags_file")
# the build's flags but for the code generation (PTX of the first architecture) and ptxas's
flags=$(sed -n 's/^CUDA_FLAGS = //p' "$flags_file" | sed -E 's/--generate-code=[^ ]*//g; s/-Xptxas=-v//; s/-Xcompiler=-fPIC//')
arch=$(sed -n 's/^CUDA_FLAGS = .*--generate-code=arch=\(compute_[0-9a-z]*\).*/\1/p' "$flags_file")
ptx=$(mktemp --suffix=.ptx)
trap 'rm -f "$ptx"' EXIT
(cd "$build" && $nvcc $defines --options-file CMakeFiles/stiffgrad.dir/includes_CUDA.rsp $flags \
  -arch="${arch:-compute_90}" -ptx "$root/$source_file" -o "$ptx")
python3 - "$ptx" "$pattern" "$source_file" <<'EOF'
import re, sys
ptx, pattern, source = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(ptx).read()
starts = [m.start() for m in re.finditer(r'^(?:\.visible |\.weak )?\.(?:entry|func)\b', text, re.M)] + [len(text)]
spaces = ['shared', 'global', 'local', 'generic']
print(f'PTX of {source}: loads / stores by the memory they address')
print('| kernel | ' + ' | '.join(f'ld {s} | st {s}' for s in spaces) + ' |')
print('|---|' + '---|' * (2 * len(spaces)))
for a, b in zip(starts, starts[1:]):
    body = text[a:b]
    m = re.search(r'\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)', body)
    if not m or not re.search(pattern, m.group(2)):
        continue
    row = []
    for s in spaces:
        for op in ('ld', 'st'):
            if s == 'generic':  # no state space: ld.f32, ld.v2.f64, ld.u32, ...
                n = len(re.findall(rf'\b{op}\.(?:v[24]\.)?[bfsu]\d+\b', body))
            else:
                n = len(re.findall(rf'\b{op}\.{s}\b', body))
            row.append(str(n))
    print(f'| `{m.group(2)}` ({m.group(1)}) | ' + ' | '.join(row) + ' |')
EOF
