"""The GRPO reward: parse each completion, evaluate its code with the harness, shape the result into a float.

``HarnessReward`` is a trl reward function (``reward(prompts, completions, task, **kwargs) -> list[float]``,
``task`` being the dataset column). Per completion:

1. ``parse_response`` (the three contrastive sections + code). A response with code but without the sections
   is still evaluated, with ``format_penalty`` subtracted; one without code gets ``no_code``.
2. All codes of the batch go to the evaluator at once (harness worker processes: local pool or Ray actors);
   every EvalResult is stored in the run's results store the moment it exists.
3. A suspicious speedup (cudal1.rewards.Suspicion: above 3x, or above twice the task's best) is measured
   again through ``remeasure`` (the evaluator in use, bypassing its store); disagreement flags it.
4. The reward checker (rules, optional LLM judge) may overrule: a hack gets the ``rejected`` value; a judge's
   OK clears a result's suspect flags.
5. ``speedup_reward`` pays only real improvement (cudal1.rewards.shaping: a copy of the reference earns no
   more than a failure, a flagged speedup nothing unless cleared, a speedup only when its interval clears
   1); optional group smoothing per prompt group. A verified answer that hands back a verified exemplar its own
   prompt showed (the dataset's ``shown`` column, :func:`cudal1.policy.contrastive.shown_answers`; compared by
   :func:`cudal1.harness.novelty.source_identity`) earns what the reference handed back earns
   (``RewardConfig.unchanged``) under ``shown_copies="unchanged"`` (the default): the prompt made that answer, not
   the policy, and paid its speedup again a GRPO group gives the copy the best advantage (2026-12-07: learning-v2's
   GRPO arms learnt exactly that). A copy in disguise (a statement split in two, a no-op added: a new source
   identity) is one too when it *behaves* as a shown exemplar (the same operators on the same shapes and the same
   kernels: :func:`cudal1.harness.novelty.behaviour_identity`, the dataset's ``shown_behaviour`` column) and its
   speedup's interval does not lie above :data:`BEHAVIOUR_MARGIN` times the speedup that exemplar was shown with
   (``shown_speedup``): the same kernels launched better (a block size) are paid once they measure clearly faster.
   ``shown_copies="paid"`` pays every copy as measured.
6. Every completion is appended to ``completions_log`` (JSONL: stage, task, prompt id, text, parse outcome,
   status, flags, speedup, reward), so a format failure can be read afterwards.
7. Control runs only (``shuffle_seed`` set): the batch's rewards are permuted at random before the trainer
   sees them, so they no longer depend on the completions they are paid to (the learning experiment's
   shuffled-reward control). completions.jsonl then holds the paid value as ``reward`` and the earned one as
   ``true_reward``; metrics are of the earned rewards.

Metrics per call (logged through trl's ``log_metric`` and kept in :attr:`HarnessReward.history`):
format_rate, compile_rate, correct_rate, novel_correct_rate (correct and not the reference), improved_rate
(:attr:`EvalResult.improves`), shown_copy_rate (verified answers that hand back a shown exemplar; of them by
behaviour alone: shown_behaviour_copy_rate), mean_speedup
(over correct ones), best_speedup, flags/<name> counts, reward_eval_s (wall seconds spent in this function).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore, Task
from cudal1.harness import evaluate as harness_evaluate
from cudal1.harness.novelty import source_identity
from cudal1.prompts import ResponseFormatError, extract_code, parse_response
from cudal1.rewards import RewardChecker, RewardConfig, Suspicion, group_smooth, speedup_reward

__all__ = ["BEHAVIOUR_MARGIN", "SHOWN_COPIES", "HarnessReward", "ParsedCompletion", "append_jsonl", "completion_row",
           "parse_completion", "prompt_id", "shown_copy"]

#: what a verified answer that hands back an exemplar its prompt showed earns (HarnessReward.shown_copies)
SHOWN_COPIES = ("unchanged", "paid")
#: an answer that behaves as a shown exemplar is paid only when its speedup's interval lies above this many times
#: the exemplar's shown speedup: two fresh processes of the same code differ by a few per cent (the harness's
#: self-pairs: within [0.95, 1.05]), so a re-measured copy must not be paid for that
BEHAVIOUR_MARGIN = 1.05


def shown_copy(code: str, result: EvalResult, shown: Sequence[str] | None, behaviours: Sequence[str] | None,
               speedups: Sequence[float] | None) -> str | None:
    """How a verified answer hands back an exemplar its prompt showed: ``"source"`` (its
    :func:`cudal1.harness.novelty.source_identity` is one of ``shown``), ``"behaviour"`` (its behaviour,
    ``result.integrity["behaviour"]``, is one of ``behaviours`` and its speedup's interval does not lie above
    :data:`BEHAVIOUR_MARGIN` times the speedup in ``speedups`` at the same place), or None (its own answer)."""
    if shown and source_identity(code) in shown:
        return "source"
    mine = result.integrity.get("behaviour")
    if not mine or not behaviours:
        return None
    if speedups is None or len(speedups) != len(behaviours):
        raise ValueError(f"shown_speedup ({None if speedups is None else len(speedups)} values) must give one speedup "
                         f"per shown_behaviour ({len(behaviours)}): write both from the same exemplars")
    ci = result.speedup_ci
    for theirs, shown_x in zip(behaviours, speedups, strict=True):
        if theirs == mine and not (ci is not None and ci[0] > BEHAVIOUR_MARGIN * shown_x):
            return "behaviour"
    return None


@dataclass(frozen=True)
class ParsedCompletion:
    """code: the ModelNew source or None; well_formed: all three sections present; problem: why not."""

    code: str | None
    well_formed: bool
    problem: str = ""


def completion_text(completion: Any) -> str:
    """The text of a trl completion: a string, or a list of chat messages (the last one's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    return str(completion)


def parse_completion(text: str) -> ParsedCompletion:
    """Sections and code of a response; falls back to the last code block defining ModelNew."""
    try:
        return ParsedCompletion(parse_response(text).code, True)
    except ResponseFormatError as e:
        try:
            return ParsedCompletion(extract_code(text), False, str(e))
        except ResponseFormatError as e2:
            return ParsedCompletion(None, False, str(e2))


def prompt_id(prompt: Any) -> str:
    """A short stable id of a prompt (a string or chat messages): the first 12 hex digits of its sha256."""
    text = prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def append_jsonl(path: str | Path | None, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append ``rows`` to the JSONL file ``path`` (created with its folder); nothing when ``path`` is None."""
    if path is None or not rows:
        return
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a") as f:
        for row in rows:
            f.write(json.dumps(row, default=str) + "\n")


def completion_row(stage: str, task: str, prompt: Any, text: str, parsed: ParsedCompletion,
                   result: EvalResult | None, reward: float | None = None) -> dict[str, Any]:
    """One line of a run's completions.jsonl: the completion's text and every outcome (``result`` None: no code
    or not measured)."""
    r = result
    row: dict[str, Any] = {
        "stage": stage, "task": task, "prompt_id": prompt_id(prompt), "text": text,
        "well_formed": parsed.well_formed, "has_code": parsed.code is not None, "parse_problem": parsed.problem,
        "status": r.status if r is not None else "no_code", "flags": list(r.flags) if r is not None else [],
        "speedup": r.speedup if r is not None else None,
        "speedup_ci": list(r.speedup_ci) if r is not None and r.speedup_ci else None,
        "improves": bool(r is not None and r.improves)}
    if reward is not None:
        row["reward"] = reward
    return row


@dataclass
class HarnessReward:
    """trl reward function backed by the harness (see the module docstring).

    Args:
        tasks: task name -> Task (the exact, possibly resized, task the prompts show).
        evaluate: ``evaluate(pairs, run=...) -> list[EvalResult]`` (a cudal1.policy.evaluators Evaluator's).
        eval_config: the harness settings (used again for suspicious re-measurements).
        store: the run's results store (re-measurements are added to it when ``remeasure`` is not given).
        config: reward shaping. no_code / format_penalty: see the module docstring.
        checker: optional cudal1.rewards.RewardChecker. suspicion: None disables re-measurement.
        group_size: completions per prompt (for group smoothing); smoothing: apply it.
        run: label of the run in the store.
        remeasure: ``remeasure(task, candidate) -> EvalResult``, a fresh measurement through the evaluator in
            use (stored by it); None: a one-off local pool (stored here).
        completions_log: JSONL file every completion is appended to (None: not kept); ``stage`` labels them.
        shuffle_seed: control runs only: permute each batch's rewards with this seed (step 7); None: never.
        shown_copies: ``unchanged`` (a handed-back shown exemplar earns ``config.unchanged``) or ``paid`` (step 5).
    """

    tasks: Mapping[str, Task]
    evaluate: Callable[..., list[EvalResult]]
    eval_config: EvalConfig
    store: ResultStore | None = None
    config: RewardConfig = field(default_factory=RewardConfig)
    no_code: float = -1.0
    format_penalty: float = 0.2
    checker: RewardChecker | None = None
    suspicion: Suspicion | None = field(default_factory=Suspicion)
    group_size: int = 1
    smoothing: bool = False
    run: str = ""
    history: list[dict[str, Any]] = field(default_factory=list)
    best: dict[str, float] = field(default_factory=dict)
    remeasure: Callable[[Task, Candidate], EvalResult] | None = None
    completions_log: str | Path | None = None
    stage: str = "grpo"
    shuffle_seed: int | None = None
    shown_copies: str = "unchanged"
    _shuffler: random.Random | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.shown_copies not in SHOWN_COPIES:
            raise ValueError(f"shown_copies {self.shown_copies!r}: write one of {list(SHOWN_COPIES)}")
        if self.shuffle_seed is not None:
            self._shuffler = random.Random(self.shuffle_seed)

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], task: Sequence[str],
                 log_metric: Callable[[str, float], None] | None = None,
                 shown: Sequence[Sequence[str] | None] | None = None,
                 shown_behaviour: Sequence[Sequence[str] | None] | None = None,
                 shown_speedup: Sequence[Sequence[float] | None] | None = None, **_: Any) -> list[float]:
        """Rewards of one batch. ``shown``: per completion, the identities of the verified exemplars its prompt
        showed (the dataset column of the same name); ``shown_behaviour`` / ``shown_speedup``: their behaviours and
        the speedups (x) they were shown with, in the same order; None: no prompt showed any."""
        t0 = time.monotonic()
        parsed = [parse_completion(completion_text(c)) for c in completions]
        unknown = sorted({t for t in task if t not in self.tasks})
        if unknown:
            raise KeyError(f"reward asked for tasks {unknown} that this run does not train on")
        idx = [i for i, p in enumerate(parsed) if p.code is not None]
        pairs = [(self.tasks[task[i]], Candidate(source=parsed[i].code or "", task=task[i], origin="policy"))
                 for i in idx]
        results: dict[int, EvalResult] = dict(zip(idx, self.evaluate(pairs, run=self.run), strict=True)) if pairs else {}
        rewards: list[float] = []
        copies: dict[int, str] = {}  # verified answers that hand back a shown exemplar -> "source" or "behaviour"
        for i, p in enumerate(parsed):
            if p.code is None:
                rewards.append(self.no_code)
                continue
            r = results[i]
            if self.suspicion is not None and r.ok:
                r = self.suspicion.review(r, lambda first, i=i: self._remeasure(pairs[idx.index(i)]),
                                          self.best.get(task[i]))
                results[i] = r
            hack = cleared = False
            if self.checker is not None and r.ok:
                verdict = self.checker.check(p.code, r, self.tasks[task[i]].source)
                hack = verdict.is_hack
                cleared = verdict.verdict == "ok" and verdict.decided_by.startswith("judge:")
            how = (shown_copy(p.code, r, shown[i] if shown is not None else None,
                              shown_behaviour[i] if shown_behaviour is not None else None,
                              shown_speedup[i] if shown_speedup is not None else None)
                   if r.ok and not hack and self.shown_copies == "unchanged" else None)
            copy = how is not None
            if copy:
                copies[i] = how
            value = (self.config.rejected if hack else float(self.config.unchanged) if copy
                     else speedup_reward(r, self.config, cleared=cleared))
            if not p.well_formed:
                value -= self.format_penalty
            if r.improves and r.speedup is not None and not hack and not copy:
                self.best[task[i]] = max(self.best.get(task[i], 0.0), r.speedup)
            rewards.append(float(value))
        if self.smoothing and self.group_size > 1 and len(rewards) % self.group_size == 0:
            rewards = [v for g in range(0, len(rewards), self.group_size)
                       for v in group_smooth(rewards[g:g + self.group_size])]
        paid = self._shuffled(rewards)
        if self.completions_log is not None:
            self._keep(prompts, completions, task, parsed, results, paid, rewards if paid is not rewards else None,
                       copies)
        metrics = self._metrics(parsed, results, rewards, time.monotonic() - t0)
        metrics["shown_copy_rate"] = len(copies) / max(1, len(parsed))
        metrics["shown_behaviour_copy_rate"] = sum(how == "behaviour" for how in copies.values()) / max(1, len(parsed))
        self.history.append(metrics)
        if log_metric is not None:
            for k, v in metrics.items():
                if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
                    log_metric(k, float(v))
        return paid

    def _shuffled(self, rewards: list[float]) -> list[float]:
        """``rewards`` itself, or (shuffled-reward control) a random permutation of it as a new list."""
        if self._shuffler is None:
            return rewards
        paid = list(rewards)
        self._shuffler.shuffle(paid)
        return paid

    def _keep(self, prompts: Sequence[Any], completions: Sequence[Any], task: Sequence[str],
              parsed: list[ParsedCompletion], results: Mapping[int, EvalResult], rewards: list[float],
              true_rewards: list[float] | None = None, copies: Mapping[int, str] | None = None) -> None:
        copies = copies or {}
        rows = [completion_row(self.stage, task[i], prompts[i], completion_text(completions[i]), p, results.get(i),
                               rewards[i]) for i, p in enumerate(parsed)]
        for i, row in enumerate(rows):
            row["shown_copy"] = i in copies  # written on every row: a log without the key predates the rule
            row["shown_copy_by"] = copies.get(i)  # "source" or "behaviour" (None: no copy; absent: before the latter)
        if true_rewards is not None:
            for row, earned in zip(rows, true_rewards, strict=True):
                row["true_reward"] = earned
        append_jsonl(self.completions_log, rows)

    def _remeasure(self, pair: tuple[Task, Candidate]) -> EvalResult:
        task, cand = pair
        if self.remeasure is not None:
            return self.remeasure(task, cand)
        again = harness_evaluate(task, cand, self.eval_config)
        if self.store is not None:
            self.store.add(again, task, cand, self.eval_config, run=f"{self.run}:remeasure")
        return again

    def _metrics(self, parsed: list[ParsedCompletion], results: Mapping[int, EvalResult], rewards: list[float],
                 seconds: float) -> dict[str, Any]:
        n = max(1, len(parsed))
        ok = [r for r in results.values() if r.ok]
        speedups = [r.speedup for r in ok if r.speedup is not None]
        flags = Counter(f for r in results.values() for f in r.flags)
        m: dict[str, Any] = {
            "completions": len(parsed),
            "format_rate": sum(p.well_formed for p in parsed) / n,
            "code_rate": sum(p.code is not None for p in parsed) / n,
            "compile_rate": sum(r.status != "compile_error" for r in results.values()) / n,
            "correct_rate": len(ok) / n,
            "novel_correct_rate": sum("same_as_reference" not in r.flags for r in ok) / n,
            "improved_rate": sum(r.improves for r in ok) / n,
            "mean_speedup": statistics.fmean(speedups) if speedups else float("nan"),
            "best_speedup": max(speedups) if speedups else float("nan"),
            "reward_mean": statistics.fmean(rewards) if rewards else float("nan"),
            "reward_eval_s": seconds,
            "statuses": dict(Counter(r.status for r in results.values())),
        }
        for f, c in sorted(flags.items()):
            m[f"flags/{f}"] = c
        return m

