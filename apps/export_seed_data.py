"""Stage-1 teacher data from a measured solution set (issue 18, item 4): every solution whose GPU result is a real
improvement (verified by the harness, its speedup's 95% CI above 1) becomes a one-shot and a contrastive example,
in the JSONL format apps/train_sft.py reads (recipe key ``sft.data``), tagged with its suite and measured speedup.

    uv run apps/export_seed_data.py --report runs/kb/report.json --set kernelbench-v0 \\
        --suite kernelbench:../shared/kernelbench-v0 --out data/kernelbench-v0.jsonl [--baseline eager]

``--report``: the evaluate app's report.json (apps/evaluate.py ``--out`` folder). The held-out tasks of the
recipe (``evaluation.names``, built-in) never enter: an example whose task or prompt is a held-out task is
dropped, as the training pipeline drops them from every ``sft.data`` file. Exit codes: 0 written; 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "configs"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", required=True, help="report.json of apps/evaluate.py")
    ap.add_argument("--set", required=True, dest="solution_set", help="solution set name in the report and installed")
    ap.add_argument("--suite", required=True, help="the suite the report was measured on (kernelbench:PATH, ...)")
    ap.add_argument("--baseline", default="eager")
    ap.add_argument("--recipe", default="default", help="recipe whose held-out tasks are kept out")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)

    from cudal1.harness import load_suite
    from cudal1.harness.solutions import load_solutions
    from cudal1.policy.pipeline import drop_held_out
    from cudal1.policy.recipe import RecipeError, load_recipe
    from cudal1.policy.seed_data import measured_examples, write_jsonl
    from cudal1.policy.tasks import TaskSelectionError, train_and_held_out

    try:
        report = json.loads(Path(a.report).read_text(encoding="utf-8"))
        key = f"{a.solution_set}|{a.baseline}"
        results = {row["task"]: row["results"][key] for row in report["tasks"] if key in row.get("results", {})}
        if not results:
            raise ValueError(f"{a.report} has no results for set {a.solution_set} against {a.baseline}")
        tasks = load_suite(a.suite)
        pairs, _unknown = load_solutions(a.solution_set, tasks)
        recipe = load_recipe(a.recipe, [], configs_dir=CONFIGS)
        _train, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    except (OSError, KeyError, ValueError, RecipeError, TaskSelectionError) as e:  # SolutionSetError is a ValueError
        print(f"export_seed_data: {e}", file=sys.stderr)
        return 2
    examples = drop_held_out(measured_examples(tasks, pairs, results, suite=a.solution_set), held)
    n = write_jsonl(a.out, examples)
    print(f"{n} examples ({n // 2} solutions) of {len(results)} measured tasks -> {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
