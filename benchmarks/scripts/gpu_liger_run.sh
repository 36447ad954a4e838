#!/usr/bin/env bash
# One device call of issue 17's GPU work, phase by phase (carry .carry/whl holding liger_kernel-0.8.5-*.whl):
#   bash benchmarks/scripts/gpu_liger_run.sh tests   # per-dtype forward/backward of every op, the backward kernels
#   bash benchmarks/scripts/gpu_liger_run.sh ops     # bench_vs_liger.py ops   -> $OUT/liger-ops.json
#   bash benchmarks/scripts/gpu_liger_run.sh train   # bench_vs_liger.py train -> $OUT/liger-train.json
#   bash benchmarks/scripts/gpu_liger_run.sh tune    # tune_llm_kernels.py      -> $OUT/tune-llm.json
#   bash benchmarks/scripts/gpu_liger_run.sh bwd     # bench_backward.py        -> $OUT/backward.json
# Runs with the device machine's python3 and the workspace's src folders on PYTHONPATH; writes under $OUT.
set -u
: "${OUT:=/tmp/cudal1-out}"
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .carry/whl/liger_kernel-*.whl || exit 1
export PYTHONPATH=$PWD/packages/harness/src:$PWD/packages/kernelzoo/src:/tmp/site PYTHONUNBUFFERED=1
for phase in "$@"; do
  t0=$(date +%s)
  case "$phase" in
    tests)
      timeout "${TESTS_S:-200}" python3 -m pytest -q -p no:cacheprovider -o addopts="--import-mode=importlib" \
        tests/kernelzoo/test_dtypes_gpu.py tests/kernelzoo/test_backward_*.py tests/kernelzoo/test_gradients.py \
        > "$OUT/zoo_gpu_tests.txt" 2>&1
      echo "tests rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep -E "FAILED|passed|failed" "$OUT/zoo_gpu_tests.txt" | tail -30 ;;
    ops)
      timeout "${OPS_S:-420}" python3 benchmarks/scripts/bench_vs_liger.py ops --out "$OUT/liger-ops.json" ${ONLY:+--only $ONLY} \
        > "$OUT/liger-ops.txt" 2>&1
      echo "ops rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep -v "^ " "$OUT/liger-ops.txt" | tail -60 ;;
    tune)
      timeout "${TUNE_S:-200}" python3 benchmarks/scripts/tune_llm_kernels.py --out "$OUT/tune-llm.json" \
        > "$OUT/tune-llm.txt" 2>&1
      echo "tune rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep best "$OUT/tune-llm.txt" ;;
    bwd)
      timeout "${BWD_S:-300}" python3 benchmarks/scripts/bench_backward.py --out "$OUT/backward.json" ${ONLY:+--only $ONLY} \
        > "$OUT/backward.txt" 2>&1
      echo "bwd rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -c 2500 "$OUT/backward.txt" ;;
    train)
      timeout "${TRAIN_S:-400}" python3 benchmarks/scripts/bench_vs_liger.py train --out "$OUT/liger-train.json" \
        > "$OUT/liger-train.txt" 2>&1
      echo "train rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -c 3000 "$OUT/liger-train.txt" ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
