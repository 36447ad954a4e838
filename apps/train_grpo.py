"""cudal1's main job: train a CUDA-optimizing policy (stage-1 SFT on the seed data, stage-2 self-training,
stage-3 contrastive GRPO with harness rewards; the held-out evaluation before training and after each stage)
from a recipe in apps/configs/.

    uv run apps/train_grpo.py                                  # the default recipe (CPU or GPU)
    uv run apps/train_grpo.py --recipe default grpo.rounds=3 policy.lora=true
    uv run apps/train_grpo.py --resume runs/20261122-170000    # continue an interrupted run

Writes runs/<timestamp>/ (config.yaml, metrics.jsonl, completions.jsonl, results.sqlite, evaluation/,
checkpoint/, summary.md) and prints
the summary. Multi-GPU: see the README (accelerate launch with a deepspeed ZeRO config).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "configs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", default="default", help="recipe name in apps/configs/ or a YAML path")
    ap.add_argument("--resume", help="a run folder to continue (its config.yaml is used; overrides still apply)")
    ap.add_argument("--output-dir", help="where run folders go (default: the recipe's output_dir)")
    ap.add_argument("--run-name", help="run folder name (default: the UTC time); needed when several processes "
                                       "train together (accelerate launch), so that they share one folder")
    ap.add_argument("overrides", nargs="*", help="section.key=value overrides, e.g. grpo.rounds=3")
    args = ap.parse_args(argv)

    from cudal1.policy.pipeline import train
    from cudal1.policy.recipe import RecipeError, load_recipe
    from cudal1.policy.run_log import RunDir

    try:
        if args.resume:
            if not (Path(args.resume) / "config.yaml").is_file():
                print(f"train_grpo: {args.resume} has no config.yaml: not a run folder to resume", file=sys.stderr)
                return 2
            run = RunDir(args.resume)
            recipe = load_recipe(str(run.path / "config.yaml"), args.overrides)
            recipe.require_runnable_here()
        else:
            recipe = load_recipe(args.recipe, args.overrides, configs_dir=CONFIGS)
            recipe.require_runnable_here()
            root = Path(args.output_dir or recipe.output_dir)
            if args.run_name:
                run = RunDir(root / args.run_name)
            elif int(os.environ.get("WORLD_SIZE", "1")) > 1:
                print("train_grpo: several processes are training together: give them one --run-name",
                      file=sys.stderr)
                return 2
            else:
                run = RunDir.new(root)
    except RecipeError as e:
        print(f"train_grpo: {e}", file=sys.stderr)
        return 2
    print(f"cudal1 train_grpo: recipe {recipe.name}, run folder {run.path}", flush=True)
    train(recipe, run, log=lambda msg: print(msg, flush=True) if run.is_main else None)
    if run.is_main:
        print((run.path / "summary.md").read_text(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
