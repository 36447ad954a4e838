"""``blocks.conv_transpose``: the Triton transposed convolution (residue classes, implicit GEMM) against
``torch.nn.functional.conv_transpose{1,2,3}d`` on small shapes covering stride, padding, output padding, dilation,
groups, bias, classes no tap reaches, and 1-D / 2-D / 3-D (in Triton's interpreter on a CPU-only machine)."""

import pytest
import torch

from cudal1.kernelzoo.blocks.conv_transpose import conv_transpose_ref, conv_transpose_triton

DEV = "cuda" if torch.cuda.is_available() else "cpu"

CASES = {  # N, Cin, Cout, spatial, kernel, stride, padding, output padding, groups, dilation, bias
    "3d_mixed": (1, 6, 10, (2, 3, 3), (2, 3, 4), (3, 2, 1), (1, 0, 2), (2, 1, 0), 2, (2, 3, 1), True),
    "3d_s2_d2_zero_classes": (1, 4, 16, (2, 3, 3), (3, 3, 3), 2, 1, 0, 1, 2, False),
    "2d_s5_d2": (1, 8, 16, (3, 4), (3, 3), 5, 1, 0, 1, 2, False),
    "2d_grouped": (1, 8, 16, (2, 3), (3, 5), (2, 3), (1, 2), 0, 4, (2, 1), False),
    "1d": (1, 5, 6, (4,), (4,), 3, 2, 1, 1, 2, True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conv_transpose_matches_torch(name):
    n, cin, cout, sp, ks, s, p, op, g, d, has_bias = CASES[name]
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(n, cin, *sp, generator=gen).to(DEV)
    w = torch.randn(cin, cout // g, *ks, generator=gen).to(DEV)
    b = torch.randn(cout, generator=gen).to(DEV) if has_bias else None
    got = conv_transpose_triton(x, w, b, s, p, op, g, d)
    want = conv_transpose_ref(x, w, b, s, p, op, g, d)
    assert got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
