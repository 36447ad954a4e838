"""Linear (+ ReLU) on a few rows as ONE Triton matrix-vector kernel, and the Linear/ReLU stack of KernelBench's
MLP tasks built on it (level 3 in ``kernelbench_v0``: 1_MLP and 2_ShallowWideMLP use :class:`MatVecMLP`, 4_LeNet5
its classifier's :func:`linear_act`, 3_DeepNarrowMLP the layer stack :func:`mlp_layers`).

At a batch of a few rows a linear layer is a matrix-vector product bound by reading its weight, while eager runs
``addmm`` (with a bias copy) and a separate ReLU, each a launch. :func:`linear_act` is one kernel with the bias and
ReLU fused: a program takes ``BLOCK_N`` = 8 output features of one row and runs over the inputs in ``BLOCK_K`` =
512-wide chunks of fp32 multiply-adds (4 warps), so each weight element is read once per row. The sums are ordered
differently from cuBLAS (within fp32 rounding). fp32 CUDA input of at most :data:`MAX_ROWS` rows; elsewhere
``torch.addmm`` [+ ReLU] (:func:`linear_act_ref`).
"""

from __future__ import annotations

import torch
import torch.nn as nn

from .._triton import tl, triton
from .cudagraph import CUDAGraphForward

__all__ = ["MAX_ROWS", "MatVecMLP", "linear_act", "linear_act_ref", "linear_act_triton", "mlp_layers"]

MAX_ROWS = 16  #: more rows than this go to ``torch.addmm``: the kernel reads the weight once per row


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


def linear_act_ref(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, relu: bool) -> torch.Tensor:
    """``[relu](x @ weight.T + bias)`` as ``torch.addmm`` [+ in-place ReLU]: x (M, K), weight (N, K), bias (N,)
    -> (M, N), any dtype and device."""
    y = torch.addmm(bias, x, weight.t())
    return y.relu_() if relu else y


def linear_act_triton(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, relu: bool) -> torch.Tensor:
    """``[relu](x @ weight.T + bias)`` as one launch of the Triton kernel, grid ``(cdiv(N, 8), M)``: x (M, K)
    fp32 (made contiguous), weight (N, K) and bias (N,) fp32 contiguous, all on one device -> (M, N) fp32.
    No dispatch: :func:`linear_act` picks this or the reference."""
    m, k = x.shape
    n = weight.shape[0]
    x = x.contiguous()
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    _linear_act_kernel[(triton.cdiv(n, 8), m)](x, weight, bias, y, k, n, RELU=relu, BLOCK_N=8, BLOCK_K=512,
                                               num_warps=4)
    return y


def linear_act(x: torch.Tensor, lin: nn.Linear, relu: bool) -> torch.Tensor:
    """``[relu](lin(x))`` for x (M, in_features) -> (M, out_features), from ``lin``'s live parameters: one Triton
    matrix-vector kernel with the bias and ReLU fused (:func:`linear_act_triton`) on a 2-D fp32 CUDA tensor of at
    most :data:`MAX_ROWS` rows, ``torch.addmm`` [+ ReLU] (:func:`linear_act_ref`) otherwise."""
    if not (x.is_cuda and x.dtype == torch.float32 and x.dim() == 2 and x.shape[0] <= MAX_ROWS):
        return linear_act_ref(x, lin.weight, lin.bias, relu)
    return linear_act_triton(x, lin.weight, lin.bias, relu)


def mlp_layers(input_size: int, hidden_layer_sizes: list[int], output_size: int) -> nn.Sequential:
    """KernelBench's MLP stack, as its MLP tasks build it (same modules in the same order, hence the same
    parameter names): Linear(input_size, h0), ReLU, Linear(h0, h1), ReLU, ..., Linear(h_last, output_size)."""
    layers = []
    width = input_size
    for size in hidden_layer_sizes:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    layers.append(nn.Linear(width, output_size))
    return nn.Sequential(*layers)


class MatVecMLP(nn.Module):
    """KernelBench's MLP layout: ``network`` = :func:`mlp_layers` (the tasks' parameter names). Forward:
    x (M, input_size) -> (M, output_size), one :func:`linear_act` per Linear (ReLU fused into every hidden one),
    the whole forward captured once as a CUDA graph (:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`;
    eager on CPU). The weights are read from the live parameters on every replay."""

    def __init__(self, input_size: int, hidden_layer_sizes: list[int], output_size: int) -> None:
        super().__init__()
        self.network = mlp_layers(input_size, hidden_layer_sizes, output_size)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        layers = list(self.network)
        for lin in layers[:-1:2]:  # every hidden Linear is followed by a ReLU
            x = linear_act(x, lin, True)
        return linear_act(x, layers[-1], False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x)
