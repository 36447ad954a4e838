"""What became of every completion of a learning run (issue 42 item 6), per run folder and stage: no code block,
compile error, runtime error, incorrect, the reference handed back, a verified answer that is a seed answer's code
(one the SFT data showed, by :func:`cudal1.kernelzoo.measured.code_identity`), one that calls exactly the zoo ops a
seed answer of its task calls (that answer rewritten), and any other verified answer, with how many verified answers
were paid as improvements and how many repeat the code of a verified answer of an earlier stage of the same run
folder on the same task, by source or by behaviour, as ``learning_curves.py`` counts "new code" (a GRPO prompt shows
earlier verified answers: a copy is the prompt's work, not the weights'); then the compile and runtime errors by
their message's kind (an import the menu does not offer, a call of a zoo op with the wrong arguments, ...).

    uv run python benchmarks/scripts/completion_outcomes.py RUN_DIR [RUN_DIR ...] [--recipe embedded-zoo-h200]

Each RUN_DIR is a pipeline run folder (completions.jsonl, results.sqlite, evaluation.sqlite). The seed answers are
those of ``--recipe``'s SFT data (the pipeline's own :func:`~cudal1.policy.pipeline.training_examples`). A
completion is matched to its stored verdict by the identity of its code; a stage shown for an earlier RUN_DIR is
not shown again (the learning experiment's arms fork their parent's folder, stages and all); prints markdown.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import learning_curves  # noqa: E402 - its sibling script: what "an earlier stage's code" means, in one place

COLUMNS = ("completions", "no code block", "compile error", "runtime error", "incorrect", "other failure",
           "reference handed back", "seed answer, verified", "seed answer's zoo calls, verified", "other, verified",
           "of them improvements", "of them an earlier stage's verified code")

#: message kinds of failed candidates, first match wins: (kind, pattern on the verdict's reason)
ERROR_KINDS = (
    ("import from a zoo module that does not exist", r"No module named 'cudal1\.kernelzoo\."),
    ("import of a name the zoo does not have", r"cannot import name .* from 'cudal1\.kernelzoo"),
    ("other import", r"ImportError|ModuleNotFoundError"),
    ("syntax", r"SyntaxError|IndentationError"),
    ("zoo op called with wrong arguments", r"(missing \d+ required|unexpected keyword|takes \d+ positional)"),
    ("undefined name", r"NameError"),
    ("attribute", r"AttributeError"),
    ("shape or dtype", r"(size of tensor|shape|mat1 and mat2|dtype|Expected .* got)"),
)


def identity(source: str) -> str | None:
    from cudal1.kernelzoo.measured import code_identity

    try:
        return code_identity(source)
    except SyntaxError:
        return None


def zoo_calls(code: str) -> frozenset[str]:
    """The zoo ops ``code`` calls (names imported from ``cudal1.kernelzoo`` that appear as a call's function)."""
    import ast

    from cudal1.prompts.menu import names_imported_from

    zoo = names_imported_from(code, "cudal1.kernelzoo")
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    return frozenset(n.func.id for n in ast.walk(tree)
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in zoo)


class Seeds:
    """The seed answers of a recipe's SFT data: their code identities, and per task the sets of zoo ops they call
    (a completion that calls exactly the ops a seed answer of its task calls, written differently (an argument
    left at its default, a module kept under another attribute), is that answer rewritten, not new work)."""

    def __init__(self, identities: set[str], calls: dict[str, set[frozenset[str]]]) -> None:
        self.identities, self.calls = identities, calls

    def kind(self, task: str, code: str) -> str:
        if identity(code) in self.identities:
            return "seed answer, verified"
        calls = zoo_calls(code)
        return "seed answer's zoo calls, verified" if calls and calls in self.calls.get(task, set()) else \
            "other, verified"


def seed_answers(recipe_name: str) -> Seeds:
    """The seed answers ``recipe_name``'s SFT shows (its train tasks' released solutions)."""
    from cudal1.policy.pipeline import training_examples
    from cudal1.policy.recipe import load_recipe
    from cudal1.policy.tasks import train_and_held_out
    from cudal1.prompts.parsing import extract_code

    recipe = load_recipe(recipe_name, [], configs_dir=ROOT / "apps" / "configs")
    tasks, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    ids: set[str] = set()
    calls: dict[str, set[frozenset[str]]] = {}
    for e in training_examples(recipe, tasks, held):
        answer = e["completion"][-1]["content"] if isinstance(e.get("completion"), list) else e.get("completion", "")
        code = extract_code(answer)
        if code and (i := identity(code)) is not None:
            ids.add(i)
            if made := zoo_calls(code):
                calls.setdefault(e["task"], set()).add(made)
    return Seeds(ids, calls)


def stored_verdicts(run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(task, code identity) -> the last stored record of that pair, from the run's stores."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for name in ("results.sqlite", "evaluation.sqlite"):
        if not (run / name).exists():
            continue
        con = sqlite3.connect(f"file:{run / name}?mode=ro", uri=True)
        try:
            for task, source, record in con.execute("SELECT task, candidate_source, record FROM results ORDER BY id"):
                if (i := identity(source)) is not None:
                    out[(task, i)] = json.loads(record)
        finally:
            con.close()
    return out


def error_kind(reason: str) -> str:
    for kind, pattern in ERROR_KINDS:
        if re.search(pattern, reason or ""):
            return kind
    return "other"


def outcomes(run: Path, seeds: Seeds) -> tuple[dict[str, collections.Counter], dict[str, collections.Counter],
                                                  dict[str, int]]:
    """stage -> counts per column, stage -> failures per (status: error kind), and stage -> a hash of its
    completions' texts (a forked folder's copy of its parent's stage hashes the same)."""
    from cudal1.prompts.parsing import extract_code

    verdicts = stored_verdicts(run)
    behaviours = learning_curves.behaviours(run)
    table: dict[str, collections.Counter] = {}
    errors: dict[str, collections.Counter] = {}
    texts: dict[str, list[str]] = {}
    # the keys (learning_curves: source identity, behaviour) of the verified answers of the stages before the current
    # one: a GRPO prompt shows earlier verified answers of its task (the contrastive exemplars), and a copy of one is
    # no new work
    earlier: set[tuple[str, str]] = set()
    current: set[tuple[str, str]] = set()
    last_stage = None
    for line in (run / "completions.jsonl").read_text().splitlines():
        c = json.loads(line)
        stage = c["stage"]
        if stage != last_stage:
            earlier |= current
            current, last_stage = set(), stage
        texts.setdefault(stage, []).append(c["text"])
        row = table.setdefault(stage, collections.Counter())
        row["completions"] += 1
        code = extract_code(c["text"]) if c.get("has_code") else ""
        if not code:
            row["no code block"] += 1
            continue
        status = c.get("status")
        if status in ("compile_error", "runtime_error", "incorrect"):
            row[status.replace("_", " ")] += 1
            rec = verdicts.get((c["task"], identity(code) or ""), {})
            errors.setdefault(stage, collections.Counter())[f"{status}: {error_kind(rec.get('reason', ''))}"] += 1
        elif status != "ok":
            row["other failure"] += 1
        elif "same_as_reference" in (c.get("flags") or []):
            row["reference handed back"] += 1
        else:
            row[seeds.kind(c["task"], code)] += 1
            row["of them improvements"] += bool(c.get("improves"))
            keys = learning_curves.code_keys(c["task"], c["text"], behaviours)
            row["of them an earlier stage's verified code"] += bool(keys & earlier)
            current |= keys
    return table, errors, {stage: hash(tuple(t)) for stage, t in texts.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (each with completions.jsonl)")
    ap.add_argument("--recipe", default="embedded-zoo-h200", help="the recipe whose SFT data gives the seed answers")
    args = ap.parse_args(argv)
    seeds = seed_answers(args.recipe)
    print(f"{len(seeds.identities)} seed answers (recipe {args.recipe}).\n")
    print("| run | stage | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    all_errors: dict[tuple[str, str], collections.Counter] = {}
    shown: set[tuple[str, int]] = set()
    for run in args.runs:
        if not (run / "completions.jsonl").exists():
            print(f"completion_outcomes: {run} has no completions.jsonl", file=sys.stderr)
            return 2
        table, errors, content = outcomes(run, seeds)
        for stage, row in table.items():
            if (stage, content[stage]) in shown:  # a forked run folder repeats its parent's stages
                continue
            shown.add((stage, content[stage]))
            print(f"| {run.name} | {stage} | " + " | ".join(str(row[k]) for k in COLUMNS) + " |")
            if stage in errors:
                all_errors[(run.name, stage)] = errors[stage]
    print("\nFailures by kind:\n")
    for (run_name, stage), counts in all_errors.items():
        print(f"- {run_name} {stage}: " + ", ".join(f"{k} {n}" for k, n in counts.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
