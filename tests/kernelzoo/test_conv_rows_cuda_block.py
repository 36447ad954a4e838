"""``blocks.conv_rows_cuda``: the direct CUDA C convolution with input rows staged in shared memory. Without a GPU:
the row layout (chunk width, lanes per row, rows per block, segments), the per-shape source compiling with nvcc for
sm80 / sm86 / sm89 / sm90 (16-byte and scalar window reads, the separable product, bias), the shared-memory
bound, and the CPU path (PyTorch's). On a GPU: the kernel against ``torch.nn.functional.conv{1,2,3}d`` on shapes
that exercise each layout branch (several rows per block, rows split into segments, odd chunk widths, padding
and dilation at the staged rows' edges, more than 64 output channels)."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.conv_cuda import _triple
from cudal1.kernelzoo.blocks.conv_rows_cuda import conv, conv_rows, rows_layout, rows_source, separable_conv

from .test_cuda_sources import find_nvcc

CASES = {  # N, Cin, Cout, spatial, kernel, stride, padding, dilation, bias
    "2d_square": (2, 3, 16, (12, 40), (3, 3), 1, 0, 1, False),
    "2d_pad_dilation": (2, 3, 12, (9, 11), (3, 5), 1, (1, 2), (2, 1), True),
    "2d_wide_rows_segments": (1, 2, 8, (3, 300), (2, 3), 1, (0, 1), 1, True),
    "2d_narrow_rows": (3, 5, 20, (8, 7), (3, 3), 1, 0, 1, True),
    "2d_strided": (2, 3, 70, (11, 23), (3, 3), (2, 3), 1, 1, False),
    "2d_pointwise": (2, 3, 9, (5, 64), (1, 1), 1, 0, 1, False),
    "3d_short_rows": (2, 3, 10, (5, 6, 10), (3, 3, 1), 1, 0, 1, False),
    "1d_dilated_strided": (3, 3, 8, (29,), (3,), 3, 0, 4, True),
}


def _key(case):
    """rows_source's shape arguments of a case (spatial sizes and parameters padded to three dimensions)."""
    n, cin, cout, sp, ks, s, p, d, bias = case
    nd = len(sp)
    return (n, cin, cout, _triple(sp, nd, 1), _triple(ks, nd, 1), _triple(s, nd, 1), _triple(p, nd, 0),
            _triple(d, nd, 1))


@pytest.mark.parametrize(("ow", "want"), [
    (254, (8, 32, 1, 1)),   # 63_conv_standard_2D: one row of 32 chunks of 8
    (124, (8, 16, 2, 1)),   # 56: two rows a block
    (10, (5, 2, 16, 1)),    # 59 (3-D, a 10-wide last dimension): chunks of 5, no idle lane
    (300, (5, 32, 1, 2)),   # longer than a block's 256 positions: two segments, chunks of 5 waste least
    (1, (4, 1, 32, 1)),     # one position a row: the narrowest chunk, 32 rows a block
])
def test_rows_layout(ow, want):
    wt, cprp, rpb, nseg = layout = rows_layout(ow)
    assert layout == want
    assert cprp * rpb == 32 and nseg * cprp * wt >= ow


def test_rows_layout_refuses_empty_rows():
    with pytest.raises(ValueError, match="positive"):
        rows_layout(0)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    for name, factor in (("2d_pad_dilation", True), ("3d_short_rows", False), ("2d_strided", False)):
        src, out, grid, smem = rows_source(*_key(CASES[name]), factor, True)
        cu = tmp_path / f"{name}_{factor}.cu"
        cu.write_text(src.code)
        r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
                            str(cu)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "conv_rows" in r.stderr and min(out) > 0 and smem <= 48 * 1024 and grid[0] > 0
        assert "spill" not in r.stderr or "0 bytes spill stores" in r.stderr


def test_grid_covers_every_output():
    """The grid's blocks times their rows and positions cover the output (63_conv_standard_2D's shape)."""
    src, out, grid, smem = rows_source(16, 3, 64, (1, 256, 256), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1),
                                       False, False)
    wt, cprp, rpb, nseg = rows_layout(out[2])
    assert out == (1, 254, 254) and grid == (16 * 254, 1)
    assert (grid[0] // 16) * rpb >= out[0] * out[1] and nseg * cprp * wt >= out[2]


def test_empty_output_is_refused():
    with pytest.raises(ValueError, match="empty"):
        rows_source(1, 2, 4, (1, 2, 2), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), False, False)


def test_cpu_path_is_pytorch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 9, 10, generator=g)
    w = torch.randn(8, 3, 3, 5, generator=g)
    torch.testing.assert_close(conv(x, w, None, 1, (1, 2), (2, 1)), F.conv2d(x, w, None, 1, (1, 2), (2, 1)))
    dw, pw = torch.randn(3, 1, 3, 3, generator=g), torch.randn(7, 3, 1, 1, generator=g)
    torch.testing.assert_close(separable_conv(x, dw, None, pw, None), F.conv2d(F.conv2d(x, dw, groups=3), pw))


def test_grouped_weight_is_refused_by_the_kernel():
    x, w = torch.zeros(1, 4, 5, 5), torch.zeros(4, 2, 3, 3)
    with pytest.raises(ValueError, match="grouped"):
        conv_rows(x, w, None)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_rows_matches_torch(name):
    pytest.importorskip("cupy")
    n, cin, cout, sp, ks, s, p, d, has_bias = CASES[name]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=g).cuda()
    w = torch.randn(cout, cin, *ks, generator=g).cuda()
    b = torch.randn(cout, generator=g).cuda() if has_bias else None
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(sp)]
    torch.backends.cudnn.allow_tf32 = False
    torch.testing.assert_close(conv_rows(x, w, b, s, p, d), fn(x, w, b, s, p, d), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("bias", [False, True])
def test_separable_conv_matches_torch(bias):
    pytest.importorskip("cupy")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 9, 40, generator=g).cuda()
    dw, pw = torch.randn(3, 1, 3, 3, generator=g).cuda(), torch.randn(11, 3, 1, 1, generator=g).cuda()
    db, pb = (torch.randn(3, generator=g).cuda(), torch.randn(11, generator=g).cuda()) if bias else (None, None)
    torch.backends.cudnn.allow_tf32 = False
    want = F.conv2d(F.conv2d(x, dw, db, 1, 1, 2, groups=3), pw, pb)
    torch.testing.assert_close(separable_conv(x, dw, db, pw, pb, 1, 1, 2), want, rtol=1e-4, atol=1e-4)
