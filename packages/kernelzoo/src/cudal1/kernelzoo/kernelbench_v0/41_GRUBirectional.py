"""KernelBench level 3, 41_GRUBirectional (x: (512, 10, 128) fp32, sequence first; 6-layer bidirectional GRU, hidden
256; returns the output sequence (512, 10, 512)).

Launch-bound (about 12 300 cuDNN launches per call); the whole forward replayed as ONE CUDA graph of cuDNN's own
kernels on the live weights, the initial state copied in on every call: the approach and its checks are described in
35_LTSM.py. A probe (benchmarks/results/2026-11-26-recurrent-probe-h100/, CUDA events, not the harness)
checked that the bidirectional GRU as one graph gives outputs bit-identical to eager's (same cuDNN kernels).

Measured figures: ``kernelbench_v0/measured.json`` (per GPU and baseline, checked against the results stores);
the figures this docstring once carried: benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md.
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
        return output

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._graph(x, self.h0.to(x.device))  # the task's state is never updated
