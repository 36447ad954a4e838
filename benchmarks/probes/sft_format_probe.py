"""Stage-1 SFT of a recipe's policy (the default: the embedded SmolLM2-135M on CPU), then completions to the
contrastive prompts of its train and held-out tasks, parsed as the pipeline parses them: does the policy answer in the
response format after SFT (issue 42, item 7)? No harness evaluation: format only, in minutes on 2 CPU cores.

    uv run python benchmarks/probes/sft_format_probe.py                      # the recipe as it is
    uv run python benchmarks/probes/sft_format_probe.py --kinds contrastive  # seed examples of one prompt kind
    uv run python benchmarks/probes/sft_format_probe.py --set sft.epochs=2 --out probe.json
    uv run python benchmarks/probes/sft_format_probe.py --train-only --samples 4 --variants t0.8,t0.6,t0.8rp1.05

``--variants`` samples the same SFT'd policy once per sampling setting (``t`` temperature, ``p`` top-p, ``rp``
transformers' repetition penalty; top-p the recipe's evaluation setting where not named), each its own stage
(``sft:<variant>``) in the output; without it, one stage ``sft`` at the recipe's evaluation setting.

Prints one line per completion (stage, task, well-formed, parse problem) and the rates per stage; ``--out`` keeps
every completion's text.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

CONFIGS = Path(__file__).resolve().parents[2] / "apps" / "configs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", default="default")
    ap.add_argument("--set", action="append", default=[], help="recipe override, e.g. sft.epochs=2")
    ap.add_argument("--kinds", default="", help="seed example kinds to keep (one_shot,contrastive); all if empty")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--base", action="store_true", help="also sample before SFT")
    ap.add_argument("--out")
    ap.add_argument("--train-only", action="store_true", help="sample the train tasks only (not the held-out ones)")
    ap.add_argument("--variants", default="", help="sampling settings after SFT, e.g. t0.8,t0.6p0.9,t0.8rp1.05")
    a = ap.parse_args()

    from cudal1.policy.action_space import menu_text
    from cudal1.policy.backends.base import SamplingParams
    from cudal1.policy.backends.transformers_local import TransformersBackend
    from cudal1.policy.evaluation import evaluation_prompt
    from cudal1.policy.loading import load_policy
    from cudal1.policy.pipeline import training_examples
    from cudal1.policy.recipe import load_recipe
    from cudal1.policy.rewarding import parse_completion
    from cudal1.policy.sft import run_sft
    from cudal1.policy.tasks import train_and_held_out

    recipe = load_recipe(a.recipe, a.set, configs_dir=CONFIGS)
    tasks, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    model, tok, peft_config = load_policy(recipe.policy, seed=recipe.seed)
    examples = training_examples(recipe, tasks, held)
    if a.kinds:
        keep = set(a.kinds.split(","))
        examples = [e for e in examples if e.get("kind") in keep]
    params = SamplingParams(max_new_tokens=recipe.evaluation.max_new_tokens, temperature=recipe.evaluation.temperature,
                            n=a.samples, seed=recipe.seed)
    rows: list[dict] = []

    def sample(stage: str, params: SamplingParams = params, repetition_penalty: float = 1.0) -> None:
        backend = TransformersBackend(model, tok, batch_size=recipe.policy.generation_batch,
                                      merge_adapters=recipe.policy.merge_for_generation)
        probe = [(t, "train") for t in tasks] + ([] if a.train_only else [(t, "held_out") for t in held])
        t0 = time.monotonic()
        menu = menu_text(recipe.action_space)
        plain = model.generate
        if repetition_penalty != 1.0:  # the backend has no such setting: passed to transformers' generate here
            model.generate = functools.partial(plain, repetition_penalty=repetition_penalty)
        try:
            texts = backend.generate([evaluation_prompt(t, menu) for t, _ in probe], params)
        finally:
            model.generate = plain
        secs = time.monotonic() - t0
        for (task, split), outs in zip(probe, texts, strict=True):
            for text in outs:
                p = parse_completion(text)
                rows.append({"stage": stage, "task": task.name, "split": split, "well_formed": p.well_formed,
                             "has_code": p.code is not None, "problem": p.problem, "text": text})
                print(stage, split, task.name, p.well_formed, p.code is not None, (p.problem or "")[:110], flush=True)
        for split in ("train", "held_out"):
            got = [r for r in rows if r["stage"] == stage and r["split"] == split]
            print(f"{stage} {split}: format rate {sum(r['well_formed'] for r in got) / max(len(got), 1):.2f}, "
                  f"code rate {sum(r['has_code'] for r in got) / max(len(got), 1):.2f} of {len(got)} "
                  f"({secs:.0f} s sampling)", flush=True)

    if a.base:
        sample("base")
    print(f"SFT on {len(examples)} examples: {dict(Counter(e.get('kind') for e in examples))}", flush=True)
    t0 = time.monotonic()
    model, figures = run_sft(model, tok, examples, recipe.sft, tempfile.mkdtemp(), seed=recipe.seed,
                             peft_config=peft_config, policy_checkpointing=recipe.policy.gradient_checkpointing)
    figures["wall_s"] = time.monotonic() - t0
    print(f"SFT: {figures}", flush=True)
    if not a.variants:
        sample("sft")
    for v in filter(None, a.variants.split(",")):
        m = re.fullmatch(r"t([0-9.]+)(?:p([0-9.]+))?(?:rp([0-9.]+))?", v)
        if m is None:
            raise SystemExit(f"--variants: {v!r} is not t<temperature>[p<top_p>][rp<repetition penalty>]")
        vp = dataclasses.replace(params, temperature=float(m[1]), top_p=float(m[2] or params.top_p))
        sample(f"sft:{v}", vp, float(m[3] or 1.0))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"recipe": a.recipe, "set": a.set, "kinds": a.kinds, "sft": figures, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
