"""Each training stage on a tiny model, with the real harness behind the rewards (CPU, seconds each):
the reward function on real candidates, teacher collection, SFT, self-training, GRPO, the whole pipeline
with its run folder, and resume."""

from __future__ import annotations

import json
import math

import pytest
import torch

from cudal1.harness import EvalConfig, EvalResult, ResultStore
from cudal1.harness.flags import MACHINE_NOISE, kind_of
from cudal1.policy.collection import collect
from cudal1.policy.evaluators import LocalEvaluator
from cudal1.policy.pipeline import train
from cudal1.policy.recipe import Recipe
from cudal1.policy.rewarding import HarnessReward
from cudal1.policy.run_log import RunDir
from cudal1.policy.seed_data import read_jsonl
from cudal1.policy.tasks import select_tasks

FAST = EvalConfig(device="cpu", trials=2, time_budget_s=0.05, min_rounds=5, max_rounds=10, attempts=1, cpu_threads=1)
SIZES = {"relu": {"BATCH": 8, "DIM": 64}, "softmax": {"BATCH": 4, "DIM": 33}}
RIGHT = ("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "    def forward(self, x):\n        return x.clamp_min(0)\n")
WRONG = RIGHT.replace("clamp_min(0)", "clamp_min(0.5)")


def respond(code: str) -> str:
    return (f"## Performance Analysis\nOne pass.\n\n## Algorithm Design\nclamp.\n\n## Code Implementation\n"
            f"```python\n{code}```\n")


@pytest.fixture(scope="module")
def tasks():
    return select_tasks("builtin", ["relu", "softmax"], SIZES)


def test_reward_with_the_real_harness(tmp_path, tasks):
    """A correct, a wrong and a code-less completion through the real harness: the wrong one is paid as incorrect,
    the prose as no code, the correct one by its verdict. Whether the clock resolves a relu of microseconds on a
    loaded 2-core runner is the machine's (CI 2026-12-04 and 12-06 read ``timing_unresolved`` now and then, even at
    128 x 2048 with 30-120 rounds); verified, it is paid above zero, left unverified by that noise, the unverified
    reward (below parity), never by a finding about its code."""
    store = ResultStore(tmp_path / "r.sqlite")
    relu = [t for t in tasks if t.name == "relu"]
    with LocalEvaluator(FAST, store=store) as ev:
        reward = HarnessReward(tasks={t.name: t for t in relu}, evaluate=ev.evaluate, eval_config=FAST, store=store,
                               run="t")
        values = reward(["p"] * 3, [respond(RIGHT), respond(WRONG), "no code here"], ["relu"] * 3)
    results = store.results(run="t")
    seen = [(r.status, sorted(r.flags), r.reason) for r in results]
    assert sorted(r.status for r in results) == ["incorrect", "ok"], seen
    assert values[1] == -0.5 and values[2] == -1.0, (values, seen)
    right = next(r for r in results if r.status == "ok")
    if right.verified:
        assert values[0] > 0, (values, seen)
    else:
        assert set(right.flags) & MACHINE_NOISE and values[0] == reward.config.unverified, (values, seen)
    assert reward.history[-1]["correct_rate"] == pytest.approx(1 / 3)


class Teacher:
    """A scripted teacher backend: answers from a list, in turn."""

    name = "scripted"

    def __init__(self, answers):
        self.answers, self.asked = list(answers), 0

    def generate(self, prompts, params):
        self.asked += 1  # past its script it answers prose, so that a test sees the collection's report, not an error
        return [[self.answers.pop(0) if self.answers else "no more scripted answers"] for _ in prompts]


def mm(expr: str) -> str:
    """A teacher's answer for the matrix product task: a ModelNew returning ``expr`` of ``a`` and ``b``."""
    return ("```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n    def forward(self, a, b):\n        return {expr}\n```")


def test_collection_keeps_only_verified_and_stops_after_enough(tmp_path):
    """Kept: verified and not the reference handed back (``torch.mm`` runs the reference's own ATen op: a copy that
    would teach copying); the einsum twin is a rewrite and is kept.

    A 256 x 256 matrix product (about 1 ms a call on one core, against a protocol of small inputs and one 256 KB
    output) rather than a relu: the parent's clock left a correct relu of 128 x 2048 ``timing_unresolved`` (not
    verified, not kept) 6 times of 8 in a full suite on the 2-core VM (2026-12-06), with 30-120 rounds; a matrix
    product read verified 6 of 6 quiet, 4-5 of 6 under two burner processes, with 10 rounds. What the machine's noise
    leaves unverified is never kept (a spare is asked instead); anything else is a finding and fails the test."""
    task = select_tasks("builtin", ["matmul_square"], {"matmul_square": {"N": 256}})[0]
    spares = ["torch.bmm(a[None], b[None])[0]", "torch.tensordot(a, b, dims=1)", "torch.mm(a, b.t().contiguous().t())",
              "torch.matmul(a.unsqueeze(0), b).squeeze(0)", "(a[None] @ b[None])[0]"]
    right, copy, twin = "(b.t() @ a.t()).t()", "torch.mm(a, b)", "torch.einsum('ik,kj->ij', a, b)"
    teacher = Teacher(["prose only", mm("a @ b.t()"), mm(right), mm(right), mm(copy), mm(twin)]
                      + [mm(e) for e in spares] + ["never asked"])  # spares: asked only after noise
    evaluated: list[tuple[str, EvalResult]] = []
    out = tmp_path / "teacher.jsonl"
    with LocalEvaluator(FAST.replace(attempts=2)) as ev:
        def evaluate(pairs, *, run=""):
            results = ev.evaluate(pairs, run=run)
            evaluated.extend((c.source, r) for (_, c), r in zip(pairs, results, strict=True))
            return results

        report = collect([task], [teacher], evaluate, out, max_attempts=20, successes=2)
    seen = [(src.splitlines()[-1].strip(), r.status, sorted(r.flags)) for src, r in evaluated]
    noisy = [(src, r) for src, r in evaluated if r.status == "ok" and not r.verified]
    for _, r in noisy:  # left unverified only by the machine's noise, never by a finding about the code
        assert {f for f in r.flags if kind_of(f) != "measurement" and kind_of(f) != "descriptive"} <= MACHINE_NOISE, seen
    copy_verified = next(r.verified for src, r in evaluated if copy in src)
    expected = {"no_code": 1, "incorrect": 1, "ok": 2, "duplicate": 1} | ({"same_as_reference": 1} if copy_verified else {})
    for _, r in noisy:
        key = "ok but " + "+".join(f for f in r.flags if kind_of(f) in ("reject", "suspect", "task"))
        expected[key] = expected.get(key, 0) + 1
    retried = sum(1 for src, _ in noisy if copy not in src)  # each correct answer left unverified costs a spare
    assert retried <= len(spares), seen
    assert report.kept == {task.name: 2} and report.attempts == {task.name: 6 + retried}, (report, seen)
    assert report.statuses[task.name] == expected, seen
    assert "torch.mm(a, b)" not in out.read_text()
    examples = read_jsonl(out)
    assert len(examples) == 4 and {e["origin"] for e in examples} == {"teacher:scripted"}
    with LocalEvaluator(FAST) as ev:
        capped = collect([task], [Teacher(["no"] * 3)], ev.evaluate, tmp_path / "b.jsonl", max_attempts=3)
    assert capped.attempts == {task.name: 3} and capped.kept == {task.name: 0}


def tiny_recipe(**over) -> Recipe:
    data = {
        "name": "test", "policy": {"model": "tiny"},
        "tasks": {"suite": "builtin", "names": ["relu", "softmax"], "sizes": SIZES},
        "eval": {"device": "cpu", "harness": {"trials": 2, "time_budget_s": 0.05, "min_rounds": 5, "max_rounds": 10,
                                              "attempts": 1, "cpu_threads": 1}},
        "sft": {"max_steps": 2, "grad_accum": 1, "max_length": 1024},
        "self_train": {"enabled": False},
        "evaluation": {"enabled": False},
        "grpo": {"rounds": 1, "prompts_per_task": 1, "num_generations": 2, "max_completion_length": 16,
                 "prompt_budget_tokens": 4096},
    }
    for k, v in over.items():
        data.setdefault(k, {}).update(v)
    return Recipe.from_dict(data)


def test_pipeline_end_to_end_and_resume(tmp_path):
    run = RunDir(tmp_path / "run")
    figures = train(tiny_recipe(), run, log=lambda s: None)
    for name in ("config.yaml", "metrics.jsonl", "results.sqlite", "summary.md", "state.json"):
        assert (run.path / name).is_file(), name
    assert (run.checkpoint / "config.json").is_file()
    (sft,) = run.events("sft")
    assert sft["steps"] == 2 and sft["examples"] > 0
    steps = run.events("grpo_step")
    assert len(steps) == 2 and figures["grpo_steps"] == 2
    for s in steps:
        assert s["completions"] == 2 and s["step_s"] >= s["generation_s"] > 0
        assert s["optimisation_s"] >= 0 and "reward_s" in s
    assert run.state() == {"sft_done": True, "grpo_rounds_done": 1}
    summary = (run.path / "summary.md").read_text()
    assert "generation" in summary and "| 0 |" in summary
    # resume with one more round: SFT is not repeated, round 1 runs from the saved checkpoint
    train(tiny_recipe(grpo={"rounds": 2}), RunDir(run.path), log=lambda s: None)
    events = [json.loads(x)["event"] for x in (run.path / "metrics.jsonl").read_text().splitlines()]
    assert events.count("sft") == 1 and events.count("grpo_round") == 2
    assert RunDir(run.path).state()["grpo_rounds_done"] == 2


def test_grpo_rounds_until_stops_between_rounds_and_a_later_call_finishes(tmp_path):
    # the learning experiment's arms take GRPO rounds in turn: a call that stops after round 1 of 2 writes no
    # summary and no post-GRPO evaluation; the next call runs round 2 only, then finishes the run
    run = RunDir(tmp_path / "turns")
    recipe = tiny_recipe(grpo={"rounds": 2}, sft={"max_steps": 1})
    train(recipe, run, log=lambda s: None, grpo_rounds_until=1)
    assert run.state() == {"sft_done": True, "grpo_rounds_done": 1}
    assert not (run.path / "summary.md").exists()
    train(recipe, RunDir(run.path), log=lambda s: None, grpo_rounds_until=1)  # nothing left below round 1
    train(recipe, RunDir(run.path), log=lambda s: None)
    events = [json.loads(x)["event"] for x in (run.path / "metrics.jsonl").read_text().splitlines()]
    assert events.count("sft") == 1 and events.count("grpo_round") == 2
    assert (run.path / "summary.md").is_file() and RunDir(run.path).state()["grpo_rounds_done"] == 2
    with pytest.raises(ValueError, match="round count"):
        train(recipe, RunDir(run.path), log=lambda s: None, grpo_rounds_until=0)


@pytest.mark.parametrize("micro", [{}, {"micro_batch_size": 1}], ids=["whole-group", "micro-batched"])
def test_a_round_drawn_at_once_generates_once_for_all_its_steps(tmp_path, micro):
    # grpo.prompts_per_generation 0: one generate call for the round's two prompts, then two optimizer steps, also
    # when each group's loss is computed a completion at a time (the H200 recipe's micro_batch_size)
    run = RunDir(tmp_path / "once")
    train(tiny_recipe(grpo={"prompts_per_generation": 0, **micro}, sft={"max_steps": 1}), run, log=lambda s: None)
    first, second = run.events("grpo_step")
    assert first["generation_s"] > 0 and first["completions"] == 4
    assert second["generation_s"] == 0 and second["completions"] == 0


def test_num_iterations_trains_every_pass_over_the_round_it_generated_once(tmp_path):
    # grpo.trl.num_iterations 2 (GRPO's mu): the round's two prompts are generated once and trained on twice, four
    # optimizer steps; with max_steps left at the prompt count trl stopped after the first pass
    run = RunDir(tmp_path / "mu")
    train(tiny_recipe(grpo={"prompts_per_generation": 0, "trl": {"num_iterations": 2}}, sft={"max_steps": 1}), run,
          log=lambda s: None)
    steps = run.events("grpo_step")
    assert len(steps) == 4
    assert steps[0]["completions"] == 4 and all(s["completions"] == 0 for s in steps[1:])
    assert all(s["generation_s"] == 0 for s in steps[1:])
    (rnd,) = run.events("grpo_round")
    assert rnd["steps"] == 4


def test_lora_pipeline_trains_adapters_only(tmp_path):
    run = RunDir(tmp_path / "lora")
    train(tiny_recipe(policy={"lora": True, "lora_r": 4, "lora_alpha": 8}, sft={"max_steps": 1}), run,
          log=lambda s: None)
    assert (run.checkpoint / "adapter_config.json").is_file()
    assert not (run.checkpoint / "model.safetensors").exists()


def test_self_training_round(tmp_path, tasks):
    from cudal1.policy.loading import load_policy
    from cudal1.policy.self_training import self_train

    recipe = tiny_recipe(self_train={"rounds": 1, "samples_per_task": 2, "max_new_tokens": 8})
    model, tok, _ = load_policy(recipe.policy)
    run = RunDir(tmp_path / "st")
    store = ResultStore(run.store_path)
    with LocalEvaluator(FAST, store=store) as ev:
        self_train(model, tok, recipe, tasks, store, ev.evaluate, run)
    (e,) = run.events("self_train")
    assert e["samples"] == 4 and e["kept"] <= e["correct"] <= e["with_code"] <= 4
    assert run.state()["self_train_rounds_done"] == 1


def test_self_training_fine_tunes_only_on_real_new_improvements(tmp_path, tasks, monkeypatch):
    """The policy's samples are scripted (a tiny random model writes no code), and so are their measurements
    (the selection rule is under test, not the CPU's timing): per task a real improvement, the same code again,
    a correct rewrite at parity, a copy of the reference, a flagged speedup and a wrong answer; only the first
    becomes an SFT example."""
    from cudal1.policy import self_training
    from cudal1.policy.loading import load_policy

    variants = {  # code -> its scripted measurement
        RIGHT: dict(status="ok", speedup=1.3, speedup_ci=(1.2, 1.4)),
        RIGHT.replace("x.clamp_min(0)", "x.clamp(min=0)"): dict(status="ok", speedup=1.02, speedup_ci=(0.97, 1.08)),
        RIGHT.replace("x.clamp_min(0)", "torch.relu(x)"): dict(status="ok", speedup=1.0, speedup_ci=(0.98, 1.02),
                                                            flags=("same_as_reference",)),
        RIGHT.replace("x.clamp_min(0)", "x.half().clamp_min(0).float()"): dict(
            status="ok", speedup=1.9, speedup_ci=(1.8, 2.0), flags=("reduced_precision",)),
        WRONG: dict(status="incorrect"),
    }
    order = [RIGHT, RIGHT, *list(variants)[1:]]

    def scripted(self, prompts, params):
        return [[respond(c) for c in order][: params.n] for _ in prompts]

    def measured(pairs, run=""):
        by_code = {k.strip(): v for k, v in variants.items()}
        return [EvalResult(task=t.name, **by_code[c.source.strip()]) for t, c in pairs]

    monkeypatch.setattr(self_training.TransformersBackend, "generate", scripted)
    seen = {}
    real_sft = self_training.run_sft

    def spy(model, tok, examples, *a, **kw):
        seen["examples"] = examples
        return real_sft(model, tok, examples, *a, **kw)

    monkeypatch.setattr(self_training, "run_sft", spy)
    recipe = tiny_recipe(self_train={"rounds": 1, "samples_per_task": len(order)}, sft={"max_steps": 1})
    model, tok, _ = load_policy(recipe.policy)
    run = RunDir(tmp_path / "st2")
    store = ResultStore(run.store_path)
    self_training.self_train(model, tok, recipe, tasks[:1], store, measured, run)
    (e,) = run.events("self_train")
    assert (e["samples"], e["with_code"], e["correct"], e["kept"]) == (6, 6, 4, 1) and e["sft_steps"] == 1
    (kept,) = seen["examples"]
    assert "x.clamp_min(0)" in kept["completion"][0]["content"]
    rows = [json.loads(x) for x in (run.path / "completions.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and [r["improves"] for r in rows] == [True, True, False, False, False, False]


def test_every_stage_with_the_held_out_evaluation_after_each(tmp_path):
    """SFT -> self-training -> GRPO, the evaluation stage on a held-out task before training and after each
    stage; every completion kept; the held-out results in their own store."""
    recipe = tiny_recipe(tasks={"sizes": {**SIZES, "mse_loss": {"BATCH": 8, "DIM": 64}}},
                         self_train={"enabled": True, "rounds": 1, "samples_per_task": 1, "max_new_tokens": 8},
                         evaluation={"enabled": True, "names": ["mse_loss"], "samples_per_task": 2,
                                     "max_new_tokens": 8, "bootstrap": 50})
    run = RunDir(tmp_path / "all")
    figures = train(recipe, run, log=lambda s: None)
    stages = [e["stage"] for e in run.events("evaluation")]
    assert stages == ["base", "sft", "self_train", "grpo"]
    for stage in stages:
        e = json.loads((run.path / "evaluation" / f"{stage}.json").read_text())
        assert e["tasks"] == 1 and e["completions"] == 2 and set(e["statuses"]) == {"mse_loss"}
        assert 0.0 <= e["correct_at_1"] <= 1.0 and e["best_of_k_ci"][0] <= e["best_of_k_geomean"] <= e["best_of_k_ci"][1]
    rows = [json.loads(x) for x in (run.path / "completions.jsonl").read_text().splitlines()]
    kinds = {r["stage"].split(":")[0] for r in rows}
    assert kinds == {"evaluation", "self_train", "grpo"}
    assert all("text" in r and "prompt_id" in r and "status" in r for r in rows if r["stage"].startswith("grpo"))
    assert len([r for r in rows if r["stage"].startswith("grpo")]) == 4  # 2 train tasks x 2 completions
    assert run.state()["evaluated"] == stages and run.state()["self_train_rounds_done"] == 1
    # held-out results never reach the training store
    assert all(r.task != "mse_loss" for r in ResultStore(run.store_path).results())
    assert "Held-out evaluation" in (run.path / "summary.md").read_text() and set(figures["evaluations"]) == set(stages)
    # a resumed run evaluates no stage twice
    train(recipe, RunDir(run.path), log=lambda s: None)
    assert [e["stage"] for e in run.events("evaluation")] == stages


def test_held_out_tasks_never_reach_training(tmp_path):
    from cudal1.policy.pipeline import training_examples
    from cudal1.policy.recipe import RecipeError
    from cudal1.policy.tasks import TaskSelectionError, train_and_held_out

    with pytest.raises(TaskSelectionError, match="held-out task"):
        train_and_held_out(tiny_recipe(tasks={"names": ["relu", "mse_loss"]}).tasks)
    with pytest.raises(TaskSelectionError, match="not held out"):
        train_and_held_out(tiny_recipe().tasks, ["softmax"])
    with pytest.raises(TaskSelectionError, match="no task"):
        train_and_held_out(tiny_recipe().tasks, ["no_such_task"])
    with pytest.raises(RecipeError, match="split"):
        tiny_recipe(tasks={"split": "no-such-split"})
    train, held = train_and_held_out(tiny_recipe(tasks={"names": []}).tasks)
    assert len(train) == 49 and len(held) == 33 and not {t.name for t in train} & {t.name for t in held}
    # seed data and teacher data of a held-out task are dropped, by name and by source
    recipe = tiny_recipe(tasks={"names": ["relu"]})
    (relu,) = select_tasks("builtin", ["relu"])
    (mse,) = select_tasks("builtin", ["mse_loss"])
    teacher = tmp_path / "teacher.jsonl"
    rows = [{"prompt": [{"role": "user", "content": "write it"}], "completion": [{"role": "assistant", "content": "x"}],
             "task": "mse_loss"},
            {"prompt": [{"role": "user", "content": "Task:\n" + mse.source}],
             "completion": [{"role": "assistant", "content": "x"}], "task": "renamed"},
            {"prompt": [{"role": "user", "content": "Task:\n" + relu.source}],
             "completion": [{"role": "assistant", "content": "x"}], "task": "relu"}]
    teacher.write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe.sft.data = [str(teacher)]
    examples = training_examples(recipe, [relu], [mse])
    assert [e["task"] for e in examples if e.get("origin") is None] == ["relu"]
    assert examples and all(e["task"] == "relu" for e in examples)


def test_a_fresh_evaluation_measures_again_and_keeps_both(tmp_path, tasks):
    """Re-measurement goes through the evaluator in use: ``fresh`` skips the read-back from the store."""
    from cudal1.harness import Candidate

    store = ResultStore(tmp_path / "r.sqlite")
    pair = (tasks[0], Candidate(RIGHT, tasks[0].name, origin="test"))
    with LocalEvaluator(FAST, store=store) as ev:
        (first,) = ev.evaluate([pair], run="a")
        (again,) = ev.evaluate([pair], run="b")
        (fresh,) = ev.evaluate([pair], run="c", fresh=True)
    assert again.wall_s == first.wall_s  # read back, not measured
    assert fresh.wall_s != first.wall_s and len(store.results()) == 2


def test_sft_trains_under_bf16_autocast_only_where_the_cpu_has_native_bf16_products(tmp_path):
    from cudal1.policy.sft import bf16_training, cpu_has_native_bf16

    assert cpu_has_native_bf16("processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 sse\n")
    assert cpu_has_native_bf16("flags\t: fpu amx_bf16\n") and not cpu_has_native_bf16("flags\t: fpu avx512f avx2\n")
    assert not cpu_has_native_bf16("")
    f32, b16 = torch.float32, torch.bfloat16
    assert bf16_training("auto", f32, cuda=False, native=True) and not bf16_training("auto", f32, cuda=False,
                                                                                      native=False)
    assert bf16_training("bf16", f32, cuda=False, native=False) and not bf16_training("off", f32, cuda=False,
                                                                                       native=True)
    assert bf16_training("off", b16, cuda=True) and not bf16_training("bf16", f32, cuda=True)  # CUDA: the weights
    # a real SFT run under CPU autocast: it trains, and the figures say which precision it used
    run = RunDir(tmp_path / "bf16")
    train(tiny_recipe(sft={"max_steps": 2, "cpu_autocast": "bf16"}, grpo={"rounds": 0}), run, log=lambda s: None)
    (sft,) = run.events("sft")
    assert sft["steps"] == 2 and sft["bf16"] is (not torch.cuda.is_available())
    assert math.isfinite(sft["train_loss"])


def test_trl_hands_the_reward_the_exemplars_each_prompt_showed(tmp_path, monkeypatch):
    # the reward tells a handed-back exemplar from the policy's own answer by the dataset's ``shown`` column: trl must
    # pass it through, one entry per completion, or the rule would silently never apply
    from cudal1.harness.novelty import source_identity
    from cudal1.policy import rewarding
    from cudal1.policy.seed_data import reference_as_modelnew

    seen = []
    original = rewarding.HarnessReward.__call__

    def recording(self, prompts, completions, task, log_metric=None, shown=None, **kw):
        seen.append((list(task), shown))
        return original(self, prompts, completions, task, log_metric=log_metric, shown=shown, **kw)

    monkeypatch.setattr(rewarding.HarnessReward, "__call__", recording)
    recipe = tiny_recipe(sft={"max_steps": 1})
    run = RunDir(tmp_path / "shown")
    train(recipe, run, log=lambda s: None)
    assert seen and all(shown is not None and len(shown) == len(tasks) for tasks, shown in seen)
    (prompts,) = run.events("grpo_round_prompts")  # and the run's log keeps what each prompt showed
    assert len(prompts["shown"]) == len(prompts["tasks"]) == 2
    sources = {t.name: t.source for t in select_tasks("builtin", ["relu", "softmax"], SIZES)}
    for tasks, shown in seen:  # no answer verified yet: each prompt showed its reference rewritten as ModelNew
        for name, ids in zip(tasks, shown, strict=True):
            assert list(ids) == [source_identity(reference_as_modelnew(sources[name]))]
    for name, ids in zip(prompts["tasks"], prompts["shown"], strict=True):
        assert ids == [source_identity(reference_as_modelnew(sources[name]))]


@pytest.mark.parametrize("exemplars_from", ["store", "reference"])
def test_grpo_and_self_training_prompts_show_what_the_recipe_names(tmp_path, exemplars_from, monkeypatch):
    # grpo.exemplars_from reaches both stages that build prompts from the store (attempt 6 of issue 42 depends on it):
    # each stage's build_prompt_rows is stopped at its first call, before any model runs
    from cudal1.policy import grpo, self_training
    from cudal1.policy.contrastive import row_filter

    class Built(Exception):
        pass

    keeps = []

    def stop(*a, keep=None, **kw):
        keeps.append(keep)
        raise Built

    recipe = tiny_recipe(grpo={"exemplars_from": exemplars_from}, self_train={"enabled": True, "rounds": 1})
    for module, call in ((grpo, lambda: grpo.run_grpo(None, None, recipe, [], None, HarnessReward.__new__(HarnessReward),
                                                      RunDir(tmp_path / "g"))),
                         (self_training, lambda: self_training.self_train(None, None, recipe, [], None, None,
                                                                          RunDir(tmp_path / "s")))):
        monkeypatch.setattr(module, "build_prompt_rows", stop)
        with pytest.raises(Built):
            call()
    assert keeps == [row_filter(exemplars_from)] * 2
