"""The learning experiment (issue 16): does contrastive GRPO teach the policy anything that carries over to
tasks it never trained on, beyond what the same sample budget buys without it?

Per seed, from one recipe (default: apps/configs/default.yaml), five arms, all evaluated on the recipe's held-out
tasks by the pipeline's own evaluation stage (cudal1.policy.evaluation: correct@1, novel-correct rate,
best-of-k geomean with a bootstrap CI, fraction of tasks improved):

* ``base``      the untrained policy (evaluated before SFT in the ``sft`` run);
* ``sft``       stage-1 SFT on the seed data (the starting point of every other arm);
* ``grpo``      the recipe's pipeline after SFT: self-training rounds, then contrastive GRPO (``self_train`` is
                evaluated on the way);
* ``shuffled``  the same, but GRPO is paid each batch's rewards in random order (``reward.shuffle``): what
                training on harness-shaped batches does when the reward carries no information;
* ``sft_long``  SFT only, continued from the ``sft`` checkpoint on as many further seed examples as the
                ``grpo`` arm drew completions in self-training and GRPO (the same sample budget, spent on SFT);
* ``search``    no training: ``apps/optimize.py``'s fixed-parameter contrastive search
                (cudal1.policy.search) with the ``sft`` checkpoint, run directly on the held-out tasks with as
                many completions as the ``grpo`` arm drew in training plus its evaluation (the same budget,
                spent where it is measured). Its figures are those of all its completions in sampling order
                (best-of-k over its larger k).

The arms fork one another's run folders (sft -> self_train -> grpo / shuffled; sft -> sft_long; sft ->
search), so they start from the same checkpoint and the same results store; the training arms also share one
store of measurements per seed (``eval.shared_store``: seed<N>/measurements.sqlite), so that code two arms both
wrote is timed once (each arm's own store still holds every result it used, and its exemplars come from it
alone). ``grpo`` and ``shuffled`` take their GRPO rounds in turn (round r of both before round r + 1 of either),
so that an experiment stopped by its budget has both arms' curves over the same rounds. Each phase is skipped
when its output exists, so an interrupted experiment continues where it stopped.

Pooled over seeds: per arm, the geomean of the best paid speedup over (seed, held-out task) pairs with a
bootstrap 95% CI over those pairs, and the mean of the other figures. Learning is claimed only when the
``grpo`` arm's pooled CI lies above both ``sft_long``'s and ``search``'s; otherwise results.json says so. On the
train side (learning_curves.py): per GRPO round, the mean reward the ``grpo`` and ``shuffled`` arms' completions
earned and their rate of verified improvements, with CIs, plotted in DIR/learning-curves.svg; the train verdict
claims learning only when both of grpo's intervals lie above the shuffled arm's at the last round both reached.

    uv run python benchmarks/scripts/learning_experiment.py --out benchmarks/results/DATE-learning-cpu \\
        --seeds 0,1,2 [--recipe apps/configs/default.yaml] [section.key=value ...]
    uv run python benchmarks/scripts/learning_experiment.py --out DIR --report   # tables only, from what exists
    # the GPU experiment (issue 42): the zoo action space and the composition split on one H200; the family split
    # is the same recipe with the tasks of FAMILY_SPLIT (--family-split)
    uv run python benchmarks/scripts/learning_experiment.py --recipe embedded-zoo-h200 --out DIR --seeds 0
    uv run python benchmarks/scripts/learning_experiment.py --recipe embedded-zoo-h200 --family-split --out DIR2 --seeds 0

results.md and results.json name the recipe, its action space (cudal1.policy.action_space) and its split with kind.

Writes DIR/recipe.yaml (the resolved recipe of seed 0), DIR/seed<N>/<arm>/ (run folders, search folder),
DIR/results.json, DIR/results.md and DIR/learning-curves.svg (once a GRPO round exists).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "apps" / "configs"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import learning_curves  # noqa: E402 - the train-side curves (its sibling script)

ARMS = ("base", "sft", "self_train", "grpo", "shuffled", "sft_long", "search")
#: arm -> (its run folder, the evaluation stage holding its figures: <folder>/evaluation/<stage>.json)
EVALUATION = {"base": ("sft", "base"), "sft": ("sft", "sft"), "self_train": ("self_train", "self_train"),
              "grpo": ("grpo", "grpo"), "shuffled": ("shuffled", "grpo"), "sft_long": ("sft_long", "sft_long"),
              "search": ("search", "search")}


def budget(recipe: Any, n_train: int, n_held: int) -> dict[str, int]:
    """The sample budget of the ``grpo`` arm: completions drawn in self-training and in GRPO (on train tasks)
    and in one evaluation (on held-out tasks)."""
    st, g, ev = recipe.self_train, recipe.grpo, recipe.evaluation
    self_train = st.rounds * st.samples_per_task * n_train if st.enabled else 0
    grpo = g.rounds * n_train * g.prompts_per_task * g.num_generations if g.enabled else 0
    return {"self_train": self_train, "grpo": grpo, "training": self_train + grpo,
            "evaluation": ev.samples_per_task * n_held}


def search_shape(b: dict[str, int], n_held: int, rounds: int) -> tuple[int, int]:
    """(rounds, candidates per task and round) of the search arm: at most the training + evaluation budget."""
    total = b["training"] + b["evaluation"]
    rounds = max(1, rounds)
    per = max(1, total // (n_held * rounds))
    return rounds, per


def _fork(src: Path, dst: Path) -> None:
    """``dst`` as a copy of run folder ``src`` (unless it exists: an interrupted fork continues)."""
    if not dst.exists():
        shutil.copytree(src, dst)


def _eval_file(run: Path, stage: str) -> Path:
    return run / "evaluation" / f"{stage}.json"


def _rounds_done(run: Path) -> int:
    """GRPO rounds the run folder has finished (its state.json; 0 before the first)."""
    state = run / "state.json"
    return int(json.loads(state.read_text()).get("grpo_rounds_done", 0)) if state.exists() else 0


class BudgetSpent(Exception):
    """``--budget-s`` ran out between two phases: what is done is kept; the same command continues from there."""


#: issue 42 item 3's second split for the GPU recipe (``--family-split``): builtin-v1 holds out whole op families
#: (losses, normalisations, pooling, conv fusions, conv blocks, recurrent models); eight train tasks of the families
#: it keeps whose seed answers compose the zoo's ops, and eight held-out tasks from four of its held-out families
FAMILY_SPLIT = (
    "tasks.split=builtin-v1",
    "tasks.names=[gemm_bias_relu,add_layernorm,softmax,log_softmax,gemm_swiglu,matmul_layernorm_silu,"
    "gemm_groupnorm_hardtanh,relu]",
    "evaluation.names=[layer_norm,group_norm,rms_norm,max_pool2d,avg_pool2d,mse_loss,conv2d_bn_relu,"
    "conv2d_relu_maxpool]",
)


def run_seed(base_recipe: str, overrides: list[str], seed: int, out: Path, log: Callable[[str], Any],
             deadline: float | None = None, on_phase: Callable[[dict[str, float]], Any] = lambda s: None,
             ) -> dict[str, float]:
    """Every arm of one seed into ``out``; returns wall seconds per phase (phases already done: not timed). With a
    ``deadline`` (``time.monotonic()``), no phase starts after it (:class:`BudgetSpent`); ``on_phase(seconds)`` runs
    after each phase (the tables are rewritten, so a command stopped later still brings its figures back)."""
    from cudal1.policy.pipeline import train
    from cudal1.policy.recipe import load_recipe
    from cudal1.policy.run_log import RunDir

    def recipe(*more: str) -> Any:
        # the seed's arms share what they measured (eval.shared_store): a completion two arms both wrote, as both GRPO
        # arms do in their first round, is timed once
        return load_recipe(base_recipe, [*overrides, f"seed={seed}", f"eval.shared_store={out / 'measurements.sqlite'}",
                                         *more], configs_dir=CONFIGS)

    full = recipe()
    seconds: dict[str, float] = {}

    def phase(name: str, done: bool, body: Callable[[], Any]) -> None:
        if done:
            log(f"seed {seed}: {name} already done")
            return
        if deadline is not None and time.monotonic() > deadline:
            raise BudgetSpent(f"seed {seed}: the budget ran out before {name}")
        log(f"seed {seed}: {name}")
        t0 = time.monotonic()
        body()
        seconds[name] = time.monotonic() - t0
        on_phase(seconds)

    sft = out / "sft"
    phase("sft", _eval_file(sft, "sft").exists(), lambda: train(
        recipe("self_train.enabled=false", "grpo.enabled=false"), RunDir(sft), log=log))
    start = sft
    if full.self_train.enabled and full.self_train.rounds > 0:
        st = out / "self_train"

        def run_self_train() -> None:
            _fork(sft, st)  # inside the phase, as every fork: a budget spent before it leaves no second checkpoint
            train(recipe("grpo.enabled=false"), RunDir(st), log=log)

        phase("self_train", _eval_file(st, "self_train").exists(), run_self_train)
        start = st
    # grpo and shuffled take their rounds in turn (the module's docstring says why); each forks its start in its
    # first phase
    arms = (("grpo", []), ("shuffled", ["reward.shuffle=true"]))

    def run_arm(folder: Path, more: list[str], until: int | None) -> None:
        _fork(start, folder)
        train(recipe(*more), RunDir(folder), log=log, **({} if until is None else {"grpo_rounds_until": until}))

    for r in range(1, full.grpo.rounds if full.grpo.enabled else 0):
        for arm, more in arms:
            folder = out / arm
            phase(f"{arm} round {r}", _rounds_done(folder) >= r,
                  lambda folder=folder, more=more, r=r: run_arm(folder, more, r))
    for arm, more in arms:
        folder = out / arm
        phase(arm, _eval_file(folder, "grpo").exists(), lambda folder=folder, more=more: run_arm(folder, more, None))
    sft_long = out / "sft_long"

    def run_sft_long() -> None:
        _fork(sft, sft_long)  # inside the phase: a budget spent before it leaves no copy of sft's checkpoint to carry
        _sft_long(full, sft_long, log)

    phase("sft_long", _eval_file(sft_long, "sft_long").exists(), run_sft_long)
    search = out / "search"
    phase("search", _eval_file(search, "search").exists(), lambda: _search(full, sft / "checkpoint", search, log))
    return seconds


def _sft_long(recipe: Any, run_path: Path, log: Callable[[str], Any]) -> None:
    """SFT continued from the fork's checkpoint on ``budget['training']`` more seed examples, then evaluated."""
    from cudal1.harness import ResultStore
    from cudal1.policy.loading import load_policy
    from cudal1.policy.pipeline import evaluate_held_out, training_examples
    from cudal1.policy.run_log import RunDir
    from cudal1.policy.sft import run_sft
    from cudal1.policy.tasks import train_and_held_out

    tasks, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    b = budget(recipe, len(tasks), len(held))
    run = RunDir(run_path)
    model, tok, _ = load_policy(recipe.policy, seed=recipe.seed, checkpoint=run.checkpoint)
    examples = training_examples(recipe, tasks, held)
    # one example per optimizer step in the default recipe; max_steps fixes the count whatever the batch size
    per_step = recipe.sft.batch_size * recipe.sft.grad_accum
    section = replace(recipe.sft, max_steps=max(1, math.ceil(b["training"] / per_step)))
    log(f"sft_long: {b['training']} more examples ({section.max_steps} steps) from {run.checkpoint}")
    model, figures = run_sft(model, tok, examples, section, run.path / "trainer" / "sft_long", seed=recipe.seed)
    run.log("sft_long", budget=b["training"], **figures)
    store = ResultStore(run.path / "evaluation.sqlite")
    try:
        evaluate_held_out(recipe, run, held, store, model, tok, "sft_long", log, run.state())
    finally:
        store.close()


def _search(recipe: Any, checkpoint: Path, out: Path, log: Callable[[str], Any]) -> None:
    """The fixed-parameter search of the held-out tasks with the SFT checkpoint; its figures as an evaluation."""
    from cudal1.harness import ResultStore
    from cudal1.policy.action_space import menu_text
    from cudal1.policy.backends.transformers_local import TransformersBackend
    from cudal1.policy.evaluation import summarise
    from cudal1.policy.loading import load_policy
    from cudal1.policy.pipeline import eval_config
    from cudal1.policy.search import SearchConfig, contrastive_search
    from cudal1.policy.tasks import train_and_held_out

    tasks, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    b = budget(recipe, len(tasks), len(held))
    rounds, per = search_shape(b, len(held), recipe.self_train.rounds * recipe.self_train.enabled
                               + recipe.grpo.rounds * recipe.grpo.enabled)
    model, tok, _ = load_policy(recipe.policy, seed=recipe.seed, checkpoint=checkpoint)
    ev = recipe.evaluation
    config = SearchConfig(rounds=rounds, candidates=per, exemplars=recipe.grpo.exemplars,
                          max_new_tokens=ev.max_new_tokens, temperature=ev.temperature, seed=recipe.seed,
                          prompt_tokens=recipe.grpo.prompt_budget_tokens, menu=menu_text(recipe.action_space))
    log(f"search: {rounds} round(s) x {per} completions x {len(held)} held-out task(s) "
        f"(budget {b['training'] + b['evaluation']})")
    t0 = time.monotonic()
    backend = TransformersBackend(model, tok, batch_size=recipe.policy.generation_batch,
                                  merge_adapters=recipe.policy.merge_for_generation)
    contrastive_search(held, backend, out, config=config, eval_config=eval_config(recipe, ev.harness), log=log)
    store = ResultStore(out / "results.sqlite")
    try:
        by_hash = {r.candidate_hash: r for r in store.results()}
    finally:
        store.close()
    samples: dict[str, list[Any]] = {t.name: [] for t in held}
    for line in (out / "history.jsonl").read_text().splitlines():
        rec = json.loads(line)
        samples[rec["task"]].append(by_hash.get(rec["candidate_hash"]) if rec["candidate_hash"] else None)
    fig = summarise(samples, bootstrap=ev.bootstrap, seed=recipe.seed)
    fig.update(stage="search", seconds=time.monotonic() - t0, rounds=rounds, candidates=per)
    (out / "evaluation").mkdir(exist_ok=True)
    _eval_file(out, "search").write_text(json.dumps(fig, indent=1, default=str))


def _arm_figures(seed_dir: Path) -> dict[str, dict[str, Any]]:
    """arm -> the evaluation figures of one seed (arms whose file is missing are left out)."""
    out = {}
    for arm, (folder, stage) in EVALUATION.items():
        f = _eval_file(seed_dir / folder, stage)
        if f.exists():
            out[arm] = json.loads(f.read_text())
    return out


def pooled(per_seed: Sequence[dict[str, Any]], *, bootstrap: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Figures of one arm pooled over seeds: geomean of the best paid speedup over (seed, task) pairs with a
    bootstrap 95% CI over the pairs; means of correct@1, novel-correct rate, fraction improved and format rate (None
    where no seed's evaluation counted it)."""
    logs = [math.log(v) for fig in per_seed for v in fig["best_per_task"].values()]
    if not logs:
        raise ValueError("no (seed, task) pair to pool")
    rng = random.Random(seed)
    boots = sorted(math.exp(statistics.fmean(rng.choice(logs) for _ in logs)) for _ in range(bootstrap))
    return {"seeds": len(per_seed), "pairs": len(logs), "best_geomean": math.exp(statistics.fmean(logs)),
            "best_ci": [boots[int(0.025 * (bootstrap - 1))], boots[int(0.975 * (bootstrap - 1))]],
            **{k: statistics.fmean(fig[k] for fig in per_seed)
               for k in ("correct_at_1", "novel_correct_rate", "improved_fraction")},
            "completions_per_seed": statistics.fmean(fig["completions"] for fig in per_seed),
            # answers in the response format (a code block), where the evaluation counted them (the search does not)
            "format_rate": statistics.fmean(rates) if (rates := [fig["format_rate"] for fig in per_seed
                                                                  if isinstance(fig.get("format_rate"), float)])
            else None}


def verdict(table: dict[str, dict[str, Any]]) -> str:
    """The one-line finding: learning only when grpo's CI lies above sft_long's and search's."""
    missing = [a for a in ("grpo", "sft_long", "search") if a not in table]
    if missing:
        return f"no verdict: arms {missing} have no results yet"
    g = table["grpo"]["best_ci"]
    beaten = [a for a in ("sft_long", "search") if g[0] > table[a]["best_ci"][1]]
    if len(beaten) == 2:
        return "learning: grpo's held-out best-of-k CI lies above both sft_long's and search's"
    return (f"no learning shown: grpo's held-out CI {g[0]:.3f}-{g[1]:.3f} does not lie above "
            + " and ".join(f"{a}'s {table[a]['best_ci'][0]:.3f}-{table[a]['best_ci'][1]:.3f}"
                           for a in ("sft_long", "search") if a not in beaten))


def setup_of(out: Path) -> dict[str, str]:
    """What the experiment ran, from DIR/recipe.yaml: the recipe's name, its action space, its split (with kind) and
    what its GRPO prompts show (``grpo.exemplars_from``), so that every table says what it measured."""
    from cudal1.policy.action_space import describe
    from cudal1.policy.recipe import load_recipe
    from cudal1.policy.splits import split

    r = load_recipe(str(out / "recipe.yaml"))
    where = f"{r.tasks.split} ({split(r.tasks.split).kind})" if r.tasks.split else "none"
    shows = {"store": "earlier answers of the task with their speedups", "reference": "the task's reference alone"}
    return {"recipe": r.name, "action_space": describe(r.action_space), "split": where,
            "prompts": shows.get(r.grpo.exemplars_from, r.grpo.exemplars_from)}


def report(out: Path, seeds: Sequence[int], seconds: dict[int, dict[str, float]]) -> dict[str, Any]:
    """results.json and results.md from the seeds' folders."""
    per_arm: dict[str, list[dict[str, Any]]] = {a: [] for a in ARMS}
    per_seed: dict[str, dict[str, Any]] = {}
    for s in seeds:
        figs = _arm_figures(out / f"seed{s}")
        kept = ("correct_at_1", "novel_correct_rate", "best_of_k_geomean", "best_of_k_ci", "improved_fraction",
                "completions", "best_per_task", "statuses", "format_rate")
        per_seed[str(s)] = {a: {k: f.get(k) for k in kept} for a, f in figs.items()}
        for a, f in figs.items():
            per_arm[a].append(f)
    table = {a: pooled(fs) for a, fs in per_arm.items() if fs}
    old = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    wall = {**old.get("seconds", {}), **{str(s): {**old.get("seconds", {}).get(str(s), {}), **v}
                                         for s, v in seconds.items()}}
    setup = setup_of(out)
    curves = learning_curves.curves(out, seeds)
    # each seed's own curves too: a pooled rise can be one seed's (2026-12-07: seed 0 rose in both arms, seed 1 not)
    by_seed = {str(s): learning_curves.curves(out, [s]) for s in seeds} if len(seeds) > 1 else {}
    seed_curves = {s: c for s, c in by_seed.items() if c}  # seeds with no GRPO round yet left out
    result = {"seeds": list(seeds), **setup, "pooled": table, "per_seed": per_seed, "verdict": verdict(table),
              "curves": curves, "train_verdict": learning_curves.train_verdict(curves),
              "paired_difference": learning_curves.paired_difference(out, seeds),
              "curves_per_seed": seed_curves,
              "train_verdict_per_seed": {s: learning_curves.train_verdict(c) for s, c in seed_curves.items()},
              "seconds": wall}
    (out / "results.json").write_text(json.dumps(result, indent=1))
    lines = [f"Recipe {setup['recipe']}; action space: {setup['action_space']}; split: {setup['split']}; GRPO and "
             f"self-training prompts show {setup['prompts']}.", "",
             "| arm | seeds | (seed, task) pairs | best-of-k geomean [95% CI] | correct@1 | novel correct | "
             "tasks improved | completions per seed | answers with code |", "|---|---|---|---|---|---|---|---|---|"]
    for a, t in table.items():
        fmt = "-" if t.get("format_rate") is None else f"{t['format_rate']:.2f}"
        lines.append(f"| {a} | {t['seeds']} | {t['pairs']} | {t['best_geomean']:.3f} [{t['best_ci'][0]:.3f}, "
                     f"{t['best_ci'][1]:.3f}] | {t['correct_at_1']:.2f} | {t['novel_correct_rate']:.2f} | "
                     f"{t['improved_fraction']:.2f} | {t['completions_per_seed']:.0f} | {fmt} |")
    lines += ["", f"Verdict: {result['verdict']}", ""]
    if curves:  # the train side: what the completions of each GRPO round earned (learning-curves.svg plots it)
        (out / "learning-curves.svg").write_text(learning_curves.svg(curves, "train tasks: grpo against shuffled "
                                                                            "rewards"))
        lines += ["Train tasks, per GRPO round ([learning-curves.svg](learning-curves.svg)):", "",
                  *learning_curves.table(curves), ""]
    lines += [f"Train verdict: {result['train_verdict']}", ""]
    if curves:
        lines += [learning_curves.paired_line(result["paired_difference"]), ""]
    lines += [f"- seed {s}: {v}" for s, v in result["train_verdict_per_seed"].items()]
    (out / "results.md").write_text("\n".join(lines))
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="experiment folder (created; an existing one is continued)")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--recipe", default="default", help="recipe name in apps/configs/ or a YAML path")
    ap.add_argument("--report", action="store_true", help="only rebuild results.json/.md from what exists")
    ap.add_argument("--budget-s", type=float, help="start no phase after this many seconds; the same command continues "
                                                   "where it stopped (a device call's time limit)")
    ap.add_argument("--family-split", action="store_true", help="the family split builtin-v1 with the train and "
                    "held-out tasks of FAMILY_SPLIT (before the overrides); the recipe's own split otherwise")
    ap.add_argument("overrides", nargs="*", help="section.key=value overrides for every arm")
    args = ap.parse_args(argv)
    if args.family_split:
        args.overrides = [*FAMILY_SPLIT, *args.overrides]
    from cudal1.policy.recipe import RecipeError, load_recipe

    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        resolved = load_recipe(args.recipe, args.overrides, configs_dir=CONFIGS)
        if not args.report:
            resolved.require_runnable_here()
    except (ValueError, RecipeError) as e:
        print(f"learning_experiment: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    ran = out / "recipe.yaml"  # what the folder's arms ran: a report keeps it, a continuation must match it
    if not ran.exists():
        out.mkdir(parents=True, exist_ok=True)
        ran.write_text(resolved.to_yaml())
    elif not args.report and load_recipe(str(ran)) != resolved:
        print(f"learning_experiment: {out} ran another recipe than {args.recipe} with these overrides (see {ran}): "
              "continue it with the overrides it ran, or start a new --out", file=sys.stderr)
        return 2
    seconds: dict[int, dict[str, float]] = {}
    deadline = time.monotonic() + args.budget_s if args.budget_s else None
    stopped = False
    if not args.report:
        try:
            for s in seeds:
                seconds[s] = run_seed(args.recipe, args.overrides, s, out / f"seed{s}",
                                      log=lambda m: print(m, flush=True), deadline=deadline,
                                      on_phase=lambda done, s=s: report(out, seeds, {**seconds, s: done}))
                report(out, seeds, seconds)
        except BudgetSpent as e:
            print(f"learning_experiment: {e}; run the same command again to continue", flush=True)
            stopped = True
    result = report(out, seeds, seconds)
    print((out / "results.md").read_text())
    if stopped:
        return 3
    return 0 if result["pooled"] else 1


if __name__ == "__main__":
    sys.exit(main())
