#!/usr/bin/env bash
# One device call: does pinning a lane's two workers to the same cores narrow the clock check's noise? (Run on an H100
# 2026-11-27: it did, and pinning is now the default, CUDAL1_PIN_CPUS=0 turns it off; see
# benchmarks/results/2026-11-27-kernelbench-v0-pinned-h100.md.) Self-pairs (each task's reference timed against itself,
# SET=control=reference) of launch-bound tasks that were once rejected `timing_disagrees`, measured with and without
# pinning, the conditions alternating per level, with CUDAL1_TIMING_DEBUG=1 (every attempt's batch clocks in the
# record). Each condition's store comes back as $OUT/ctl-pin0.tgz / ctl-pin1.tgz and is tabulated into
# $OUT/clock-probe.md by kb_clock_probe_table.py. Carry [".carry/whl", ".carry/kb", ".carry/state"] (see
# gpu_kb_release.sh for building the wheels). ~8 minutes.
set -u
: "${OUT:=/tmp/cudal1-out}"
mkdir -p "$OUT"
source benchmarks/scripts/install_carried_wheels.sh || exit 1  # the table below imports the harness
export CUDAL1_TIMING_DEBUG=1
rm -rf .carry/state/ctl-pin0 .carry/state/ctl-pin1
L1=${L1:-23_Softmax,94_MSELoss,95_CrossEntropyLoss,100_HingeLoss,42_Max_Pooling_2D}
L2=${L2:-62_Matmul_GroupNorm_LeakyReLU_Sum,98_Matmul_AvgPool_GELU_Scale_Max,75_Gemm_GroupNorm_Min_BiasAdd}
L3=${L3:-1_MLP}
for level in 1 2 3; do
  tasks_var="L$level"; cap_var="CAP_$level"; cap=${!cap_var:-$((level == 1 ? 110 : level == 2 ? 70 : 40))}
  for pin in 0 1; do
    CUDAL1_PIN_CPUS=$pin SET=control=reference STORE=ctl-pin$pin LEVELS=$level LEVEL_S=$cap TASKS=${!tasks_var} \
      bash benchmarks/scripts/gpu_kb_release.sh > "$OUT/ctl-pin$pin-level$level.txt" 2>&1
    echo "level $level pin $pin rc=$?"
  done
done
python3 benchmarks/probes/kb_clock_probe_table.py pin0=.carry/state/ctl-pin0/results.sqlite \
  pin1=.carry/state/ctl-pin1/results.sqlite | tee "$OUT/clock-probe.md"
