"""``blocks.conv_vec_cuda``: the 2-D direct CUDA C convolution whose lanes own 4 consecutive output columns. Without a
GPU: the launch shape (threads, rows a block, the one-wave loop), the window arithmetic of padded rows, the
per-shape source compiling with nvcc for sm80 / sm86 / sm89 / sm90 without spills (16-, 8- and 4-byte stores, the
separable product, bias, plain and evict-first stores), the refusals and the fallbacks (conv_rows_cuda for rows that
are not 16-byte multiples or a stride along rows, PyTorch off CUDA). On a GPU: the kernel against
``torch.nn.functional.conv2d`` on shapes that exercise each branch (channel counts that are not a multiple of a
lane's 16, rows over 128 and 256 columns, odd output widths, row and column padding beyond the kernel's reach,
dilation, a stride along columns, blocks looping over rows with a remainder; each again with the input rows staged in
shared memory)."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo.blocks import conv_rows_cuda
from cudal1.kernelzoo.blocks.conv_vec_cuda import (
    DEFAULT_TILE,
    STAGED_TILE,
    Tile,
    conv,
    conv_vec,
    separable_conv,
    supported,
    vec_source,
)

from .test_cuda_sources import find_nvcc

CASES = {  # N, Cin, Cout, (H, W), kernel, stride, padding, dilation, bias, tile
    "square_vw2": (2, 3, 64, (12, 40), (3, 3), 1, 0, 1, False, DEFAULT_TILE),
    "pad_dilation_cout20": (2, 3, 20, (9, 16), (3, 5), 1, (1, 2), (2, 1), True, DEFAULT_TILE),
    "wide_rows_three_warps": (1, 2, 8, (3, 300), (2, 3), 1, (0, 1), 1, True, DEFAULT_TILE),
    "odd_width_vw1": (2, 3, 16, (5, 20), (3, 4), 1, 0, 1, False, DEFAULT_TILE),
    "row_stride_cout70": (2, 3, 70, (11, 24), (3, 3), (2, 1), 1, 1, False, DEFAULT_TILE),
    "pointwise": (2, 3, 9, (5, 64), (1, 1), 1, 0, 1, False, DEFAULT_TILE),
    "padding_past_the_kernel": (1, 4, 16, (6, 8), (3, 3), 1, (2, 5), 1, True, DEFAULT_TILE),
    "loop_with_remainder": (2, 3, 32, (13, 36), (3, 3), 1, 0, 1, True, Tile(loop=5, rb=3)),
    "ct8_two_groups_plain": (2, 3, 24, (7, 260), (3, 3), 1, 1, 1, True, Tile(ct=8, g=2, streaming=False, loop=2)),
    # input rows copied into shared memory a row group ahead: padded rows, a remainder of rows in the last group of
    # three, a stride along columns, two column groups a lane
    "staged_pad_dilation": (2, 3, 20, (9, 16), (3, 5), 1, (1, 2), (2, 1), True, Tile(stage=True, loop=3)),
    "staged_loop_with_remainder": (2, 3, 32, (13, 36), (3, 3), 1, 0, 1, False, Tile(loop=5, rb=3, stage=True)),
    "staged_row_stride_wide": (2, 3, 70, (11, 300), (3, 3), (2, 1), 1, 1, False, Tile(stage=True)),
    "staged_ct8_g2": (1, 2, 24, (7, 260), (2, 3), 1, (2, 1), 1, True, Tile(ct=8, g=2, stage=True, loop=2)),
}


def _source(case, factor=False, multiprocessors=132):
    n, cin, cout, sp, ks, s, p, d, bias, tile = case
    sh = s[0] if isinstance(s, tuple) else s
    pair = lambda v: tuple(v) if isinstance(v, tuple) else (v, v)  # noqa: E731
    return vec_source(n, cin, cout, sp, ks, sh, pair(p), pair(d), factor, bias, tile, multiprocessors)


def _define(code: str, name: str) -> int:
    return int(next(line.split()[2] for line in code.splitlines() if line.startswith(f"#define {name} ")))


def test_the_tasks_shapes_get_256_thread_blocks_and_one_wave():
    """63_conv_standard_2D (16 x 254 rows of 254 columns, 27 taps): 4 channel groups x 2 column warps, one row a
    block, 16 rows a block so that 254 blocks fill 132 multiprocessors x 2; 56 (124 columns): two rows a block."""
    src, out, grid, threads = vec_source(16, 3, 64, (256, 256), (3, 3), 1, (0, 0), (1, 1), False, False)
    assert out == (254, 254) and threads == 256 and grid == 254
    assert (_define(src.code, "RB"), _define(src.code, "LOOP"), _define(src.code, "NWG")) == (1, 16, 2)
    src, out, grid, threads = vec_source(16, 3, 64, (256, 128), (3, 5), 1, (0, 0), (1, 1), False, False)
    assert out == (254, 124) and threads == 256 and _define(src.code, "RB") == 2
    assert grid * 2 * _define(src.code, "LOOP") >= 16 * 254 and grid <= 132 * 2


def test_few_taps_compute_one_row_a_block():
    """87_conv_pointwise_2D (3 taps): no loop, a block per row (measured faster than one wave on an H200)."""
    src, out, grid, threads = vec_source(16, 3, 64, (256, 256), (1, 1), 1, (0, 0), (1, 1), False, False)
    assert _define(src.code, "LOOP") == 1 and grid == 16 * 256


@pytest.mark.parametrize(("pw", "kw", "dw", "want"), [
    (0, 3, 1, (0, 0, 2)),   # the window of 4 columns + 2 starts at the lane's own block: two 16-byte loads
    (2, 5, 1, (-1, 2, 3)),  # 80: padding 2 starts the window 2 columns into the previous block
    (5, 3, 1, (-2, 3, 3)),
    (0, 5, 2, (0, 0, 3)),   # dilation 2: 4 + 8 columns
])
def test_window_blocks(pw, kw, dw, want):
    src = vec_source(1, 1, 4, (4, 32), (1, kw), 1, (0, pw), (1, dw), False, False)[0]
    assert (_define(src.code, "B0"), _define(src.code, "OFF"), _define(src.code, "NB")) == want


def test_refusals():
    with pytest.raises(ValueError, match="multiple of 4"):
        vec_source(1, 3, 8, (5, 18), (3, 3), 1, (0, 0), (1, 1), False, False)
    with pytest.raises(ValueError, match="empty"):
        vec_source(1, 3, 8, (2, 8), (3, 3), 1, (0, 0), (1, 1), False, False)
    with pytest.raises(ValueError, match="1024"):
        vec_source(1, 3, 256, (3, 1024), (3, 3), 1, (0, 0), (1, 1), False, False, Tile(ct=4))
    with pytest.raises(ValueError, match="shared memory"):
        vec_source(1, 64, 64, (8, 8), (5, 5), 1, (0, 0), (1, 1), False, False)
    with pytest.raises(ValueError, match="staged input rows"):  # 2 x 3 x 3 rows of 1024 floats, twice, do not fit
        vec_source(1, 3, 64, (8, 1024), (3, 3), 1, (0, 0), (1, 1), False, False, Tile(stage=True))
    with pytest.raises(ValueError, match="multiple of 4"):
        Tile(ct=6)
    with pytest.raises(ValueError, match="grouped"):
        conv_vec(torch.zeros(1, 4, 5, 8), torch.zeros(4, 2, 3, 3), None)


def test_supported_shapes():
    assert supported((16, 3, 256, 256), (3, 3), 1, 0, 1)
    assert supported((16, 3, 256, 256), (3, 5), (2, 1), (1, 2), (2, 1))
    assert not supported((16, 3, 256, 254), (3, 3), 1, 0, 1)      # rows not 16-byte multiples
    assert not supported((16, 3, 256, 256), (3, 3), (1, 2), 0, 1)  # a stride along rows
    assert not supported((16, 3, 256, 256), (3, 3), 1, "same", 1)
    assert not supported((16, 3, 8, 8, 8), (3, 3, 3), 1, 0, 1)      # 3-D
    assert not supported((16, 3, 256, 256), (3, 3), 1, 0, 1, data_ptr=4)  # a view 4 bytes into its storage


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family_without_spills(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    for name, factor in (("pad_dilation_cout20", False), ("square_vw2", True), ("odd_width_vw1", False),
                         ("ct8_two_groups_plain", False), ("loop_with_remainder", True),
                         ("staged_loop_with_remainder", True), ("staged_pad_dilation", False)):
        src = _source(CASES[name], factor)[0]
        cu = tmp_path / f"{name}_{factor}.cu"
        cu.write_text(src.code)
        r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
                            str(cu)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "conv_vec" in r.stderr and "0 bytes spill stores" in r.stderr, (name, r.stderr[-1500:])


def test_cpu_path_is_pytorch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 9, 12, generator=g)
    w = torch.randn(8, 3, 3, 5, generator=g)
    b = torch.randn(8, generator=g)
    torch.testing.assert_close(conv(x, w, b, 1, (1, 2), (2, 1)), F.conv2d(x, w, b, 1, (1, 2), (2, 1)))
    dw, pw = torch.randn(3, 1, 3, 3, generator=g), torch.randn(7, 3, 1, 1, generator=g)
    torch.testing.assert_close(separable_conv(x, dw, None, pw, None), F.conv2d(F.conv2d(x, dw, groups=3), pw))


def _gpu_case(name):
    n, cin, cout, sp, ks, s, p, d, has_bias, tile = CASES[name]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=g).cuda()
    w = torch.randn(cout, cin, *ks, generator=g).cuda()
    b = torch.randn(cout, generator=g).cuda() if has_bias else None
    torch.backends.cudnn.allow_tf32 = False
    return x, w, b, s, p, d, tile


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_vec_matches_torch(name):
    pytest.importorskip("cupy")
    x, w, b, s, p, d, tile = _gpu_case(name)
    torch.testing.assert_close(conv_vec(x, w, b, s, p, d, tile), F.conv2d(x, w, b, s, p, d), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_conv_falls_back_to_conv_rows_where_the_kernel_does_not_apply(monkeypatch):
    pytest.importorskip("cupy")
    calls = []
    real = conv_rows_cuda.conv
    monkeypatch.setattr(conv_rows_cuda, "conv", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 10, 18, generator=g).cuda()  # rows of 18 floats: not 16-byte multiples
    w = torch.randn(12, 3, 3, 3, generator=g).cuda()
    torch.backends.cudnn.allow_tf32 = False
    torch.testing.assert_close(conv(x, w, None, 1, 1, 1), F.conv2d(x, w, None, 1, 1, 1), rtol=1e-4, atol=1e-4)
    assert calls == [1]
    x = torch.randn(2, 3, 10, 16, generator=g).cuda()
    torch.testing.assert_close(conv(x, w, None, 1, 1, 1), F.conv2d(x, w, None, 1, 1, 1), rtol=1e-4, atol=1e-4)
    assert calls == [1]  # the vec kernel took this one
    shifted = torch.randn(x.numel() + 1, generator=g).cuda()[1:].view(x.shape)  # contiguous, 4 bytes off 16
    torch.testing.assert_close(conv(shifted, w, None, 1, 1, 1), F.conv2d(shifted, w, None, 1, 1, 1), rtol=1e-4,
                               atol=1e-4)
    assert calls == [1, 1]
    with pytest.raises(ValueError, match="16 bytes"):
        conv_vec(shifted, w, None, 1, 1, 1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("tile", [DEFAULT_TILE, STAGED_TILE], ids=["default", "staged"])
def test_separable_conv_matches_torch(bias, tile):
    pytest.importorskip("cupy")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 9, 40, generator=g).cuda()
    dw, pw = torch.randn(3, 1, 3, 3, generator=g).cuda(), torch.randn(11, 3, 1, 1, generator=g).cuda()
    db, pb = (torch.randn(3, generator=g).cuda(), torch.randn(11, generator=g).cuda()) if bias else (None, None)
    torch.backends.cudnn.allow_tf32 = False
    want = F.conv2d(F.conv2d(x, dw, db, 1, 1, 2, groups=3), pw, pb)
    torch.testing.assert_close(separable_conv(x, dw, db, pw, pb, 1, 1, 2, tile), want, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_conv_takes_the_staged_tile_at_254_float_rows():
    """The pending 55 / 63's path: :func:`conv` with STAGED_TILE where the output rows are 254 floats (8-byte
    stores), several row groups a block."""
    pytest.importorskip("cupy")
    g = torch.Generator().manual_seed(3)
    x = torch.randn(3, 3, 20, 256, generator=g).cuda()
    w = torch.randn(64, 3, 3, 3, generator=g).cuda()
    torch.backends.cudnn.allow_tf32 = False
    torch.testing.assert_close(conv(x, w, None, 1, 0, 1, 1, STAGED_TILE), F.conv2d(x, w), rtol=1e-4, atol=1e-4)
