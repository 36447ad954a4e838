"""``blocks.small_conv`` (depthwise 2-D, 1-D and transposed 1-D convolutions in one Triton launch) against
``torch.nn.functional``: in Triton's interpreter on CPU at small sizes, on the GPU when there is one (also at
the sizes of the KernelBench tasks it was written for). Geometries cover stride, padding, dilation, output padding, bias,
asymmetric kernels and a weight changed between calls (the kernels read the parameters at every call)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudal1.harness.compare import compare_outputs
from cudal1.kernelzoo.blocks import small_conv

from .helpers import rnd as random_normal

NO_INTERPRETER = pytest.mark.skipif(not small_conv.interpreted(), reason="CPU launches need TRITON_INTERPRET=1")
NO_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
DEVICES = [pytest.param("cpu", marks=NO_INTERPRETER), pytest.param("cuda", marks=[pytest.mark.gpu, NO_GPU])]


def randn(*shape: int, seed: int, device: str) -> torch.Tensor:
    return random_normal(shape, seed, device=device)


def check(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    cmp = compare_outputs(got.cpu(), want.cpu())
    assert cmp.ok, f"{what}: {cmp.reason}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kernel,stride,padding,dilation,bias", [
    ((3, 3), 1, 0, 1, False), ((3, 1), 1, 0, 1, False), ((3, 5), 1, 0, 1, True),
    ((3, 5), (2, 1), (1, 2), (2, 1), True), ((2, 2), 2, 1, 1, False)])
def test_depthwise_conv2d(kernel, stride, padding, dilation, bias, device):
    x = randn(2, 3, 19, 37, seed=1, device=device)
    w = randn(3, 1, *kernel, seed=2, device=device)
    b = randn(3, seed=3, device=device) if bias else None
    what = f"depthwise {kernel} s{stride} p{padding} d{dilation}"
    check(small_conv.depthwise_conv2d(x, w, b, stride, padding, dilation),
          F.conv2d(x, w, b, stride, padding, dilation, 3), what)
    w.mul_(-2.0)  # the same call site with new weight values: read again, nothing cached
    check(small_conv.depthwise_conv2d(x, w, b, stride, padding, dilation),
          F.conv2d(x, w, b, stride, padding, dilation, 3), what + " (weight changed)")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,stride,padding,dilation,bias", [(3, 1, 0, 1, False), (3, 3, 0, 4, False),
                                                            (5, 2, 2, 1, True)])
def test_conv1d(k, stride, padding, dilation, bias, device):
    x = randn(2, 5, 41, seed=4, device=device)
    w = randn(7, 5, k, seed=5, device=device)
    b = randn(7, seed=6, device=device) if bias else None
    check(small_conv.conv1d(x, w, b, stride, padding, dilation), F.conv1d(x, w, b, stride, padding, dilation),
          f"conv1d k{k} s{stride} p{padding} d{dilation}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,stride,padding,output_padding,dilation,bias", [
    (3, 1, 0, 0, 1, False), (5, 1, 0, 0, 3, False), (3, 2, 1, 0, 2, False), (4, 3, 2, 1, 2, True)])
def test_conv_transpose1d(k, stride, padding, output_padding, dilation, bias, device):
    x = randn(2, 5, 41, seed=7, device=device)
    w = randn(5, 7, k, seed=8, device=device)
    b = randn(7, seed=9, device=device) if bias else None
    check(small_conv.conv_transpose1d(x, w, b, stride, padding, output_padding, dilation),
          F.conv_transpose1d(x, w, b, stride, padding, output_padding, 1, dilation),
          f"conv_transpose1d k{k} s{stride} p{padding} op{output_padding} d{dilation}")


@pytest.mark.gpu
@NO_GPU
@pytest.mark.parametrize("case", ["82", "83", "85", "64", "67", "74", "76", "79"])
def test_kernelbench_sizes_on_the_gpu(case, monkeypatch):
    """The tasks' own sizes and geometries (fp32; TF32 is off for cuDNN's side as in the harness)."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    dev = "cuda"
    if case in ("82", "83", "85"):
        kernel = {"82": (3, 3), "83": (3, 1), "85": (3, 5)}[case]
        x = randn(16, 3, 256 if case != "85" else 128, 256, seed=10, device=dev)
        w = randn(3, 1, *kernel, seed=11, device=dev)
        check(small_conv.depthwise_conv2d(x, w, None), F.conv2d(x, w, None, 1, 0, 1, 3), case)
        return
    c_in, c_out, k, length, s, p, d, transposed = {
        "64": (64, 3, 3, 128, 1, 0, 1, True), "67": (3, 64, 3, 512, 1, 0, 1, False),
        "74": (3, 64, 5, 256, 1, 0, 3, True), "76": (3, 64, 3, 256, 3, 0, 4, False),
        "79": (32, 64, 3, 128, 2, 1, 2, True)}[case]
    x = randn(16, c_in, length, seed=12, device=dev)
    if transposed:
        w = randn(c_in, c_out, k, seed=13, device=dev)
        check(small_conv.conv_transpose1d(x, w, None, s, p, 0, d), F.conv_transpose1d(x, w, None, s, p, 0, 1, d),
              case)
    else:
        w = randn(c_out, c_in, k, seed=13, device=dev)
        check(small_conv.conv1d(x, w, None, s, p, d), F.conv1d(x, w, None, s, p, d), case)


def test_shape_errors_say_what_is_expected():
    x = torch.randn(2, 3, 8, 8)
    with pytest.raises(ValueError, match="weight \\(C, 1, KH, KW\\)"):
        small_conv.depthwise_conv2d(x, torch.randn(3, 2, 3, 3), None)
    with pytest.raises(ValueError, match="groups 1"):
        small_conv.conv1d(torch.randn(2, 4, 9), torch.randn(5, 2, 3), None)
    with pytest.raises(ValueError, match="groups 1"):
        small_conv.conv_transpose1d(torch.randn(2, 4, 9), torch.randn(2, 5, 3), None)


def test_tiles():
    assert small_conv.depthwise_tile(254, 254) == (4, 256, 4)
    assert small_conv.depthwise_tile(3, 37) == (4, 64, 4)
    assert small_conv.line_tile(3, 64, 510) == (32, 16, 32, 2)
    assert small_conv.line_tile(64, 3, 13) == (16, 16, 16, 2)
