"""The digest of an output costs the same whatever its memory layout (small outputs): the parent's clock check
charges, and past its allowance rejects, any work in a candidate's clocked window beyond the reference's, so a
digest that copies a transposed view first made a legitimate candidate pay for the harness's own copy (rejected
``timing_disagrees`` on an H100: benchmarks/results/2026-12-05-learning-grpo-h100.md)."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from cudal1.harness.digest import digest_tensors


class _Ops(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func.overloadpacket.__name__))
        return func(*args, **(kwargs or {}))


def _ops(ts: list[torch.Tensor]) -> tuple[list[str], list]:
    with _Ops() as mode:
        out = digest_tensors(ts, 12345, [None] * len(ts))
    return mode.ops, out


def test_a_transposed_output_is_digested_with_the_same_kernels_and_the_same_digest():
    torch.manual_seed(0)
    col = torch.randn(96, 64)  # the candidate's layout: a transposed view of a [96, 64] result
    view = col.t()
    assert not view.is_contiguous()
    dense = view.contiguous()  # the reference's layout, the same values
    ops_view, d_view = _ops([view, view * 2])
    ops_dense, d_dense = _ops([dense, dense * 2])
    assert ops_view == ops_dense, (ops_view, ops_dense)
    for a, b in zip(d_view, d_dense, strict=True):
        assert (a.d1, a.d2, a.a1, a.a2) == (b.d1, b.d2, b.a1, b.a2)


def test_outputs_of_one_size_and_different_shapes_are_digested_as_before():
    # stacking in each output's own shape: outputs of one element count but different shapes go in separate blocks
    torch.manual_seed(1)
    a, b, c = torch.randn(6, 4), torch.randn(4, 6), torch.randn(24).to(torch.float16)
    together = digest_tensors([a, b, c, torch.tensor(3.0)], 7, [None] * 4)
    alone = [digest_tensors([t], 7, [None])[0] for t in (a, b, c, torch.tensor(3.0))]
    for x, y in zip(together, alone, strict=True):
        assert abs(x.d1 - y.d1) <= 1e-9 * max(1.0, abs(y.d1)) and abs(x.d2 - y.d2) <= 1e-9 * max(1.0, abs(y.d2))
