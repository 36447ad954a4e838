"""``nn.Module`` forms of the zoo's ops, for building models or patching them (:mod:`cudal1.kernelzoo.patch`).
Each computes with the zoo op (its kernel on CUDA, its reference on CPU) and keeps its gradient."""

from __future__ import annotations

import torch
from torch import nn

from .ops.rms_norm import rms_norm
from .ops.swiglu import swiglu

__all__ = ["RMSNorm", "SwiGLUMLP"]


class RMSNorm(nn.Module):
    """``y = x / sqrt(mean(x^2, -1) + eps) * weight`` over the last dimension (Llama's RMSNorm).

    Shapes: input (..., N), ``weight`` (N,); statistics in fp32; output in the input's dtype."""

    def __init__(self, hidden_size: int, eps: float = 1e-6, *, device: torch.device | str | None = None,
                 dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))
        self.eps = float(eps)

    @classmethod
    def from_weight(cls, weight: nn.Parameter, eps: float) -> RMSNorm:
        """An RMSNorm sharing ``weight`` (the same Parameter object: optimizers and state dicts see no change)."""
        m = cls.__new__(cls)
        nn.Module.__init__(m)
        m.weight = weight
        m.eps = float(eps)
        return m

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight if self.weight.dtype == x.dtype else self.weight.to(x.dtype)
        return rms_norm(x, w, self.eps)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"


class SwiGLUMLP(nn.Module):
    """``down_proj(silu(gate_proj(x)) * up_proj(x))`` with the activation and product in one zoo kernel.

    Shapes: input (..., hidden), output (..., hidden); the three projections are the given ``nn.Linear``s."""

    def __init__(self, gate_proj: nn.Module, up_proj: nn.Module, down_proj: nn.Module) -> None:
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = gate_proj, up_proj, down_proj

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(swiglu(self.gate_proj(x), self.up_proj(x)))
