"""Stage 1 alone: supervised fine-tuning (trl SFTTrainer) on the seed data and collected teacher data.

    uv run apps/train_sft.py [--recipe default] [sft.data=[data/teacher.jsonl]] [sft.epochs=3] ...

Writes runs/<timestamp>/ with config.yaml, metrics.jsonl and checkpoint/ (usable as policy.model=hf:<path>).
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

    from cudal1.policy.loading import load_policy
    from cudal1.policy.pipeline import prepare_run, training_examples
    from cudal1.policy.run_log import peak_rss_gib
    from cudal1.policy.sft import run_sft

    try:
        recipe, tasks, run = prepare_run(args.recipe, args.overrides, CONFIGS, args.output_dir)
    except ValueError as e:  # RecipeError, TaskSelectionError
        print(f"train_sft: {e}", file=sys.stderr)
        return 2
    model, tok, peft_config = load_policy(recipe.policy, seed=recipe.seed)
    examples = training_examples(recipe, tasks)
    print(f"SFT on {len(examples)} examples -> {run.path}", flush=True)
    model, figures = run_sft(model, tok, examples, recipe.sft, run.path / "trainer" / "sft", seed=recipe.seed,
                             report_to=recipe.report_to, peft_config=peft_config,
                             policy_checkpointing=recipe.policy.gradient_checkpointing)
    model.save_pretrained(str(run.checkpoint))
    tok.save_pretrained(str(run.checkpoint))
    run.log("sft", peak_rss_gib=peak_rss_gib(), **figures)
    print(f"done: {figures['steps']} steps, loss {figures['train_loss']:.3f}, {figures['seconds']:.0f} s; "
          f"checkpoint {run.checkpoint}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
