"""KernelBench level 2, 50_ConvTranspose3d_Scaling_AvgPool_BiasAdd_Scaling (x: (128, 3, 16, 32, 32) fp32;
ConvTranspose3d(3 -> 16, k=3, stride=2, pad=1) -> (128, 16, 31, 63, 63), ``* scale1``, AvgPool3d(2) ->
(128, 16, 15, 31, 31), ``+ bias`` (16, 1, 1, 1), ``* scale2``; scale1/scale2 are 0-dim parameters).

Exact algebra, for every input and parameter value: a transposed convolution with stride S followed by an
average pool whose window equals S is one ordinary convolution of x. Pooled output q (per dimension) averages
the transposed-conv outputs o = S*q + r (r < S); o receives x[i] * w[k] where S*i - pad + k = o, i.e.
i = q + t with t = (r + pad - k) / S. Summing w[k] over the (r, k) pairs sharing each offset t gives a small
kernel (here 2 taps per dimension: t=0 <- k in {1, 2}, t=1 <- k=0), so

    out = conv3d(x, W' * scale1 * scale2 / S^3) + scale2 * (scale1 * conv_bias + bias)

with W' (16, 3, 2, 2, 2) folded from the (3, 16, 3, 3, 3) weight inside every forward (a few tiny ops on
1.3 KB), zero padding where t runs past x's edge. The result is one cuDNN Conv3d (3 -> 16, k=2, 1.4 GFLOP)
writing the 118 MB pooled output directly; eager runs cuDNN's stride-2 transposed convolution (a slow dgrad
path for 3 input channels: most of eager's time), then scales and pools the 1 GB intermediate and runs two more
passes.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def fold_plan(kernel: int, stride: int, padding: int) -> tuple[int, list[list[int]]]:
    """(t_min, taps): pooled output q reads x[q + t_min + j] with the sum of w[k] for k in taps[j]."""
    pairs = [((r + padding - k) // stride, k) for r in range(stride) for k in range(kernel)
             if (r + padding - k) % stride == 0]
    t_min, t_max = min(t for t, _ in pairs), max(t for t, _ in pairs)
    taps = [[k for t, k in pairs if t == tt] for tt in range(t_min, t_max + 1)]
    return t_min, taps


def fold_weight(w: torch.Tensor, plans: list[tuple[int, list[list[int]]]]) -> torch.Tensor:
    """ConvTranspose weight (Cin, Cout, K0, K1, K2) -> Conv weight (Cout, Cin, T0, T1, T2) of the pooled sums."""
    for d, (_, taps) in enumerate(plans):
        dim = 2 + d
        parts = []
        for ks in taps:
            s = w.narrow(dim, ks[0], 1) if ks else torch.zeros_like(w.narrow(dim, 0, 1))
            for k in ks[1:]:
                s = s + w.narrow(dim, k, 1)
            parts.append(s)
        w = torch.cat(parts, dim)
    return w.transpose(0, 1)


def pooled_conv_transpose3d(x: torch.Tensor, conv: nn.ConvTranspose3d, plans, weight_scale, bias) -> torch.Tensor:
    """AvgPool3d(S)(conv_transpose(x) without bias) * weight_scale + bias[c], as one conv3d."""
    w = fold_weight(conv.weight, plans) * weight_scale
    pads, starts, sizes = [], [], []
    for d, (t_min, taps) in enumerate(plans):
        n_in = x.shape[2 + d]
        s, p, k, op = conv.stride[d], conv.padding[d], conv.kernel_size[d], conv.output_padding[d]
        q = ((n_in - 1) * s - 2 * p + k + op) // s  # pooled length (AvgPool floors)
        left = max(0, -t_min)
        right = max(0, q - 1 + t_min + len(taps) - 1 - (n_in - 1))
        pads.append((left, right))
        starts.append(t_min + left)
        sizes.append(q)
    if any(lo or hi for lo, hi in pads):
        x = F.pad(x, [v for lo, hi in reversed(pads) for v in (lo, hi)])
    y = F.conv3d(x, w, bias)
    for d in range(3):
        if starts[d] != 0 or y.shape[2 + d] != sizes[d]:
            y = y.narrow(2 + d, starts[d], sizes[d])
    return y.contiguous()


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale1, scale2, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.scale1 = nn.Parameter(torch.tensor(scale1))
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale2 = nn.Parameter(torch.tensor(scale2))
        ct = self.conv_transpose
        if ct.dilation != (1, 1, 1) or ct.groups != 1 or any(s != 2 for s in ct.stride):
            raise ValueError("the pooled-conv rewrite needs stride 2 (= the AvgPool3d(2) window), groups 1, "
                             "dilation 1")
        self.plans = [fold_plan(k, s, p) for k, s, p in zip(ct.kernel_size, ct.stride, ct.padding, strict=True)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        both = self.scale1 * self.scale2
        bias = ct.bias * both + self.bias.view(-1) * self.scale2
        return pooled_conv_transpose3d(x, ct, self.plans, both / 8.0, bias)
