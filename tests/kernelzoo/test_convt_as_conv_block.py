"""``blocks.convt_as_conv``: a stride-1 transposed convolution as the forward convolution of the flipped,
channel-swapped weight. The rewrite against ``torch.nn.functional.conv_transpose{1,2,3}d`` in float64 (exact up to
summation order) over kernel sizes, paddings, dilations and bias; where it does not apply (a stride, output
padding, groups, padding past ``d (k - 1)``) the transposed convolution runs."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from cudal1.kernelzoo.blocks import convt_as_conv
from cudal1.kernelzoo.blocks.convt_as_conv import applies, conv_transpose, forward_padding

TRANSPOSED = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


@pytest.mark.parametrize("spatial, kernel, padding, dilation, bias", [
    ((9,), (3,), 0, 1, False),
    ((7, 12), (3, 5), (1, 2), 1, True),     # task 78's padding
    ((6, 10), (3, 3), 0, (2, 1), False),    # dilation
    ((5, 9), (2, 4), (1, 3), 1, True),      # padding exactly d (k - 1): forward padding 0
    ((3, 4, 5), (3, 2, 3), (1, 0, 2), 1, True),
])
def test_matches_the_transposed_convolution(spatial, kernel, padding, dilation, bias):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 6, *spatial, generator=g, dtype=torch.float64)
    w = torch.randn(6, 5, *kernel, generator=g, dtype=torch.float64)
    b = torch.randn(5, generator=g, dtype=torch.float64) if bias else None
    assert applies(w, 1, padding, 0, 1, dilation)
    want = TRANSPOSED[len(spatial)](x, w, b, 1, padding, 0, 1, dilation)
    torch.testing.assert_close(conv_transpose(x, w, b, 1, padding, 0, 1, dilation), want, rtol=1e-12, atol=1e-12)


def test_forward_padding():
    assert forward_padding((3, 5), (1, 2), 1) == (1, 2)
    assert forward_padding((3, 3), 0, (2, 1)) == (4, 2)
    assert forward_padding((3,), 3, 1) == (-1,)


@pytest.mark.parametrize("stride, padding, output_padding, groups", [
    (2, 1, 1, 1),   # a stride
    (1, 3, 0, 1),   # padding past d (k - 1): the forward convolution would need negative padding
    (1, 1, 0, 2),   # groups
])
def test_the_transposed_convolution_runs_where_the_rewrite_does_not_apply(monkeypatch, stride, padding,
                                                                          output_padding, groups):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 6, 7, generator=g, dtype=torch.float64)
    w = torch.randn(4, 3, 3, 3, generator=g, dtype=torch.float64)
    assert not applies(w, stride, padding, output_padding, groups, 1)
    monkeypatch.setitem(convt_as_conv._FORWARD, 2, lambda *a, **k: pytest.fail("the forward convolution ran"))
    want = F.conv_transpose2d(x, w, None, stride, padding, output_padding, groups)
    torch.testing.assert_close(conv_transpose(x, w, None, stride, padding, output_padding, groups), want)


def test_refuses_mismatched_ranks():
    with pytest.raises(ValueError, match="transposed convolution"):
        conv_transpose(torch.randn(1, 4, 5, 5), torch.randn(4, 3, 3), None)
