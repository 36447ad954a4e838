"""``blocks.conv_forward``: the Triton implicit-GEMM forward convolution and the fused depthwise + pointwise
kernel against ``torch.nn.functional.conv{1,2,3}d`` on small shapes covering stride, padding, dilation, groups,
bias, several output-channel blocks, K not a multiple of the K tile, and 1-D / 2-D / 3-D (in Triton's
interpreter on a CPU-only machine)."""

import pytest
import torch

from cudal1.kernelzoo.blocks.conv_forward import (
    conv_forward_ref,
    conv_forward_triton,
    depthwise_pointwise_ref,
    depthwise_pointwise_triton,
)

DEV = "cuda" if torch.cuda.is_available() else "cpu"

CASES = {  # N, Cin, Cout, spatial, kernel, stride, padding, dilation, groups, bias
    "3d_valid": (2, 3, 4, (5, 6, 7), (3, 3, 3), 1, 0, 1, 1, False),
    "3d_mixed": (1, 3, 4, (6, 7, 8), (3, 2, 3), (1, 2, 1), (1, 0, 2), (2, 1, 1), 1, True),
    "2d_grouped_padded": (1, 6, 8, (5, 7), (3, 5), 1, (1, 2), (2, 1), 2, True),
    "2d_two_co_blocks": (1, 20, 70, (5, 6), (3, 2), 1, 1, 1, 1, True),
    "1d_dilated_strided": (2, 3, 20, (40,), (3,), 3, 0, 4, 1, False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_forward_matches_torch(name):
    n, cin, cout, sp, ks, s, p, d, g, has_bias = CASES[name]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=gen).to(DEV)
    w = torch.randn(cout, cin // g, *ks, generator=gen).to(DEV)
    b = torch.randn(cout, generator=gen).to(DEV) if has_bias else None
    got = conv_forward_triton(x, w, b, s, p, d, g)
    want = conv_forward_ref(x, w, b, s, p, d, g)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


DW_CASES = {  # C, Cout, kernel (None: pointwise only), stride, padding, dilation, biases
    "dw_pw": (3, 8, (3, 3), 1, 0, 1, False),
    "dw_pw_strided_padded_dilated_bias": (3, 70, (3, 2), 2, (1, 0), 2, True),
    "pw_only_bias": (3, 8, None, 1, 0, 1, True),
}


@pytest.mark.parametrize("name", sorted(DW_CASES))
def test_depthwise_pointwise_matches_torch(name):
    c, cout, ks, s, p, d, has_bias = DW_CASES[name]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, c, 9, 11, generator=gen).to(DEV)
    dw = torch.randn(c, 1, *ks, generator=gen).to(DEV) if ks else None
    dwb = torch.randn(c, generator=gen).to(DEV) if has_bias and ks else None
    pw = torch.randn(cout, c, 1, 1, generator=gen).to(DEV)
    pwb = torch.randn(cout, generator=gen).to(DEV) if has_bias else None
    got = depthwise_pointwise_triton(x, dw, dwb, pw, pwb, s, p, d)
    want = depthwise_pointwise_ref(x, dw, dwb, pw, pwb, s, p, d)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
