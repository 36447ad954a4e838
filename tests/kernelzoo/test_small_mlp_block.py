"""``blocks.small_mlp``: the fused Linear (+ ReLU) matrix-vector kernel against ``torch.addmm`` on shapes whose
feature counts are not multiples of its 8-wide output block or 512-wide input chunk (in Triton's interpreter on a
CPU-only machine), the dispatch of :func:`linear_act`, and :class:`MatVecMLP` against the same layers run eagerly."""

import pytest
import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.small_mlp import (
    MAX_ROWS,
    MatVecMLP,
    linear_act,
    linear_act_ref,
    linear_act_triton,
    mlp_layers,
)

DEV = "cuda" if torch.cuda.is_available() else "cpu"
gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("m,k,n", [(1, 37, 13), (3, 600, 9), (2, 512, 16)])
@pytest.mark.parametrize("relu", [True, False])
def test_kernel_matches_addmm(m, k, n, relu):
    gen = torch.Generator().manual_seed(m * 1000 + k + n)
    x = torch.randn(m, k, generator=gen).to(DEV)
    w = torch.randn(n, k, generator=gen).to(DEV)
    b = torch.randn(n, generator=gen).to(DEV)
    got = linear_act_triton(x, w, b, relu)
    want = linear_act_ref(x, w, b, relu)
    assert got.shape == (m, n) and got.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)
    if relu:
        assert (got >= 0).all() and (want == 0).any()  # the ReLU did something on these signed inputs


def test_kernel_reads_a_non_contiguous_input():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(20, 2, generator=gen).to(DEV).t()  # (2, 20), strided
    lin = nn.Linear(20, 11).to(DEV)
    torch.testing.assert_close(linear_act_triton(x, lin.weight, lin.bias, False),
                               torch.addmm(lin.bias, x, lin.weight.t()), rtol=1e-5, atol=1e-4)


def test_linear_act_on_cpu_is_the_reference():
    torch.manual_seed(2)
    lin = nn.Linear(30, 7)
    for m in (1, MAX_ROWS + 1):
        x = torch.randn(m, 30)
        with torch.no_grad():
            torch.testing.assert_close(linear_act(x, lin, True), torch.relu(lin(x)))
            torch.testing.assert_close(linear_act(x, lin, False), lin(x))


def test_mlp_layers_is_the_task_stack():
    net = mlp_layers(10, [6, 6, 3], 2)
    assert [type(m) for m in net] == [nn.Linear, nn.ReLU] * 3 + [nn.Linear]
    assert [(m.in_features, m.out_features) for m in net[::2]] == [(10, 6), (6, 6), (6, 3), (3, 2)]
    assert [(m.in_features, m.out_features) for m in mlp_layers(4, [], 5)] == [(4, 5)]


def test_mlp_has_the_task_layout_and_computes_the_layers():
    torch.manual_seed(3)
    mlp = MatVecMLP(12, [9, 5], 4).eval()
    assert [k for k, _ in mlp.named_parameters()] == [f"network.{i}.{p}" for i in (0, 2, 4) for p in ("weight", "bias")]
    assert [type(m) for m in mlp.network] == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]
    x = torch.randn(2, 12)
    with torch.no_grad():
        eager = mlp.network(x)
        torch.testing.assert_close(mlp(x), eager)
        for p in mlp.parameters():  # the live parameters are read on every call
            p.copy_(torch.randn_like(p))
        torch.testing.assert_close(mlp(x), mlp.network(x))


@pytest.mark.gpu
@gpu
def test_linear_act_on_gpu_uses_the_kernel_up_to_max_rows():
    torch.manual_seed(4)
    lin = nn.Linear(1000, 400).cuda()
    with torch.no_grad():
        for m in (1, MAX_ROWS, MAX_ROWS + 1):
            x = torch.randn(m, 1000, device="cuda")
            torch.testing.assert_close(linear_act(x, lin, True), torch.relu(lin(x)), rtol=1e-5, atol=1e-4)
