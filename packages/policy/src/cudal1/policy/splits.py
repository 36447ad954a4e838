"""The held-out split of the built-in suite: whole op families kept out of training.

Each built-in task belongs to one op family (:data:`BUILTIN_FAMILIES`). A split names the families held out;
their tasks are never trained on (no SFT example, no self-training or GRPO prompt) and are what the
evaluation stage measures after each stage. Holding out whole families (not every third task) keeps near
twins such as ``matmul_square`` / ``matmul_rectangular`` from sitting on both sides.

``builtin-v1``: 49 train / 33 held out. Held out: level-1 losses, normalisations and pooling, level-2 conv
fusions, level-3 conv blocks and recurrent models.

Example:
    >>> s = split("builtin-v1")
    >>> len(s.train), len(s.held_out), "mse_loss" in s.held_out, "relu" in s.train
    (49, 33, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BUILTIN_FAMILIES", "SPLITS", "Split", "family_of", "split"]

BUILTIN_FAMILIES: dict[str, tuple[str, ...]] = {
    "l1_activation": ("elu", "gelu", "hardswish", "leaky_relu", "relu", "silu", "softplus", "tanh"),
    "l1_normalisation": ("batch_norm2d", "group_norm", "layer_norm", "rms_norm", "l2_normalize"),
    "l1_reduction": ("argmax_dim", "max_dim", "mean_dim", "sum_dim", "cumsum", "softmax", "log_softmax"),
    "l1_loss": ("cosine_embedding_loss", "cross_entropy_loss", "kl_div_loss", "mse_loss", "smooth_l1_loss",
                "triplet_margin_loss"),
    "l1_matmul": ("matmul_batched", "matmul_diag", "matmul_large_k", "matmul_rectangular", "matmul_skinny_fat",
                  "matmul_square", "matmul_tall_skinny", "matvec"),
    "l1_conv": ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                "depthwise_conv2d"),
    "l1_pooling": ("avg_pool2d", "avg_pool3d", "max_pool2d"),
    "l2_conv_fusion": ("bn_relu_conv2d", "conv1d_gelu_residual", "conv1x1_bn_silu_avgpool", "conv2d_bn_relu",
                       "conv2d_glu", "conv2d_groupnorm_gelu_maxpool", "conv2d_instancenorm_leakyrelu",
                       "conv2d_relu_maxpool", "conv3d_softmax_maxpool", "conv_transpose2d_add_clamp",
                       "conv_transpose3d_bn_relu"),
    "l2_gemm_fusion": ("gemm_bias_relu", "gemm_groupnorm_hardtanh", "gemm_scale_residual", "gemm_swiglu",
                       "linear_bce_with_logits", "linear_dropout_residual_layernorm", "linear_log_softmax",
                       "matmul_layernorm_silu"),
    "l2_norm_attention_fusion": ("add_layernorm", "attention_softmax_matmul", "embedding_add_layernorm",
                                 "layernorm_modulate", "rotary_embedding"),
    "l3_conv_block": ("convnext_block", "depthwise_separable_block", "inverted_residual_block",
                      "resnet_basic_block", "resnet_bottleneck_block", "vgg_conv_stack"),
    "l3_transformer": ("causal_transformer_block", "multihead_attention_block", "transformer_encoder_layer",
                       "vit_tiny", "mlp_mixer_block", "mlp"),
    "l3_recurrent": ("gru_encoder", "lstm_classifier"),
}

#: split name -> families held out
SPLITS: dict[str, tuple[str, ...]] = {
    "builtin-v1": ("l1_loss", "l1_normalisation", "l1_pooling", "l2_conv_fusion", "l3_conv_block", "l3_recurrent"),
}


@dataclass(frozen=True)
class Split:
    """Task names on each side of a split (sorted)."""

    name: str
    train: tuple[str, ...]
    held_out: tuple[str, ...]


def family_of(task: str) -> str | None:
    """The op family of a built-in task name (None for a task outside the built-in suite)."""
    for fam, names in BUILTIN_FAMILIES.items():
        if task in names:
            return fam
    return None


def split(name: str) -> Split:
    """The split called ``name`` (see :data:`SPLITS`). Raises ValueError naming the known splits."""
    if name not in SPLITS:
        raise ValueError(f"unknown split {name!r}; known splits: {', '.join(sorted(SPLITS))}")
    held = sorted(t for fam in SPLITS[name] for t in BUILTIN_FAMILIES[fam])
    train = sorted(t for fam, names in BUILTIN_FAMILIES.items() if fam not in SPLITS[name] for t in names)
    return Split(name, tuple(train), tuple(held))
