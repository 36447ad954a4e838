"""Op menus in prompts (the zoo action space, issue 42): the section appears only when a menu is given, at the same
place in every prompt kind, says where each op was measured faster or that it was not, and a menu that lacks an op,
is not installed or is unreadable is refused with a message naming what exists."""

from __future__ import annotations

import doctest
import json

import pytest

from cudal1.prompts import (
    Exemplar,
    PromptBudgetError,
    fit_to_budget,
    menu,
    render_contrastive,
    render_one_shot,
)
from cudal1.prompts.menu import Menu, MenuError, MenuOp, load_menu, read_menu, render_menu

TASK = "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
SOURCE = {"gpu": "GPU X", "date": "2026-11-23", "baseline": "eager"}
RELU = MenuOp("relu", "from lib import relu", "relu(x)", "ReLU elementwise",
              ({"task": "relu", "speedup": 0.84, "ci": [0.8, 0.9]},))
SOFTMAX = MenuOp("softmax", "from lib import softmax", "softmax(x)", "Softmax over the last dim",
                 ({"task": "softmax", "speedup": 1.3, "ci": [1.2, 1.4]}, {"task": "attn", "speedup": 1.1,
                                                                         "ci": [0.95, 1.2]}))
NORM = MenuOp("norm", "from lib import norm", "norm(x, w)", "A norm")
MENU = Menu(ops=(RELU, SOFTMAX, NORM), source=SOURCE, name="lib")


def test_module_doctests():
    assert doctest.testmod(menu).failed == 0


def test_each_line_says_where_the_op_was_faster_or_that_it_was_not():
    text = render_menu(MENU)
    assert text.splitlines()[0] == ("Speedups are over PyTorch eager (GPU X, 2026-11-23). Import an op as "
                                    "`from lib import <op>`.")
    assert "- `relu(x)`: ReLU elementwise; not faster on relu 0.84x." in text
    # only the measurement whose interval lies above 1 counts as faster
    assert "- `softmax(x)`: Softmax over the last dim; faster on softmax 1.30x." in text
    assert "- `norm(x, w)`: A norm; not measured in a task." in text


def test_without_task_names_the_figures_stand_alone_and_a_closed_menu_lists_its_ops():
    text = render_menu(MENU, task_names=False, closed=True)
    assert "- `relu(x)`: ReLU elementwise; not faster: 0.84x where measured." in text
    assert "- `softmax(x)`: Softmax over the last dim; faster: 1.30x where measured." in text
    assert "- `norm(x, w)`: A norm; not measured in a task." in text
    assert "attn" not in text and "on relu" not in text
    assert text.splitlines()[-1] == ("These are all the ops there are to import: relu, softmax, norm. "
                                     "Write anything else with torch.")
    assert render_menu(MENU).splitlines()[-1].startswith("- `norm(x, w)`")  # not closed unless asked


def test_ops_from_several_modules_carry_their_own_import_lines():
    other = MenuOp("conv", "from other import conv", "conv(x)", "Conv")
    text = render_menu(Menu(ops=(RELU, other), source=SOURCE))
    assert "Import an op as" not in text and "`from other import conv`" in text and "`from lib import relu`" in text


def test_a_long_summary_is_cut_to_its_first_clause_or_a_word_with_code_spans_closed():
    long = MenuOp("f", "from lib import f", "f(x)", "`y = x` " + "word " * 40 + "; more")
    line = render_menu(Menu(ops=(long,), source=SOURCE)).splitlines()[1]
    assert line.count("`") % 2 == 0 and " ...; not measured" in line
    clause = MenuOp("g", "from lib import g", "g(x)", "In place (`a; b`, c; d): short; then a long tail " + "z" * 200)
    assert "- `g(x)`: In place (`a; b`, c; d): short; not measured" in render_menu(Menu(ops=(clause,), source=SOURCE))


def test_the_section_appears_only_with_a_menu_and_before_the_same_heading():
    ex = [Exemplar(code="class ModelNew: ...", score=1.0)]
    assert render_contrastive(TASK, ex, "") == render_contrastive(TASK, ex)
    assert render_one_shot(TASK, "") == render_one_shot(TASK)
    text = render_menu(MENU)
    c = render_contrastive(TASK, ex, text)
    assert c.index("# Ops you may call") < c.index("# Earlier implementations") and text in c
    assert c.replace(c[c.index("# Ops you may call"):c.index("# Earlier implementations")], "") == \
        render_contrastive(TASK, ex)
    o = render_one_shot(TASK, text)
    assert o.index("# Ops you may call") < o.index("Write a faster replacement") and text in o


def test_the_section_goes_before_the_templates_heading_even_when_the_task_holds_that_text():
    tricky = TASK + "# Earlier implementations\n# Write a faster replacement\n"
    text = render_menu(MENU)
    for prompt, plain in ((render_contrastive(tricky, [], text), render_contrastive(tricky, [])),
                          (render_one_shot(tricky, text), render_one_shot(tricky))):
        i = prompt.index("# Ops you may call")
        assert prompt.index(tricky.strip()) < i and prompt.replace(prompt[i:i + len(prompt) - len(plain)], "") == plain


def test_the_budget_counts_the_menu_and_never_cuts_it():
    words = lambda s: len(s.split())  # noqa: E731
    text = render_menu(MENU)
    exs = [Exemplar(code="x = 1 " * 30, score=2.0)]
    fits = words(render_contrastive(TASK, exs, text))
    assert fit_to_budget(TASK, exs, words, fits, text) == render_contrastive(TASK, exs, text)
    assert fit_to_budget(TASK, exs, words, fits - 1, text) == render_contrastive(TASK, [], text)
    with pytest.raises(PromptBudgetError, match="fewer menu ops"):
        fit_to_budget(TASK, [], words, words(render_contrastive(TASK, [], text)) - 1, text)


def test_selecting_an_op_the_menu_lacks_names_every_op_it_has():
    assert MENU.select(["softmax", "relu"]).names() == ["softmax", "relu"]
    with pytest.raises(MenuError, match=r"no op \['gelu'\]; it has: relu, softmax, norm"):
        MENU.select(["relu", "gelu"])


def test_an_uninstalled_or_unreadable_menu_is_refused(tmp_path):
    with pytest.raises(MenuError, match="no op menu 'nope' is installed"):
        load_menu("nope")
    bad = tmp_path / "menu.json"
    bad.write_text(json.dumps({"ops": [{"name": "relu"}]}))
    with pytest.raises(MenuError, match="not a readable op menu"):
        read_menu(bad)
    with pytest.raises(MenuError, match="not a readable op menu"):
        read_menu(tmp_path / "missing.json")
