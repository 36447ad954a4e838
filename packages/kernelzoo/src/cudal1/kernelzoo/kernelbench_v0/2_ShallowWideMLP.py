"""KernelBench level 3, 2_ShallowWideMLP (x: (1, 1000) fp32; Linear 1000 -> 2000, ReLU,
Linear 2000 -> 2000, ReLU, Linear 2000 -> 10 -> (1, 10)).

Launch-bound: a batch of one row is three matrix-vector products on 24 MB of weights (the 2000 x 2000 one, 16 MB,
is ~6 us at HBM rate), while eager pays host launch overhead for 5 kernels (3 linears, 2 ReLUs; ~8 on the GPU with
addmm's bias copies) on every call. Here each layer is ONE Triton matrix-vector kernel with the bias and ReLU fused
(a program takes 8 output features of one row and runs over the inputs in 512-wide chunks of fp32 multiply-adds;
250 programs read the 2000 x 2000 weight once), and the three kernels are captured once as a CUDA graph
(:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`), so a call is one input copy, one graph launch and
one output copy. The weights are read from the live parameters on every replay (nothing is cached). More than 16
rows and CPU tensors use ``torch.addmm`` + ReLU. All fp32, no reduced precision; the sums are ordered differently
from cuBLAS (within fp32 rounding).
Eager reference 0.128 ms on an H100; expected ~0.05-0.06 ms (~2-2.5x): ~15 us of GPU work plus three launches
and the harness's synchronisation.
Measured on an H100 (2026-11-26, sandboxed harness, eager baseline): 2.14x, 95% CI [2.13, 2.16] (benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo._triton import tl, triton
from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward


@triton.jit
def _linear_act_kernel(x_ptr, w_ptr, b_ptr, y_ptr, K, N, RELU: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    """y[r, n] = [relu](sum_k x[r, k] w[n, k] + b[n]) for BLOCK_N outputs n of one row r (fp32 FMAs)."""
    row = tl.program_id(1).to(tl.int64)
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    nm = rn < N
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        km = rk < K
        xv = tl.load(x_ptr + row * K + rk, mask=km, other=0.0)
        w = tl.load(w_ptr + rn[:, None].to(tl.int64) * K + rk[None, :], mask=nm[:, None] & km[None, :], other=0.0)
        acc += w * xv[None, :]
    out = tl.sum(acc, 1) + tl.load(b_ptr + rn, mask=nm, other=0.0)
    if RELU:
        out = tl.maximum(out, 0.0)
    tl.store(y_ptr + row * N + rn, out, mask=nm)


def linear_act(x: torch.Tensor, lin: nn.Linear, relu: bool) -> torch.Tensor:
    """[relu](lin(x)) for a few rows of x: one Triton matrix-vector kernel with the bias and ReLU fused on fp32
    CUDA tensors (``torch.addmm`` [+ ReLU] elsewhere, and for more than 16 rows)."""
    if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and x.shape[0] <= 16):
        y = torch.addmm(lin.bias, x, lin.weight.t())
        return y.relu_() if relu else y
    m, k = x.shape
    n = lin.out_features
    x = x.contiguous()
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    _linear_act_kernel[(triton.cdiv(n, 8), m)](x, lin.weight, lin.bias, y, k, n, RELU=relu, BLOCK_N=8,
                                               BLOCK_K=512, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        width = input_size
        for size in hidden_layer_sizes:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        layers.append(nn.Linear(width, output_size))
        self.network = nn.Sequential(*layers)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = list(self.network)
        for lin in layers[:-1:2]:  # every hidden Linear is followed by a ReLU
            x = linear_act(x, lin, True)
        return linear_act(x, layers[-1], False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
