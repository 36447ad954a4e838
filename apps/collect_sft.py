"""Stage-1 data: ask teacher backends for solutions of each task; keep only harness-verified ones.

    uv run apps/collect_sft.py --teacher openai:http://localhost:8000/v1#Qwen/Qwen2.5-Coder-32B-Instruct \
        --out data/teacher.jsonl [--recipe default] [--max-attempts 20] [--successes 2] [overrides ...]

Tasks and harness settings come from the recipe (apps/configs/); results go to --store (default
<out>.results.sqlite). Verified examples are appended to --out in the format apps/train_sft.py reads
(recipe key sft.data).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "configs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teacher", action="append", required=True,
                    help="backend spec (openai:URL#MODEL, hf:NAME, vllm:MODEL, embedded); repeat for several")
    ap.add_argument("--out", required=True, help="JSONL file of verified examples (appended)")
    ap.add_argument("--recipe", default="default")
    ap.add_argument("--store", help="results store (default: <out>.results.sqlite)")
    ap.add_argument("--max-attempts", type=int, default=20)
    ap.add_argument("--successes", type=int, default=2)
    ap.add_argument("--max-new-tokens", type=int, default=2048)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("overrides", nargs="*", help="recipe overrides, e.g. tasks.names=[relu]")
    args = ap.parse_args(argv)

    from cudal1.harness import ResultStore
    from cudal1.policy.backends.base import SamplingParams
    from cudal1.policy.backends.factory import make_backend
    from cudal1.policy.collection import collect
    from cudal1.policy.evaluators import make_evaluator
    from cudal1.policy.pipeline import eval_config
    from cudal1.policy.recipe import RecipeError, load_recipe
    from cudal1.policy.tasks import TaskSelectionError, train_and_held_out

    try:
        recipe = load_recipe(args.recipe, args.overrides, configs_dir=CONFIGS)
        tasks, _held = train_and_held_out(recipe.tasks, recipe.evaluation.names)  # held-out tasks: never collected
        teachers = [make_backend(spec) for spec in args.teacher]
    except (RecipeError, TaskSelectionError, ValueError) as e:
        print(f"collect_sft: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    store = ResultStore(args.store or str(out) + ".results.sqlite")
    cfg = eval_config(recipe)
    with make_evaluator(cfg, ray_address=recipe.eval.ray_address, store=store) as evaluator:
        report = collect(tasks, teachers, evaluator.evaluate, out, max_attempts=args.max_attempts,
                         successes=args.successes,
                         params=SamplingParams(max_new_tokens=args.max_new_tokens, temperature=args.temperature),
                         log=lambda s: print(s, flush=True))
    total = sum(report.kept.values())
    print(f"kept {total} verified solutions for {sum(1 for v in report.kept.values() if v)}/{len(tasks)} tasks "
          f"in {report.seconds:.0f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
