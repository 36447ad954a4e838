"""``blocks.conv_small_k_cuda``: the implicit-GEMM convolution for few input channels. Without a GPU: its sources
compile with nvcc for every family without spills, shapes it does not take are refused with the reason, the 2-D view
of a 3-D convolution with a kernel of 1 along the last dimension is that convolution (checked with PyTorch's own
convolutions), the CPU path is PyTorch's. On a GPU: against PyTorch (fp32, TF32 off) with padding, dilation,
stride, bias, the 3-D view, and the fallback for shapes the kernel does not take."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudal1.harness.models import exact_fp32
from cudal1.kernelzoo.blocks.conv_small_k_cuda import conv, conv2d_cuda, conv_source, last_dim_pointwise_2d

from .test_cuda_sources import assert_compiles_without_spills, find_nvcc

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

#: C, H, W, O, kernel, stride, padding, dilation, bias: KernelBench 80's padded, dilated shape and 59's 2-D view
SOURCES = [(3, 256, 256, 64, (3, 5), (1, 1), (1, 2), (2, 1), False),
           (3, 256, 2560, 64, (3, 3), (1, 1), (0, 0), (1, 10), True)]


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family_without_spills(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    for case in SOURCES:
        assert_compiles_without_spills(nvcc, conv_source(*case)[0], arch, tmp_path)


def test_shapes_it_does_not_take_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="rounds to 76"):  # 3 x 5 x 5 taps
        conv_source(3, 32, 32, 64, (5, 5), (1, 1), (0, 0), (1, 1), False)
    with pytest.raises(ValueError, match="multiple of 64"):
        conv_source(3, 32, 32, 48, (3, 3), (1, 1), (0, 0), (1, 1), False)
    with pytest.raises(ValueError, match="multiple of 4 values"):  # 29 x 29 outputs
        conv_source(3, 31, 31, 64, (3, 3), (1, 1), (0, 0), (1, 1), False)
    with pytest.raises(ValueError, match="float32 CUDA"):
        conv2d_cuda(torch.zeros(1, 3, 8, 8), torch.zeros(64, 3, 3, 3), None)


@pytest.mark.parametrize("stride,padding,dilation", [((1, 1, 1), (0, 0, 0), (1, 1, 1)),
                                                     ((2, 1, 1), (1, 2, 0), (2, 3, 1))])
def test_last_dim_view_is_the_3d_convolution(stride, padding, dilation):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 9, 11, 5, generator=g, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 2, 1, generator=g, dtype=torch.float64)
    want = F.conv3d(x, w, None, stride, padding, dilation)
    x2, w2, s2, p2, d2 = last_dim_pointwise_2d(x, w, stride, padding, dilation)
    got = F.conv2d(x2, w2, None, s2, p2, d2)
    torch.testing.assert_close(got.view(want.shape), want)


def test_last_dim_view_refuses_other_convolutions():
    x, w = torch.zeros(1, 3, 4, 4, 4), torch.zeros(4, 3, 3, 3, 3)
    assert last_dim_pointwise_2d(x, w, (1, 1, 1), (0, 0, 0), (1, 1, 1)) is None  # kernel 3 along the last dim
    w1 = torch.zeros(4, 3, 3, 3, 1)
    assert last_dim_pointwise_2d(x, w1, (1, 2, 1), (0, 0, 0), (1, 1, 1)) is None  # stride along B
    assert last_dim_pointwise_2d(x, w1, (1, 1, 1), (0, 0, 1), (1, 1, 1)) is None  # padding along D


def test_cpu_path_is_pytorch():
    g = torch.Generator().manual_seed(1)
    x, w = torch.randn(2, 3, 12, 16, generator=g), torch.randn(64, 3, 3, 3, generator=g)
    torch.testing.assert_close(conv(x, w, None, 1, 1, 1), F.conv2d(x, w, None, 1, 1, 1))
    x3, w3 = torch.randn(1, 3, 6, 7, 4, generator=g), torch.randn(64, 3, 3, 3, 1, generator=g)
    torch.testing.assert_close(conv(x3, w3), F.conv3d(x3, w3))


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("shape,o,kernel,stride,padding,dilation,bias", [
    ((2, 3, 20, 24), 64, (3, 3), 1, 0, 1, False),  # 55/63's window
    ((2, 3, 24, 20), 128, (3, 5), 1, 0, 1, True),  # 56/62's window, two channel blocks, bias
    ((2, 3, 22, 24), 64, (3, 5), 1, (1, 2), (2, 1), False),  # 80's padding and dilation
    ((1, 2, 17, 22), 64, (2, 3), 2, 1, 1, True),  # stride 2, odd sizes, a partial last tile
])
def test_conv2d_matches_pytorch(shape, o, kernel, stride, padding, dilation, bias):
    pytest.importorskip("cupy")
    exact_fp32()
    g = torch.Generator(device="cuda").manual_seed(sum(shape) + o)
    x = torch.randn(shape, device="cuda", generator=g)
    w = torch.randn((o, shape[1]) + kernel, device="cuda", generator=g)
    b = torch.randn(o, device="cuda", generator=g) if bias else None
    want = F.conv2d(x.double(), w.double(), None if b is None else b.double(), stride, padding, dilation).float()
    got = conv(x, w, b, stride, padding, dilation)
    assert got.shape == want.shape and got.is_contiguous()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    if (want.shape[2] * want.shape[3]) % 4 == 0:  # the kernel ran, not the fallback
        torch.testing.assert_close(conv2d_cuda(x, w, b, _pair(stride), _pair(padding), _pair(dilation)), got)


def _pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


@pytest.mark.gpu
@gpu
def test_conv3d_with_a_kernel_of_one_along_the_last_dim_matches_pytorch():
    pytest.importorskip("cupy")
    exact_fp32()
    g = torch.Generator(device="cuda").manual_seed(59)
    x = torch.randn(2, 3, 12, 10, 6, device="cuda", generator=g)  # 59's layout, small
    w = torch.randn(64, 3, 3, 3, 1, device="cuda", generator=g)
    want = F.conv3d(x.double(), w.double()).float()
    got = conv(x, w)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@gpu
def test_shapes_the_kernel_does_not_take_fall_back():
    pytest.importorskip("cupy")
    exact_fp32()
    g = torch.Generator(device="cuda").manual_seed(2)
    for shape, o, k in [((1, 3, 31, 31), 64, (3, 3)), ((1, 3, 16, 16), 48, (3, 3)), ((1, 8, 16, 16), 64, (3, 3))]:
        x = torch.randn(shape, device="cuda", generator=g)
        w = torch.randn((o, shape[1]) + k, device="cuda", generator=g)
        torch.testing.assert_close(conv(x, w), F.conv2d(x, w), rtol=1e-5, atol=1e-5)
