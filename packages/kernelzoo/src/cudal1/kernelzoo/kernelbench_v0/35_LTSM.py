"""KernelBench level 3, 35_LTSM (x: (10, 512, 128) fp32; 6-layer LSTM, hidden 256, batch_first; Linear 256 -> 10 on the
last step's output -> (10, 10)).

The reference is launch-bound, not compute-bound: cuDNN's RNN forward (the standard algorithm PyTorch uses) launches
a small GEMM and an elementwise kernel for every time step of every layer, about 6 100 launches per call, and its
host code between launches costs more than the kernels. Here the whole forward is ONE CUDA graph
(:class:`~cudal1.kernelzoo.blocks.cudagraph.CUDAGraphForward`): the same cuDNN kernels on the same live weights
(parameters are updated in place by ``load_state_dict``, the graph reads their storage on every replay), the initial
state copied in as an input on every call (a plain tensor attribute: the graph does not hold its storage), the
outputs copied out. fp32 throughout; TF32 and cuDNN flags untouched. Off CUDA or with gradients on it runs eagerly.
A persistent Triton recurrence (one launch per layer, hidden units split across programs with a step barrier) was
tried first and lost to this graph at every launch config (benchmarks/results/2026-11-26-recurrent-probe-h100/).
A probe (the same results folder, CUDA events, not the harness) checked that the graph's outputs are
bit-identical to eager's (same cuDNN kernels).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
"""

import torch
import torch.nn as nn

from cudal1.kernelzoo.blocks.cudagraph import CUDAGraphForward

# the task's constants (its __init__ draws the initial state with the module-level batch size)
batch_size = 10
sequence_length = 512


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        # the same draws in the same order as the task: the initial state is part of the task, not a parameter
        self.h0 = torch.randn((num_layers, batch_size, hidden_size))
        self.c0 = torch.randn((num_layers, batch_size, hidden_size))
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)
        self._graph = CUDAGraphForward(self._forward)

    def _forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x, (h0, h0))  # the task's forward sets c0 = h0 before the call
        return self.fc(out[:, -1, :])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the task's forward moves h0 to x's device and sets c0 = h0 (c0 as drawn is never used); the state is
        # never updated, so nothing is assigned to self here
        return self._graph(x, self.h0.to(x.device))
