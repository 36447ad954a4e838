"""KernelBench level 3, 37_LTSMCn (x: (10, 512, 128) fp32; 6-layer LSTM, hidden 256, batch_first; returns c_n (6, 10,
256)).

Launch-bound (about 6 100 cuDNN launches per call); the whole forward replayed as ONE CUDA graph of cuDNN's own
kernels on the live weights, the initial state copied in on every call: the approach and its checks are described in
35_LTSM.py. The task's Linear on the last step is computed and discarded by the reference: not computed here. A probe
(benchmarks/results/2026-11-26-recurrent-probe-h100/, CUDA events, not the harness) checked that the 6-layer LSTM
as one graph gives outputs bit-identical to eager's (same cuDNN kernels).

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
        _, (_, c_n) = self.lstm(x, (h0, h0))  # the task's forward sets c0 = h0 before the call
        return c_n  # the task also runs fc on the last step, whose result it discards: not computed here

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # the task's forward moves h0 to x's device and sets c0 = h0 (c0 as drawn is never used); the state is
        # never updated, so nothing is assigned to self here
        return self._graph(x, self.h0.to(x.device))
