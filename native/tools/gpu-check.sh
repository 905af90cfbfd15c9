#!/usr/bin/env bash
# Everything GPU-side in one command, for a GPU machine with no Node and no network (the device
# tool runs it in a copy of this working tree). Prepare the bundle here first:
#   npm run build && node scripts/gpu-bundle.mjs
# then on the GPU machine, carrying dist, build-cuda/Release and tools/.carry:
#   bash native/tools/gpu-check.sh [checks|bench|all]
#
# checks: the self-test's agreement cases, the same (without the 100k-row case) under
#         compute-sanitizer memcheck, and the GPU tests with CHRONOQL_REQUIRE_CUDA=1, so a
#         missing build or device fails instead of skipping.
# bench:  the self-test's timings at 10M rows (Q = 1 fp16 and fp32, Q = 256 and 1024 fp16), and
#         bench/search.ts --write --device cuda (N = 1M and 10M, Q = 1 ... 1024, fp16 and fp32,
#         with the PyTorch peers), which rewrites bench/results/search-cuda.{md,json}.
# Writes to $OUT (the folder the device tool brings back) or ./gpu-check-out: gpu-check.log,
# selftest-bench.jsonl, search-cuda.md, search-cuda.json. Exit status 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
what="${1:-all}"
out="${OUT:-gpu-check-out}"
mkdir -p "$out"
log="$out/gpu-check.log"
export CHRONOQL_REQUIRE_CUDA=1
failed=()

step() {
  local name="$1"
  shift
  echo "=== $name: $*" | tee -a "$log"
  local started=$SECONDS
  "$@" >>"$log" 2>&1
  local status=$?
  echo "=== $name: exit $status after $((SECONDS - started)) s" | tee -a "$log"
  [ "$status" -eq 0 ] || failed+=("$name")
}

node="$(command -v node || true)"
if [ -z "$node" ]; then
  node=/tmp/chronoql-node
  [ -x "$node" ] || { xz -dc tools/.carry/node.xz >"$node" && chmod +x "$node"; } || { echo "no node and no tools/.carry/node.xz" | tee -a "$log"; exit 2; }
fi
selftest=tools/.carry/chronoql_cuda_selftest
for needed in "$selftest" build-cuda/Release/chronoql_native.node dist/test/unit/native-gpu.test.js dist/bench/search.js; do
  [ -e "$needed" ] || { echo "missing $needed: run node scripts/gpu-bundle.mjs and carry dist, build-cuda/Release, tools/.carry" | tee -a "$log"; exit 2; }
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >>"$log" 2>&1
echo "node $("$node" --version), $(python3 -c 'import torch; print("torch", torch.__version__)' 2>/dev/null || echo 'no torch')" | tee -a "$log"

if [ "$what" = checks ] || [ "$what" = all ]; then
  step selftest "$selftest"
  step memcheck compute-sanitizer --tool memcheck --error-exitcode 1 "$selftest" --quick
  step gpu-tests "$node" --test --test-reporter=spec dist/test/unit/native-gpu.test.js dist/test/unit/native-placement.test.js
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  for shape in "1 fp16" "1 fp32" "256 fp16" "1024 fp16"; do
    set -- $shape
    step "selftest-bench Q=$1 $2" sh -c "'$selftest' --bench 10000000 384 $1 10 $2 | grep '^{' >>'$out/selftest-bench.jsonl'"
  done
  step bench-search "$node" dist/bench/search.js --write --device cuda
  cp bench/results/search-cuda.md bench/results/search-cuda.json "$out"/ 2>>"$log"
fi

if [ "${#failed[@]}" -ne 0 ]; then
  echo "FAILED: ${failed[*]}" | tee -a "$log"
  exit 1
fi
echo "all steps passed" | tee -a "$log"
