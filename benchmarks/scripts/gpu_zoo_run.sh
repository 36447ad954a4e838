#!/usr/bin/env bash
# One device call of the kernel-zoo work (issue 4) and the harness leftovers (issue 3), phase by phase:
#   bash benchmarks/scripts/gpu_zoo_run.sh check      # every zoo kernel and config for real on the GPU (pytest)
#   bash benchmarks/scripts/gpu_zoo_run.sh issue3     # --check-suite on the given tasks, test_gpu baselines
#   bash benchmarks/scripts/gpu_zoo_run.sh bench      # apps/bench_kernelzoo.py (resumes from .carry/zoo)
#   bash benchmarks/scripts/gpu_zoo_run.sh report     # apps/evaluate.py: the zoo against all five baselines (resumes
#                                                     # from .carry/report: copy the last call's $OUT/report there)
#   bash benchmarks/scripts/gpu_zoo_run.sh tune       # elementwise tasks with autotuning off (eager baseline), then
#                                                     # on (eager + compile, profile, portability); conv portability
# Runs with the device machine's python3 and the workspace's src folders on PYTHONPATH; writes under $OUT.
set -u
: "${OUT:=/tmp/cudal1-out}"
mkdir -p "$OUT"
export PYTHONPATH=$PWD/packages/harness/src:$PWD/packages/kernelzoo/src PYTHONUNBUFFERED=1
export TRITON_DEFAULT_FP_FUSION=1
export CUDAL1_CACHE_DIR="$OUT/autotune"   # the autotune cache (every candidate's time) comes back with the run
ELEMENTWISE_TASKS=elu,gelu,hardswish,leaky_relu,relu,silu,softplus,tanh
CONV_TASKS=conv1d,conv2d,conv3d,conv_transpose1d,conv_transpose2d,conv_transpose3d,bn_relu_conv2d,conv2d_bn_relu,conv2d_glu,conv2d_relu_maxpool,conv1x1_bn_silu_avgpool,vit_tiny
for phase in "$@"; do
  t0=$(date +%s)
  case "$phase" in
    check)
      timeout "${CHECK_S:-240}" python3 -m pytest tests/kernelzoo -q -p no:cacheprovider -m "not slow" \
        -o addopts="--import-mode=importlib" > "$OUT/zoo_check.txt" 2>&1
      echo "check rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -15 "$OUT/zoo_check.txt"
      if python3 -c "import cupy" 2>/dev/null; then
        timeout 150 python3 -m cudal1.kernelzoo.cuda_check --bench > "$OUT/zoo_cuda_check.txt" 2>&1
        echo "cuda-c check rc=$?" | tee -a "$OUT/phases.txt"; tail -40 "$OUT/zoo_cuda_check.txt"
      fi ;;
    issue3)
      timeout 200 python3 -m cudal1.harness.cli --suite builtin --tasks "${CHECK_TASKS:-vgg_conv_stack,vit_tiny}" \
        --check-suite --device cuda --json "$OUT/check_suite_rest.json" > "$OUT/check_suite_rest.txt" 2>&1
      echo "check-suite rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -5 "$OUT/check_suite_rest.txt"
      timeout 200 python3 -m pytest tests/harness/test_gpu.py -q -p no:cacheprovider -k baselines \
        -o addopts="--import-mode=importlib" > "$OUT/test_gpu_baselines.txt" 2>&1
      echo "test_gpu baselines rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -5 "$OUT/test_gpu_baselines.txt" ;;
    report)
      mkdir -p "$OUT/report"
      # only the store, device.json and work.json travel back in (the tool returns at most 8 files: no old logs)
      for f in results.sqlite device.json work.json; do
        [ -f ".carry/report/$f" ] && [ ! -f "$OUT/report/$f" ] && cp ".carry/report/$f" "$OUT/report/" && chmod u+w "$OUT/report/$f"
      done
      log="$OUT/report/log_$(date +%H%M%S).txt"
      timeout "${REPORT_S:-560}" python3 apps/evaluate.py --set kernelzoo=packages/kernelzoo/src/cudal1/kernelzoo/released \
        --suite builtin --device cuda --out "$OUT/report" --title "${REPORT_TITLE:-cudal1 kernel zoo on the GPU}" \
        ${REPORT_ARGS:-} > "$log" 2>&1
      echo "report rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -40 "$log"
      # a run cut off by the timeout leaves its rows in the WAL: fold them into the one file that comes back
      python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print('checkpoint', c.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone(), c.execute('PRAGMA journal_mode=DELETE').fetchone(), c.execute('select count(*) from results').fetchone())" "$OUT/report/results.sqlite" | tee -a "$OUT/phases.txt" ;;
    bench)
      mkdir -p "$OUT/zoo"
      [ -d .carry/zoo ] && [ ! -f "$OUT/zoo/zoo.json" ] && cp -r .carry/zoo/. "$OUT/zoo/"
      timeout "${BENCH_S:-540}" python3 apps/bench_kernelzoo.py --out "$OUT/zoo" --store "$OUT/zoo/zoo.sqlite" \
        ${BENCH_ARGS:-} 2>&1 | tee "$OUT/zoo/bench_log_$(date +%H%M%S).txt" | tail -80
      echo "bench rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt" ;;
    tune)
      CUDAL1_AUTOTUNE=off timeout 150 python3 apps/bench_kernelzoo.py --out "$OUT/zoo_autotune_off" \
        --tasks "${TUNE_TASKS:-$ELEMENTWISE_TASKS}" --baselines eager --skip-profile --skip-portability 2>&1 | tail -12
      echo "tune off rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"
      timeout 300 python3 apps/bench_kernelzoo.py --out "$OUT/zoo_autotune_on" \
        --tasks "${TUNE_TASKS:-$ELEMENTWISE_TASKS}" 2>&1 | tail -30
      echo "tune on rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"
      timeout 150 python3 apps/bench_kernelzoo.py --out "$OUT/zoo_autotune_on" --tasks "$CONV_TASKS" \
        --skip-harness --skip-profile 2>&1 | tail -20
      echo "conv portability rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt" ;;
    *) echo "unknown phase $phase" >&2; exit 2 ;;
  esac
done
