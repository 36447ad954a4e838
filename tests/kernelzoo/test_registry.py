"""The zoo's public functions: the implementation directly in eager mode, the registered custom op while
torch.compile traces (so graphs see ``torch.ops.cudal1.<op>``, with its fake implementation)."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import registry, relu, softmax
from cudal1.kernelzoo.registry import call, zoo_custom_op


def test_eager_calls_skip_the_dispatcher(monkeypatch):
    seen = []
    real = registry._EAGER["relu"]
    monkeypatch.setitem(registry._EAGER, "relu", lambda x: seen.append(1) or real(x))
    x = torch.randn(5, 7)
    assert torch.equal(relu(x), torch.relu(x)) and seen == [1]
    assert torch.equal(torch.ops.cudal1.relu(x), torch.relu(x)) and seen == [1]  # the op itself: not the table


def test_compiled_graphs_use_the_registered_op():
    from torch._dynamo.testing import CompileCounterWithBackend

    backend = CompileCounterWithBackend("aot_eager")
    seen_ops = []

    def inspect(gm, example_inputs):
        seen_ops.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return backend(gm, example_inputs)

    f = torch.compile(lambda x: softmax(relu(x)) * 2, backend=inspect, fullgraph=True)
    x = torch.randn(4, 9)
    assert torch.allclose(f(x), torch.softmax(torch.relu(x), -1) * 2)
    assert any("cudal1.relu" in t for t in seen_ops) and any("cudal1.softmax" in t for t in seen_ops), seen_ops


def test_ops_must_live_in_the_cudal1_namespace():
    with pytest.raises(ValueError, match="cudal1 namespace"):
        zoo_custom_op("other::thing", mutates_args=())


def test_unknown_op_name_is_a_key_error():
    with pytest.raises(KeyError):
        call("no_such_op", torch.zeros(1))
