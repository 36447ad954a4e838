"""``blocks.convt_disjoint_cuda``: 2-D transposed convolution whose taps never meet, in CUDA C. Without a GPU: the
residue-to-tap tables (checked against a brute-force count of the taps each output position takes), the refusal
of shapes whose taps meet, the per-shape source compiling with nvcc for sm80 / sm86 / sm89 / sm90, and the CPU
path (PyTorch's). On a GPU: the kernel against ``torch.nn.functional.conv_transpose2d``."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.convt_disjoint_cuda import (
    conv_transpose2d,
    convt_disjoint,
    convt_source,
    disjoint_taps,
    residue_taps,
)

from .test_cuda_sources import find_nvcc

CASES = {  # N, Cin, Cout, (IH, IW), (KH, KW), stride, padding, output_padding, dilation, bias
    "task81_small": (2, 32, 64, (5, 9), (3, 3), 5, 1, 0, 2, False),
    "asym_bias_outpad": (1, 3, 70, (4, 7), (2, 3), (3, 4), (0, 1), (1, 2), (2, 1), True),
    "wide_rows": (1, 4, 8, (2, 70), (1, 2), (2, 3), 0, 0, 1, True),
}


def _pair(v) -> tuple[int, int]:
    return tuple(v) if isinstance(v, tuple) else (v, v)


def _taps_brute(k: int, s: int, p: int, d: int, out: int, size: int) -> list[list[int]]:
    """Per output index, the taps that reach it (scatter form: o = i s - p + t d)."""
    hits: list[list[int]] = [[] for _ in range(out)]
    for i in range(size):
        for t in range(k):
            o = i * s - p + t * d
            if 0 <= o < out:
                hits[o].append(t)
    return hits


@pytest.mark.parametrize(("k", "s", "p", "d"), [(3, 5, 1, 2), (2, 3, 0, 2), (3, 4, 1, 1), (1, 2, 0, 1)])
def test_residue_taps_match_the_scatter(k, s, p, d):
    taps = residue_taps(k, s, p, d)
    assert taps is not None
    size = 6
    out = (size - 1) * s - 2 * p + d * (k - 1) + 1
    for o, hit in enumerate(_taps_brute(k, s, p, d, out, size)):
        assert len(hit) <= 1
        if hit:
            assert taps[o % s] == hit[0]


@pytest.mark.parametrize(("k", "s", "p", "d"), [(3, 1, 0, 1), (3, 2, 0, 1), (5, 4, 0, 2)])
def test_taps_that_meet_are_refused(k, s, p, d):
    assert residue_taps(k, s, p, d) is None
    assert not disjoint_taps((1, k), (1, s), (0, p), (1, d))
    with pytest.raises(ValueError, match="same output position"):
        convt_source(1, 2, 2, (3, 3), (1, k), (1, s), (0, p), (0, 0), (1, d), False)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    for name, case in CASES.items():
        n, cin, cout, size, k, s, p, op, d, bias = case
        src, out, grid, smem = convt_source(n, cin, cout, size, k, _pair(s), _pair(p), _pair(op), _pair(d), bias)
        cu = tmp_path / f"{name}.cu"
        cu.write_text(src.code)
        r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
                            str(cu)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "convt_disjoint" in r.stderr and min(out) > 0 and smem <= 48 * 1024


def test_task81_shape():
    """KernelBench 81: (16, 32, 64, 128) -> (16, 64, 318, 638); 64 rows a class mod 5, 8 a block."""
    src, out, grid, smem = convt_source(16, 32, 64, (64, 128), (3, 3), (5, 5), (1, 1), (0, 0), (2, 2), False)
    assert out == (318, 638) and grid == (16 * 5 * 8 * 4, 1)  # (sample, row class, 8-row group, 160 columns)


def test_cpu_path_is_pytorch():
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(2, 3, 4, 5, generator=g), torch.randn(3, 6, 3, 3, generator=g)
    torch.testing.assert_close(conv_transpose2d(x, w, None, 5, 1, 0, 1, 2),
                               F.conv_transpose2d(x, w, None, 5, 1, 0, 1, 2))


def test_grouped_weight_is_refused_by_the_kernel():
    with pytest.raises(ValueError, match="one group"):
        convt_disjoint(torch.zeros(1, 4, 3, 3), torch.zeros(2, 4, 3, 3), None, 5, 1, 0, 2)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", sorted(CASES))
def test_convt_disjoint_matches_torch(name):
    pytest.importorskip("cupy")
    n, cin, cout, size, k, s, p, op, d, has_bias = CASES[name]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *size, generator=g).cuda()
    w = torch.randn(cin, cout, *k, generator=g).cuda()
    b = torch.randn(cout, generator=g).cuda() if has_bias else None
    torch.backends.cudnn.allow_tf32 = False
    want = F.conv_transpose2d(x, w, b, s, p, op, 1, d)
    torch.testing.assert_close(convt_disjoint(x, w, b, s, p, op, d), want, rtol=1e-4, atol=1e-4)
