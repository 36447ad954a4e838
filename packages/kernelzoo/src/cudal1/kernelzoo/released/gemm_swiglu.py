"""Released solution for built-in task `gemm_swiglu`: the two cuBLAS fp32 GEMMs, then one fused Triton pass
``silu(gate) * up`` written over the gate GEMM's output (two reads, one write; no SiLU temporary)."""

import torch
import torch.nn as nn

from cudal1.kernelzoo.ops.swiglu import swiglu_


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = torch.matmul(x, self.gate.weight.t())
        return swiglu_(g, torch.matmul(x, self.up.weight.t()))
