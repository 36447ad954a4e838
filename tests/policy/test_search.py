"""Fixed-parameter contrastive search (cudal1.policy.search): a scripted OpenAI-protocol server as the policy,
the real harness on tiny CPU tasks (seconds per candidate), or a scripted evaluator where only the search's
own bookkeeping is under test (best updates, pool use, state checks: milliseconds)."""

from __future__ import annotations

import json
import re

import pytest

from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore
from cudal1.harness.flags import MACHINE_NOISE
from cudal1.policy.backends.openai_http import OpenAIChatBackend
from cudal1.policy.evaluators import LocalEvaluator
from cudal1.policy.search import (
    ContrastiveSearch,
    SearchConfig,
    SearchStateError,
    approx_tokens,
    contrastive_search,
    token_counter,
)
from cudal1.policy.seed_data import reference_as_modelnew
from cudal1.policy.tasks import select_tasks

FAST = EvalConfig(device="cpu", trials=2, time_budget_s=0.05, buckets=3, min_rounds=3, max_rounds=10, attempts=1,
                  cpu_threads=1, compile_timeout_s=120, run_timeout_s=60)
SIZES = {"relu": {"BATCH": 8, "DIM": 64}, "softmax": {"BATCH": 4, "DIM": 33}}
RIGHT = ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n\n"
         "    def forward(self, x):\n        return x.clamp_min(0)")
WRONG = RIGHT.replace("clamp_min(0)", "clamp_min(0.5)")


def respond(code: str) -> str:
    return (f"## Performance Analysis\nOne pass.\n\n## Algorithm Design\nclamp.\n\n## Code Implementation\n"
            f"```python\n{code}\n```\n")


def task_of(body: dict) -> str:
    return "relu" if "torch.relu" in body["messages"][-1]["content"] else "softmax"


@pytest.fixture(scope="module")
def tasks():
    return select_tasks("builtin", ["relu", "softmax"], SIZES)


def backend(server) -> OpenAIChatBackend:
    return OpenAIChatBackend(server.base_url, "scripted", backoff_s=0.01)


def history(out) -> list[dict]:
    return [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]


def assert_best_is_the_improving_one(out, task, source):
    """best/<task>.py and best.json hold ``source`` exactly when its stored measurement improves (interval above
    1, not a copy): with the real harness a correct relu rewrite measures about 1.0x, usually no improvement."""
    with ResultStore(out / "results.sqlite") as store:
        res = next(r for r, m in store.rows(task=task) if m["candidate_source"] == source)
    entry = json.loads((out / "best.json").read_text())[task]
    if res.improves:
        assert (out / "best" / f"{task}.py").read_text() == source and entry["candidate_hash"] == res.candidate_hash
    else:
        assert entry is None and not (out / "best" / f"{task}.py").exists()
    return entry


def test_search_with_the_real_harness_keeps_the_verified_best_and_resumes(tmp_path, tasks, openai_server):
    """relu gets a correct ModelNew, a wrong one and prose; softmax only prose. One round, then a second on
    the same folder: only round 2 asks the server, and repeats of stored sources are not evaluated again.

    The search follows the harness's verdict, whatever the machine made of the correct relu's timing: verified,
    it is round 2's exemplar and parent; left unverified by the clock's noise (``timing_unresolved``: a call of
    microseconds on a loaded 2-core runner, CI 2026-12-06 even at 128 x 2048 with 30-120 rounds), the reference stays
    the exemplar. Which of the two happens is the machine's; what the search does with each is checked here, and
    both paths, deterministically, with scripted verdicts in
    :func:`test_best_is_the_fastest_verified_and_one_pool_serves_all_rounds`."""
    cfg = FAST
    script = {"relu": [respond(RIGHT), respond(WRONG), "I would use a CUDA kernel."],
              "softmax": ["no code, sorry"] * 3}
    openai_server.reply = lambda body, i: script[task_of(body)][i]
    out = tmp_path / "search"
    lines: list[str] = []
    first = contrastive_search(tasks, backend(openai_server), out, eval_config=cfg, log=lines.append,
                               config=SearchConfig(rounds=1, candidates=3, seed=7))
    assert first.rounds_run == [1] and first.rounds_done == 1
    assert len(openai_server.requests) == 2  # one prompt per task, k choices each
    body = openai_server.requests[0]["body"]
    assert body["n"] == 3 and body["seed"] == (7 * 1_000_003 + 1) % 2**31
    # before any success the reference (as ModelNew) is the one exemplar: it is the parent
    relu = tasks[0]
    ref_hash = Candidate(reference_as_modelnew(relu.source)).hash
    assert "score 1.00" in body["messages"][0]["content"] and "BATCH = 8" in body["messages"][0]["content"]

    entry = assert_best_is_the_improving_one(out, "relu", RIGHT)
    assert not (out / "best" / "softmax.py").exists()
    assert json.loads((out / "best.json").read_text())["softmax"] is None
    if entry is not None:
        assert entry["round"] == 1 and entry["status"] == "ok" and entry["speedup_ci"][0] > 1
        assert entry["baseline"] == "eager" and entry["device"] == "cpu" and entry["file"] == "best/relu.py"
    assert first.best["relu"] == entry

    with ResultStore(out / "results.sqlite") as store:
        rows = list(store.rows())
    assert sorted((r.status, m["run"], m["candidate_source"]) for r, m in rows) == [
        ("incorrect", "search:round1", WRONG), ("ok", "search:round1", RIGHT)]
    right = next(r for r, m in rows if m["candidate_source"] == RIGHT)
    # verified, or left unverified only by the clock's noise on this machine (never by a finding about the code)
    assert right.verified or set(right.flags) & MACHINE_NOISE, right.flags
    h = history(out)
    assert [(x["round"], x["task"], x["status"]) for x in h] == [
        (1, "relu", "ok"), (1, "relu", "incorrect"), (1, "relu", "no_code"),
        (1, "softmax", "no_code"), (1, "softmax", "no_code"), (1, "softmax", "no_code")]
    assert h[0]["parents"] == [ref_hash] and h[0]["candidate_hash"] == Candidate(RIGHT).hash
    assert h[0]["verified"] is right.verified and h[0]["flags"] == list(right.flags)
    assert h[1]["verified"] is False and h[1]["speedup"] is None and h[1]["reason"]
    assert h[2]["candidate_hash"] is None and "code" in h[2]["reason"].lower()
    assert json.loads((out / "state.json").read_text())["rounds_done"] == 1
    verified_count = int(right.verified)
    assert any(re.match(rf"round 1/1\s+relu\s+candidates 3 \(code 2, new 2\)\s+ok 1\s+verified {verified_count}\s",
                        x) for x in lines), lines

    second = contrastive_search(tasks, backend(openai_server), out, eval_config=cfg,
                                config=SearchConfig(rounds=2, candidates=3, seed=7))
    assert second.rounds_run == [2] and len(openai_server.requests) == 4  # only round 2 asked
    prompt2 = openai_server.requests[2]["body"]["messages"][0]["content"]
    assert "clamp_min(0.5)" not in prompt2  # a wrong answer is never an exemplar
    h2 = [x for x in history(out) if x["round"] == 2]
    assert [x["status"] for x in h2 if x["task"] == "relu"] == ["duplicate", "duplicate", "no_code"]
    if right.verified:  # the verified one is the exemplar and the parent
        assert "clamp_min(0)" in prompt2 and h2[0]["parents"] == [Candidate(RIGHT).hash]
    else:  # an unverified figure is never shown: the reference stays the one exemplar
        assert "clamp_min(0)" not in prompt2 and h2[0]["parents"] == [ref_hash]
    with ResultStore(out / "results.sqlite") as store:
        assert len(store.results()) == 2  # nothing evaluated twice
    assert_best_is_the_improving_one(out, "relu", RIGHT)

    lines.clear()
    third = contrastive_search(tasks, backend(openai_server), out, eval_config=cfg, log=lines.append,
                               config=SearchConfig(rounds=2, candidates=3, seed=7))
    assert third.rounds_run == [] and len(openai_server.requests) == 4 and "all 2 rounds are done" in lines[0]


class Interrupting(LocalEvaluator):
    """Measures and stores like LocalEvaluator, then stops the run as a Ctrl-C would."""

    def evaluate(self, pairs, *, run=""):
        super().evaluate(pairs, run=run)
        raise KeyboardInterrupt


def test_an_interrupted_round_is_redone_from_the_store(tmp_path, tasks, openai_server):
    openai_server.reply = lambda body, i: respond(RIGHT) if task_of(body) == "relu" else "prose"
    out = tmp_path / "search"
    cfg = SearchConfig(rounds=1, candidates=1)
    with pytest.raises(KeyboardInterrupt):
        contrastive_search(tasks, backend(openai_server), out, config=cfg, eval_config=FAST,
                           evaluator=lambda store: Interrupting(FAST, store=store))
    assert json.loads((out / "state.json").read_text())["rounds_done"] == 0
    with ResultStore(out / "results.sqlite") as store:
        assert [r.status for r in store.results()] == ["ok"]  # measured before the interruption, kept
    done = contrastive_search(tasks, backend(openai_server), out, config=cfg, eval_config=FAST)
    assert done.rounds_run == [1] and len(openai_server.requests) == 4  # the round was asked again
    with ResultStore(out / "results.sqlite") as store:
        assert len(store.results()) == 1  # ... and its pair read back, not measured again
    h = history(out)
    assert [(x["task"], x["status"]) for x in h] == [("relu", "ok"), ("softmax", "no_code")]
    assert_best_is_the_improving_one(out, "relu", RIGHT)


class ScriptedEvaluator:
    """Stores a scripted verdict per source (keyed by a marker in the code), as an Evaluator would."""

    def __init__(self, store, verdicts, config=FAST):
        self.store, self.verdicts, self.config, self.calls, self.closed = store, verdicts, config, [], False

    def evaluate(self, pairs, *, run=""):
        self.calls.append((run, len(pairs)))
        out = []
        for task, cand in pairs:
            prev = self.store.lookup(task, cand, self.config)
            if prev is None:
                status, speedup, flags = self.verdicts[re.search(r"# (\w+)", cand.source).group(1)]
                ci = None if speedup is None else (speedup * 0.95, speedup * 1.05)  # as a measurement would carry
                prev = EvalResult(task=task.name, status=status, speedup=speedup, speedup_ci=ci, flags=flags,
                                  task_hash=task.hash, candidate_hash=cand.hash, baseline=self.config.baseline,
                                  device="cpu")
                self.store.add(prev, task, cand, self.config, run=run)
            out.append(prev)
        return out

    def close(self):
        self.closed = True


def code(marker: str) -> str:
    return f"{RIGHT}  # {marker}"


def test_best_is_the_fastest_verified_and_one_pool_serves_all_rounds(tmp_path, tasks, openai_server):
    rounds = {1: ["slow", "wrong"], 2: ["fast", "hack"], 3: ["slow", "slower"]}
    verdicts = {"slow": ("ok", 1.2, ("timing_unstable",)), "wrong": ("incorrect", None, ()),
                "fast": ("ok", 1.9, ()), "hack": ("ok", 9.0, ("caches_output",)), "slower": ("ok", 1.1, ())}

    def reply(body, i):
        r = len(openai_server.requests)  # this request is already recorded: round r asks the r-th time
        return respond(code(rounds[r][i])) if task_of(body) == "relu" else "prose"

    openai_server.reply = reply
    made = []

    def factory(store):
        made.append(ScriptedEvaluator(store, verdicts))
        return made[-1]

    out = tmp_path / "s"
    summary = contrastive_search(tasks[:1], backend(openai_server), out, evaluator=factory, eval_config=FAST,
                                 config=SearchConfig(rounds=3, candidates=2))
    assert len(made) == 1 and made[0].closed  # one evaluator for all rounds, closed at the end
    assert made[0].calls == [("search:round1", 2), ("search:round2", 2), ("search:round3", 1)]  # all pairs at once
    best = json.loads((out / "best.json").read_text())["relu"]
    assert (best["speedup"], best["round"], best["flags"]) == (1.9, 2, [])  # the 9x flagged one is never best
    assert (out / "best" / "relu.py").read_text() == code("fast") and summary.best["relu"] == best
    h = history(out)
    assert [x["status"] for x in h if x["round"] == 3] == ["duplicate", "ok"]
    hack = next(x for x in h if x["round"] == 2 and x["flags"] == ["caches_output"])
    assert hack["status"] == "ok" and hack["verified"] is False
    # prompts of round 3 never showed the flagged result, and show the verified fast one
    prompt3 = openai_server.requests[2]["body"]["messages"][0]["content"]
    assert "# fast" in prompt3 and "# hack" not in prompt3
    assert next(x for x in h if x["round"] == 3 and x["status"] == "ok")["parents"][0] in {
        Candidate(code(m)).hash for m in ("fast", "slow")}


def test_a_folder_of_another_search_is_refused_unless_forced(tmp_path, tasks, openai_server):
    openai_server.reply = lambda body, i: "prose only"
    out = tmp_path / "s"
    contrastive_search(tasks, backend(openai_server), out, eval_config=FAST, config=SearchConfig(rounds=1, candidates=1),
                       evaluator=lambda store: ScriptedEvaluator(store, {}))
    for kw, words in [({"eval_config": FAST.replace(baseline="compile")}, r"baseline \(eager there, compile now\)"),
                      ({"tasks": tasks[:1]}, r"tasks \(not asked now: softmax\)"),
                      ({"tasks": select_tasks("builtin", ["relu", "softmax"], {"relu": {"BATCH": 9}})},
                       r"other source or sizes: relu"),
                      ({"backend_name": "openai:other"}, r"backend \(openai:scripted there, openai:other now\)")]:
        args = {"tasks": tasks, "backend_name": "openai:scripted", "eval_config": FAST, **kw}
        with pytest.raises(SearchStateError, match=words + r".*--force"):
            ContrastiveSearch(args.pop("tasks"), out, **args)
    forced = ContrastiveSearch(tasks, out, backend_name="openai:scripted", eval_config=FAST.replace(baseline="compile"),
                               force=True)
    assert forced.rounds_done == 1
    (out / "state.json").write_text("{not json")
    with pytest.raises(SearchStateError, match="cannot be read"):
        ContrastiveSearch(tasks, out, backend_name="openai:scripted", eval_config=FAST)


@pytest.mark.parametrize("kw, words", [
    ({"rounds": 0}, "rounds must be an integer >= 1"), ({"candidates": 0}, r"-k 1"),
    ({"exemplars": 0}, "exemplars must"), ({"max_new_tokens": 0}, "max_new_tokens"), ({"seed": -1}, "seed"),
    ({"temperature": -1.0}, "temperature must be >= 0"), ({"top_p": 0}, "top_p"), ({"tau": 0}, "tau"),
    ({"bucket_width": float("nan")}, "bucket_width"), ({"prompt_tokens": 0}, "prompt_tokens"),
    ({"rounds": 1.5}, "rounds must be an integer"),
])
def test_bad_search_settings_are_clear_errors(kw, words):
    with pytest.raises(ValueError, match=words):
        SearchConfig(**kw)


def test_bad_task_sets_backend_and_budget(tmp_path, tasks, openai_server):
    with pytest.raises(ValueError, match="no tasks"):
        ContrastiveSearch([], tmp_path / "a", backend_name="x")
    with pytest.raises(ValueError, match="repeated: relu"):
        ContrastiveSearch([tasks[0], tasks[0]], tmp_path / "a", backend_name="x")
    search = ContrastiveSearch(tasks, tmp_path / "b", backend_name="openai:other", eval_config=FAST)
    with pytest.raises(ValueError, match="set up for backend 'openai:other'"):
        search.run(backend(openai_server))
    tight = ContrastiveSearch(tasks, tmp_path / "c", backend_name="openai:scripted", eval_config=FAST,
                              config=SearchConfig(prompt_tokens=50))
    with pytest.raises(ValueError, match=r"task relu: the task alone needs \d+ tokens.*--prompt-tokens"):
        tight.run(backend(openai_server))
    assert openai_server.requests == []  # refused before asking anything


def test_token_counter_uses_the_backends_tokenizer_else_chars_over_4():
    class Tok:
        def __call__(self, text, add_special_tokens=True):
            assert add_special_tokens is False
            return {"input_ids": text.split()}

    class WithTokenizer:
        tokenizer = Tok()

    assert token_counter(WithTokenizer())("a b c") == 3
    assert token_counter(object()) is approx_tokens
    assert approx_tokens("") == 0 and approx_tokens("abcd") == 1 and approx_tokens("abcde") == 2


def test_a_copy_or_a_parity_result_is_never_the_best(tmp_path, tasks, openai_server):
    """Adversarial: a copy of the reference that timed 1.3x by noise (same_as_reference) and a 1.02x whose interval
    spans 1 are no best; the twin, a 1.1x whose interval clears 1, is."""
    rounds = {1: ["copy", "parity"], 2: ["real", "copy"]}
    verdicts = {"copy": ("ok", 1.3, ("same_as_reference",)), "parity": ("ok", 1.02, ()), "real": ("ok", 1.1, ())}

    def reply(body, i):
        r = len(openai_server.requests)
        return respond(code(rounds[r][i])) if task_of(body) == "relu" else "prose"

    openai_server.reply = reply
    out = tmp_path / "s"
    contrastive_search(tasks[:1], backend(openai_server), out, eval_config=FAST,
                       evaluator=lambda store: ScriptedEvaluator(store, verdicts),
                       config=SearchConfig(rounds=1, candidates=2))
    assert json.loads((out / "best.json").read_text())["relu"] is None and not (out / "best" / "relu.py").exists()
    contrastive_search(tasks[:1], backend(openai_server), out, eval_config=FAST,
                       evaluator=lambda store: ScriptedEvaluator(store, verdicts),
                       config=SearchConfig(rounds=2, candidates=2))
    best = json.loads((out / "best.json").read_text())["relu"]
    assert (best["speedup"], best["flags"]) == (1.1, []) and (out / "best" / "relu.py").read_text() == code("real")
