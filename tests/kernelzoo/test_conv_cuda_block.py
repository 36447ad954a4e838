"""``blocks.conv_cuda``: the direct CUDA C convolution. Without a GPU: its per-shape source compiles with nvcc for
sm80 / sm86 / sm89 / sm90 (shapes covering 1-D / 2-D / 3-D, stride, padding, dilation, bias, the separable
product, more than 64 output channels), and the CPU path is PyTorch's. On a GPU: the kernel against
``torch.nn.functional.conv{1,2,3}d``."""

from __future__ import annotations

import subprocess

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.conv_cuda import _triple, conv, conv_cuda, conv_source, separable_conv

from .test_cuda_sources import find_nvcc

CASES = {  # N, Cin, Cout, spatial, kernel, stride, padding, dilation, bias
    "3d_asym_kernel": (2, 3, 10, (4, 6, 9), (2, 3, 4), 1, 0, 1, False),
    "3d_strided_padded_dilated": (1, 2, 70, (5, 6, 7), (3, 2, 3), (2, 1, 3), (1, 0, 2), (1, 2, 1), True),
    "2d_pad_dilation": (2, 3, 12, (9, 11), (3, 5), 1, (1, 2), (2, 1), False),
    "2d_narrow_rows": (3, 5, 20, (8, 7), (3, 3), 1, 0, 1, True),
    "2d_pointwise": (2, 3, 9, (5, 6), (1, 1), 1, 0, 1, False),
    "1d_dilated_strided": (3, 3, 8, (29,), (3,), 3, 0, 4, True),
}


def _key(case):
    """conv_source's shape arguments of a case (spatial sizes and parameters padded to three dimensions)."""
    n, cin, cout, sp, ks, s, p, d, bias = case
    nd = len(sp)
    return cin, cout, _triple(sp, nd, 1), _triple(ks, nd, 1), _triple(s, nd, 1), _triple(p, nd, 0), _triple(d, nd, 1)


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    for name, factor in (("3d_strided_padded_dilated", False), ("2d_pad_dilation", True)):
        src, out, wt = conv_source(*_key(CASES[name]), factor, True)
        cu = tmp_path / f"{name}_{factor}.cu"
        cu.write_text(src.code)
        r = subprocess.run([nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
                            str(cu)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "conv_direct" in r.stderr and min(out) > 0 and wt in (4, 8)


def test_empty_output_is_refused():
    with pytest.raises(ValueError, match="empty"):
        conv_source(2, 4, (1, 2, 2), (1, 3, 3), (1, 1, 1), (0, 0, 0), (1, 1, 1), False, False)


def test_cpu_path_is_pytorch():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 9, 10, generator=g)
    w = torch.randn(8, 3, 3, 5, generator=g)
    torch.testing.assert_close(conv(x, w, None, 1, (1, 2), (2, 1)), F.conv2d(x, w, None, 1, (1, 2), (2, 1)))
    dw, pw = torch.randn(3, 1, 3, 3, generator=g), torch.randn(7, 3, 1, 1, generator=g)
    torch.testing.assert_close(separable_conv(x, dw, None, pw, None), F.conv2d(F.conv2d(x, dw, groups=3), pw))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_cuda_matches_torch(name):
    pytest.importorskip("cupy")
    n, cin, cout, sp, ks, s, p, d, has_bias = CASES[name]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=g).cuda()
    w = torch.randn(cout, cin, *ks, generator=g).cuda()
    b = torch.randn(cout, generator=g).cuda() if has_bias else None
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(sp)]
    torch.testing.assert_close(conv_cuda(x, w, b, s, p, d), fn(x, w, b, s, p, d), rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("bias", [False, True])
def test_separable_conv_matches_torch(bias):
    pytest.importorskip("cupy")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 9, 10, generator=g).cuda()
    dw, pw = torch.randn(3, 1, 3, 3, generator=g).cuda(), torch.randn(11, 3, 1, 1, generator=g).cuda()
    db, pb = (torch.randn(3, generator=g).cuda(), torch.randn(11, generator=g).cuda()) if bias else (None, None)
    want = F.conv2d(F.conv2d(x, dw, db, 1, 1, 2, groups=3), pw, pb)
    torch.testing.assert_close(separable_conv(x, dw, db, pw, pb, 1, 1, 2), want, rtol=1e-4, atol=1e-4)
