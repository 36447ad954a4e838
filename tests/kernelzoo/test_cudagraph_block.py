"""``blocks.cudagraph.CUDAGraphForward``: eager where no graph can serve (CPU, gradients), and on a GPU the same
results as eager on fresh inputs, outputs that no later call overwrites, one capture per input signature."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward, _signature


class Counting:
    """``x @ w + 1`` with a relu, counting its calls."""

    def __init__(self, w: torch.Tensor) -> None:
        self.w, self.calls = w, 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return torch.relu(x @ self.w + 1.0)


def test_cpu_tensors_run_eagerly_every_call():
    fn = Counting(torch.randn(8, 4))
    g = CUDAGraphForward(fn)
    for _ in range(3):
        x = torch.randn(5, 8)
        torch.testing.assert_close(g(x), torch.relu(x @ fn.w + 1.0))
    assert fn.calls == 3 and not g._graphs


def test_signature_rules():
    assert _signature([torch.randn(2)]) is None  # a CPU tensor: no graph
    assert _signature([object()]) is None  # an argument the block cannot copy
    assert _signature([2, 0.5, None, True]) == (("value", 2), ("value", 0.5), ("value", None), ("value", True))
    with pytest.raises(ValueError, match="warmup"):
        CUDAGraphForward(lambda x: x, warmup=0)


gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.gpu
@gpu
def test_graph_matches_eager_on_fresh_inputs_and_outputs_are_not_overwritten():
    torch.manual_seed(0)
    fn = Counting(torch.randn(64, 32, device="cuda"))
    g = CUDAGraphForward(fn, warmup=2)
    xs = [torch.randn(16, 64, device="cuda") for _ in range(4)]
    with torch.no_grad():
        outs = [g(x) for x in xs]  # all kept: a handed-out graph buffer would hold the last call's values
        assert fn.calls == 3  # two warm-up calls and the capture, then replays only
        for x, y in zip(xs, outs, strict=True):
            torch.testing.assert_close(y, torch.relu(x @ fn.w + 1.0))
        assert len({y.data_ptr() for y in outs}) == len(outs)
        fn.w.copy_(torch.randn_like(fn.w))  # parameters updated in place are read by the next replay
        torch.testing.assert_close(g(xs[0]), torch.relu(xs[0] @ fn.w + 1.0))
        g(torch.randn(8, 64, device="cuda"))  # a new signature: captured again
        assert fn.calls == 6 and len(g._graphs) == 2


@pytest.mark.gpu
@gpu
def test_gradients_enabled_run_eagerly():
    w = torch.randn(32, 8, device="cuda", requires_grad=True)
    g = CUDAGraphForward(lambda x: (x @ w).sum())
    x = torch.randn(4, 32, device="cuda")
    assert g(x).requires_grad and not g._graphs  # autograd wanted: no graph
    with torch.no_grad():
        torch.testing.assert_close(g(x), (x @ w).sum())
    assert len(g._graphs) == 1
