"""KernelBench level 3, 42_GRUBidirectionalHidden (x: (512, 10, 128) fp32, sequence first; 6-layer bidirectional GRU,
hidden 256; returns h_n (12, 10, 256)).

The reference is launch-bound, not compute-bound: cuDNN's RNN forward (the standard algorithm PyTorch uses) launches
a small GEMM and an elementwise kernel for every time step of every layer, about 12 300 launches per call, and its
host code between launches costs more than the kernels. Here the whole forward is ONE CUDA graph
(:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): the same cuDNN kernels on the same live weights
(parameters are updated in place by ``load_state_dict``, the graph reads their storage on every replay), the initial
state copied in as an input on every call (a plain tensor attribute: the graph does not hold its storage), the
outputs copied out. fp32 throughout; TF32 and cuDNN flags untouched. Off CUDA or with gradients on it runs eagerly.
A persistent Triton recurrence (one launch per layer, hidden units split across programs with a step barrier) was
tried first and lost to this graph at every launch config (fastest 22.9 ms vs 8.4 ms for the LSTM:
benchmarks/results/2026-11-26-recurrent-probe-h100/). Probe on an H100 (2026-11-26, the same results folder, CUDA
events, not the harness): the bidirectional GRU 80.63 ms eager, 20.32 ms as one graph (same cuDNN kernels, outputs
bit-identical).
Measured on an H100 (2026-11-26, sandboxed harness, eager baseline): 3.48x, 95% CI [3.42, 3.51]
(benchmarks/results/2026-11-26-kernelbench-v0-release-h100.md).
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward

# the task's constants (its __init__ draws the initial state with the module-level batch size)
batch_size = 10
seq_len = 512


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=3, bias=True, batch_first=False):
        super().__init__()
        # the same draws in the same order as the task: the initial state is part of the task, not a parameter
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=True)
        self.h0 = torch.randn((num_layers * 2, batch_size, hidden_size))
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        output, h_n = self.gru(x, h0)
        return h_n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x, self.h0.to(x.device))  # the task's state is never updated
