"""same_as_reference: the reference handed back (renamed, restructured) is found; a real rewrite is not."""

from __future__ import annotations

import re

from cudal1.harness import Candidate, evaluate, reference_candidate
from cudal1.harness.novelty import normalised_source, same_source

REF = '''"""Reference."""
import torch
import torch.nn as nn

N = 64


class Model(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(N, N)]


def get_init_inputs():
    return [N]
'''

RENAMED = '''import torch.nn as nn
import torch
N = 64
class ModelNew(nn.Module):
    """My fast version."""
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)  # same layer

    def forward(self, inp):
        return torch.relu(self.fc(inp))
'''

REWRITE = '''import torch
import torch.nn as nn
N = 64
class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x):
        return torch.addmm(self.linear.bias, x, self.linear.weight.t()).clamp_min_(0)
'''


def test_renamed_reformatted_copy_has_the_same_normalised_source():
    assert same_source(RENAMED, REF)
    assert normalised_source(RENAMED) == normalised_source(REF)


def test_a_rewrite_is_not_the_reference():
    assert not same_source(REWRITE, REF)
    assert not same_source(RENAMED.replace("torch.relu", "torch.nn.functional.gelu"), REF)
    assert normalised_source("def (:") is None and not same_source("def (:", REF)


def _consts(task_source: str) -> str:
    return "\n".join(line for line in task_source.splitlines() if re.match(r"^[A-Z_]+ = ", line))


def test_the_harness_flags_a_restructured_copy_by_its_operators_and_not_a_rewrite(fixture_tasks, fast_config):
    task = fixture_tasks["tiny_linear_relu"]
    restructured = _consts(task.source) + '''
import torch
import torch.nn as nn


def _act(t):
    return torch.relu(t)


class ModelNew(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.proj = nn.Linear(a, b)

    def forward(self, x):
        y = self.proj(x)
        return _act(y)
'''
    rewrite = _consts(task.source) + '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, a, b):
        super().__init__()
        self.linear = nn.Linear(a, b)

    def forward(self, x):
        return torch.addmm(self.linear.bias, x, self.linear.weight.t()).clamp_min_(0)
'''
    copy = evaluate(task, reference_candidate(task), fast_config)
    disguised = evaluate(task, Candidate(restructured, task.name, origin="test"), fast_config)
    honest = evaluate(task, Candidate(rewrite, task.name, origin="test"), fast_config)
    assert copy.status == disguised.status == honest.status == "ok", (copy.reason, disguised.reason, honest.reason)
    assert "same_as_reference" in copy.flags and any(e.startswith("source") for e in copy.integrity["same_as_reference"])
    assert "same_as_reference" in disguised.flags
    assert disguised.integrity["same_as_reference"][0].startswith("operators")
    assert "same_as_reference" not in honest.flags
    assert copy.verified and not copy.improves  # correct code, no improvement
    # every verified result keeps its behaviour (operators and kernels as one digest): the restructured copy behaves as
    # the reference, the rewrite (other operators) does not; a trainer compares it with the exemplars it showed
    behaviours = [r.integrity.get("behaviour") for r in (copy, disguised, honest)]
    assert all(isinstance(b, str) and len(b) == 64 for b in behaviours), behaviours
    assert behaviours[0] == behaviours[1] != behaviours[2]


def test_behaviour_identity_is_the_operators_and_the_set_of_kernels():
    from cudal1.harness.novelty import behaviour_identity, op_signature

    sig = op_signature([("aten::addmm", "(4, 8):torch.float32"), ("aten::relu", "(4, 8):torch.float32")])
    assert behaviour_identity(sig, None) == behaviour_identity(sig, [])  # a CPU run launches no GPU kernel
    assert behaviour_identity(sig, ["k2", "k1", "k1"]) == behaviour_identity(sig, ["k1", "k2"])  # order, repeats
    assert behaviour_identity(sig, ["k1"]) != behaviour_identity(sig, ["k1", "k2"])  # another kernel: another one
    other = op_signature([("aten::addmm", "(4, 8):torch.float32"), ("aten::gelu", "(4, 8):torch.float32")])
    assert behaviour_identity(other, None) != behaviour_identity(sig, None)
    assert behaviour_identity(None, ["k1"]) is None  # no recorded operators: matches nothing
