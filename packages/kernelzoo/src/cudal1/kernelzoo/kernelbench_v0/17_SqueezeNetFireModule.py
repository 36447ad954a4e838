"""KernelBench level 3, 17_SqueezeNetFireModule (x: (10, 3, 224, 224) fp32, 6 MB; squeeze 1x1 conv 3 -> 6 + ReLU,
then expand1x1 (6 -> 64) + ReLU and expand3x3 (6 -> 64, padding 1) + ReLU, concatenated -> (10, 128, 224, 224),
257 MB).

The whole module is ONE Triton kernel. A program takes a block of pixels of one image and every output channel:
it recomputes the squeezed activations relu(W_s x + b_s) at the 3x3 neighbourhood of its pixels straight from
the 3-channel input (zero outside the image, as the expand conv's zero padding of the squeezed map), and
accumulates both expand convolutions as outer products (the 1x1 weights act at the centre tap), adds the biases,
applies ReLU and writes each output channel at its place in the concatenated result. Eager writes and re-reads
the squeezed map, writes two 128 MB conv outputs, runs two in-place ReLUs over them and copies both into the
concatenation (~1.3 GB of traffic, 7 launches); here the 6 MB input is read and the 257 MB output written once.
The work is ~7 GFLOP of fp32 FMA (no tensor cores, no TF32). fp32 CUDA input; elsewhere the PyTorch formulation
(squeeze conv, ReLU, the two expand convs).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from cudal1.kernelzoo._triton import tl, triton


@triton.jit
def _fire_kernel(x_ptr, ws_ptr, bs_ptr, w1_ptr, b1_ptr, w3_ptr, b3_ptr, y_ptr, CIN, CS, E1, E3, H, W,
                 BLOCK_O: tl.constexpr, BLOCK_P: tl.constexpr):
    """y[n, o, p] for BLOCK_P pixels p of image n and BLOCK_O output channels o (o < E1: expand1x1, else
    expand3x3 channel o - E1): relu(b[o] + sum_{cs, tap} w[o, cs, tap] * relu(squeeze(x))[cs, p + tap])."""
    n = tl.program_id(2).to(tl.int64)
    HW = H * W
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    pm = p < HW
    ph, pw = p // W, p % W
    o = tl.program_id(1) * BLOCK_O + tl.arange(0, BLOCK_O)
    is1 = o < E1
    is3 = (o >= E1) & (o < E1 + E3)
    o3 = tl.where(is3, o - E1, 0)
    o1 = tl.where(is1, o, 0)
    acc = tl.load(b1_ptr + o1, mask=is1, other=0.0) + tl.load(b3_ptr + o3, mask=is3, other=0.0)
    acc = tl.broadcast_to(acc[:, None], (BLOCK_O, BLOCK_P))
    x_n = x_ptr + n * CIN * HW
    for cs in range(CS):
        b_s = tl.load(bs_ptr + cs)
        for tap in tl.static_range(9):
            hh = ph + (tap // 3 - 1)
            ww = pw + (tap % 3 - 1)
            valid = pm & (hh >= 0) & (hh < H) & (ww >= 0) & (ww < W)
            src = hh * W + ww
            s = tl.zeros((BLOCK_P,), dtype=tl.float32) + b_s
            for ci in range(CIN):
                s += tl.load(ws_ptr + cs * CIN + ci) * tl.load(x_n + ci * HW + src, mask=valid, other=0.0)
            s = tl.where(valid, tl.maximum(s, 0.0), 0.0)
            wv = tl.load(w3_ptr + (o3 * CS + cs) * 9 + tap, mask=is3, other=0.0)
            if tap == 4:
                wv += tl.load(w1_ptr + o1 * CS + cs, mask=is1, other=0.0)
            acc += wv[:, None] * s[None, :]
    out = y_ptr + (n * (E1 + E3) + o[:, None]) * HW + p[None, :]
    tl.store(out, tl.maximum(acc, 0.0), mask=(is1 | is3)[:, None] & pm[None, :])


def fire_triton(x: torch.Tensor, ws: torch.Tensor, bs: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor,
                w3: torch.Tensor, b3: torch.Tensor) -> torch.Tensor:
    """The fused fire module (contiguous fp32 tensors; 3x3 expand kernel with padding 1)."""
    n, cin, h, w = x.shape
    cs, e1, e3 = ws.shape[0], w1.shape[0], w3.shape[0]
    x = x.contiguous()
    y = torch.empty((n, e1 + e3, h, w), device=x.device, dtype=x.dtype)
    block_o = min(128, triton.next_power_of_2(e1 + e3))
    block_p = 64
    grid = (triton.cdiv(h * w, block_p), triton.cdiv(e1 + e3, block_o), n)
    _fire_kernel[grid](x, ws.contiguous(), bs.contiguous(), w1.contiguous(), b1.contiguous(), w3.contiguous(),
                       b3.contiguous(), y, cin, cs, e1, e3, h, w, BLOCK_O=block_o, BLOCK_P=block_p, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sq, e1, e3 = self.squeeze, self.expand1x1, self.expand3x3
        if x.is_cuda and x.dtype == torch.float32:
            return fire_triton(x, sq.weight, sq.bias, e1.weight, e1.bias, e3.weight, e3.bias)
        s = F.relu(F.conv2d(x, sq.weight, sq.bias))
        return torch.cat([F.relu(F.conv2d(s, e1.weight, e1.bias)), F.relu(F.conv2d(s, e3.weight, e3.bias, padding=1))], 1)
