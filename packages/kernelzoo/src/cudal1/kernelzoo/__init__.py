"""cudal1.kernelzoo: optimized ops, one module each (reference beside the Triton kernel, per-architecture
launch configs, ``torch.library`` registration, CPU fallback to the reference).

Partial (issue 4 is open): six ops so far, no raw CUDA yet, no per-task solutions, no benchmarks.

    import torch
    from cudal1.kernelzoo import relu, softmax, layer_norm
    y = softmax(torch.randn(8, 1000, device="cuda"))
"""

from .ops.gelu import gelu, gelu_ref
from .ops.layer_norm import layer_norm, layer_norm_ref
from .ops.relu import relu, relu_ref
from .ops.rms_norm import rms_norm, rms_norm_ref
from .ops.silu import silu, silu_ref
from .ops.softmax import softmax, softmax_ref

__all__ = ["gelu", "gelu_ref", "silu", "silu_ref", "layer_norm", "layer_norm_ref", "relu", "relu_ref", "rms_norm", "rms_norm_ref", "softmax", "softmax_ref"]
