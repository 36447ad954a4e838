"""``blocks.conv_slide_cuda``: the unit-stride direct CUDA C convolution whose threads slide a register window along
the row (the stride-1 transposed convolutions as forward ones). Without a GPU: the launch shape (segments, rows a
block, blocks a multiprocessor, input channels a stage), the refusals, the per-shape source compiling with nvcc for
sm80 / sm86 / sm89 / sm90 without spills (2-D and 3-D, 16-, 8- and 4-byte stores, bias, dilation, the forward
weight layout) and the fallbacks (the Triton kernel of ``conv_transpose`` where the kernel does not apply, PyTorch
off CUDA). On a GPU: the kernel against ``torch.nn.functional.conv_transpose{2,3}d`` / ``conv2d`` on shapes that
exercise each branch (input channels that are not a multiple of a stage's, two channel tiles, rows over 256 columns,
odd and even output widths, padding past the kernel's reach (a negative forward padding), dilation, bias, 3-D)."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo.blocks import conv_transpose as convt_triton
from cudal1.kernelzoo.blocks.conv_slide_cuda import (
    DEFAULT_TILE,
    Tile,
    conv_slide,
    conv_transpose,
    slide_source,
    supported,
)

from .test_cuda_sources import find_nvcc

CASES = {  # N, Cin, Cout, input (H, W) or (D, H, W), kernel, transposed padding, dilation, bias, tile
    "task78_rb2": (2, 32, 64, (9, 40), (3, 5), (1, 2), 1, False, Tile(rb=2)),
    "odd_width_vw1_cin5": (2, 5, 64, (6, 19), (3, 3), 0, 1, True, DEFAULT_TILE),
    "even_width_vw2_dilation": (2, 12, 64, (7, 20), (3, 3), (1, 0), (2, 1), True, Tile(cc=4)),
    "padding_past_the_kernel": (1, 8, 64, (8, 24), (2, 3), (2, 3), 1, False, Tile(stages=2)),
    "two_segments_cout128": (1, 6, 128, (3, 300), (2, 3), 0, 1, True, DEFAULT_TILE),
    "three_d": (2, 6, 64, (4, 5, 12), (3, 2, 3), (1, 0, 1), 1, True, DEFAULT_TILE),
}


def _forward_padding(ks, p, d):
    nd = len(ks)
    p = p if isinstance(p, tuple) else (p,) * nd
    d = d if isinstance(d, tuple) else (d,) * nd
    return tuple(d_ * (k - 1) - p_ for k, p_, d_ in zip(ks, p, d, strict=True)), d


def _source(case, multiprocessors=132):
    n, cin, cout, sp, ks, p, d, bias, tile = case
    fp, dd = _forward_padding(ks, p, d)
    lead = 3 - len(ks)
    return slide_source(n, cin, cout, (1,) * lead + sp, (1,) * lead + ks, (0,) * lead + fp, (1,) * lead + dd, True,
                        bias, tile, multiprocessors)


def _define(code: str, name: str) -> int:
    return int(next(line.split()[2] for line in code.splitlines() if line.startswith(f"#define {name} ")))


def test_task_78_launch_shape():
    """78 (16 x 128 rows of 256 columns, 32 -> 64 channels, 3 x 5 taps, transposed padding (1, 2) = forward (1, 2)):
    by default a row of 32 column groups x 8 channel groups (256 threads) a block, two blocks a multiprocessor, 4
    input channels a stage in 3 stages; its solution's two rows a block are 512 threads, one block a multiprocessor."""
    src, out, grid, threads, smem = slide_source(16, 32, 64, (1, 128, 256), (1, 3, 5), (0, 1, 2), (1, 1, 1), True,
                                                 False)
    assert out == (1, 128, 256) and threads == 256 and grid == 16 * 128
    assert (_define(src.code, "MINB"), _define(src.code, "CC"), _define(src.code, "NSEG")) == (2, 4, 1)
    assert smem == 3 * (4 * 3 * 260 + 4 * 15 * 64) * 4
    src, _, grid, threads, _ = slide_source(16, 32, 64, (1, 128, 256), (1, 3, 5), (0, 1, 2), (1, 1, 1), True, False,
                                            Tile(rb=2))
    assert threads == 512 and grid == 16 * 64 and _define(src.code, "MINB") == 1


def test_rows_of_130_and_small_grids():
    """57 (rows of 130): one 136-column segment (17 groups, 136 threads) a block, three blocks a multiprocessor;
    69 (16 x 18 rows of 36): rows a block shrink until the grid fills every multiprocessor twice."""
    src, out, grid, threads, _ = slide_source(16, 32, 64, (1, 128, 128), (1, 3, 3), (0, 2, 2), (1, 1, 1), True, False)
    assert out == (1, 130, 130) and threads == 136 and _define(src.code, "MINB") == 3 and grid == 16 * 130
    src, out, grid, threads, _ = slide_source(16, 32, 64, (1, 16, 32), (1, 3, 5), (0, 2, 4), (1, 1, 1), True, False)
    assert out == (1, 18, 36) and _define(src.code, "RB") == 1 and grid == 16 * 18 and threads == 40


def test_refusals():
    with pytest.raises(ValueError, match="64 output channels"):
        slide_source(1, 8, 48, (1, 8, 8), (1, 3, 3), (0, 2, 2), (1, 1, 1), True, False)
    with pytest.raises(ValueError, match="empty"):
        slide_source(1, 8, 64, (1, 2, 8), (1, 3, 3), (0, -1, 0), (1, 1, 1), True, False)
    with pytest.raises(ValueError, match="shared memory"):
        slide_source(1, 8, 64, (8, 8, 64), (5, 5, 5), (0, 0, 0), (1, 1, 1), True, False, Tile(cc=8))
    with pytest.raises(ValueError, match="threads a block"):
        slide_source(1, 8, 64, (1, 64, 256), (1, 3, 3), (0, 1, 1), (1, 1, 1), True, False, Tile(rb=3))
    with pytest.raises(ValueError, match="stages"):
        Tile(stages=1)
    x = torch.randn(1, 8, 6, 6)
    with pytest.raises(ValueError, match="one group"):
        conv_slide(x, torch.randn(4, 64, 3, 3), None, 2, transposed=True)
    with pytest.raises(ValueError, match="2-D or 3-D"):
        conv_slide(torch.randn(1, 8, 6), torch.randn(8, 64, 3), None, 2, transposed=True)


def test_supported_only_on_cuda_fp32():
    """Off CUDA nothing is supported (the fallback runs PyTorch); the shape checks are the launch shape's."""
    x, w = torch.randn(1, 8, 6, 6), torch.randn(8, 64, 3, 3)
    assert not supported(x, w, None, 1, 0, 0, 1, 1)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family_without_spills(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    sources = [_source(CASES[name])[0] for name in ("task78_rb2", "odd_width_vw1_cin5", "even_width_vw2_dilation",
                                                     "three_d")]
    sources.append(slide_source(2, 8, 64, (1, 9, 16), (1, 3, 3), (0, 1, 1), (1, 1, 1), False, True,
                                Tile(streaming=False))[0])  # forward weight layout, plain stores
    for i, src in enumerate(sources):
        cu = tmp_path / f"s{i}.cu"
        cu.write_text(src.code)
        r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-std=c++17", "-Xptxas", "-v", "-o",
                            str(tmp_path / "k.cubin"), str(cu)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "conv_slide" in r.stderr and "0 bytes spill stores" in r.stderr, (src.name, r.stderr[-1500:])


def test_cpu_path_is_pytorch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 8, 6, 10, generator=g)
    w = torch.randn(8, 64, 3, 5, generator=g)
    b = torch.randn(64, generator=g)
    torch.testing.assert_close(conv_transpose(x, w, b, 1, (1, 2)), F.conv_transpose2d(x, w, b, 1, (1, 2)))
    x3, w3 = torch.randn(1, 4, 3, 4, 5, generator=g), torch.randn(4, 64, 2, 3, 3, generator=g)
    torch.testing.assert_close(conv_transpose(x3, w3, None, 2, 1), F.conv_transpose3d(x3, w3, None, 2, 1))


def _gpu_case(name):
    n, cin, cout, sp, ks, p, d, has_bias, tile = CASES[name]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=g).cuda()
    w = torch.randn(cin, cout, *ks, generator=g).cuda()
    b = torch.randn(cout, generator=g).cuda() if has_bias else None
    fn = F.conv_transpose2d if len(sp) == 2 else F.conv_transpose3d
    torch.backends.cudnn.allow_tf32 = False
    return x, w, b, p, d, tile, fn


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_transpose_matches_torch(name):
    pytest.importorskip("cupy")
    x, w, b, p, d, tile, fn = _gpu_case(name)
    assert supported(x, w, b, 1, p, 0, 1, d)
    want = fn(x.double(), w.double(), None if b is None else b.double(), 1, p, 0, 1, d).float()
    got = conv_transpose(x, w, b, 1, p, 0, 1, d, tile=tile)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_forward_weight_layout_matches_conv2d():
    pytest.importorskip("cupy")
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 8, 9, 16, generator=g).cuda()
    w = torch.randn(64, 8, 3, 3, generator=g).cuda()
    b = torch.randn(64, generator=g).cuda()
    want = F.conv2d(x.double(), w.double(), b.double(), 1, (1, 2), (1, 2)).float()
    torch.testing.assert_close(conv_slide(x, w, b, (1, 2), (1, 2)), want, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_falls_back_to_triton_where_the_kernel_does_not_apply(monkeypatch):
    pytest.importorskip("cupy")
    calls = []
    real = convt_triton.conv_transpose
    monkeypatch.setattr(convt_triton, "conv_transpose", lambda *a, **k: calls.append(1) or real(*a, **k))
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 8, 6, 10, generator=g).cuda()
    torch.backends.cudnn.allow_tf32 = False
    for w, stride, out_pad in ((torch.randn(8, 64, 3, 3, generator=g).cuda(), 2, 1),  # a stride
                               (torch.randn(8, 48, 3, 3, generator=g).cuda(), 1, 0)):  # 48 output channels
        want = F.conv_transpose2d(x, w, None, stride, 1, out_pad)
        torch.testing.assert_close(conv_transpose(x, w, None, stride, 1, out_pad), want, rtol=1e-4, atol=1e-4)
    assert calls == [1, 1]
    w = torch.randn(8, 64, 3, 3, generator=g).cuda()
    torch.testing.assert_close(conv_transpose(x, w, None, 1, 1), F.conv_transpose2d(x, w, None, 1, 1), rtol=1e-4,
                               atol=1e-4)
    assert calls == [1, 1]  # this one ran the kernel
