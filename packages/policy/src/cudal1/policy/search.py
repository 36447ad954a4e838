"""Fixed-parameter contrastive search: the policy is not trained; the results store is its memory.

Per round, for all tasks at once:

1. draw exemplars for each task from the results store (cudal1.policy.contrastive: by score bucket; the
   reference rewritten as ModelNew while nothing succeeded yet), only from rows of earlier rounds, and
   render the contrastive prompt fit to ``prompt_tokens`` (counted with the backend's tokenizer when it
   has one, else estimated as ``ceil(characters / 4)``);
2. ask the backend for ``candidates`` (k) completions per task, seed derived from (seed, round), so a
   rerun regenerates the same candidates with local backends;
3. parse each completion; drop those without code and duplicates (of sources measured for the task, device
   and baseline before this round, or earlier in this round); the others become Candidates with origin
   ``search:<backend name>`` and parent ids = hashes of the exemplar sources the prompt showed;
4. evaluate all of them in one call of the evaluator (one pool kept warm across rounds; every result is
   stored the moment it is measured, under the run label ``search:round<N>``);
5. update each task's best: the highest speedup among real improvements (EvalResult.improves: verified, not a
   copy of the reference, speedup interval above 1)
   in the store for that task hash, device and baseline, any round.

The output folder (cudal1.policy.search_folder): results.sqlite, best/<task>.py (the fastest improving ModelNew
source), best.json, history.jsonl (one line per completion) and state.json (rounds done, what defines the
search, the settings).

Resume: running again on the same folder continues after the last completed round; a round that was
interrupted is redone: its prompts are rebuilt from the same rows, so the same candidates come back and
the pairs already measured are read back from the store instead of re-run. A folder whose state.json names
other tasks, baseline, device or backend is refused (:class:`SearchStateError`) unless ``force``. best.json
and best/ describe the current search: after a forced resume with another device, baseline or task version,
bests measured for the old one are removed from best/ (their sources stay in results.sqlite).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore, Task
from cudal1.prompts import PromptBudgetError, fit_to_budget

from .backends.base import GenerationBackend, SamplingParams
from .collection import verified
from .contrastive import contrastive_prompt, exemplar_pool, worth_showing
from .evaluators import Evaluator, make_evaluator
from .rewarding import parse_completion
from .search_folder import SearchFolder, SearchStateError, round_of, run_label

__all__ = ["ContrastiveSearch", "SearchConfig", "SearchStateError", "SearchSummary", "approx_tokens",
           "contrastive_search", "round_of", "run_label", "token_counter"]


def approx_tokens(text: str) -> int:
    """Token estimate for backends without a tokenizer (HTTP endpoints): ``ceil(len(text) / 4)``, about right
    for English and code with BPE tokenizers; a budget near the model's context needs some headroom."""
    return (len(text) + 3) // 4


def token_counter(backend: Any) -> Callable[[str], int]:
    """Counts tokens with the backend's tokenizer (``backend.tokenizer``, or a vLLM engine's), else
    :func:`approx_tokens`."""
    tok = getattr(backend, "tokenizer", None)
    if tok is None and hasattr(getattr(backend, "llm", None), "get_tokenizer"):
        tok = backend.llm.get_tokenizer()
    if tok is None or not callable(tok):
        return approx_tokens
    return lambda s: len(tok(s, add_special_tokens=False)["input_ids"])


def _check_int(name: str, value: Any, low: int, hint: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}; {hint}")


@dataclass(frozen=True)
class SearchConfig:
    """The search's own settings (evaluation settings are an :class:`~cudal1.harness.EvalConfig`).

    rounds: rounds in all (a resumed search runs the ones not done yet). candidates: completions asked per
    task and round (k). exemplars: earlier solutions per prompt, at most. max_new_tokens, temperature,
    top_p: sampling (cudal1.policy.backends.SamplingParams). seed: base of the per-round sampling seed and
    exemplar draw. tau, bucket_width: exemplar sampling by score bucket (speedup units, x).
    prompt_tokens: budget of the rendered prompt, in tokens (lowest-scored exemplars dropped first).
    menu: the op menu every prompt carries when the action space is the zoo's (:mod:`cudal1.policy.action_space`);
    empty for free-form code.
    """

    rounds: int = 2
    candidates: int = 4
    exemplars: int = 2
    max_new_tokens: int = 2048
    temperature: float = 0.8
    top_p: float = 0.95
    seed: int = 0
    tau: float = 1.0
    bucket_width: float = 0.25
    prompt_tokens: int = 3072
    menu: str = ""

    def __post_init__(self) -> None:
        _check_int("rounds", self.rounds, 1, "ask for at least one round (--rounds 1)")
        _check_int("candidates", self.candidates, 1, "ask for at least one completion per task (-k 1)")
        _check_int("exemplars", self.exemplars, 1, "show at least one earlier solution (--exemplars 1)")
        _check_int("max_new_tokens", self.max_new_tokens, 1, "a completion needs room for its code (e.g. 2048)")
        _check_int("seed", self.seed, 0, "use a non-negative seed")
        _check_int("prompt_tokens", self.prompt_tokens, 1, "the prompt needs a budget (e.g. 3072)")
        for name, ok, hint in (
            ("temperature", isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
             and self.temperature >= 0, ">= 0 (0 is greedy: all k completions would be the same)"),
            ("top_p", isinstance(self.top_p, (int, float)) and 0 < self.top_p <= 1, "in (0, 1]"),
            ("tau", isinstance(self.tau, (int, float)) and math.isfinite(self.tau) and self.tau > 0, "> 0"),
            ("bucket_width", isinstance(self.bucket_width, (int, float)) and math.isfinite(self.bucket_width)
             and self.bucket_width > 0, "> 0 (speedup units, e.g. 0.25)"),
        ):
            if not ok:
                raise ValueError(f"{name} must be {hint}, got {getattr(self, name)!r}")

    def sampling(self, round_: int) -> SamplingParams:
        """Sampling of round ``round_``: k completions, seed derived from (seed, round)."""
        return SamplingParams(max_new_tokens=self.max_new_tokens, temperature=float(self.temperature),
                              top_p=float(self.top_p), n=self.candidates, seed=_round_seed(self.seed, round_))


def _round_seed(seed: int, round_: int) -> int:
    return (seed * 1_000_003 + round_) % 2**31


@dataclass
class SearchSummary:
    """What a call of :meth:`ContrastiveSearch.run` did: the rounds it ran, per round and task the counts
    (completions, with_code, new, ok, verified), and each task's best entry (as in best.json, or None)."""

    out_dir: Path
    rounds_done: int
    rounds_run: list[int] = field(default_factory=list)
    counts: dict[int, dict[str, dict[str, int]]] = field(default_factory=dict)
    best: dict[str, dict[str, Any] | None] = field(default_factory=dict)


def _identity(tasks: Sequence[Task], eval_config: EvalConfig, backend: str) -> dict[str, Any]:
    return {"tasks": {t.name: t.hash for t in tasks}, "baseline": eval_config.baseline,
            "device": eval_config.device.split(":")[0], "backend": backend}


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out = []
    o, n = old.get("tasks", {}), new["tasks"]
    if o != n:
        gone, added = sorted(set(o) - set(n)), sorted(set(n) - set(o))
        changed = sorted(k for k in set(o) & set(n) if o[k] != n[k])
        parts = ([f"not asked now: {', '.join(gone)}"] if gone else []) + \
                ([f"new: {', '.join(added)}"] if added else []) + \
                ([f"other source or sizes: {', '.join(changed)}"] if changed else [])
        out.append(f"tasks ({'; '.join(parts)})")
    for key in ("baseline", "device", "backend"):
        if old.get(key) != new[key]:
            out.append(f"{key} ({old.get(key)} there, {new[key]} now)")
    return out


class ContrastiveSearch:
    """A search over ``tasks`` writing into ``out_dir`` (see the module docstring).

    Args:
        tasks: the tasks (unique names; each name becomes ``best/<name>.py``).
        out_dir: the output folder (created; an existing one is resumed).
        backend_name: the ``name`` of the backend that will generate (identifies the search in state.json).
        config: search settings; eval_config: harness settings (device, baseline, trials, limits ...).
        force: continue a folder whose state.json names other tasks, baseline, device or backend.
    Raises:
        ValueError: no tasks, duplicate or unusable task names. SearchStateError: see ``force``.
    """

    def __init__(self, tasks: Sequence[Task], out_dir: str | Path, *, backend_name: str,
                 config: SearchConfig | None = None, eval_config: EvalConfig | None = None,
                 force: bool = False) -> None:
        self.tasks = list(tasks)
        if not self.tasks:
            raise ValueError("no tasks to search: give a suite, task files or a module")
        names = [t.name for t in self.tasks]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"task names must be unique (each names best/<task>.py); repeated: {', '.join(dup)}")
        bad = [n for n in names if not n or n.startswith(".") or "/" in n or "\\" in n]
        if bad:
            raise ValueError(f"task names {bad} cannot name files in best/; rename those tasks")
        self.config = config or SearchConfig()
        self.eval_config = eval_config or EvalConfig()
        self.backend_name = backend_name
        self.folder = SearchFolder(out_dir)
        self.out = self.folder.path
        self.identity = _identity(self.tasks, self.eval_config, backend_name)
        state = self.folder.read_state()
        if state.get("identity") and not force:
            diff = _differences(state["identity"], self.identity)
            if diff:
                raise SearchStateError(
                    f"{self.out} holds another search: {'; '.join(diff)} differ from its state.json. Use a new "
                    "output folder, or force (--force) to continue this one anyway")
        self.rounds_done = int(state.get("rounds_done", 0))

    # -- the search -------------------------------------------------------------------------------
    def run(self, backend: GenerationBackend, *, evaluator: Callable[[ResultStore], Evaluator] | None = None,
            ray_address: str | None = None, log: Callable[[str], Any] = lambda s: None) -> SearchSummary:
        """Run the rounds not done yet; returns what was done and each task's best.

        Args:
            backend: the generator; its ``name`` must be the ``backend_name`` given.
            evaluator: makes the evaluator for this folder's store (default:
                ``make_evaluator(eval_config, ray_address=ray_address, store=store)``); closed at the end.
            log: receives one line per task and round, and notes.
        Raises:
            ValueError: another backend, or a task whose prompt alone exceeds ``prompt_tokens``.
        """
        count = self.check_backend(backend)
        summary = SearchSummary(out_dir=self.out, rounds_done=self.rounds_done)
        self.folder.trim_history(self.rounds_done)
        self._save_state()
        store = ResultStore(self.folder.store_path)
        try:
            best = self._update_best(store, self.folder.read_best(), log)
            if self.rounds_done >= self.config.rounds:
                log(f"all {self.config.rounds} rounds are done in {self.out}; ask for more rounds to go on")
            else:
                ev = (evaluator(store) if evaluator is not None
                      else make_evaluator(self.eval_config, ray_address=ray_address, store=store))
                try:
                    for r in range(self.rounds_done + 1, self.config.rounds + 1):
                        counts = self._round(r, backend, ev, store, count, log)
                        best = self._update_best(store, best, log)
                        self.rounds_done = r
                        self._save_state()
                        summary.rounds_run.append(r)
                        summary.counts[r] = counts
                        for t in self.tasks:
                            c, b = counts[t.name], best.get(t.name)
                            log(f"round {r}/{self.config.rounds}  {t.name:<28} candidates {c['completions']} "
                                f"(code {c['with_code']}, new {c['new']})  ok {c['ok']}  verified {c['verified']}  "
                                f"best {_speedup_text(b)}")
                finally:
                    ev.close()
        finally:
            store.close()
        summary.rounds_done = self.rounds_done
        summary.best = {t.name: best.get(t.name) for t in self.tasks}
        return summary

    def check_backend(self, backend: GenerationBackend) -> Callable[[str], int]:
        """Check that ``backend`` is the one this search was set up for and that every task's prompt fits
        ``prompt_tokens`` without exemplars; returns the token counter. ValueError with what to change."""
        if backend.name != self.backend_name:
            raise ValueError(f"this search was set up for backend {self.backend_name!r}, got {backend.name!r}")
        count = token_counter(backend)
        for task in self.tasks:
            try:
                fit_to_budget(task.source, [], count, self.config.prompt_tokens, self.config.menu)
            except PromptBudgetError as e:
                raise ValueError(f"task {task.name}: {e} (prompt_tokens, --prompt-tokens)") from None
        return count

    def _keep(self, round_: int) -> Callable[[EvalResult, dict[str, Any]], bool]:
        """Rows a prompt of round ``round_`` may draw on: earlier rounds (or other runs), this device and
        baseline, and among successes only verified ones (a flagged 'ok' is no example to follow)."""
        device, baseline = self.identity["device"], self.identity["baseline"]

        def keep(result: EvalResult, meta: dict[str, Any]) -> bool:
            r = round_of(meta.get("run", ""))
            return ((r is None or r < round_) and result.device == device and result.baseline == baseline
                    and worth_showing(result))

        return keep

    def _known_sources(self, store: ResultStore, task: Task, round_: int) -> set[str]:
        """Sources of ``task`` measured before round ``round_`` on this device and baseline: a completion
        repeating one is not evaluated again (rows of this round are not counted: a redone round reads them
        back through the evaluator's store instead)."""
        device, baseline = self.identity["device"], self.identity["baseline"]
        known = set()
        for result, meta in store.rows(task=task.name):
            r = round_of(meta.get("run", ""))
            if (result.task_hash == task.hash and result.device == device and result.baseline == baseline
                    and (r is None or r < round_)):
                known.add(meta.get("candidate_source") or "")
        return known

    def _round(self, r: int, backend: GenerationBackend, ev: Evaluator, store: ResultStore,
               count: Callable[[str], int], log: Callable[[str], Any]) -> dict[str, dict[str, int]]:
        cfg = self.config
        rng = random.Random(_round_seed(cfg.seed, r))
        keep = self._keep(r)
        prompts, parents = [], []
        for task in self.tasks:
            text, shown = contrastive_prompt(task, exemplar_pool(store, task, keep), n=cfg.exemplars, tau=cfg.tau,
                                             bucket_width=cfg.bucket_width, rng=rng, count_tokens=count,
                                             max_tokens=cfg.prompt_tokens, menu=cfg.menu)
            prompts.append([{"role": "user", "content": text}])
            parents.append(tuple(Candidate(e.code).hash for e in shown))
        log(f"round {r}/{cfg.rounds}: asking {backend.name} for {cfg.candidates} completion(s) for each of "
            f"{len(self.tasks)} task(s)")
        outputs = backend.generate(prompts, cfg.sampling(r))
        if len(outputs) != len(self.tasks):
            raise RuntimeError(f"backend {backend.name} answered {len(outputs)} prompts of {len(self.tasks)}")
        records: list[dict[str, Any]] = []
        pairs: list[tuple[Task, Candidate]] = []
        pending: list[dict[str, Any]] = []  # records waiting for their pair's result, in pair order
        counts: dict[str, dict[str, int]] = {}
        for task, texts, par in zip(self.tasks, outputs, parents, strict=True):
            seen = self._known_sources(store, task, r)
            c = counts[task.name] = {"completions": len(texts), "with_code": 0, "new": 0, "ok": 0, "verified": 0}
            for j, text in enumerate(texts):
                rec: dict[str, Any] = {"round": r, "task": task.name, "completion": j, "candidate_hash": None,
                                       "parents": list(par), "status": "", "speedup": None, "flags": [],
                                       "reason": "", "verified": False}
                records.append(rec)
                code = parse_completion(text if isinstance(text, str) else "")
                if code.code is None:
                    rec.update(status="no_code", reason=code.problem[:500])
                    continue
                c["with_code"] += 1
                cand = Candidate(source=code.code, task=task.name, origin=f"search:{backend.name}", parent_ids=par)
                rec["candidate_hash"] = cand.hash
                if cand.source in seen:
                    rec.update(status="duplicate", reason="this source was already evaluated for this task")
                    continue
                seen.add(cand.source)
                c["new"] += 1
                pairs.append((task, cand))
                pending.append(rec)
        if pairs:
            log(f"round {r}/{cfg.rounds}: evaluating {len(pairs)} new candidate(s) on {self.identity['device']}")
        results = ev.evaluate(pairs, run=run_label(r)) if pairs else []
        for rec, res in zip(pending, results, strict=True):
            ok = verified(res)
            rec.update(status=res.status, speedup=res.speedup, flags=list(res.flags), reason=res.reason[:500],
                       verified=ok)
            counts[rec["task"]]["ok"] += res.ok
            counts[rec["task"]]["verified"] += ok
        self.folder.append_history(records)
        return counts

    def _save_state(self) -> None:
        self.folder.save_state(rounds_done=self.rounds_done, identity=self.identity,
                               config=dataclasses.asdict(self.config), eval_config=self.eval_config.to_dict())

    def _update_best(self, store: ResultStore, best: dict[str, Any], log: Callable[[str], Any]) -> dict[str, Any]:
        return self.folder.update_best(store, self.tasks, device=self.identity["device"],
                                       baseline=self.identity["baseline"], best=best, log=log)


def _speedup_text(entry: dict[str, Any] | None) -> str:
    return f"{entry['speedup']:.2f}x" if entry else "-"


def contrastive_search(tasks: Sequence[Task], backend: GenerationBackend, out_dir: str | Path, *,
                       config: SearchConfig | None = None, eval_config: EvalConfig | None = None,
                       force: bool = False, evaluator: Callable[[ResultStore], Evaluator] | None = None,
                       ray_address: str | None = None, log: Callable[[str], Any] = lambda s: None) -> SearchSummary:
    """Run (or resume) a contrastive search of ``tasks`` with ``backend`` into ``out_dir``: the rounds of
    ``config`` not done yet. See the module docstring and :class:`ContrastiveSearch`."""
    search = ContrastiveSearch(tasks, out_dir, backend_name=backend.name, config=config, eval_config=eval_config,
                               force=force)
    return search.run(backend, evaluator=evaluator, ray_address=ray_address, log=log)
