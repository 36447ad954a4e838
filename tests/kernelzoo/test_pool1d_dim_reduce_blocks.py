"""``blocks.pool1d`` (1-D max and average pooling) and ``blocks.dim_reduce`` (max / min over one dim) against
PyTorch: in Triton's interpreter on CPU at small sizes, on the GPU when there is one (also at the sizes of the
KernelBench tasks 41, 44, 49 and 53). Geometries cover stride, padding, dilation, odd lengths, ``count_include_pad``
both ways and tiles smaller than the problem; NaN must come out where PyTorch's max pooling and max / min over a
dim give NaN; the reductions run over every dim of a 3-D tensor, of a 1-D and a 4-D one, and non-contiguous input."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudal1.harness.compare import compare_outputs
from cudal1.kernelzoo.blocks import dim_reduce, pool1d, small_conv

NO_INTERPRETER = pytest.mark.skipif(not small_conv.interpreted(), reason="CPU launches need TRITON_INTERPRET=1")
NO_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = [pytest.param("cpu", marks=NO_INTERPRETER), pytest.param("cuda", marks=[pytest.mark.gpu, NO_GPU])]


def randn(*shape: int, seed: int, device: str) -> torch.Tensor:
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return torch.randn(*shape, generator=g).to(device)


def check(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    cmp = compare_outputs(got.cpu(), want.cpu())
    assert cmp.ok, f"{what}: {cmp.reason}"


def check_nan(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    """NaN exactly where ``want`` has NaN, the rest equal (max and min are exact)."""
    assert want.isnan().any(), f"{what}: the reference has no NaN (the test puts none in a window?)"
    bad = got.isnan() != want.isnan()
    assert not bad.any(), f"{what}: NaN differs at {bad.nonzero().tolist()[:8]}"
    keep = ~want.isnan()
    assert torch.equal(got[keep].cpu(), want[keep].cpu()), f"{what}: values differ outside the NaN"


# ------------------------------------------------------------------------------------------------------- pooling

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,stride,padding,dilation,length", [
    (4, 2, 2, 3, 29), (3, 1, 1, 1, 17), (2, None, 0, 1, 16), (5, 3, 2, 2, 31), (1, 1, 0, 1, 7)])
def test_max_pool1d(k, stride, padding, dilation, length, device):
    x = randn(2, 3, length, seed=1, device=device)
    what = f"max_pool1d k{k} s{stride} p{padding} d{dilation} L{length}"
    check(pool1d.max_pool1d(x, k, stride, padding, dilation), F.max_pool1d(x, k, stride, padding, dilation), what)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("k,stride,padding,length", [(4, 2, 1, 29), (3, 1, 1, 17), (5, None, 2, 23), (2, 3, 1, 8)])
def test_avg_pool1d(k, stride, padding, length, count_include_pad, device):
    x = randn(2, 3, length, seed=2, device=device)
    what = f"avg_pool1d k{k} s{stride} p{padding} L{length} count_include_pad={count_include_pad}"
    check(pool1d.avg_pool1d(x, k, stride, padding, count_include_pad),
          F.avg_pool1d(x, k, stride, padding, False, count_include_pad), what)


@pytest.mark.parametrize("device", DEVICES)
def test_pool_tiles_smaller_than_the_problem(device):
    """Several programs along both rows and outputs, with partial tiles at both ends, and non-contiguous input."""
    x = randn(3, 23, 5, seed=3, device=device).transpose(1, 2)  # (3, 5, 23), not contiguous
    check(pool1d.max_pool1d(x, 4, 2, 2, 3, tile=(4, 4, 1)), F.max_pool1d(x, 4, 2, 2, 3), "max_pool1d, 4 x 4 tiles")
    check(pool1d.avg_pool1d(x, 4, 2, 1, tile=(4, 4, 1)), F.avg_pool1d(x, 4, 2, 1), "avg_pool1d, 4 x 4 tiles")


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool1d_propagates_nan(device):
    x = randn(2, 3, 29, seed=4, device=device)
    x[0, 1, 7] = float("nan")
    x[1, 2, 0] = float("nan")  # in the first window, beside the padding
    check_nan(pool1d.max_pool1d(x, 4, 2, 2, 3), F.max_pool1d(x, 4, 2, 2, 3), "max_pool1d with NaN")


def test_pool_falls_back_where_the_kernel_does_not_apply():
    """ceil_mode, unbatched and fp64 input give PyTorch's results; geometry PyTorch refuses raises PyTorch's error."""
    x = randn(2, 3, 20, seed=5, device="cpu")
    torch.testing.assert_close(pool1d.max_pool1d(x, 4, 3, 1, 2, ceil_mode=True),
                               F.max_pool1d(x, 4, 3, 1, 2, ceil_mode=True))
    torch.testing.assert_close(pool1d.avg_pool1d(x, 3, 2, 1, ceil_mode=True), F.avg_pool1d(x, 3, 2, 1, True))
    torch.testing.assert_close(pool1d.max_pool1d(x[0], 4, 2, 2, 3), F.max_pool1d(x[0], 4, 2, 2, 3))
    torch.testing.assert_close(pool1d.avg_pool1d(x.double(), 4, 2, 1), F.avg_pool1d(x.double(), 4, 2, 1))
    with pytest.raises(RuntimeError, match="half of kernel size"):
        pool1d.max_pool1d(x, 4, 2, 3)
    with pytest.raises(RuntimeError, match="half of effective kernel size"):
        pool1d.avg_pool1d(x, 4, 2, 3)


# ---------------------------------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_amax_amin_over_each_dim(dim, device):
    x = randn(3, 21, 13, seed=6, device=device)
    check(dim_reduce.amax_dim(x, dim), torch.max(x, dim)[0], f"amax dim {dim}")
    check(dim_reduce.amin_dim(x, dim), torch.min(x, dim)[0], f"amin dim {dim}")


@pytest.mark.parametrize("device", DEVICES)
def test_reduce_other_ranks_tiles_and_layouts(device):
    x1 = randn(45, seed=7, device=device)
    check(dim_reduce.amax_dim(x1, 0), torch.max(x1, 0)[0], "amax of a 1-D tensor")
    x4 = randn(2, 3, 9, 5, seed=8, device=device)
    check(dim_reduce.amin_dim(x4, 2), torch.min(x4, 2)[0], "amin dim 2 of a 4-D tensor")
    x = randn(4, 37, 21, seed=9, device=device)  # R not a multiple of BR, INNER not of BI: masked rows and columns
    check(dim_reduce.amax_dim(x, 1, tile=(8, 16, 1)), torch.max(x, 1)[0], "amax, 8 x 16 tiles")
    xt = x.transpose(1, 2)  # not contiguous
    check(dim_reduce.amin_dim(xt, 1), torch.min(xt, 1)[0], "amin of a transposed tensor")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_reductions_propagate_nan(dim, device):
    x = randn(2, 21, 10, seed=10, device=device)
    x[1, 4, 7] = float("nan")
    x[0, 20, 0] = float("nan")  # last row of the reduced dim (a partial BR tile)
    check_nan(dim_reduce.amax_dim(x, dim), torch.max(x, dim)[0], f"amax dim {dim} with NaN")
    check_nan(dim_reduce.amin_dim(x, dim), torch.min(x, dim)[0], f"amin dim {dim} with NaN")


def test_reduce_falls_back_where_the_kernel_does_not_apply():
    """fp64, a 0-d tensor and an empty reduced dim go to torch (which raises for the last); an empty output is
    empty."""
    x = randn(3, 4, 5, seed=11, device="cpu").double()
    torch.testing.assert_close(dim_reduce.amax_dim(x, 1), torch.max(x, 1)[0])
    s = torch.tensor(2.5)
    torch.testing.assert_close(dim_reduce.amin_dim(s, 0), torch.min(s, 0)[0])
    with pytest.raises((RuntimeError, IndexError)):
        dim_reduce.amax_dim(torch.empty(3, 0, 4), 1)
    with pytest.raises((RuntimeError, IndexError)):
        dim_reduce.amax_dim(torch.randn(3, 4), 2)
    assert dim_reduce.amin_dim(torch.empty(0, 4, 5), 1).shape == (0, 5)


# ------------------------------------------------------------------------------------------- KernelBench sizes

@pytest.mark.gpu
@NO_GPU
@pytest.mark.parametrize("case", ["41", "44", "49", "53"])
def test_kernelbench_sizes_on_the_gpu(case):
    """The tasks' own sizes and geometries (fp32)."""
    dev = "cuda"
    if case == "41":
        x = randn(16, 64, 128, seed=12, device=dev)
        check(pool1d.max_pool1d(x, 4, 2, 2, 3), F.max_pool1d(x, 4, 2, 2, 3), case)
    elif case == "44":
        x = randn(16, 32, 128, seed=13, device=dev)
        check(pool1d.avg_pool1d(x, 4, 2, 1), F.avg_pool1d(x, 4, 2, 1), case)
    else:
        x = randn(16, 256, 256, seed=14, device=dev)
        if case == "49":
            check(dim_reduce.amax_dim(x, 1), torch.max(x, 1)[0], case)
        else:
            check(dim_reduce.amin_dim(x, 1), torch.min(x, 1)[0], case)


def test_tiles():
    """The launch shapes at KernelBench's sizes (see the modules' docstrings): 41 256 programs, 44 128, 49 / 53 128."""
    assert pool1d.pool_tile(16 * 64, 62) == (4, 64, 2)
    assert pool1d.pool_tile(16 * 32, 64) == (4, 64, 2)
    assert dim_reduce.reduce_tile(16, 256, 256) == (64, 32, 4)
    assert dim_reduce.reduce_tile(1, 16, 65536) == (16, 128, 4)  # dim 0
    assert dim_reduce.reduce_tile(4096, 256, 1) == (256, 1, 4)  # last dim
