"""The zoo action space (issue 42, item 2): a recipe names its space; with ``zoo`` every prompt of every stage carries
the op menu, the seed answers are released solutions that call only menu ops, every report names the space, and bad
settings are refused when the recipe loads. Also: a GPU recipe on a machine without CUDA is refused before anything
is loaded."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from cudal1.harness import ResultStore
from cudal1.policy.action_space import describe, menu_imports, menu_text, off_menu
from cudal1.policy.contrastive import build_prompt_rows
from cudal1.policy.evaluation import evaluation_prompt
from cudal1.policy.recipe import ActionSpaceSection, RecipeError, load_recipe
from cudal1.policy.tasks import select_tasks, train_and_held_out

CONFIGS = Path(__file__).resolve().parents[2] / "apps" / "configs"
ZOO = ["action_space.name=zoo", "action_space.ops=[softmax,layer_norm,bias_act_]"]
HEADING = "# Ops you may call"


@pytest.mark.parametrize(("overrides", "match"), [
    (["action_space.name=kernels"], "action_space.name 'kernels': write one of free, zoo"),
    (["action_space.ops=[softmax]"], "only the zoo space shows"),
    (["action_space.name=zoo", "action_space.ops=[softmax,flash_attention]"],
     r"no op \['flash_attention'\]; it has: .*softmax"),
    (["action_space.name=zoo", "action_space.menu=other"], "no op menu 'other' is installed"),
])
def test_bad_action_spaces_are_refused_when_the_recipe_loads(overrides, match):
    with pytest.raises(RecipeError, match=match):
        load_recipe("default", overrides, configs_dir=CONFIGS)


def test_the_free_space_changes_no_prompt_and_the_zoo_space_shows_only_the_chosen_ops():
    free = ActionSpaceSection()
    zoo = ActionSpaceSection(name="zoo", ops=["softmax", "layer_norm"])
    assert menu_text(free) == "" and describe(free) == "free"
    text = menu_text(zoo)
    assert [ln.split("`")[1].split("(")[0] for ln in text.splitlines()[1:-1]] == ["softmax", "layer_norm"]
    assert describe(zoo) == "zoo (menu kernelzoo, closed form: softmax, layer_norm)"
    assert len(menu_text(ActionSpaceSection(name="zoo")).splitlines()) > 40  # every op when none is named


def test_the_closed_menu_names_no_task_and_lists_every_op_there_is():
    # issue 42 item 6, attempt 3: of 18 held-out answers after SFT that imported a name the zoo lacks, 6 imported
    # only task names the menu's figures quoted (conv2d, conv1d, matmul_large_k); the closed form quotes figures only
    ops = ["matmul", "conv", "layer_norm", "softmax"]
    closed = menu_text(ActionSpaceSection(name="zoo", ops=ops))
    tasks = menu_text(ActionSpaceSection(name="zoo", ops=ops, menu_form="tasks"))
    assert "conv2d" in tasks and "matmul_large_k" in tasks  # the zoo's measurements name these tasks
    assert "conv2d" not in closed and "matmul_large_k" not in closed and "where measured" in closed
    assert closed.splitlines()[-1] == ("These are all the ops there are to import: matmul, conv, layer_norm, "
                                       "softmax. Write anything else with torch.")
    assert "These are all" not in tasks
    head = lambda line: re.split(r"; (?:not )?faster", line)[0]  # noqa: E731  (signature and summary)
    assert [head(ln) for ln in closed.splitlines()[1:-1]] == [head(ln) for ln in tasks.splitlines()[1:]]
    with pytest.raises(RecipeError, match="action_space.menu_form 'open': write one of closed, tasks"):
        load_recipe("default", [*ZOO, "action_space.menu_form=open"], configs_dir=CONFIGS)


def test_every_stage_prompt_carries_the_menu_in_the_zoo_space(tmp_path):
    r = load_recipe("default", ZOO, configs_dir=CONFIGS)
    text = menu_text(r.action_space)
    relu, = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 4}})
    assert text in evaluation_prompt(relu, text)[0]["content"]
    assert HEADING not in evaluation_prompt(relu)[0]["content"]
    store = ResultStore(tmp_path / "r.sqlite")
    rows = build_prompt_rows(store, [relu], n=2, tau=1.0, bucket_width=0.25, rng=random.Random(0),
                             count_tokens=lambda s: len(s.split()), max_tokens=10_000, menu=text)
    assert text in rows[0]["prompt"][0]["content"]
    from cudal1.policy.pipeline import training_examples

    tasks, held = train_and_held_out(r.tasks, r.evaluation.names)
    ex = training_examples(r, tasks, held)
    assert ex and all(text in e["prompt"][0]["content"] for e in ex)
    free = training_examples(load_recipe("default", configs_dir=CONFIGS), tasks, held)
    assert not any(HEADING in e["prompt"][0]["content"] for e in free)


def test_seed_answers_calling_an_op_off_the_menu_are_left_out():
    zoo = ActionSpaceSection(name="zoo", ops=["softmax"])
    assert off_menu("from cudal1.kernelzoo.ops.bias_act import bias_act_\nfrom cudal1.kernelzoo import softmax\n",
                    zoo) == ["bias_act_"]
    assert off_menu("from cudal1.kernelzoo import softmax\nfrom torch import relu\n", zoo) == []
    assert off_menu("from cudal1.kernelzoo.ops.bias_act import bias_act_\n", ActionSpaceSection()) == []
    from cudal1.policy.pipeline import training_examples

    r = load_recipe("default", ["sft.seed_tasks=split", "sft.seed_references=false", "action_space.name=zoo",
                                "action_space.ops=[softmax,matmul]"], configs_dir=CONFIGS)
    tasks, held = train_and_held_out(r.tasks, r.evaluation.names)
    ex = training_examples(r, tasks, held)
    assert ex and {e["task"] for e in ex} <= {"softmax"} | {t for t in r_train(r) if t.startswith("matmul")}
    wide = load_recipe("default", ["sft.seed_tasks=split", "sft.seed_references=false", "action_space.name=zoo"],
                       configs_dir=CONFIGS)
    assert len(training_examples(wide, tasks, held)) > len(ex)


def _imported_objects(code: str) -> dict[str, object]:
    """Each name ``code`` imports from cudal1.kernelzoo (or one of its modules) and the object it is bound to."""
    import ast
    import importlib

    return {a.asname or a.name: getattr(importlib.import_module(n.module), a.name) for n in ast.parse(code).body
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("cudal1.kernelzoo") for a in n.names}


def test_seed_answers_import_menu_ops_the_way_the_menu_writes_it():
    """Attempt 2 of issue 42, item 6: one import form, the menu's, in the seed answers (the H100 run of 2026-12-05
    invented op modules such as cudal1.kernelzoo.ops.conv2d in 29 of 35 compile errors)."""
    zoo = ActionSpaceSection(name="zoo", ops=["softmax", "layer_norm", "bias_act_"])
    code = ('"""doc: from cudal1.kernelzoo.ops.softmax import softmax stays in a docstring"""\n'
            "import torch\n"
            "from cudal1.kernelzoo.ops.softmax import softmax\n"
            "from cudal1.kernelzoo.ops.layer_norm import (\n    layer_norm,\n)\n"
            "from cudal1.kernelzoo.ops.bias_act import bias_act_ as fused\n"  # renamed: left as it is
            "from cudal1.kernelzoo.ops.softmax import softmax, softmax_ref\n"  # a name no menu op has: as it is
            "from cudal1.kernelzoo.ops.layer_norm import layer_norm; x = 1\n")  # shares its line: as it is
    out = menu_imports(code, zoo)
    assert out.splitlines() == [
        '"""doc: from cudal1.kernelzoo.ops.softmax import softmax stays in a docstring"""', "import torch",
        "from cudal1.kernelzoo import softmax", "from cudal1.kernelzoo import layer_norm",
        "from cudal1.kernelzoo.ops.bias_act import bias_act_ as fused",
        "from cudal1.kernelzoo.ops.softmax import softmax, softmax_ref",
        "from cudal1.kernelzoo.ops.layer_norm import layer_norm; x = 1"]
    assert _imported_objects(out) == _imported_objects(code)  # the same functions, imported another way
    assert menu_imports(code, ActionSpaceSection()) == code  # the free space changes nothing
    assert menu_imports("def broken(:\n", zoo) == "def broken(:\n"
    from cudal1.policy.pipeline import training_examples

    r = load_recipe("embedded-zoo-h200", ["eval.device=cpu", "policy.device=cpu"], configs_dir=CONFIGS)
    tasks, held = train_and_held_out(r.tasks, r.evaluation.names)
    answers = [e["completion"][0]["content"] for e in training_examples(r, tasks, held)]
    assert answers and not any("cudal1.kernelzoo.ops." in a.split('"""')[-1] for a in answers)
    assert sum("from cudal1.kernelzoo import " in a for a in answers) == len(answers)
    for a in answers:  # every rewritten import resolves, to the object the released solution imported
        code = a.split("```python\n", 1)[1].rsplit("```", 1)[0]
        assert _imported_objects(code)


def r_train(r) -> list[str]:
    from cudal1.policy.splits import split

    return list(split(r.tasks.split).train)


def test_the_gpu_recipe_loads_with_the_zoo_space_and_the_composition_split():
    r = load_recipe("embedded-zoo-h200", configs_dir=CONFIGS)
    assert r.action_space.name == "zoo" and r.tasks.split == "builtin-compose-v1" and r.eval.device == "cuda"
    tasks, held = train_and_held_out(r.tasks, r.evaluation.names)
    assert len(tasks) == 8 and len(held) == 8


def test_a_gpu_recipe_is_refused_on_a_machine_without_cuda(monkeypatch, tmp_path):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    r = load_recipe("embedded-zoo-h200", configs_dir=CONFIGS)
    with pytest.raises(RecipeError, match="no CUDA GPU: run it on a GPU machine"):
        r.require_runnable_here()
    load_recipe("default", configs_dir=CONFIGS).require_runnable_here()  # auto: the CPU when there is no GPU
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_grpo", CONFIGS.parent / "train_grpo.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    assert app.main(["--recipe", "embedded-zoo-h200", "--output-dir", str(tmp_path)]) == 2
    assert not any(tmp_path.iterdir())  # refused before a run folder was made
