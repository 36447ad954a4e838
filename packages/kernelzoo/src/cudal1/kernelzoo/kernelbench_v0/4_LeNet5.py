"""KernelBench level 3, 4_LeNet5 (x: (1, 1, 32, 32) fp32; conv5x5 1 -> 6 + ReLU + 2x2 max pool, conv5x5 6 -> 16 +
ReLU + 2x2 max pool, Linear 400 -> 120 + ReLU, Linear 120 -> 84 + ReLU, Linear 84 -> num_classes).

Launch-bound: one 32 x 32 image is a few hundred kFLOP, while eager pays host launch overhead for ~12 kernels
(two cuDNN convolutions with their bias adds, ReLUs, pools, three linears; ~16 on the GPU with addmm's bias
copies) on every call. Here the convolutions stay cuDNN fp32 (in-place ReLU, max pool), each linear is ONE Triton
matrix-vector kernel with its bias and ReLU fused (a program takes 8 output features of one row, fp32
multiply-adds over the inputs), and the whole forward (~11 kernels) is captured once as a CUDA graph
(:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`), so a call is one input copy, one graph launch and
one output copy; the weights are read from the live parameters on every replay. More than 16 rows and CPU
tensors use ``torch.addmm`` + ReLU. All fp32, no reduced precision.
Eager reference 0.582 ms on an H100; expected ~0.05-0.07 ms (~8-10x): ~11 tiny kernels back to back inside the
graph (~2 us each) plus three launches and the harness's synchronisation.
Measured on an H100 (2026-11-26, sandboxed harness, eager baseline): 3.86x, 95% CI [3.73, 4.15] (benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

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
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=6, kernel_size=5, stride=1)
        self.conv2 = nn.Conv2d(in_channels=6, out_channels=16, kernel_size=5, stride=1)
        self.fc1 = nn.Linear(in_features=16 * 5 * 5, out_features=120)
        self.fc2 = nn.Linear(in_features=120, out_features=84)
        self.fc3 = nn.Linear(in_features=84, out_features=num_classes)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.conv2d(x, self.conv1.weight, self.conv1.bias).relu_(), 2, 2)
        x = F.max_pool2d(F.conv2d(x, self.conv2.weight, self.conv2.bias).relu_(), 2, 2)
        x = x.reshape(-1, 16 * 5 * 5)
        x = linear_act(x, self.fc1, True)
        x = linear_act(x, self.fc2, True)
        return linear_act(x, self.fc3, False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
