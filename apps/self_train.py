"""Stage 2 alone: rounds of sample -> verify with the harness -> fine-tune on the policy's own verified outputs.

    uv run apps/self_train.py [--recipe default] [policy.model=hf:runs/<sft-run>/checkpoint] [self_train.rounds=3]

Writes runs/<timestamp>/ (config.yaml, metrics.jsonl, results.sqlite, checkpoint/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "configs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", default="default")
    ap.add_argument("--output-dir")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args(argv)

    from cudal1.harness import ResultStore
    from cudal1.policy.evaluators import make_evaluator
    from cudal1.policy.loading import load_policy
    from cudal1.policy.pipeline import eval_config, prepare_run
    from cudal1.policy.self_training import self_train

    try:
        recipe, tasks, run = prepare_run(args.recipe, args.overrides, CONFIGS, args.output_dir)
    except ValueError as e:  # RecipeError, TaskSelectionError
        print(f"self_train: {e}", file=sys.stderr)
        return 2
    model, tok, _ = load_policy(recipe.policy, seed=recipe.seed)
    store = ResultStore(run.store_path)
    with make_evaluator(eval_config(recipe, recipe.self_train.harness), ray_address=recipe.eval.ray_address, store=store) as ev:
        model = self_train(model, tok, recipe, tasks, store, ev.evaluate, run)
    model.save_pretrained(str(run.checkpoint))
    tok.save_pretrained(str(run.checkpoint))
    for e in run.events("self_train"):
        print(f"round {e['round']}: {e['samples']} samples, {e['with_code']} with code, {e['correct']} correct, {e['kept']} kept "
              f"(real improvements, new)")
    print(f"checkpoint {run.checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
