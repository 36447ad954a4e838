"""``blocks.pool_cuda`` (direct, plane and rows pooling kernels), ``blocks.streaming_cuda`` (Frobenius
normalisation, eval-mode batch norm) and ``cuda_jit``'s driver launch. Without a GPU: every source compiles with nvcc for sm80 / sm86 / sm89 / sm90,
shapes and arguments are validated, the CPU paths are PyTorch's. On a GPU: each kernel against PyTorch (values
bitwise where the arithmetic is the same, NaN propagation, padding, ceil mode, the average's divisors) and the
one-launch reduction's counter left at zero."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo import cuda_jit
from cudal1.kernelzoo.blocks.pool_cuda import avg_pool, max_pool, pool_cuda, pool_out_size, pool_source
from cudal1.kernelzoo.blocks.streaming_cuda import (
    batch_norm_eval,
    bn_source,
    frobenius_normalize,
    norm_source,
)

from .test_cuda_sources import find_nvcc

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

#: is_max, spatial (D, H, W), kernel, stride, padding, dilation, ceil, include_pad, divisor, planes
SOURCES = {
    "max3d_task43": (True, (64, 64, 64), (3, 3, 3), (2, 2, 2), (1, 1, 1), (3, 3, 3), False, True, 0, False),
    "max3d_task43_planes": (True, (64, 64, 64), (3, 3, 3), (2, 2, 2), (1, 1, 1), (3, 3, 3), False, True, 0, True),
    "avg2d_task45": (False, (1, 256, 256), (1, 3, 3), (1, 3, 3), (0, 0, 0), (1, 1, 1), False, True, 0, False),
    "avg2d_ceil_nopad_count": (False, (1, 25, 26), (1, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), True, False, 0, False),
    "avg3d_divisor": (False, (5, 6, 7), (2, 2, 3), (1, 2, 2), (1, 1, 1), (1, 1, 1), False, True, 5, False),
    "avg2d_task45_rows": (False, (1, 256, 256), (1, 3, 3), (1, 3, 3), (0, 0, 0), (1, 1, 1), False, True, 0, False,
                          True),
    "avg2d_overlap_rows_divisor": (False, (1, 33, 40), (1, 3, 2), (1, 2, 1), (0, 0, 0), (1, 1, 1), False, True, 7,
                                   False, True),
}


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    sources = [pool_source(*case)[0] for case in SOURCES.values()] + [norm_source(4), bn_source(2), bn_source(4)]
    for src in sources:
        cu = tmp_path / f"{src.name}.cu"
        cu.write_text(src.code)
        r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-o", str(tmp_path / "k.cubin"), str(cu)],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{src.name}: {r.stderr[-2000:]}"


@pytest.mark.parametrize("size,k,s,p,d,ceil", [(64, 3, 2, 1, 3, False), (256, 3, 3, 0, 1, False),
                                               (25, 3, 2, 1, 1, True), (10, 2, 3, 1, 1, True), (7, 3, 2, 0, 2, True)])
def test_output_size_matches_pytorch(size, k, s, p, d, ceil):
    expect = F.max_pool1d(torch.zeros(1, 1, size), k, s, p, d, ceil).shape[-1]
    assert pool_out_size(size, k, s, p, d, ceil) == expect


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="empty"):
        pool_source(True, (1, 2, 2), (1, 5, 5), (1, 1, 1), (0, 0, 0), (1, 1, 1), False)
    with pytest.raises(ValueError, match="half"):
        pool_source(True, (1, 9, 9), (1, 3, 3), (1, 1, 1), (0, 2, 2), (1, 1, 1), False)
    with pytest.raises(ValueError, match="plane kernel"):
        pool_source(False, (1, 8, 8), (1, 2, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1), False, planes=True)
    with pytest.raises(ValueError, match="rows kernel"):  # padding
        pool_source(False, (1, 8, 8), (1, 2, 2), (1, 2, 2), (0, 1, 1), (1, 1, 1), False, rows=True)
    with pytest.raises(ValueError, match="rows kernel"):  # W % 4 != 0
        pool_source(False, (1, 8, 10), (1, 2, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1), False, rows=True)
    with pytest.raises(ValueError, match="rows kernel"):  # max pooling
        pool_source(True, (1, 8, 8), (1, 2, 2), (1, 2, 2), (0, 0, 0), (1, 1, 1), False, rows=True)
    with pytest.raises(ValueError, match="method"):
        pool_cuda(torch.zeros(1, 1, 4, 4), False, 2, method="tiles")
    with pytest.raises(ValueError, match="float32 CUDA"):
        pool_cuda(torch.zeros(1, 1, 4, 4), True, 2)
    with pytest.raises(ValueError, match="signature"):
        cuda_jit.DirectKernel(norm_source(4), "sumsq_norm", 0, "pxq")


def test_cpu_paths_are_pytorch():
    g = torch.Generator().manual_seed(0)
    x3 = torch.randn(2, 3, 9, 10, 11, generator=g)
    x2 = torch.randn(2, 3, 10, 11, generator=g)
    torch.testing.assert_close(max_pool(x3, 3, 2, 1, 2, method="planes"), F.max_pool3d(x3, 3, 2, 1, 2))
    torch.testing.assert_close(max_pool(x2, 2, 2, 1, 3), F.max_pool2d(x2, 2, 2, 1, 3))
    torch.testing.assert_close(avg_pool(x2, 3, 2, 1, True, False), F.avg_pool2d(x2, 3, 2, 1, True, False))
    torch.testing.assert_close(frobenius_normalize(x2), x2 / torch.norm(x2, p="fro"))
    torch.testing.assert_close(avg_pool(x2, 3, method="rows"), F.avg_pool2d(x2, 3))
    stats = [torch.randn(3, generator=g), torch.rand(3, generator=g) + 0.5, torch.randn(3, generator=g),
             torch.randn(3, generator=g)]
    torch.testing.assert_close(batch_norm_eval(x2, *stats, 1e-5),
                               F.batch_norm(x2, stats[0], stats[1], stats[2], stats[3], False, 0.0, 1e-5))


def test_rows_per_block_fills_the_staged_rows():
    from cudal1.kernelzoo.blocks.pool_cuda import ROWS_FLOAT4, rows_per_block

    assert rows_per_block(85, 256) == ROWS_FLOAT4 * 4 // 256 == 8  # task 45: 8 output rows a block
    assert rows_per_block(3, 256) == 3  # never more than the output has
    assert rows_per_block(10, 4096) == 1


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("method", ["direct", "planes"])
@pytest.mark.parametrize("shape,k,s,p,d,ceil", [
    ((2, 3, 13, 12, 16), 3, 2, 1, 3, False),  # task 43's window on a small input (W % 4 == 0: planes runs)
    ((2, 2, 9, 10, 11), (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 3), True),  # W = 11: planes falls back to direct
    ((3, 4, 17, 20), 2, 2, 1, 3, False),  # 2-D (task 42's window)
])
def test_max_pool_matches_pytorch(method, shape, k, s, p, d, ceil):
    pytest.importorskip("cupy")
    x = torch.randn(shape, device="cuda")
    fn = F.max_pool2d if x.dim() == 4 else F.max_pool3d
    _, where = fn(x, k, s, p, d, ceil, return_indices=True)  # inputs some window takes (index within the plane)
    plane = x.view(x.shape[0] * x.shape[1], -1)
    plane[0, where.view(where.shape[0] * where.shape[1], -1)[0, 0]] = float("nan")
    plane[1, where.view(where.shape[0] * where.shape[1], -1)[1, -1]] = float("inf")
    ref = fn(x, k, s, p, d, ceil)
    out = pool_cuda(x, True, k, s, p, d, ceil, method=method)
    assert torch.equal(out.isnan(), ref.isnan()) and ref.isnan().any()
    torch.testing.assert_close(out, ref, rtol=0, atol=0, equal_nan=True)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("shape,k,s,p,ceil,include_pad,divisor", [
    ((2, 3, 32, 29), 3, None, 0, False, True, None),  # task 45's window
    ((2, 3, 25, 26), 3, 2, 1, True, False, None),
    ((2, 3, 25, 26), 3, 2, 1, True, True, None),
    ((1, 2, 5, 6, 7), (2, 2, 3), (1, 2, 2), 1, False, True, 5),
])
def test_avg_pool_matches_pytorch(shape, k, s, p, ceil, include_pad, divisor):
    pytest.importorskip("cupy")
    x = torch.randn(shape, device="cuda")
    fn = F.avg_pool2d if x.dim() == 4 else F.avg_pool3d
    ref = fn(x, k, s, p, ceil, include_pad, divisor)
    torch.testing.assert_close(avg_pool(x, k, s, p, ceil, include_pad, divisor), ref, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("numel", [4096, 1 << 22, 3 * (1 << 20) + 4])
def test_frobenius_normalize_matches_pytorch_and_resets_its_counter(numel):
    pytest.importorskip("cupy")
    from cudal1.kernelzoo.blocks import streaming_cuda

    x = torch.randn(numel, device="cuda")
    ref = x / torch.norm(x, p="fro")
    for _ in range(3):  # the counter must be back at zero for the next call
        torch.testing.assert_close(frobenius_normalize(x), ref, rtol=1e-5, atol=1e-7)
    _, counter = streaming_cuda._SCRATCH.get(x)
    assert counter.item() == 0


@pytest.mark.gpu
@gpu
def test_cupy_launch_path_gives_the_same_result(monkeypatch):
    pytest.importorskip("cupy")
    x = torch.randn(2, 3, 16, 16, 16, device="cuda")
    direct = pool_cuda(x, True, 3, 2, 1, 2)
    monkeypatch.setenv(cuda_jit.LAUNCH_ENV, "cupy")
    assert torch.equal(pool_cuda(x, True, 3, 2, 1, 2), direct)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("shape,k,s,divisor", [
    ((2, 3, 256, 256), 3, None, None),  # task 45's window and row length (8 rows a block, a partial last block)
    ((2, 3, 33, 40), (3, 2), (2, 1), None),  # overlapping windows, odd height
    ((1, 2, 20, 24), 2, 2, 3),  # divisor_override
    ((1, 2, 7, 2048), 3, 3, None),  # one output row a block
])
def test_avg_pool_rows_matches_pytorch(shape, k, s, divisor):
    pytest.importorskip("cupy")
    x = torch.randn(shape, device="cuda")
    ref = F.avg_pool2d(x, k, s, 0, False, True, divisor)
    out = avg_pool(x, k, s, 0, False, True, divisor, method="rows")
    torch.testing.assert_close(out, ref, rtol=1e-6, atol=1e-6)  # column sums first: not PyTorch's order
    x[0, 0, 1, 1] = float("nan")  # inside the first window of every case
    assert avg_pool(x, k, s, 0, False, True, divisor, method="rows")[0, 0, 0, 0].isnan()


@pytest.mark.gpu
@gpu
def test_avg_pool_rows_falls_back_where_it_does_not_fit():
    pytest.importorskip("cupy")
    x = torch.randn(2, 3, 25, 26, device="cuda")  # W % 4 != 0, and padding: the direct kernel
    ref = F.avg_pool2d(x, 3, 2, 1, True, False)
    torch.testing.assert_close(avg_pool(x, 3, 2, 1, True, False, method="rows"), ref, rtol=1e-6, atol=1e-6)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("shape,unroll", [((2, 3, 64, 64), 4), ((4, 5, 32, 32), 1), ((2, 3, 10, 10), 4)])
def test_batch_norm_eval_matches_pytorch(shape, unroll):
    """(2, 3, 64, 64): the kernel (4096-value planes); (4, 5, 32, 32) with unroll 1; (2, 3, 10, 10): PyTorch."""
    pytest.importorskip("cupy")
    c = shape[1]
    x = torch.randn(shape, device="cuda") * 3 + 1
    mean, var = torch.randn(c, device="cuda"), torch.rand(c, device="cuda") + 0.1
    w, b = torch.randn(c, device="cuda"), torch.randn(c, device="cuda")
    ref = F.batch_norm(x, mean, var, w, b, False, 0.0, 1e-5)
    torch.testing.assert_close(batch_norm_eval(x, mean, var, w, b, 1e-5, unroll), ref, rtol=1e-5, atol=1e-5)
    var[1] = 4.0  # parameters are read at each call, never cached
    ref2 = F.batch_norm(x, mean, var, w, b, False, 0.0, 1e-5)
    torch.testing.assert_close(batch_norm_eval(x, mean, var, w, b, 1e-5, unroll), ref2, rtol=1e-5, atol=1e-5)
