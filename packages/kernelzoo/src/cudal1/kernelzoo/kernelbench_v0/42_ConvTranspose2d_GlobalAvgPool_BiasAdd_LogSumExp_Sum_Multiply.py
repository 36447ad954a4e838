"""KernelBench level 2, 42_ConvTranspose2d_GlobalAvgPool_BiasAdd_LogSumExp_Sum_Multiply (x: (128, 3, 32, 32) fp32;
ConvTranspose2d(3 -> 16, k=3) -> (128, 16, 34, 34); mean over the positions; ``+ bias`` (16, 1, 1); logsumexp over
the 16 channels; sum over the two size-1 dims; ``* 10.0`` -> (128, 1)).

Exact rewrite: with no padding every (input pixel, kernel tap) pair of a transposed convolution lands inside its
output (for any stride, dilation and output padding; the output padding only adds bias-only rows), so the sum of
output channel ``co`` over all positions is ``sum_ci S[n, ci] * Wsum[ci, co] + OH * OW * cb[co]``, where ``S`` is
the plain sum of an input channel and ``Wsum`` the sum of a (ci, co) kernel over its taps. The global average pool
is then a (3x16) matrix-vector product per sample, and the 8.9 MB transposed-conv output never exists.
ONE Triton kernel, one program per sample: the channel sums of x (12 KB), the tap sums of the weight, the means,
``+ bias``, the logsumexp (max + log of the sum of exp(v - max)) and the scale; one write of the (128, 1) result.
Replayed through a CUDA graph (``CUDAGraphForward``): per call one input copy, one graph launch and one output copy
of host time, against eager's conv-transpose, mean, add, logsumexp (several kernels), sum and mul launches. Other
configurations (padding, groups) run the PyTorch form.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _fused_kernel(x_ptr, w_ptr, cb_ptr, b_ptr, out_ptr, C_IN, C, HW, KK, inv_npos,
                  BLOCK_CI: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    n = tl.program_id(0)
    ci = tl.arange(0, BLOCK_CI)
    cim = ci < C_IN
    p = tl.arange(0, BLOCK_P)
    xb = x_ptr + n.to(tl.int64) * C_IN * HW
    acc = tl.zeros([BLOCK_CI, BLOCK_P], tl.float32)
    for p0 in range(0, HW, BLOCK_P):
        pp = p0 + p
        acc += tl.load(xb + ci[:, None] * HW + pp[None, :], mask=cim[:, None] & (pp < HW)[None, :], other=0.0)
    s = tl.sum(acc, 1)  # (BLOCK_CI,) channel sums of x
    co = tl.arange(0, BLOCK_C)
    com = co < C
    wm = cim[:, None] & com[None, :]
    wsum = tl.zeros([BLOCK_CI, BLOCK_C], tl.float32)
    for t in range(KK):
        wsum += tl.load(w_ptr + (ci[:, None] * C + co[None, :]) * KK + t, mask=wm, other=0.0)
    m = tl.sum(s[:, None] * wsum, 0) * inv_npos + tl.load(cb_ptr + co, mask=com, other=0.0)
    v = tl.where(com, m + tl.load(b_ptr + co, mask=com, other=0.0), -float("inf"))
    mx = tl.max(v, 0)
    mx_safe = tl.where((mx == float("inf")) | (mx == -float("inf")), 0.0, mx)
    lse = tl.log(tl.sum(tl.exp(v - mx_safe), 0)) + mx_safe
    tl.store(out_ptr + n, lse * 10.0)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self._graph = CUDAGraphForward(self._forward)

    def _fits(self, x: torch.Tensor) -> bool:
        ct = self.conv_transpose
        return (x.is_cuda and x.dtype == torch.float32 and x.dim() == 4 and ct.weight.dtype == torch.float32
                and ct.bias is not None and ct.groups == 1 and tuple(ct.padding) == (0, 0)
                and ct.padding_mode == "zeros" and tuple(self.bias.shape) == (ct.out_channels, 1, 1)
                and ct.in_channels <= 64 and ct.out_channels <= 1024)

    def _out_hw(self, h: int, w: int) -> tuple[int, int]:
        ct = self.conv_transpose
        return tuple((s - 1) * st + d * (k - 1) + op + 1 for s, st, d, k, op in
                     zip((h, w), ct.stride, ct.dilation, ct.kernel_size, ct.output_padding, strict=True))

    def _triton(self, x: torch.Tensor) -> torch.Tensor:
        ct = self.conv_transpose
        x = x.contiguous()
        w = ct.weight.contiguous()
        n, c_in, h, wd = x.shape
        c = ct.out_channels
        oh, ow = self._out_hw(h, wd)
        out = torch.empty((n, 1), device=x.device, dtype=x.dtype)
        _fused_kernel[(n,)](x, w, ct.bias, self.bias, out, c_in, c, h * wd, ct.kernel_size[0] * ct.kernel_size[1],
                            1.0 / (oh * ow), BLOCK_CI=max(2, triton.next_power_of_2(c_in)),
                            BLOCK_C=max(2, triton.next_power_of_2(c)),
                            BLOCK_P=min(1024, triton.next_power_of_2(h * wd)), num_warps=4)
        return out

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._fits(x):
            return self._triton(x)
        v = torch.mean(self.conv_transpose(x), dim=(2, 3), keepdim=True) + self.bias
        return torch.sum(torch.logsumexp(v, dim=1, keepdim=True), dim=(2, 3)) * 10.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
