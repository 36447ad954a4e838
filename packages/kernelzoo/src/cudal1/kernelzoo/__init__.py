"""cudal1.kernelzoo: optimized ops, one module each (``cudal1.kernelzoo.ops.<op>``: the PyTorch reference
``<op>_ref`` beside Triton kernel(s), raw CUDA C through CuPy for some ops, per-architecture launch configs,
``torch.library`` registration as ``torch.ops.cudal1.<op>``, CPU fallback to the reference), and released
per-task solutions for the built-in suite (:mod:`cudal1.kernelzoo.solutions`,
``cudal1-eval --suite builtin --solutions kernelzoo``).

    import torch
    from cudal1.kernelzoo import softmax, layer_norm, add_layer_norm
    y = softmax(torch.randn(8, 1000, device="cuda"))

Measured speedups live in benchmarks/results/ of the repository, never in this docstring.
"""

from .modules import (
    JSD,
    CrossEntropyLoss,
    FusedLinearCrossEntropyLoss,
    GeGLUMLP,
    LayerNorm,
    RMSNorm,
    SwiGLUMLP,
)
from .ops.add_layer_norm import add_layer_norm, add_layer_norm_, add_layer_norm_ref
from .ops.add_rms_norm import add_rms_norm, add_rms_norm_ref
from .ops.argmax_dim import argmax_dim, argmax_dim_ref
from .ops.avg_pool2d import avg_pool2d, avg_pool2d_ref
from .ops.avg_pool3d import avg_pool3d, avg_pool3d_ref
from .ops.batch_norm import batch_norm, batch_norm_ref
from .ops.bce_with_logits_mean import bce_with_logits_mean, bce_with_logits_mean_ref
from .ops.bias_act import bias_act, bias_act_, bias_act_ref
from .ops.bias_act_mean import bias_act_mean, bias_act_mean_ref
from .ops.bias_glu import bias_glu, bias_glu_ref
from .ops.bias_relu_max_pool2d import bias_relu_max_pool2d, bias_relu_max_pool2d_ref
from .ops.cosine_embedding_loss import cosine_embedding_loss, cosine_embedding_loss_ref
from .ops.cross_entropy_loss import cross_entropy, cross_entropy_loss, cross_entropy_loss_ref
from .ops.cudnn_conv import conv, conv_transpose
from .ops.cumsum import cumsum, cumsum_ref
from .ops.depthwise_conv2d import depthwise_conv2d, depthwise_conv2d_ref
from .ops.diag_matmul import diag_matmul, diag_matmul_ref
from .ops.elu import elu, elu_ref
from .ops.embedding_layer_norm import embedding_layer_norm, embedding_layer_norm_ref
from .ops.fused_linear_cross_entropy import fused_linear_cross_entropy, fused_linear_cross_entropy_ref
from .ops.geglu import geglu, geglu_ref
from .ops.gelu import gelu, gelu_ref
from .ops.group_norm import group_norm, group_norm_ref
from .ops.hardswish import hardswish, hardswish_ref
from .ops.jsd import jsd, jsd_ref
from .ops.kl_div_loss import kl_div_loss, kl_div_loss_ref
from .ops.l2_normalize import l2_normalize, l2_normalize_ref
from .ops.layer_norm import layer_norm, layer_norm_ref
from .ops.layer_norm_modulate import layer_norm_modulate, layer_norm_modulate_ref
from .ops.leaky_relu import leaky_relu, leaky_relu_ref
from .ops.log_softmax import log_softmax, log_softmax_ref
from .ops.matmul import matmul, matmul_ref
from .ops.matvec import matvec, matvec_ref
from .ops.max_dim import max_dim, max_dim_ref
from .ops.max_pool2d import max_pool2d, max_pool2d_ref
from .ops.mean_dim import mean_dim, mean_dim_ref
from .ops.mse_loss import mse_loss, mse_loss_ref
from .ops.relu import relu, relu_ref
from .ops.rms_norm import rms_norm, rms_norm_ref
from .ops.rope_qk import rope_qk, rope_qk_ref
from .ops.rotary import rotary, rotary_ref, rotary_tables
from .ops.silu import silu, silu_ref
from .ops.smooth_l1_loss import smooth_l1_loss, smooth_l1_loss_ref
from .ops.softmax import softmax, softmax_ref
from .ops.softplus import softplus, softplus_ref
from .ops.sum_dim import sum_dim, sum_dim_ref
from .ops.swiglu import swiglu, swiglu_, swiglu_ref
from .ops.tanh import tanh, tanh_ref
from .ops.triplet_margin_loss import triplet_margin_loss, triplet_margin_loss_ref
from .patch import PatchReport, patch  # noqa: E402  (after the ops it swaps in)

__all__ = [
    "JSD",
    "CrossEntropyLoss",
    "FusedLinearCrossEntropyLoss",
    "GeGLUMLP",
    "LayerNorm",
    "PatchReport",
    "RMSNorm",
    "SwiGLUMLP",
    "add_layer_norm",
    "add_layer_norm_",
    "add_layer_norm_ref",
    "add_rms_norm",
    "add_rms_norm_ref",
    "argmax_dim",
    "argmax_dim_ref",
    "avg_pool2d",
    "avg_pool2d_ref",
    "avg_pool3d",
    "avg_pool3d_ref",
    "batch_norm",
    "batch_norm_ref",
    "bce_with_logits_mean",
    "bce_with_logits_mean_ref",
    "bias_act",
    "bias_act_",
    "bias_act_ref",
    "bias_act_mean",
    "bias_act_mean_ref",
    "bias_glu",
    "bias_glu_ref",
    "bias_relu_max_pool2d",
    "bias_relu_max_pool2d_ref",
    "cosine_embedding_loss",
    "cosine_embedding_loss_ref",
    "cross_entropy",
    "cross_entropy_loss",
    "cross_entropy_loss_ref",
    "conv",
    "conv_transpose",
    "cumsum",
    "cumsum_ref",
    "depthwise_conv2d",
    "depthwise_conv2d_ref",
    "diag_matmul",
    "diag_matmul_ref",
    "elu",
    "elu_ref",
    "embedding_layer_norm",
    "embedding_layer_norm_ref",
    "fused_linear_cross_entropy",
    "fused_linear_cross_entropy_ref",
    "geglu",
    "geglu_ref",
    "gelu",
    "gelu_ref",
    "group_norm",
    "group_norm_ref",
    "hardswish",
    "hardswish_ref",
    "jsd",
    "jsd_ref",
    "kl_div_loss",
    "kl_div_loss_ref",
    "l2_normalize",
    "l2_normalize_ref",
    "layer_norm",
    "layer_norm_ref",
    "layer_norm_modulate",
    "layer_norm_modulate_ref",
    "leaky_relu",
    "leaky_relu_ref",
    "log_softmax",
    "log_softmax_ref",
    "matmul",
    "matmul_ref",
    "matvec",
    "matvec_ref",
    "max_dim",
    "max_dim_ref",
    "max_pool2d",
    "max_pool2d_ref",
    "mean_dim",
    "mean_dim_ref",
    "mse_loss",
    "mse_loss_ref",
    "relu",
    "relu_ref",
    "rms_norm",
    "rms_norm_ref",
    "rope_qk",
    "rope_qk_ref",
    "rotary",
    "rotary_ref",
    "rotary_tables",
    "silu",
    "silu_ref",
    "smooth_l1_loss",
    "smooth_l1_loss_ref",
    "softmax",
    "softmax_ref",
    "softplus",
    "softplus_ref",
    "sum_dim",
    "sum_dim_ref",
    "swiglu",
    "swiglu_",
    "swiglu_ref",
    "patch",
    "tanh",
    "tanh_ref",
    "triplet_margin_loss",
    "triplet_margin_loss_ref",
]
