"""A user's own nn.Module with example inputs as a Task (cudal1.harness.suite.task_from_module)."""

from __future__ import annotations

import textwrap

import pytest

from cudal1.harness import SuiteError
from cudal1.harness.loading import load_task_copy
from cudal1.harness.suite import missing_names, task_from_module

NET = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    WIDTH = 16


    class Net(nn.Module):
        """Net: scaled tanh; the docstring says Net too."""

        def __init__(self, scale: float = 2.0):
            super(Net, self).__init__()
            self.scale = scale

        def forward(self, x):
            return torch.tanh(x) * self.scale


    def example_inputs():
        return [torch.randn(4, WIDTH)]
    ''')


def write(tmp_path, text, name="my_net.py"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_module_becomes_a_kernelbench_task(tmp_path):
    path = write(tmp_path, NET)
    task = task_from_module(path, "Net", inputs_fn="example_inputs")
    assert task.name == "my_net_Net" and task.suite == f"module:{path}" and task.path == str(path)
    assert missing_names(task.source) == []
    assert "class Model(nn.Module):" in task.source and "super(Model, self)" in task.source
    assert '"""Net: scaled tanh; the docstring says Net too."""' in task.source  # strings are left alone
    assert "get_inputs = example_inputs" in task.source
    mod = load_task_copy(task.source, tmp_path, "ref")  # it runs: the harness's own loader
    model = mod.Model(*mod.get_init_inputs())
    (x,) = mod.get_inputs()
    assert x.shape == (4, 16) and mod.get_init_inputs() == [] and model(x).abs().max() <= 2.0


def test_module_with_constructor_arguments_and_own_name(tmp_path):
    path = write(tmp_path, NET + "\n\ndef make_args():\n    return [3.0]\n\n\ndef get_inputs():\n    return example_inputs()\n")
    task = task_from_module(path, "Net", init_inputs_fn="make_args", name="tanh3")
    assert task.name == "tanh3" and "get_init_inputs = make_args" in task.source
    assert "get_inputs = " not in task.source  # the file's own get_inputs is used
    mod = load_task_copy(task.source, tmp_path, "ref")
    assert mod.get_init_inputs() == [3.0] and mod.Model(*mod.get_init_inputs()).scale == 3.0
    # a file already in the KernelBench format needs no alias
    kb = NET.replace("class Net", "class Model").replace("super(Net", "super(Model").replace("example_inputs", "get_inputs")
    kb += "\n\ndef get_init_inputs():\n    return [1.5]\n"
    task = task_from_module(write(tmp_path, kb, "kb.py"), "Model")
    assert task.source == kb and task.name == "kb_Model"


@pytest.mark.parametrize("cls, kw, words", [
    ("Missing", {"inputs_fn": "example_inputs"}, r"defines no class Missing at module level \(classes found: Net\)"),
    ("torch", {"inputs_fn": "example_inputs"}, r"torch is bound by an import there, not defined as a class"),
    ("Net", {}, r"defines no function get_inputs\(\) returning the example inputs"),
    ("Net", {"inputs_fn": "nope"}, r"defines no function nope\(\)"),
    ("Net", {"inputs_fn": "example_inputs", "init_inputs_fn": "make_args"},
     r"defines no function make_args\(\) returning the constructor's arguments"),
])
def test_bad_modules_are_clear_errors(tmp_path, cls, kw, words):
    path = write(tmp_path, NET)
    with pytest.raises(SuiteError, match=words) as e:
        task_from_module(path, cls, **kw)
    assert str(path) in str(e.value)


def test_unreadable_unparsable_or_clashing_files(tmp_path):
    with pytest.raises(SuiteError, match="cannot read module file"):
        task_from_module(tmp_path / "absent.py", "Net")
    with pytest.raises(SuiteError, match="syntax error at line 1"):
        task_from_module(write(tmp_path, "class Net(:\n", "bad.py"), "Net")
    clash = NET + "\n\nModel = None\n"
    with pytest.raises(SuiteError, match="already uses the name Model"):
        task_from_module(write(tmp_path, clash, "clash.py"), "Net", inputs_fn="example_inputs")
