"""KernelBench level 3, 6_GoogleNetInceptionModule (x: (10, 480, 224, 224) fp32, 963 MB -> (10, 512, 224, 224);
branches: 1x1 conv 480 -> 192; 1x1 480 -> 96 then 3x3 -> 208; 1x1 480 -> 16 then 5x5 -> 48; 3x3/1 max pool then
1x1 480 -> 64; concatenated on channels). Second version: the first (the three 1x1 convs over ``x`` stacked into
one cuDNN conv) was no faster than eager.

Compute-bound: ~376 GFLOP of fp32 convolution (the 3x3 conv ~180, the 1x1 convs ~177, the 5x5 ~19). Eager runs
them as cuDNN fp32 implicit GEMMs (``sm80_xmma_fprop_implicit_gemm_f32f32...ffma``), which run well below
cuBLAS's fp32 SGEMM on large shapes (``benchmarks/probes/probe_cudnn_fused.py`` on ResNet shapes;
benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md), both without TF32. Here every convolution is a
cuBLAS GEMM, one image at a time (each GEMM is 2-18 GFLOP, enough to fill the GPU):

- a 1x1 conv is ``W (C_out x C_in) @ x[n] (C_in x H*W)`` on the NCHW image as it lies (no copy);
- the 3x3 and 5x5 convs are GEMMs over the image's im2col matrix (``F.unfold``: (864, H*W) and (400, H*W), ~0.17
  and ~0.08 GB per image, written once and read by the GEMM);
- the two reduce convs (480 -> 96 and 480 -> 16) are one GEMM with their weights stacked (the rows of the stacked
  result are the two reduce outputs, each contiguous per image, so ``unfold`` reads them without a copy);
- each branch's GEMM writes its channel range of the output directly (``addmm(..., out=out[n, c0:c1])``: per
  image that range is a contiguous C x H*W matrix), so there is no concatenation pass (eager: ~2 GB moved); the
  bias enters as the GEMM's ``C`` operand (PyTorch writes the broadcast bias into the range, the GEMM accumulates
  onto it with beta = 1: one write pass where eager's bias add is a read and a write);
- the 3x3/1 max pool is the zoo's Triton ``max_pool2d`` (faster than PyTorch's on the same access pattern in the
  level-1 tuning run; ~1.9 GB moved here).
The weights are read (and the reduce weights stacked) from the live parameters on every call; nothing is cached.
The sums run in a different order from cuDNN's (fp32 throughout): within fp32 rounding of the reference.
No CUDA graph: the ~130 launches of a call are queued far ahead of the GPU work, and a graph would add a
copy of the 963 MB input to every call. With gradients enabled (``out=`` does not differentiate) the same
branches run through ``F.conv2d``.
The gain rests on cuBLAS being faster than cuDNN at these shapes: the im2col writes, the bias operands and the
pool are passes of their own, which a cuBLAS no faster than cuDNN would not pay back.

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo.ops.max_pool2d import max_pool2d


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_1x1, reduce_3x3, out_3x3, reduce_5x5, out_5x5, pool_proj):
        super().__init__()
        self.branch1x1 = nn.Conv2d(in_channels, out_1x1, kernel_size=1)
        self.branch3x3 = nn.Sequential(nn.Conv2d(in_channels, reduce_3x3, kernel_size=1),
                                       nn.Conv2d(reduce_3x3, out_3x3, kernel_size=3, padding=1))
        self.branch5x5 = nn.Sequential(nn.Conv2d(in_channels, reduce_5x5, kernel_size=1),
                                       nn.Conv2d(reduce_5x5, out_5x5, kernel_size=5, padding=2))
        self.branch_pool = nn.Sequential(nn.MaxPool2d(kernel_size=3, stride=1, padding=1),
                                         nn.Conv2d(in_channels, pool_proj, kernel_size=1))

    def _branches_autograd(self, x: torch.Tensor) -> torch.Tensor:
        """The four branches through ``F.conv2d`` (differentiable), concatenated."""
        c1, (r3, c3), (r5, c5), cp = self.branch1x1, self.branch3x3, self.branch5x5, self.branch_pool[1]
        b3 = F.conv2d(F.conv2d(x, r3.weight, r3.bias), c3.weight, c3.bias, padding=c3.padding)
        b5 = F.conv2d(F.conv2d(x, r5.weight, r5.bias), c5.weight, c5.bias, padding=c5.padding)
        bp = F.conv2d(F.max_pool2d(x, 3, 1, 1), cp.weight, cp.bias)
        return torch.cat([F.conv2d(x, c1.weight, c1.bias), b3, b5, bp], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled():
            return self._branches_autograd(x)
        c1, (r3, c3), (r5, c5), cp = self.branch1x1, self.branch3x3, self.branch5x5, self.branch_pool[1]
        x = x.contiguous()
        n, cin, h, w = x.shape
        o1, o3, o5, op = c1.out_channels, c3.out_channels, c5.out_channels, cp.out_channels
        n3 = r3.out_channels
        out = torch.empty((n, o1 + o3 + o5 + op, h, w), device=x.device, dtype=x.dtype)
        ov = out.view(n, o1 + o3 + o5 + op, h * w)
        xv = x.view(n, cin, h * w)
        w1, wp = c1.weight.reshape(o1, cin), cp.weight.reshape(op, cin)
        wr = torch.cat([r3.weight.reshape(n3, cin), r5.weight.reshape(-1, cin)])
        br = torch.cat([r3.bias, r5.bias]).unsqueeze(1)
        w3, w5 = c3.weight.reshape(o3, -1), c5.weight.reshape(o5, -1)
        s3, s5, sp = o1, o1 + o3, o1 + o3 + o5
        for i in range(n):
            xi = xv[i]
            torch.addmm(c1.bias.unsqueeze(1), w1, xi, out=ov[i, :s3])
            r = torch.addmm(br, wr, xi)  # (reduce_3x3 + reduce_5x5, H*W): both reduce convs
            cols = F.unfold(r[:n3].view(1, n3, h, w), c3.kernel_size, padding=c3.padding)[0]
            torch.addmm(c3.bias.unsqueeze(1), w3, cols, out=ov[i, s3:s5])
            cols = F.unfold(r[n3:].view(1, -1, h, w), c5.kernel_size, padding=c5.padding)[0]
            torch.addmm(c5.bias.unsqueeze(1), w5, cols, out=ov[i, s5:sp])
            pooled = max_pool2d(x[i:i + 1], 3, 1, 1).view(cin, h * w)
            torch.addmm(cp.bias.unsqueeze(1), wp, pooled, out=ov[i, sp:])
        return out
