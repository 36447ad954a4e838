"""The learning experiment's bookkeeping (benchmarks/scripts/learning_experiment.py): the sample budget the control
arms get, the pooling over seeds, and the verdict, which claims learning only when GRPO's interval clears both
controls. (The arms themselves are the pipeline's stages, tested in tests/policy; the script was run end to end
with the tiny model, see benchmarks/results/*-learning-*.)"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from cudal1.policy.recipe import Recipe

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("learning_experiment", ROOT / "benchmarks/scripts/learning_experiment.py")
lx = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lx)


def recipe(**over):
    data = {"self_train": {"enabled": True, "rounds": 1, "samples_per_task": 2},
            "grpo": {"rounds": 2, "prompts_per_task": 1, "num_generations": 4},
            "evaluation": {"samples_per_task": 2}}
    for k, v in over.items():
        data[k].update(v)
    return Recipe.from_dict(data)


def test_budget_counts_every_completion_the_grpo_arm_draws():
    b = lx.budget(recipe(), n_train=4, n_held=2)
    assert b == {"self_train": 8, "grpo": 32, "training": 40, "evaluation": 4}
    assert lx.budget(recipe(self_train={"enabled": False}), 4, 2)["training"] == 32
    # the search gets at most the training + evaluation budget, over its rounds
    assert lx.search_shape(b, n_held=2, rounds=3) == (3, 7)  # 42 <= 44
    assert lx.search_shape({"training": 0, "evaluation": 1}, n_held=2, rounds=0) == (1, 1)


def fig(best):
    return {"best_per_task": best, "correct_at_1": 0.5, "novel_correct_rate": 0.25, "improved_fraction": 0.5,
            "completions": 4}


def test_pooling_is_over_seed_task_pairs():
    t = lx.pooled([fig({"a": 2.0, "b": 1.0}), fig({"a": 2.0, "b": 2.0})], bootstrap=200)
    assert t["pairs"] == 4 and t["seeds"] == 2
    assert t["best_geomean"] == pytest.approx(math.exp((3 * math.log(2.0)) / 4))
    assert t["best_ci"][0] <= t["best_geomean"] <= t["best_ci"][1] and t["correct_at_1"] == 0.5
    with pytest.raises(ValueError, match="no \\(seed, task\\) pair"):
        lx.pooled([fig({})])
    # the format rate is averaged over the seeds whose evaluation counted it (the search's figures do not)
    assert t["format_rate"] is None
    t = lx.pooled([{**fig({"a": 1.0}), "format_rate": 0.25}, fig({"a": 1.0}), {**fig({"a": 1.0}), "format_rate": 0.75}])
    assert t["format_rate"] == 0.5


def test_verdict_claims_learning_only_when_grpo_clears_both_controls():
    def arm(lo, hi):
        return {"best_ci": [lo, hi]}

    assert lx.verdict({"grpo": arm(1.5, 2.0), "sft_long": arm(1.0, 1.2), "search": arm(1.0, 1.4)}).startswith("learning")
    # above SFT-only but overlapping the search: no claim, and the message names the one not cleared
    v = lx.verdict({"grpo": arm(1.5, 2.0), "sft_long": arm(1.0, 1.2), "search": arm(1.3, 1.6)})
    assert v.startswith("no learning shown") and "search" in v and "sft_long" not in v
    # everything at parity (what a policy that writes no correct code measures): no claim
    assert lx.verdict({a: arm(1.0, 1.0) for a in ("grpo", "sft_long", "search")}).startswith("no learning")
    assert lx.verdict({"grpo": arm(2, 3)}).startswith("no verdict")


def test_a_spent_budget_stops_between_phases_and_the_tables_name_the_space_and_split(tmp_path, capsys):
    # the budget runs out before the first phase: nothing is trained, the command says how to continue (exit 3)
    assert lx.main(["--out", str(tmp_path), "--seeds", "0", "--budget-s", "1e-9"]) == 3
    out = capsys.readouterr().out
    assert "budget ran out before sft" in out and "run the same command again" in out
    assert not (tmp_path / "seed0" / "sft").exists()
    md = (tmp_path / "results.md").read_text()
    assert md.startswith("Recipe default; action space: free; split: builtin-v1 (family); GRPO and self-training "
                         "prompts show earlier answers of the task with their speedups.")
    assert lx.main(["--out", str(tmp_path / "z"), "--seeds", "0", "--report", "action_space.name=zoo",
                    "action_space.ops=[softmax]", "tasks.split=builtin-compose-v1", "tasks.names=[relu]",
                    "evaluation.names=[gemm_swiglu]"]) == 1  # no arm has figures yet
    assert (tmp_path / "z" / "results.md").read_text().startswith(
        "Recipe default; action space: zoo (menu kernelzoo, closed form: softmax); split: builtin-compose-v1 "
        "(composition); GRPO and self-training prompts show earlier answers of the task with their speedups.")


def test_a_folder_is_continued_only_with_the_recipe_it_ran_and_reported_as_it_ran(tmp_path, capsys):
    # learning-v3 ran grpo.exemplars_from=store; the recipe now says reference: continuing v3 with the recipe as it is
    # would mix two experiments in one folder's seeds, and a report would name the wrong prompts
    assert lx.main(["--out", str(tmp_path), "--seeds", "0", "--budget-s", "1e-9"]) == 3
    capsys.readouterr()
    assert lx.main(["--out", str(tmp_path), "--seeds", "0", "--budget-s", "1e-9", "grpo.exemplars_from=reference"]) == 2
    assert "ran another recipe" in capsys.readouterr().err
    assert lx.main(["--out", str(tmp_path), "--seeds", "0", "--report", "grpo.exemplars_from=reference"]) == 1
    assert "prompts show earlier answers of the task" in (tmp_path / "results.md").read_text()
    assert lx.main(["--out", str(tmp_path), "--seeds", "0", "--budget-s", "1e-9"]) == 3  # the same recipe continues


def test_a_gpu_recipe_is_refused_without_cuda(tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert lx.main(["--out", str(tmp_path), "--recipe", "embedded-zoo-h200", "--seeds", "0"]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


def _write_arm(root: Path, seed: int, arm: str, per_round: list[tuple[float, float]], groups: int = 4, n: int = 4):
    """A run folder's completions.jsonl: per GRPO round (earned reward, share of verified improvements); the shuffled
    arm's rows carry a paid reward unrelated to what they earned, as cudal1.policy.rewarding writes them."""

    d = root / f"seed{seed}" / arm
    d.mkdir(parents=True, exist_ok=True)
    rows = [{"stage": "evaluation:sft", "prompt_id": "e", "reward": 9.0, "improves": True}]  # not a GRPO row
    for rnd, (earned, share) in enumerate(per_round):
        for g in range(groups):
            for k in range(n):
                row = {"stage": f"grpo:{rnd}", "prompt_id": f"p{g}", "task": f"t{g}", "reward": earned + 0.01 * k,
                       "improves": k < share * n}
                if arm == "shuffled":
                    row["true_reward"], row["reward"] = row["reward"], 5.0  # paid 5.0: must not be read as earned
                rows.append(row)
    (d / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_training_curves_read_earned_rewards_and_claim_learning_only_when_both_rates_clear_the_control(tmp_path):
    _write_arm(tmp_path, 0, "grpo", [(-0.8, 0.0), (-0.2, 0.5)])
    _write_arm(tmp_path, 0, "shuffled", [(-0.8, 0.0), (-0.8, 0.0)])
    cs = lx.learning_curves.curves(tmp_path, [0], bootstrap=200)
    assert [p["round"] for p in cs["grpo"]] == [0, 1] and cs["grpo"][0]["completions"] == 16
    assert cs["grpo"][0]["groups"] == 4
    assert cs["shuffled"][1]["reward_mean"] == pytest.approx(-0.8 + 0.015)  # earned, not the 5.0 paid
    assert cs["grpo"][1]["improved_rate"] == 0.5
    assert lx.learning_curves.train_verdict(cs).startswith("learning on train tasks")
    # the twin: the reward rises above the control's but verified improvements do not: no claim, and it says which
    _write_arm(tmp_path, 1, "grpo", [(-0.8, 0.0), (-0.2, 0.0)])
    _write_arm(tmp_path, 1, "shuffled", [(-0.8, 0.0), (-0.8, 0.0)])
    v = lx.learning_curves.train_verdict(lx.learning_curves.curves(tmp_path, [1], bootstrap=200))
    assert v.startswith("no learning shown on train tasks: improved rate not apart")
    assert lx.learning_curves.train_verdict({"grpo": cs["grpo"]}).startswith("no train verdict")
    text = lx.learning_curves.svg(cs, "t")
    assert text.startswith("<svg") and text.count("<polyline") == 4  # two panels x two arms


def test_training_curves_count_the_groups_that_give_grpo_no_signal(tmp_path):
    # a group whose completions all earned the same reward has zero advantages: counted per round, in both arms
    _write_arm(tmp_path, 0, "grpo", [(-0.8, 0.0)])
    _write_arm(tmp_path, 0, "shuffled", [(-0.8, 0.0)])
    d = tmp_path / "seed0" / "grpo" / "completions.jsonl"
    rows = [json.loads(x) for x in d.read_text().splitlines()]
    for r in rows:
        if r["prompt_id"] in ("p0", "p1") and r["stage"] == "grpo:0":
            r["reward"] = -0.75
    d.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cs = lx.learning_curves.curves(tmp_path, [0], bootstrap=50)
    assert cs["grpo"][0]["equal_groups"] == 2 and cs["shuffled"][0]["equal_groups"] == 0
    assert "| grpo | 0 | 16 (4) | 2 |" in "\n".join(lx.learning_curves.table(cs))


def test_the_paired_difference_takes_the_tasks_spread_out_and_keeps_the_verdicts_rule(tmp_path):
    # four tasks of very different difficulty; grpo earns 0.2 more than the control on every one of them: the
    # unpaired intervals overlap (no learning by the rule), the difference paired by task clears zero
    for arm, lift in (("grpo", 0.2), ("shuffled", 0.0)):
        d = tmp_path / "seed0" / arm
        d.mkdir(parents=True)
        rows = [{"stage": f"grpo:{rnd}", "prompt_id": f"{arm}{g}", "task": f"t{g}", "improves": False,
                 "reward": (-1.0 + 0.5 * g + (lift if rnd else 0.0) + 0.01 * k)}
                for rnd in (0, 1) for g in range(4) for k in range(4)]
        (d / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    lc = lx.learning_curves
    assert lc.train_verdict(lc.curves(tmp_path, [0], bootstrap=200)).startswith("no learning shown")
    d = lc.paired_difference(tmp_path, [0], bootstrap=200)
    assert d["round"] == 1 and d["pairs"] == 4
    assert d["reward"]["mean"] == pytest.approx(0.2) and d["reward"]["ci"][0] > 0
    assert d["improved_rate"] == {"mean": 0.0, "ci": [0.0, 0.0]}
    assert "earned reward +0.200 [+0.200, +0.200]" in lc.paired_line(d)
    # the twin: grpo ahead on two tasks and behind on two by as much: the paired interval holds zero
    rows = [json.loads(x) for x in (tmp_path / "seed0" / "grpo" / "completions.jsonl").read_text().splitlines()]
    for r in rows:
        if r["stage"] == "grpo:1" and r["task"] in ("t0", "t1"):
            r["reward"] -= 0.4
    (tmp_path / "seed0" / "grpo" / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    d = lc.paired_difference(tmp_path, [0], bootstrap=200)
    assert d["reward"]["mean"] == pytest.approx(0.0, abs=1e-9) and d["reward"]["ci"][0] < 0 < d["reward"]["ci"][1]
    assert lc.paired_difference(tmp_path / "none", [0]) is None
    assert lc.paired_line(None).startswith("Paired by (seed, task): no GRPO round")


def test_an_improvement_that_hands_back_an_earlier_verified_answer_is_not_new(tmp_path):
    # a GRPO prompt shows earlier verified answers of its task: handing one back (a comment and a docstring aside)
    # is paid as an improvement but is not new code; an answer no earlier stage verified is
    head = "```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
    shown = head + "        return torch.softmax(x, -1)\n```"
    copied = head + "        \"\"\"softmax\"\"\"\n        return torch.softmax(x, -1)  # again\n```"
    fresh = head + "        return torch.softmax(x, dim=-1)\n```"
    d = tmp_path / "seed0" / "grpo"
    d.mkdir(parents=True)
    ok = {"status": "ok", "flags": [], "improves": True, "reward": 0.3, "shown_copy": False}
    rows = [{"stage": "self_train:0", "task": "t0", "prompt_id": "s", "text": shown, **ok},
            {"stage": "self_train:0", "task": "t1", "prompt_id": "s1", "text": fresh, "status": "incorrect",
             "flags": [], "improves": False, "reward": -0.5},  # not verified: no exemplar
            {"stage": "grpo:0", "task": "t0", "prompt_id": "p", "text": copied, **ok},
            {"stage": "grpo:0", "task": "t0", "prompt_id": "p", "text": fresh, **ok},
            {"stage": "grpo:0", "task": "t1", "prompt_id": "q", "text": fresh, **ok},  # failed before: new
            {"stage": "grpo:1", "task": "t0", "prompt_id": "p2", "text": fresh, **ok},  # verified in round 0: a copy
            {"stage": "grpo:1", "task": "t0", "prompt_id": "p2", "text": fresh, **ok, "reward": -1.0,
             "shown_copy": True}]  # and one the reward found handing back what its prompt showed
    (d / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = [(r["round"], r["task"], r["improves"], r["new_improvement"])
           for r in lx.learning_curves.training_rows(d)]
    assert got == [(0, "t0", True, False), (0, "t0", True, True), (0, "t1", True, True), (1, "t0", True, False),
                   (1, "t0", True, False)]
    cs = lx.learning_curves.curves(tmp_path, [0], bootstrap=50)
    assert cs["grpo"][0]["improved_rate"] == 1.0 and cs["grpo"][0]["new_improved_rate"] == pytest.approx(2 / 3)
    assert cs["grpo"][1]["new_improved_rate"] == 0.0
    assert "| of them new code [95% CI] | shown exemplars handed back |" in lx.learning_curves.table(cs)[0]
    assert cs["grpo"][0]["shown_copies"] == 0 and cs["grpo"][1]["shown_copies"] == 1
    # a log from before the reward's rule says nothing either way: no count, "-" in the table
    _write_arm(tmp_path, 1, "grpo", [(-0.8, 0.5)])
    old = lx.learning_curves.curves(tmp_path, [1], bootstrap=50)
    assert old["grpo"][0]["shown_copies"] is None and lx.learning_curves.table(old)[2].endswith("| - |")


def test_an_improvement_that_behaves_as_an_earlier_verified_answer_is_not_new(tmp_path):
    # a copy in disguise: a statement split in two gives it a source identity of its own, but the folder's results
    # store says it behaves as the answer self-training verified (the same operators and kernels): not new. Its
    # twin, another behaviour, is new; so is an answer whose store row has no behaviour (measured before it was kept)
    from cudal1.harness import Candidate, EvalConfig, EvalResult, ResultStore
    from cudal1.policy.tasks import select_tasks

    head = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
    shown = head + "        return torch.softmax(x, -1)\n"
    split = head + "        y = torch.softmax(x, -1)\n        return y\n"
    other = head + "        return torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)\n"
    unknown = head + "        z = torch.softmax(x, -1)\n        return z.contiguous()\n"
    d = tmp_path / "seed0" / "grpo"
    d.mkdir(parents=True)
    (task,) = select_tasks("builtin", ["softmax"], {})
    store = ResultStore(d / "results.sqlite")
    for code, behaviour in ((shown, "B"), (split, "B"), (other, "C"), (unknown, None)):
        r = EvalResult(task="softmax", status="ok", speedup=1.5, speedup_ci=(1.4, 1.6),
                       integrity={"behaviour": behaviour} if behaviour else {})
        store.add(r, task, Candidate(code, "softmax"), EvalConfig())
    store.close()
    ok = {"status": "ok", "flags": [], "improves": True, "reward": 0.3, "shown_copy": False}
    rows = [{"stage": "self_train:0", "task": "softmax", "prompt_id": "s", "text": f"```python\n{shown}```", **ok}]
    rows += [{"stage": "grpo:0", "task": "softmax", "prompt_id": "p", "text": f"```python\n{c}```", **ok}
             for c in (split, other, unknown)]
    (d / "completions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [r["new_improvement"] for r in lx.learning_curves.training_rows(d)] == [False, True, True]
    (d / "results.sqlite").unlink()  # without the store only the source is known: the split copy counts as new
    assert [r["new_improvement"] for r in lx.learning_curves.training_rows(d)] == [True, True, True]


def test_the_report_plots_the_curves_and_states_the_train_verdict(tmp_path):
    _write_arm(tmp_path, 0, "grpo", [(-0.8, 0.0), (-0.6, 0.25)])
    _write_arm(tmp_path, 0, "shuffled", [(-0.8, 0.0), (-0.7, 0.25)])
    assert lx.main(["--out", str(tmp_path), "--seeds", "0", "--report"]) == 1  # no held-out arm evaluated yet
    md = (tmp_path / "results.md").read_text()
    assert "(learning-curves.svg)" in md and "| grpo | 1 | 16 (4) |" in md and "Train verdict: no learning shown" in md
    assert (tmp_path / "learning-curves.svg").read_text().startswith("<svg")


def test_the_report_gives_each_seeds_train_verdict_beside_the_pooled_one(tmp_path):
    # seed 0's grpo arm clears its control, seed 1's does not: the pooled verdict alone would hide which seed it was
    _write_arm(tmp_path, 0, "grpo", [(-0.8, 0.0), (-0.2, 0.5)])
    _write_arm(tmp_path, 0, "shuffled", [(-0.8, 0.0), (-0.8, 0.0)])
    _write_arm(tmp_path, 1, "grpo", [(-0.8, 0.0), (-0.8, 0.0)])
    _write_arm(tmp_path, 1, "shuffled", [(-0.8, 0.0), (-0.8, 0.0)])
    lx.main(["--out", str(tmp_path), "--seeds", "0,1", "--report"])
    result = json.loads((tmp_path / "results.json").read_text())
    assert sorted(result["curves_per_seed"]) == ["0", "1"]
    assert result["curves_per_seed"]["1"]["grpo"][1]["reward_mean"] == pytest.approx(-0.8 + 0.015)
    per_seed = result["train_verdict_per_seed"]
    assert per_seed["0"].startswith("learning on train tasks") and per_seed["1"].startswith("no learning shown")
    md = (tmp_path / "results.md").read_text()
    assert "- seed 0: learning on train tasks" in md and "- seed 1: no learning shown" in md
    # one seed: nothing repeated
    lx.main(["--out", str(tmp_path), "--seeds", "1", "--report"])
    assert json.loads((tmp_path / "results.json").read_text())["train_verdict_per_seed"] == {}


def test_grpo_and_its_shuffled_control_take_their_rounds_in_turn(tmp_path, monkeypatch):
    # a run stopped by its budget must have curves of both arms over the same rounds: round r of grpo and of
    # shuffled before round r + 1 of either; a second call skips what is done

    import cudal1.policy.pipeline as pipeline

    calls = []
    stores: set[str | None] = set()  # every arm of the seed shares one store of measurements

    def fake_train(recipe, run, *, log, grpo_rounds_until=None):
        arm, shuffled = run.path.name, recipe.reward.shuffle
        calls.append((arm, shuffled, grpo_rounds_until))
        stores.add(recipe.eval.shared_store)
        done = recipe.grpo.rounds if grpo_rounds_until is None else grpo_rounds_until
        stage = {"sft": "sft", "self_train": "self_train"}.get(arm, "grpo")
        if stage == "grpo":
            run.save_state(grpo_rounds_done=done)
        if grpo_rounds_until is None:
            (run.path / "evaluation").mkdir(exist_ok=True)
            (run.path / "evaluation" / f"{stage}.json").write_text("{}")

    monkeypatch.setattr(pipeline, "train", fake_train)
    def control(name):
        def body(*args):
            calls.append((name, False, None))
            (tmp_path / name / "evaluation").mkdir(parents=True, exist_ok=True)
            (tmp_path / name / "evaluation" / f"{name}.json").write_text("{}")
        return body

    monkeypatch.setattr(lx, "_sft_long", control("sft_long"))
    monkeypatch.setattr(lx, "_search", control("search"))
    over = ["grpo.rounds=3", "self_train.enabled=true", "self_train.rounds=1"]
    lx.run_seed("default", over, 0, tmp_path, log=lambda m: None)
    assert calls == [("sft", False, None), ("self_train", False, None),
                     ("grpo", False, 1), ("shuffled", True, 1), ("grpo", False, 2), ("shuffled", True, 2),
                     ("grpo", False, None), ("shuffled", True, None), ("sft_long", False, None), ("search", False, None)]
    assert stores == {str(tmp_path / "measurements.sqlite")}
    assert json.loads((tmp_path / "shuffled" / "state.json").read_text()) == {"grpo_rounds_done": 3}
    calls.clear()
    (tmp_path / "shuffled" / "evaluation" / "grpo.json").unlink()
    (tmp_path / "shuffled" / "state.json").write_text(json.dumps({"grpo_rounds_done": 1}))
    lx.run_seed("default", over, 0, tmp_path, log=lambda m: None)
    assert calls == [("shuffled", True, 2), ("shuffled", True, None)]
    # a budget spent before sft_long leaves no copy of sft's folder (and checkpoint) for the state to carry
    import shutil

    shutil.rmtree(tmp_path / "sft_long")
    shutil.rmtree(tmp_path / "search")
    calls.clear()
    with pytest.raises(lx.BudgetSpent, match="before sft_long"):
        lx.run_seed("default", over, 0, tmp_path, log=lambda m: None, deadline=0.0)
    assert calls == [] and not (tmp_path / "sft_long").exists()
    # likewise before self-training and before GRPO: a fork is made by the phase that trains in it
    for folder in ("self_train", "grpo", "shuffled"):
        shutil.rmtree(tmp_path / folder)
    with pytest.raises(lx.BudgetSpent, match="before self_train"):
        lx.run_seed("default", over, 0, tmp_path, log=lambda m: None, deadline=0.0)
    assert calls == [] and not (tmp_path / "self_train").exists()
    lx.run_seed("default", ["grpo.rounds=3"], 0, tmp_path / "fresh", log=lambda m: None)
    shutil.rmtree(tmp_path / "fresh" / "grpo")
    shutil.rmtree(tmp_path / "fresh" / "shuffled")
    calls.clear()
    with pytest.raises(lx.BudgetSpent, match="before grpo round 1"):
        lx.run_seed("default", ["grpo.rounds=3"], 0, tmp_path / "fresh", log=lambda m: None, deadline=0.0)
    assert calls == [] and not (tmp_path / "fresh" / "grpo").exists()


def test_the_family_split_selects_tasks_of_builtin_v1_with_seed_answers_for_the_gpu_recipe():
    from cudal1.policy.pipeline import training_examples
    from cudal1.policy.recipe import load_recipe
    from cudal1.policy.splits import family_of, split
    from cudal1.policy.tasks import train_and_held_out

    recipe = load_recipe("embedded-zoo-h200", list(lx.FAMILY_SPLIT), configs_dir=lx.CONFIGS)
    train, held = train_and_held_out(recipe.tasks, recipe.evaluation.names)
    s = split("builtin-v1")
    assert s.kind == "family" and len(train) == len(held) == 8
    assert {t.name for t in train} <= set(s.train) and {t.name for t in held} <= set(s.held_out)
    assert not {family_of(t.name) for t in train} & {family_of(t.name) for t in held}  # whole families apart
    examples = training_examples(recipe, train, held)
    assert len(examples) >= 8 and not any(t.source in str(ex) for t in held for ex in examples)
