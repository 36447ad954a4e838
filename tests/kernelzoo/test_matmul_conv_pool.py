"""The level-1 matmul, conv and pooling ops of the zoo: each Triton kernel against its PyTorch reference in
Triton's interpreter (small blocks so several programs run, odd sizes, every family's config), the fp32
matmul's accuracy against an fp64 product, pooling edge cases (padding, count_include_pad, NaN and -inf for
max pooling), the torch.library registrations, the CPU fallbacks and the errors for bad input."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo import arch
from cudal1.kernelzoo.ops import (
    avg_pool2d,
    avg_pool3d,
    cudnn_conv,
    depthwise_conv2d,
    diag_matmul,
    matmul,
    matvec,
    max_pool2d,
)

from .helpers import rnd as random_normal

DEV = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: Triton's interpreter
FAMILIES = list(arch.CAPABILITY)


def rnd(shape, seed, scale=1.0):
    return random_normal(shape, seed, scale=scale)


def assert_close(got, want, rtol=1e-5, atol_rms=1e-5):
    """|got - want| <= atol_rms * rms(want) + rtol * |want|, NaNs in the same places; names the mismatches."""
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    got, want = got.double(), want.double()
    nan = torch.isnan(want)
    assert torch.equal(torch.isnan(got), nan), f"NaN mismatch at {(torch.isnan(got) != nan).nonzero()[:5].tolist()}"
    fin = want[~nan]
    atol = atol_rms * (fin.pow(2).mean().sqrt().item() if fin.numel() else 1.0)
    bad = ~nan & ((got - want).abs() > atol + rtol * want.abs())
    if bad.any():
        idx = bad.nonzero()[:5].tolist()
        raise AssertionError(f"{int(bad.sum())} mismatches, e.g. at {idx}: got {got[bad][:5].tolist()}, "
                             f"want {want[bad][:5].tolist()}")


def small(cfg, **over):
    return {**cfg, **over}


# ---------------------------------------------------------------------------------------------- matmul
MM_SMALL = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2}


@pytest.mark.parametrize("family, mkn", [*[(f, (37, 50, 29)) for f in FAMILIES], ("sm90", (64, 32, 48)),
                                         ("sm90", (1, 7, 3))])
def test_matmul_kernel(family, mkn):
    m, k, n = mkn
    a, b = rnd((m, k), 1), rnd((k, n), 2)
    cfg = small(matmul.CONFIGS[family], **MM_SMALL)
    assert_close(matmul.matmul_launch(a, b, cfg), (a.double() @ b.double()).float(), 1e-5, 1e-5)


def test_matmul_batched_and_shared_b():
    a, b, b2 = rnd((3, 20, 33), 3), rnd((3, 33, 17), 4), rnd((33, 17), 5)
    cfg = small(matmul.CONFIGS["sm90"], **MM_SMALL)
    assert_close(matmul.matmul_launch(a, b, cfg), torch.bmm(a.double(), b.double()).float())
    assert_close(matmul.matmul_launch(a, b2, cfg), (a.double() @ b2.double()).float())


@pytest.mark.parametrize("split", [2, 3])
def test_matmul_split_k_with_ragged_k(split):
    a, b = rnd((20, 75), 6), rnd((75, 40), 7)  # 75 = not a multiple of BLOCK_K: masked last step
    cfg = small(matmul.CONFIGS["sm90"], **MM_SMALL, SPLIT_K=split)
    assert_close(matmul.matmul_launch(a, b, cfg), (a.double() @ b.double()).float())


def test_matmul_non_contiguous_inputs():
    a, b = rnd((40, 24), 8).t(), rnd((18, 40), 9).t()  # (24, 40) @ (40, 18), both transposed views
    got = matmul.matmul_launch(a, b, small(matmul.CONFIGS["sm90"], **MM_SMALL))
    assert got.is_contiguous()
    assert_close(got, (a.double() @ b.double()).float())


def _rel_errors(c: torch.Tensor, ref: torch.Tensor) -> tuple[float, float]:
    rms = ref.pow(2).mean().sqrt()
    err = (c.double() - ref).abs()
    return (err.pow(2).mean().sqrt() / rms).item(), (err.max() / rms).item()


def test_matmul_is_as_accurate_as_torch_fp32():
    """fp32 FFMA accumulation: the kernel's error against an fp64 product stays within a small multiple of
    torch's fp32 error (RMS over the output; 2x in the interpreter, 4x on a GPU, where the H100 measured 2.5x
    against cuBLAS); a TF32-rounded product, which the kernel must not be, is >10x worse."""
    a, b = rnd((48, 1024), 10), rnd((1024, 40), 11)
    ref = a.double() @ b.double()
    cfg = small(matmul.CONFIGS["sm90"], BLOCK_M=16, BLOCK_N=64, BLOCK_K=64, GROUP_M=2)
    k_rms, _ = _rel_errors(matmul.matmul_launch(a, b, cfg), ref)
    t_rms, _ = _rel_errors(a @ b, ref)
    assert k_rms <= (4 if a.is_cuda else 2) * t_rms, (k_rms, t_rms)

    def tf32(x):  # operands rounded to TF32, as a TF32 tensor-core product sees them
        return ((x.contiguous().view(torch.int32) + 0x1000) & -8192).view(torch.float32)

    one_rms, _ = _rel_errors(tf32(a) @ tf32(b), ref)
    assert one_rms > 10 * t_rms, (one_rms, t_rms)


def test_matmul_rejects_bad_input():
    with pytest.raises(ValueError, match="do not match"):
        matmul.matmul_launch(rnd((4, 5), 0), rnd((6, 3), 0))
    with pytest.raises(TypeError, match="float32"):
        matmul.matmul_launch(rnd((4, 5), 0).double(), rnd((5, 3), 0).double())
    with pytest.raises(ValueError, match="takes a"):
        matmul.matmul_launch(rnd((5,), 0), rnd((5, 3), 0))


# ------------------------------------------------------------------------------------ diag_matmul, matvec
@pytest.mark.parametrize("family, shape", [*[(f, (37, 1000)) for f in FAMILIES], ("sm90", (5, 3)), ("sm90", (1, 257))])
def test_diag_matmul_kernel(family, shape):
    a, b = rnd(shape[:1], 12, 2.0), rnd(shape, 13)
    got = diag_matmul.diag_matmul_launch(a, b, small(diag_matmul.CONFIGS[family], BLOCK=128))
    assert torch.equal(got, a[:, None] * b)
    assert_close(got, diag_matmul.diag_matmul_ref(a, b))


def test_diag_matmul_strides_over_column_blocks(monkeypatch):
    monkeypatch.setattr(diag_matmul, "MAX_COL_PROGRAMS", 2)  # 8 column blocks on 2 programs per row
    a, b = rnd((3,), 14), rnd((3, 1000), 15)
    assert torch.equal(diag_matmul.diag_matmul_launch(a, b, {"BLOCK": 128, "num_warps": 4}), a[:, None] * b)


@pytest.mark.parametrize("family, mk, column", [*[(f, (37, 1000), True) for f in FAMILIES],
                                                 ("sm90", (16, 512), False), ("sm90", (3, 1), True)])
def test_matvec_kernel(family, mk, column):
    a = rnd(mk, 16)
    x = rnd((mk[1], 1) if column else (mk[1],), 17)
    cfg = small(matvec.CONFIGS[family], BLOCK_M=4, BLOCK_K=256)
    got = matvec.matvec_launch(a, x, cfg)
    assert_close(got, (a.double() @ x.double()).float())


def test_matvec_rejects_bad_input():
    with pytest.raises(ValueError, match="matvec takes"):
        matvec.matvec_launch(rnd((4, 5), 0), rnd((5, 2), 0))
    with pytest.raises(ValueError, match="matvec takes"):
        matvec.matvec_launch(rnd((4, 5), 0), rnd((4,), 0))


# ------------------------------------------------------------------------------------------------ pooling
POOL_SMALL = {"BLOCK_H": 4, "BLOCK_W": 8}


@pytest.mark.parametrize("family, k, s, p, count_pad", [
    *[(f, 2, 2, 0, True) for f in FAMILIES], ("sm90", 3, 2, 1, True), ("sm90", 3, 2, 1, False),
    ("sm90", (3, 2), (1, 2), (1, 0), True), ("sm90", 3, 1, 1, False)])
def test_avg_pool2d_kernel(family, k, s, p, count_pad):
    x = rnd((2, 3, 13, 19), 20)
    got = avg_pool2d.avg_pool2d_launch(x, k, s, p, count_pad, small(avg_pool2d.CONFIGS[family], **POOL_SMALL))
    assert_close(got, F.avg_pool2d(x, k, s, p, count_include_pad=count_pad))


@pytest.mark.parametrize("family, k, s, p, count_pad", [
    *[(f, 3, 2, 1, True) for f in FAMILIES], ("sm90", 2, 2, 0, True), ("sm90", 3, 2, 1, False),
    ("sm90", (1, 3, 2), (1, 2, 2), (0, 1, 1), True)])
def test_avg_pool3d_kernel(family, k, s, p, count_pad):
    x = rnd((1, 2, 7, 10, 13), 21)
    got = avg_pool3d.avg_pool3d_launch(x, k, s, p, count_pad, small(avg_pool3d.CONFIGS[family], **POOL_SMALL))
    assert_close(got, F.avg_pool3d(x, k, s, p, count_include_pad=count_pad))


@pytest.mark.parametrize("family, k, s, p", [*[(f, 3, 2, 1) for f in FAMILIES], ("sm90", 2, 2, 0),
                                             ("sm90", 3, 1, 1), ("sm90", (2, 3), (2, 1), (1, 1))])
def test_max_pool2d_kernel(family, k, s, p):
    x = rnd((2, 3, 13, 19), 22)
    got = max_pool2d.max_pool2d_launch(x, k, s, p, small(max_pool2d.CONFIGS[family], **POOL_SMALL))
    assert torch.equal(got, F.max_pool2d(x, k, s, p))


def test_max_pool2d_nan_and_infinities_as_torch():
    x = rnd((1, 2, 9, 11), 23)
    x[0, 0, 0, 0] = float("nan")       # corner window (with padding)
    x[0, 0, 4, 5] = float("nan")       # interior: shared by overlapping windows
    x[0, 1, :3, :3] = float("-inf")     # a whole window of -inf
    x[0, 1, 6, 6] = float("inf")
    got = max_pool2d.max_pool2d_launch(x, 3, 2, 1, {**POOL_SMALL, "num_warps": 1})
    want = F.max_pool2d(x, 3, 2, 1)
    assert torch.isnan(want).sum() >= 2
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.equal(got.nan_to_num(0.0), want.nan_to_num(0.0))  # -inf and +inf kept


def test_pooling_3d_input_and_bad_arguments():
    x = rnd((3, 10, 12), 24)  # (C, H, W) without batch
    assert_close(avg_pool2d.avg_pool2d_launch(x, 2, None, 0, True, POOL_SMALL | {"num_warps": 1}),
                 F.avg_pool2d(x, 2))
    with pytest.raises(ValueError, match="padding at most half"):
        max_pool2d.max_pool2d_launch(x, 2, 2, 2, POOL_SMALL | {"num_warps": 1})
    with pytest.raises(ValueError, match="spatial"):
        avg_pool3d.avg_pool3d_launch(x, 2)
    with pytest.raises(ValueError, match="too small"):
        max_pool2d.max_pool2d_launch(rnd((1, 1, 2, 2), 0), 3, 1, 0)


# -------------------------------------------------------------------------------------- depthwise conv2d
@pytest.mark.parametrize("family, k, s, p, bias", [*[(f, 3, 1, 1, True) for f in FAMILIES], ("sm90", 5, 2, 2, False),
                                                   ("sm90", 3, 1, 0, True), ("sm90", 7, 1, 3, True)])
def test_depthwise_conv2d_kernel(family, k, s, p, bias):
    x, w = rnd((1, 3, 11, 21), 30), rnd((3, 1, k, k), 31)
    b = rnd((3,), 32) if bias else None
    cfg = small(depthwise_conv2d.CONFIGS[family], BLOCK_H=8, BLOCK_W=16)
    got = depthwise_conv2d.depthwise_conv2d_launch(x, w, b, s, p, cfg)
    assert_close(got, F.conv2d(x.double(), w.double(), None if b is None else b.double(), s, p, 1, 3).float())


def test_depthwise_conv2d_rejects_bad_input():
    with pytest.raises(ValueError, match="weight"):
        depthwise_conv2d.depthwise_conv2d_launch(rnd((1, 3, 8, 8), 0), rnd((3, 3, 3, 3), 0), None, 1, 1)
    with pytest.raises(ValueError, match="bias"):
        depthwise_conv2d.depthwise_conv2d_launch(rnd((1, 3, 8, 8), 0), rnd((3, 1, 3, 3), 0), rnd((4,), 0), 1, 1)


# --------------------------------------------------------------------- registrations, CPU paths, cuDNN conv
def test_public_functions_cpu_fallback():
    a, b, x = torch.randn(9, 7), torch.randn(7, 5), torch.randn(2, 3, 10, 12)
    assert torch.allclose(matmul.matmul(a, b), a @ b)
    a3, b3 = torch.randn(2, 9, 7), torch.randn(2, 7, 5)
    assert torch.allclose(matmul.matmul(a3, b3), torch.bmm(a3, b3))
    assert torch.allclose(matvec.matvec(a, b[:, 0]), a @ b[:, 0])
    v = torch.randn(9)
    assert torch.allclose(diag_matmul.diag_matmul(v, a), torch.diag(v) @ a)
    assert torch.equal(avg_pool2d.avg_pool2d(x, 2, 2), F.avg_pool2d(x, 2, 2))
    assert torch.equal(max_pool2d.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 3, 2, 1))
    x3 = torch.randn(1, 2, 6, 8, 8)
    assert torch.equal(avg_pool3d.avg_pool3d(x3, 3, 2, 1), F.avg_pool3d(x3, 3, 2, 1))
    w, bias = torch.randn(3, 1, 3, 3), torch.randn(3)
    assert torch.allclose(depthwise_conv2d.depthwise_conv2d(x, w, bias, 1, 1), F.conv2d(x, w, bias, 1, 1, 1, 3))


@pytest.mark.parametrize("op, args", [
    ("matmul", (torch.randn(5, 7), torch.randn(7, 3))),
    ("matmul", (torch.randn(2, 5, 7), torch.randn(2, 7, 3))),
    ("matvec", (torch.randn(5, 7), torch.randn(7, 1))),
    ("diag_matmul", (torch.randn(5), torch.randn(5, 6))),
    ("avg_pool2d", (torch.randn(2, 3, 8, 9), [2, 2], [2, 2], [0, 0], True)),
    ("avg_pool3d", (torch.randn(1, 2, 5, 8, 9), [3, 3, 3], [2, 2, 2], [1, 1, 1], True)),
    ("max_pool2d", (torch.randn(2, 3, 8, 9), [3, 3], [2, 2], [1, 1])),
    ("depthwise_conv2d", (torch.randn(2, 3, 8, 9), torch.randn(3, 1, 3, 3), torch.randn(3), 1, 1)),
])
def test_torch_library_registration(op, args):
    torch.library.opcheck(getattr(torch.ops.cudal1, op), args)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_cudnn_conv_wrappers_match_torch(nd):
    x = torch.randn(2, 4, *([6] * nd))
    w, wt, b = torch.randn(5, 4, *([3] * nd)), torch.randn(4, 5, *([4] * nd)), torch.randn(5)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    conv_t = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
    assert torch.equal(cudnn_conv.conv(x, w, b, 1, 1), conv(x, w, b, 1, 1))
    assert torch.equal(cudnn_conv.conv_transpose(x, wt, b, 2, 1), conv_t(x, wt, b, 2, 1))
    with pytest.raises(ValueError, match="spatial dims"):
        cudnn_conv.conv(torch.randn(4), w)
