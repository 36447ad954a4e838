"""The main job end to end, each stage optional in the recipe: stage-1 SFT on the seed (and collected) data,
stage-2 self-training rounds on the policy's own real improvements, stage-3 contrastive GRPO with harness
rewards; the evaluation stage on held-out tasks before training and after each stage that ran
(cudal1.policy.evaluation). The run folder holds everything (see cudal1.policy.run_log).
``apps/train_grpo.py`` calls :func:`train`.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from cudal1.harness import EvalConfig, ResultStore, Task, load_suite
from cudal1.rewards import HackStore, RewardChecker

from .action_space import describe as describe_action_space
from .action_space import menu_imports, menu_text, off_menu
from .grpo import run_grpo
from .loading import is_peft, load_policy, release_cached_gpu_memory
from .recipe import PIPELINE_STAGES, Recipe
from .rewarding import HarnessReward
from .run_log import RunDir, peak_rss_gib
from .seed_data import read_jsonl, seed_examples
from .sft import run_sft
from .tasks import train_and_held_out

__all__ = ["eval_config", "evaluate_held_out", "prepare_run", "summary_markdown", "train", "training_examples"]


def prepare_run(recipe_name: str, overrides: list[str], configs_dir: Path, output_dir: str | None = None,
                ) -> tuple[Recipe, list, RunDir]:
    """What every stage app starts with: the recipe (name in ``configs_dir`` or a path, plus overrides), its
    train tasks, and a new run folder holding the resolved recipe as config.yaml. Raises RecipeError or
    TaskSelectionError (both ValueError) with a message for the user."""
    from .recipe import load_recipe

    recipe = load_recipe(recipe_name, overrides, configs_dir=configs_dir)
    tasks, _held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    run = RunDir.new(output_dir or recipe.output_dir)
    (run.path / "config.yaml").write_text(recipe.to_yaml())
    return recipe, tasks, run


def eval_config(recipe: Recipe, stage: dict[str, Any] | None = None) -> EvalConfig:
    """The harness EvalConfig of a recipe (``eval.harness``, the stage's ``harness`` mapping on top; device
    ``auto`` -> cuda when visible)."""
    return recipe.harness_config(stage)


def training_examples(recipe: Recipe, tasks: list, held_out: list[Task] | None = None) -> list[dict[str, Any]]:
    """Stage-1 examples: the seed data (released solutions of installed solution sets + references as
    ModelNew) for the recipe's train tasks, then every JSONL file of ``sft.data``; an example of a held-out
    task (by name, or a prompt that holds a held-out task's source) is dropped. With the zoo action space every
    seed prompt carries the menu, a released solution calling an op the menu does not show is left out, and the
    others import their ops the way the menu writes it (:func:`~cudal1.policy.action_space.menu_imports`)."""
    out: list[dict[str, Any]] = []
    if recipe.sft.seed_data:
        from cudal1.harness.solutions import load_solutions, solution_sets

        seed_tasks = list(tasks)
        if recipe.sft.seed_tasks == "split" and recipe.tasks.split:
            from .splits import split

            mine = {t.name for t in tasks}
            train_side = set(split(recipe.tasks.split).train)
            seed_tasks += [t for t in load_suite(recipe.tasks.suite) if t.name in train_side and t.name not in mine]
        pairs: list = []
        for name in sorted(solution_sets()):
            pairs += load_solutions(name, seed_tasks)[0]
        kinds = set(recipe.sft.seed_kinds)
        pairs = [(t, replace(c, source=menu_imports(c.source, recipe.action_space))) for t, c in pairs
                 if not off_menu(c.source, recipe.action_space)]
        out += [e for e in seed_examples(seed_tasks, pairs, menu=menu_text(recipe.action_space)) if e.get("kind") in kinds
                and (recipe.sft.seed_references or e.get("origin") != "seed:reference")]
    for path in recipe.sft.data:
        out += read_jsonl(path)
    return drop_held_out(out, held_out or [])


def drop_held_out(examples: list[dict[str, Any]], held_out: list[Task]) -> list[dict[str, Any]]:
    """``examples`` without those of a held-out task: by name, or a prompt that holds a held-out task's source."""
    names = {t.name for t in held_out}
    sources = [" ".join(t.source.split()) for t in held_out]

    def leaks(ex: dict[str, Any]) -> bool:
        if ex.get("task") in names:
            return True
        text = " ".join(str(m.get("content", "")) for m in ex.get("prompt", []) if isinstance(m, dict))
        text = " ".join(text.split())
        return any(src and src in text for src in sources)

    return [ex for ex in examples if not leaks(ex)]


def _make_evaluator(recipe: Recipe, cfg: EvalConfig, store: ResultStore) -> Any:
    """The reward evaluator: Ray actors when the recipe names a Ray address; else a local pool, on this
    process's own GPU when several training processes share the machine (``LOCAL_RANK`` under
    accelerate/torchrun), so their reward evaluations do not time against each other."""
    import os

    from .evaluators import make_evaluator

    kw: dict[str, Any] = {}
    if cfg.is_cuda:
        kw["lanes_per_gpu"] = recipe.eval.lanes_per_gpu
        if recipe.eval.warm_spares != "context":  # passed only when it is not the pool's own default
            kw["warm_spares"] = recipe.eval.warm_spares
    if recipe.eval.fork_workers is not None:  # None: the pool's own default for its device
        kw["fork_workers"] = recipe.eval.fork_workers
    if recipe.eval.ray_address is None and cfg.is_cuda and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        kw["gpus"] = [int(os.environ.get("LOCAL_RANK", "0"))]
    elif recipe.eval.ray_address is None and not cfg.is_cuda:
        kw["cpu_lanes"] = recipe.eval.cpu_lanes
    evaluator = make_evaluator(cfg, ray_address=recipe.eval.ray_address, store=store, **kw)
    if recipe.eval.shared_store:
        from cudal1.harness import ResultStore as _Store

        from .evaluators import SharedMeasurements

        return SharedMeasurements(evaluator, _Store(recipe.eval.shared_store), cfg, store)
    return evaluator


def _judge(spec: str | None) -> Any:
    if not spec:
        return None
    from .backends.base import SamplingParams
    from .backends.factory import make_backend

    backend = make_backend(spec)
    params = SamplingParams(max_new_tokens=512, temperature=0.0)
    return lambda prompt: backend.generate([[{"role": "user", "content": prompt}]], params)[0][0]


def evaluate_held_out(recipe: Recipe, run: RunDir, held: list[Task], store: ResultStore, model: Any, tok: Any,
                      stage: str, log: Any, state: dict[str, Any]) -> dict[str, Any] | None:
    """The evaluation stage after ``stage`` (once per stage: a resumed run does not repeat it); its figures, or
    None when skipped. ``state``: the snapshot taken at the start of :func:`train`, updated by this process
    only, so that every rank of a run skips the same stages (only rank 0 writes state.json, and a late rank must
    not read its later writes). Also used by the learning experiment's control arms (benchmarks/scripts)."""
    ev_sec = recipe.evaluation
    done = list(state.get("evaluated", []))
    if not (ev_sec.enabled and held) or stage in done:
        return None
    if stage in PIPELINE_STAGES and stage not in ev_sec.stages:  # the experiment's own stages (sft_long) always run
        log(f"evaluation after {stage}: left out (evaluation.stages)")
        return None
    from .backends.transformers_local import TransformersBackend
    from .evaluation import evaluate_stage

    cfg = eval_config(recipe, ev_sec.harness)
    backend = TransformersBackend(model, tok, batch_size=recipe.policy.generation_batch,
                                  merge_adapters=recipe.policy.merge_for_generation)
    evaluator = _make_evaluator(recipe, cfg, store)
    try:
        fig = evaluate_stage(stage, backend.generate, held, evaluator.evaluate, run,
                             samples_per_task=ev_sec.samples_per_task, max_new_tokens=ev_sec.max_new_tokens,
                             temperature=ev_sec.temperature, seed=recipe.seed, bootstrap=ev_sec.bootstrap, log=log,
                             menu=menu_text(recipe.action_space))
    finally:
        evaluator.close()
    state["evaluated"] = [*done, stage]
    run.save_state(evaluated=state["evaluated"])
    return fig


def train(recipe: Recipe, run: RunDir, *, log: Any = print, grpo_rounds_until: int | None = None) -> dict[str, Any]:
    """Run (or resume) the recipe in ``run``; returns the summary figures (also in summary.md). With
    ``grpo_rounds_until`` (a round count, 1..``recipe.grpo.rounds``), GRPO stops once that many rounds are done and,
    while rounds remain, the run returns before the held-out evaluation after GRPO (its figures so far; a later call
    continues from the next round): two arms can then take their rounds in turn."""
    if grpo_rounds_until is not None and not 1 <= grpo_rounds_until:
        raise ValueError(f"grpo_rounds_until must be a round count of at least 1, not {grpo_rounds_until}")
    t0 = time.monotonic()
    recipe.require_runnable_here()
    state = run.state()
    (run.path / "config.yaml").write_text(recipe.to_yaml())
    torch.manual_seed(recipe.seed)
    tasks, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    cfg = eval_config(recipe, recipe.grpo.harness)
    store = ResultStore(run.store_path)
    eval_store = ResultStore(run.path / "evaluation.sqlite")  # held-out results: never read by a training stage
    resume = run.checkpoint if (run.checkpoint / "config.json").exists() or (run.checkpoint / "adapter_config.json").exists() else None
    model, tok, peft_config = load_policy(recipe.policy, seed=recipe.seed, checkpoint=resume)
    log(f"policy {recipe.policy.model} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters)"
        f"{' resumed from ' + str(resume) if resume else ''}; train tasks ({len(tasks)}): "
        f"{', '.join(t.name for t in tasks)}; held-out tasks evaluated ({len(held)}): "
        f"{', '.join(t.name for t in held) or 'none'}; harness on {cfg.device}; action space "
        f"{describe_action_space(recipe.action_space)}")
    run.log("start", recipe=recipe.name, tasks=[t.name for t in tasks], held_out=[t.name for t in held],
            device=cfg.device, resumed=bool(resume), torch=torch.__version__,
            action_space=describe_action_space(recipe.action_space))
    evaluate_held_out(recipe, run, held, eval_store, model, tok, "base", log, state)
    if recipe.sft.enabled and not state.get("sft_done"):
        examples = training_examples(recipe, tasks, held)
        log(f"stage 1: SFT on {len(examples)} examples")
        model, figures = run_sft(model, tok, examples, recipe.sft, run.path / "trainer" / "sft", seed=recipe.seed,
                                 report_to=recipe.report_to, peft_config=None if is_peft(model) else peft_config,
                                 policy_checkpointing=recipe.policy.gradient_checkpointing)
        if run.is_main:
            model.save_pretrained(str(run.checkpoint))
            tok.save_pretrained(str(run.checkpoint))
        run.save_state(sft_done=True)
        run.log("sft", peak_rss_gib=peak_rss_gib(), **figures)
        log(f"stage 1 done: {figures['steps']} steps, loss {figures['train_loss']:.3f}, {figures['seconds']:.0f} s")
    if recipe.sft.enabled:
        evaluate_held_out(recipe, run, held, eval_store, model, tok, "sft", log, state)
    st = recipe.self_train
    st_start = int(state.get("self_train_rounds_done", 0))
    if st.enabled and st_start < st.rounds:
        from .self_training import self_train

        log(f"stage 2: self-training, rounds {st_start + 1}..{st.rounds}, {st.samples_per_task} samples per task")
        st_eval = _make_evaluator(recipe, eval_config(recipe, st.harness), store)
        try:
            model = self_train(model, tok, recipe, tasks, store, st_eval.evaluate, run, start_round=st_start)
        finally:
            st_eval.close()
        if run.is_main:
            model.save_pretrained(str(run.checkpoint))
    if st.enabled and st.rounds > 0:
        evaluate_held_out(recipe, run, held, eval_store, model, tok, "self_train", log, state)
    checker = RewardChecker(HackStore(run.path / "hacks.sqlite"), judge=_judge(recipe.reward.judge))
    rc = recipe.reward
    g = recipe.grpo
    start = int(state.get("grpo_rounds_done", 0))
    until = g.rounds if grpo_rounds_until is None else min(g.rounds, grpo_rounds_until)
    if g.enabled and start < until:
        evaluator = _make_evaluator(recipe, cfg, store)
        try:
            def remeasure(task: Task, cand: Any) -> Any:
                return evaluator.evaluate([(task, cand)], run=f"{run.path.name}:remeasure", fresh=True)[0]

            reward = HarnessReward(tasks={t.name: t for t in tasks}, evaluate=evaluator.evaluate, eval_config=cfg,
                                   store=store, config=recipe.reward_config(), no_code=rc.no_code,
                                   format_penalty=rc.format_penalty, checker=checker, smoothing=rc.group_smoothing,
                                   run=run.path.name, remeasure=remeasure,
                                   completions_log=run.path / "completions.jsonl" if run.is_main else None,
                                   shuffle_seed=recipe.seed + 7919 * run.rank if rc.shuffle else None,
                                   shown_copies=rc.shown_copies)
            log(f"stage 3: contrastive GRPO, rounds {start + 1}..{until} of {g.rounds}, every train task ({len(tasks)}) x "
                f"{g.prompts_per_task} prompt(s) x {g.num_generations} completions each round"
                + ("; CONTROL RUN: rewards paid in shuffled order (reward.shuffle)" if rc.shuffle else ""))
            model = run_grpo(model, tok, recipe, tasks, store, reward, run,
                             peft_config=None if is_peft(model) else peft_config, start_round=start,
                             stop_round=until)
        finally:
            evaluator.close()
    finished = not (g.enabled and until < g.rounds)  # else rounds remain for a later call: no evaluation yet
    if finished and g.enabled and g.rounds > 0:
        evaluate_held_out(recipe, run, held, eval_store, model, tok, "grpo", log, state)
    figures = summarize_run(run, store, time.monotonic() - t0)
    if finished:
        if run.is_main:
            (run.path / "summary.md").write_text(summary_markdown(recipe, run, figures))
        run.log("done", **{k: v for k, v in figures.items() if k not in ("steps", "evaluations")})
    store.close()
    eval_store.close()
    del model
    release_cached_gpu_memory()  # a caller's next run (the learning experiment's next arm) measures in other processes
    return figures


def _mean(xs: list) -> float:
    xs = [x for x in xs if isinstance(x, (int, float)) and math.isfinite(x)]
    return statistics.fmean(xs) if xs else float("nan")


def summarize_run(run: RunDir, store: ResultStore, seconds: float) -> dict[str, Any]:
    """Figures of a run from its metrics.jsonl and results store."""
    steps = run.events("grpo_step")
    results = store.results(run=run.path.name)
    ok = [r for r in results if r.ok and r.speedup is not None]
    best: dict[str, float] = {}
    for r in ok:
        if r.improves:  # the one rule: verified, not the reference, speedup interval above 1
            best[r.task] = max(best.get(r.task, 0.0), r.speedup or 0.0)
    statuses: dict[str, int] = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    step_s = _mean([s["step_s"] for s in steps])
    reward_s = _mean([s["reward_s"] for s in steps])
    return {
        "seconds": seconds, "grpo_steps": len(steps), "evaluated": len(results), "statuses": statuses,
        "compile_rate": _mean([s.get("compile_rate") for s in steps]),
        "correct_rate": _mean([s.get("correct_rate") for s in steps]),
        "format_rate": _mean([s.get("format_rate") for s in steps]),
        "mean_speedup": _mean([r.speedup for r in ok]), "best_speedup_per_task": best,
        "step_s": step_s, "generation_s": _mean([s["generation_s"] for s in steps]), "reward_s": reward_s,
        "optimisation_s": _mean([s["optimisation_s"] for s in steps]),
        "reward_share": reward_s / step_s if step_s and math.isfinite(step_s) and step_s > 0 else float("nan"),
        "peak_rss_gib": peak_rss_gib(), "steps": steps,
        "evaluations": {e["stage"]: e for e in run.events("evaluation")},
        "self_train": run.events("self_train"),
    }


LEARNING_RESULTS = "benchmarks/results/ (the learning experiment: benchmarks/scripts/learning_experiment.py)"


def plain_words(fig: dict[str, Any]) -> list[str]:
    """What improved and what did not, in sentences, from a run's figures (:func:`summarize_run`): the held-out
    format rate, correct@1 and best-of-k speedup from the first evaluation to the last, GRPO's format rate and reward
    from its first step to its last, and where the question of learning is answered."""
    out: list[str] = []
    by_stage = fig.get("evaluations") or {}
    evals = list(by_stage.items())
    if len(evals) >= 2:
        (s0, e0), (s1, e1) = evals[0], evals[-1]
        for key, what, fmt in (("format_rate", "answers in the response format", "{:.2f}"),
                               ("correct_at_1", "correct at the first try (correct@1)", "{:.2f}"),
                               ("best_of_k_geomean", "best-of-k geomean speedup", "{:.3f}x")):
            a, b = e0.get(key), e1.get(key)
            if not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
                continue
            verb = "rose" if b > a else "fell" if b < a else "stayed"
            out.append(f"held-out tasks, {what}: {verb} from {fmt.format(a)} ({s0}) to {fmt.format(b)} ({s1})"
                       if verb != "stayed" else f"held-out tasks, {what}: stayed at {fmt.format(a)} ({s0} to {s1})")
        sft_format = by_stage.get("sft", {}).get("format_rate")
        if isinstance(sft_format, (int, float)):
            out.append(f"after SFT the policy answered in the response format on {sft_format:.0%} of held-out prompts")
    first_round = (fig.get("self_train") or [{}])[0]
    if first_round.get("samples") and isinstance(first_round.get("well_formed"), int):
        out.append(f"on train tasks right after SFT (the first self-training round's samples), "
                   f"{first_round['well_formed']} of {first_round['samples']} answers were in the response format")
    steps = fig.get("steps") or []
    if steps:
        f0, f1 = steps[0].get("format_rate"), steps[-1].get("format_rate")
        r0, r1 = steps[0].get("reward_mean"), steps[-1].get("reward_mean")
        if isinstance(f0, (int, float)) and isinstance(f1, (int, float)):
            out.append(f"GRPO on train tasks: format rate {f0:.2f} in its first step, {f1:.2f} in its last "
                       f"({len(steps)} steps)" + (f"; mean reward {r0:.3f} then {r1:.3f}"
                                                   if isinstance(r0, (int, float)) and isinstance(r1, (int, float))
                                                   else ""))
    best = fig.get("best_speedup_per_task") or {}
    out.append(f"verified improvements on train tasks: {', '.join(f'{k} {v:.2f}x' for k, v in sorted(best.items()))}"
               if best else "no verified improvement on any train task (verified, not the reference, interval above 1)")
    out.append(f"a run of this size shows that the pipeline works, not that the policy learns: for that, see "
               f"{LEARNING_RESULTS}")
    return out


def _f(x: Any, fmt: str = "{:.2f}") -> str:
    return fmt.format(x) if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def summary_markdown(recipe: Recipe, run: RunDir, fig: dict[str, Any]) -> str:
    """summary.md of a run: the recipe, per-step table with time split, and the run's figures."""
    lines = [f"# cudal1 run {run.path.name} (recipe {recipe.name})", "",
             f"Policy {recipe.policy.model}{' + LoRA' if recipe.policy.lora else ''}; tasks "
             f"{', '.join(recipe.tasks.names) or recipe.tasks.suite}; wall time {fig['seconds']:.0f} s; peak RSS "
             f"{fig['peak_rss_gib']['self']:.2f} GiB (this process), {fig['peak_rss_gib']['children']:.2f} GiB "
             f"(largest harness worker). Action space: {describe_action_space(recipe.action_space)}.", "",
             "| round | step | completions | format | compiles | correct | mean speedup | reward | step s | generation s | reward s | optimisation s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in fig["steps"]:
        lines.append(f"| {s['round']} | {s['step']} | {s['completions']} | {_f(s.get('format_rate'))} | "
                     f"{_f(s.get('compile_rate'))} | {_f(s.get('correct_rate'))} | {_f(s.get('mean_speedup'))} | "
                     f"{_f(s.get('reward_mean'))} | {_f(s['step_s'], '{:.1f}')} | {_f(s['generation_s'], '{:.1f}')} | "
                     f"{_f(s['reward_s'], '{:.1f}')} | {_f(s['optimisation_s'], '{:.1f}')} |")
    evals = fig.get("evaluations") or {}
    if evals:
        lines += ["", "Held-out evaluation (tasks never trained on; cudal1.policy.evaluation):", "",
                  "| after | tasks | completions | format | correct@1 | novel correct | best-of-k geomean [95% CI] | "
                  "improved tasks | s |", "|---|---|---|---|---|---|---|---|---|"]
        for stage, e in evals.items():
            ci = e.get("best_of_k_ci") or [float("nan")] * 2
            lines.append(f"| {stage} | {e['tasks']} | {e['completions']} | {_f(e.get('format_rate'))} | "
                         f"{_f(e['correct_at_1'])} | {_f(e['novel_correct_rate'])} | {_f(e['best_of_k_geomean'], '{:.3f}')} "
                         f"[{_f(ci[0], '{:.3f}')}, {_f(ci[1], '{:.3f}')}] | {_f(e['improved_fraction'])} | "
                         f"{_f(e['seconds'], '{:.0f}')} |")
    lines += ["", "What this run shows, in plain words:", "", *(f"- {w}" for w in plain_words(fig)), ""]
    best = ", ".join(f"{k} {v:.2f}x" for k, v in sorted(fig["best_speedup_per_task"].items())) or "none yet"
    lines += ["", f"- harness evaluations: {fig['evaluated']} ({', '.join(f'{k} {v}' for k, v in sorted(fig['statuses'].items()))})",
              f"- compile rate {_f(fig['compile_rate'])}, correct rate {_f(fig['correct_rate'])}, "
              f"format rate {_f(fig['format_rate'])}, mean speedup of correct candidates {_f(fig['mean_speedup'])}",
              f"- best real improvement per task (verified, not the reference, interval above 1): {best}",
              f"- mean step {_f(fig['step_s'], '{:.1f}')} s = generation {_f(fig['generation_s'], '{:.1f}')} + reward "
              f"evaluation {_f(fig['reward_s'], '{:.1f}')} + optimisation {_f(fig['optimisation_s'], '{:.1f}')}; reward "
              f"share {_f(fig['reward_share'])}",
              f"- files: config.yaml, metrics.jsonl, completions.jsonl, results.sqlite, evaluation.sqlite, "
              f"evaluation/, hacks.sqlite, checkpoint/ in {run.path}"]
    return "\n".join(lines) + "\n"
