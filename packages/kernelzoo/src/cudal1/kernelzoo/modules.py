"""``nn.Module`` forms of the zoo's ops, for building models or patching them (:mod:`cudal1.kernelzoo.patch`).
Each computes with the zoo op (its kernel on CUDA, its reference on CPU) and keeps its gradient."""

from __future__ import annotations

import torch
from torch import nn

from .ops.cross_entropy_loss import cross_entropy
from .ops.fused_linear_cross_entropy import fused_linear_cross_entropy
from .ops.geglu import geglu
from .ops.jsd import jsd
from .ops.layer_norm import layer_norm
from .ops.rms_norm import rms_norm
from .ops.swiglu import swiglu

__all__ = ["JSD", "CrossEntropyLoss", "FusedLinearCrossEntropyLoss", "GeGLUMLP", "LayerNorm", "RMSNorm", "SwiGLUMLP"]


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
        m = cls(weight.shape[0], eps, device="meta")  # no storage for the placeholder weight
        m.weight = weight
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


class GeGLUMLP(nn.Module):
    """``down_proj(gelu(gate_proj(x), approximate) * up_proj(x))`` with the gate in one zoo kernel (Gemma's MLP)."""

    def __init__(self, gate_proj: nn.Module, up_proj: nn.Module, down_proj: nn.Module,
                 approximate: str = "tanh") -> None:
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj, self.approximate = gate_proj, up_proj, down_proj, approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(geglu(self.gate_proj(x), self.up_proj(x), self.approximate))


class LayerNorm(nn.Module):
    """Layer norm over the last dimension with ``weight`` and ``bias`` (N,) (as ``nn.LayerNorm(N, eps)``)."""

    def __init__(self, hidden_size: int, eps: float = 1e-5, *, device: torch.device | str | None = None,
                 dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size, device=device, dtype=dtype))
        self.bias = nn.Parameter(torch.zeros(hidden_size, device=device, dtype=dtype))
        self.eps = float(eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.weight.to(x.dtype), self.bias.to(x.dtype), self.eps)


class CrossEntropyLoss(nn.Module):
    """``nn.CrossEntropyLoss`` for class-index targets: ``ignore_index``, ``label_smoothing``, ``reduction``.
    Input (N, C) logits and (N,) targets; (B, S, C) / (B, S) are flattened."""

    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0, reduction: str = "mean") -> None:
        super().__init__()
        self.ignore_index, self.label_smoothing, self.reduction = ignore_index, label_smoothing, reduction

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return cross_entropy(logits.flatten(0, -2), targets.flatten(), ignore_index=self.ignore_index,
                             label_smoothing=self.label_smoothing, reduction=self.reduction)


class FusedLinearCrossEntropyLoss(nn.Module):
    """Cross-entropy of ``hidden @ lm_head_weight.T (+ bias)`` without the logits (see
    :mod:`cudal1.kernelzoo.ops.fused_linear_cross_entropy`). ``forward(weight, hidden, targets, bias=None)``;
    (B, S, H) hidden states and (B, S) targets are flattened."""

    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0, reduction: str = "mean") -> None:
        super().__init__()
        self.ignore_index, self.label_smoothing, self.reduction = ignore_index, label_smoothing, reduction

    def forward(self, weight: torch.Tensor, hidden: torch.Tensor, targets: torch.Tensor,
                bias: torch.Tensor | None = None) -> torch.Tensor:
        return fused_linear_cross_entropy(hidden.flatten(0, -2), weight, targets.flatten(), bias,
                                          ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                          reduction=self.reduction)


class JSD(nn.Module):
    """The generalised Jensen-Shannon divergence of student and teacher log-probabilities (``beta``, ``ignore_index``,
    ``reduction``; :mod:`cudal1.kernelzoo.ops.jsd`). ``forward(log_q, log_p, labels=None)``."""

    def __init__(self, beta: float = 0.5, ignore_index: int = -100, reduction: str = "batchmean") -> None:
        super().__init__()
        self.beta, self.ignore_index, self.reduction = beta, ignore_index, reduction

    def forward(self, log_q: torch.Tensor, log_p: torch.Tensor, labels: torch.Tensor | None = None) -> torch.Tensor:
        return jsd(log_q.flatten(0, -2), log_p.flatten(0, -2), None if labels is None else labels.flatten(),
                   beta=self.beta, ignore_index=self.ignore_index, reduction=self.reduction)
