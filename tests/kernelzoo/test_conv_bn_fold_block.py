"""``blocks.conv_bn_fold``: the folded ``(weight, bias)`` of eval-mode conv + batch norm pairs run through
:func:`conv_bias_act` against ``relu(bn(conv(x)) [+ z])`` with random parameters and running statistics
(strides, padding, depthwise groups, 1x1, residual, no ReLU; several pairs folded at once), on CPU; on a GPU the
fused cuDNN path against the same math."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.blocks.conv_bn_fold import conv_bias_act, fold_conv_bn

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

PAIRS = {  # C_in, C_out, kernel, stride, padding, groups, eps
    "3x3_s2": (5, 12, 3, 2, 1, 1, 1e-5),
    "depthwise": (6, 6, 3, 1, 1, 6, 1e-3),
    "1x1": (12, 7, 1, 1, 0, 1, 1e-5),
}


def _pair(cin, cout, k, s, p, g, eps, gen) -> tuple[nn.Conv2d, nn.BatchNorm2d]:
    conv = nn.Conv2d(cin, cout, k, s, p, groups=g, bias=False)
    bn = nn.BatchNorm2d(cout, eps=eps)
    with torch.no_grad():
        conv.weight.copy_(torch.randn(conv.weight.shape, generator=gen) * 0.3)
        bn.weight.copy_(torch.randn(cout, generator=gen))
        bn.bias.copy_(torch.randn(cout, generator=gen))
        bn.running_mean.copy_(torch.randn(cout, generator=gen))
        bn.running_var.copy_(torch.rand(cout, generator=gen) * 2 + 0.1)
    return conv, bn.eval()


def _want(x, conv, bn, relu, z=None):
    y = bn(conv(x))
    if z is not None:
        y = y + z
    return F.relu(y) if relu else y


def test_folds_of_several_pairs_match_conv_then_batch_norm():
    gen = torch.Generator().manual_seed(0)
    pairs = [_pair(*PAIRS[name], gen) for name in sorted(PAIRS)]
    folds = fold_conv_bn(pairs)
    assert len(folds) == len(pairs)
    with torch.no_grad():
        for (conv, bn), (w, b) in zip(pairs, folds, strict=True):
            assert w.shape == conv.weight.shape and b.shape == (conv.out_channels,)
            x = torch.randn(2, conv.in_channels, 9, 10, generator=gen)
            for relu in (True, False):
                torch.testing.assert_close(conv_bias_act(x, (w, b), conv, relu), _want(x, conv, bn, relu),
                                           rtol=1e-5, atol=1e-5)


def test_residual_add_then_relu():
    gen = torch.Generator().manual_seed(1)
    conv, bn = _pair(*PAIRS["3x3_s2"], gen)
    x = torch.randn(2, 5, 9, 10, generator=gen)
    z = torch.randn(2, 12, 5, 5, generator=gen)
    with torch.no_grad():
        wb = fold_conv_bn([(conv, bn)])[0]
        torch.testing.assert_close(conv_bias_act(x, wb, conv, True, z), _want(x, conv, bn, True, z),
                                   rtol=1e-5, atol=1e-5)


def test_fold_reads_the_current_statistics():
    gen = torch.Generator().manual_seed(2)
    conv, bn = _pair(*PAIRS["1x1"], gen)
    x = torch.randn(1, 12, 4, 4, generator=gen)
    with torch.no_grad():
        before = conv_bias_act(x, fold_conv_bn([(conv, bn)])[0], conv, False)
        bn.running_var.mul_(3.0)
        after = conv_bias_act(x, fold_conv_bn([(conv, bn)])[0], conv, False)
        assert not torch.allclose(before, after)
        torch.testing.assert_close(after, _want(x, conv, bn, False), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("name", sorted(PAIRS))
def test_cudnn_fused_path_matches(name):
    gen = torch.Generator().manual_seed(3)
    conv, bn = _pair(*PAIRS[name], gen)
    conv, bn = conv.cuda(), bn.cuda()
    x = torch.randn(2, conv.in_channels, 16, 16, generator=gen).cuda()
    with torch.no_grad():
        wb = fold_conv_bn([(conv, bn)])[0]
        y = _want(x, conv, bn, True)
        torch.testing.assert_close(conv_bias_act(x, wb, conv, True), y, rtol=1e-4, atol=1e-4)
        z = torch.randn(y.shape, generator=gen).cuda()
        torch.testing.assert_close(conv_bias_act(x, wb, conv, True, z), _want(x, conv, bn, True, z),
                                   rtol=1e-4, atol=1e-4)
