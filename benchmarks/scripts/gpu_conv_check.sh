#!/usr/bin/env bash
# One device call for the CUDA C convolution blocks (blocks.conv_cuda, conv_rows_cuda, convt_disjoint_cuda):
# their GPU tests, the probe against cuDNN at KernelBench level 1's sizes (benchmarks/probes/probe_conv_cuda.py,
# PROBE_TASKS=55,63 limits it), then, with TASKS=a,b, the harness on those pending solutions through
# gpu_kb_release.sh, its store in .carry/state/${STORE:-kb-conv}/ (back as $OUT/kb-conv.tgz). Carry
# [".carry/whl", ".carry/kb", ".carry/state"] (see gpu_kb_release.sh for building the wheels).
set -u
: "${OUT:=/tmp/cudal1-out}"
mkdir -p "$OUT"
source benchmarks/scripts/install_carried_wheels.sh || exit 1
export PYTHONUNBUFFERED=1
timeout "${TESTS_S:-240}" python3 -m pytest -q -p no:cacheprovider -o addopts="--import-mode=importlib" -m gpu \
  tests/kernelzoo/test_conv_rows_cuda_block.py tests/kernelzoo/test_convt_disjoint_cuda.py \
  tests/kernelzoo/test_conv_cuda_block.py > "$OUT/gpu-tests.txt" 2>&1
echo "gpu tests rc=$?"; tail -25 "$OUT/gpu-tests.txt"
timeout "${PROBE_S:-240}" python3 benchmarks/probes/probe_conv_cuda.py .carry/kb/kernelbench-v0/level1 \
  $(echo "${PROBE_TASKS:-}" | tr ',' ' ') > "$OUT/probe-conv.txt" 2>&1
echo "probe rc=$?"; cat "$OUT/probe-conv.txt"
if [ -n "${TASKS:-}" ]; then
  LEVELS=1 SET=pending=packages/kernelzoo/src/cudal1/kernelzoo/kernelbench_v0/pending STORE="${STORE:-kb-conv}" \
    bash benchmarks/scripts/gpu_kb_release.sh
fi
