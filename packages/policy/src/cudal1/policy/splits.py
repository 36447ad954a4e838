"""Held-out splits of the built-in suite: tasks never trained on (no SFT example, no self-training or GRPO prompt),
which the evaluation stage measures after each stage. Two kinds:

* **family** splits hold out whole op families (:data:`BUILTIN_FAMILIES`), so near twins such as
  ``matmul_square`` / ``matmul_rectangular`` never sit on both sides. ``builtin-v1``: 49 train / 33 held out
  (level-1 losses, normalisations and pooling, level-2 conv fusions, level-3 conv blocks and recurrent models).
* **composition** splits hold out tasks built from primitives that train tasks use, in combinations no train task
  has (:data:`BUILTIN_PRIMITIVES`): every primitive of a held-out task appears in some train task, and no train
  task's primitives include all of a held-out task's. ``builtin-compose-v1``: 74 train / 8 held out (conv + relu +
  max-pool stages, GEMM + SiLU / layer norm / log-softmax / group norm + clamp, conv1d + GELU + residual,
  conv + group norm + GELU + max-pool). :func:`composition_split` checks any such split and says what breaks it.

Example:
    >>> s = split("builtin-v1")
    >>> len(s.train), len(s.held_out), "mse_loss" in s.held_out, "relu" in s.train
    (49, 33, True, True)
    >>> c = split("builtin-compose-v1")
    >>> c.kind, len(c.train), len(c.held_out), "gemm_swiglu" in c.held_out
    ('composition', 74, 8, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["BUILTIN_FAMILIES", "BUILTIN_PRIMITIVES", "COMPOSITION_SPLITS", "SPLITS", "Split", "SplitError",
           "composition_split", "family_of", "split", "split_names"]

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

#: built-in task -> the primitives its reference computes, as a composition split counts them: library ops
#: (activations, norms, reductions, GEMM, convolutions, pooling, losses, embedding, dropout, rotary, recurrent
#: cells, clamp) and residual adds. ``gemm`` is any matrix product (nn.Linear with its bias, matmul, bmm); a
#: convolution includes its own bias; scalar scaling and shape changes are not primitives.
BUILTIN_PRIMITIVES: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    # level 1
    "elu": ["elu"], "gelu": ["gelu"], "hardswish": ["hardswish"], "leaky_relu": ["leaky_relu"], "relu": ["relu"],
    "silu": ["silu"], "softplus": ["softplus"], "tanh": ["tanh"],
    "batch_norm2d": ["batch_norm"], "group_norm": ["group_norm"], "layer_norm": ["layer_norm"],
    "rms_norm": ["rms_norm"], "l2_normalize": ["l2_normalize"],
    "argmax_dim": ["argmax"], "max_dim": ["max_reduce"], "mean_dim": ["mean_reduce"], "sum_dim": ["sum_reduce"],
    "cumsum": ["cumsum"], "softmax": ["softmax"], "log_softmax": ["log_softmax"],
    "cosine_embedding_loss": ["cosine_embedding_loss"], "cross_entropy_loss": ["cross_entropy"],
    "kl_div_loss": ["kl_div"], "mse_loss": ["mse_loss"], "smooth_l1_loss": ["smooth_l1_loss"],
    "triplet_margin_loss": ["triplet_margin_loss"],
    "matmul_batched": ["gemm"], "matmul_diag": ["diag", "gemm"], "matmul_large_k": ["gemm"],
    "matmul_rectangular": ["gemm"], "matmul_skinny_fat": ["gemm"], "matmul_square": ["gemm"],
    "matmul_tall_skinny": ["gemm"], "matvec": ["gemm"],
    "conv1d": ["conv1d"], "conv2d": ["conv2d"], "conv3d": ["conv3d"], "conv_transpose1d": ["conv_transpose1d"],
    "conv_transpose2d": ["conv_transpose2d"], "conv_transpose3d": ["conv_transpose3d"],
    "depthwise_conv2d": ["depthwise_conv2d"],
    "avg_pool2d": ["avg_pool2d"], "avg_pool3d": ["avg_pool3d"], "max_pool2d": ["max_pool2d"],
    # level 2
    "add_layernorm": ["residual_add", "layer_norm"],
    "attention_softmax_matmul": ["gemm", "softmax"],
    "bn_relu_conv2d": ["batch_norm", "relu", "conv2d"],
    "conv1d_gelu_residual": ["conv1d", "gelu", "residual_add"],
    "conv1x1_bn_silu_avgpool": ["conv2d", "batch_norm", "silu", "avg_pool2d"],
    "conv2d_bn_relu": ["conv2d", "batch_norm", "relu"],
    "conv2d_glu": ["conv2d", "glu"],
    "conv2d_groupnorm_gelu_maxpool": ["conv2d", "group_norm", "gelu", "max_pool2d"],
    "conv2d_instancenorm_leakyrelu": ["conv2d", "instance_norm", "leaky_relu"],
    "conv2d_relu_maxpool": ["conv2d", "relu", "max_pool2d"],
    "conv3d_softmax_maxpool": ["conv3d", "softmax", "max_pool3d"],
    "conv_transpose2d_add_clamp": ["conv_transpose2d", "bias_add", "clamp"],
    "conv_transpose3d_bn_relu": ["conv_transpose3d", "batch_norm", "relu"],
    "embedding_add_layernorm": ["embedding", "residual_add", "layer_norm"],
    "gemm_bias_relu": ["gemm", "relu"],
    "gemm_groupnorm_hardtanh": ["gemm", "group_norm", "clamp"],
    "gemm_scale_residual": ["gemm", "residual_add"],
    "gemm_swiglu": ["gemm", "silu"],
    "layernorm_modulate": ["layer_norm", "modulate"],
    "linear_bce_with_logits": ["gemm", "bce_with_logits"],
    "linear_dropout_residual_layernorm": ["gemm", "dropout", "residual_add", "layer_norm"],
    "linear_log_softmax": ["gemm", "log_softmax"],
    "matmul_layernorm_silu": ["gemm", "layer_norm", "silu"],
    "rotary_embedding": ["rotary"],
    # level 3
    "convnext_block": ["depthwise_conv2d", "layer_norm", "gemm", "gelu", "residual_add"],
    "depthwise_separable_block": ["depthwise_conv2d", "batch_norm", "relu", "conv2d"],
    "inverted_residual_block": ["conv2d", "batch_norm", "clamp", "depthwise_conv2d", "residual_add"],
    "resnet_basic_block": ["conv2d", "batch_norm", "relu", "residual_add"],
    "resnet_bottleneck_block": ["conv2d", "batch_norm", "relu", "residual_add"],
    "vgg_conv_stack": ["conv2d", "relu", "max_pool2d"],
    "causal_transformer_block": ["layer_norm", "gemm", "causal_mask", "softmax", "gelu", "residual_add"],
    "multihead_attention_block": ["layer_norm", "gemm", "softmax", "residual_add"],
    "transformer_encoder_layer": ["layer_norm", "gemm", "softmax", "gelu", "residual_add"],
    "vit_tiny": ["conv2d", "layer_norm", "gemm", "softmax", "gelu", "residual_add"],
    "mlp_mixer_block": ["layer_norm", "gemm", "gelu", "residual_add"],
    "mlp": ["gemm", "relu"],
    "gru_encoder": ["gru"],
    "lstm_classifier": ["lstm", "gemm"],
}.items()}

#: family split name -> families held out
SPLITS: dict[str, tuple[str, ...]] = {
    "builtin-v1": ("l1_loss", "l1_normalisation", "l1_pooling", "l2_conv_fusion", "l3_conv_block", "l3_recurrent"),
}

#: composition split name -> tasks held out (checked by :func:`composition_split`)
COMPOSITION_SPLITS: dict[str, tuple[str, ...]] = {
    "builtin-compose-v1": ("conv1d_gelu_residual", "conv2d_groupnorm_gelu_maxpool", "conv2d_relu_maxpool",
                           "gemm_groupnorm_hardtanh", "gemm_swiglu", "linear_log_softmax", "matmul_layernorm_silu",
                           "vgg_conv_stack"),
}


class SplitError(ValueError):
    """A split that does not exist, or a composition split that is not one (the message names the task and the
    primitive or train task that breaks it)."""


@dataclass(frozen=True)
class Split:
    """Task names on each side of a split (sorted); ``kind``: ``family`` or ``composition``."""

    name: str
    train: tuple[str, ...]
    held_out: tuple[str, ...]
    kind: str = "family"


def split_names() -> list[str]:
    """Every known split's name (family and composition)."""
    return sorted({*SPLITS, *COMPOSITION_SPLITS})


def composition_split(name: str, held_out: Sequence[str],
                      primitives: Mapping[str, frozenset[str]] = BUILTIN_PRIMITIVES) -> Split:
    """A composition split holding out ``held_out`` (every other task of ``primitives`` trains), checked.

    Raises:
        SplitError: a held-out task is unknown; one uses a primitive no train task has (the policy could not have
            learnt it: not a test of composition); or some train task's primitives include all of a held-out task's
            (that combination was trained on).
    """
    unknown = sorted(set(held_out) - set(primitives))
    if unknown:
        raise SplitError(f"split {name}: no task {unknown} among the {len(primitives)} tasks with known primitives")
    held = sorted(set(held_out))
    train = sorted(set(primitives) - set(held))
    if not held or not train:
        raise SplitError(f"split {name}: both sides need tasks (held out {len(held)}, train {len(train)})")
    taught = set().union(*(primitives[t] for t in train))
    for task in held:
        missing = sorted(primitives[task] - taught)
        if missing:
            raise SplitError(f"split {name}: held-out task {task} uses primitive(s) {missing} that no train task has; "
                             "a composition split only holds out new combinations of trained primitives (train a task "
                             "that has them, or hold this one out in a family split)")
        covering = sorted(t for t in train if primitives[task] <= primitives[t])
        if covering:
            raise SplitError(f"split {name}: held-out task {task} combines {sorted(primitives[task])}, which train "
                             f"task(s) {covering} already combine; hold those out too or pick another task")
    return Split(name, tuple(train), tuple(held), kind="composition")


def family_of(task: str) -> str | None:
    """The op family of a built-in task name (None for a task outside the built-in suite)."""
    for fam, names in BUILTIN_FAMILIES.items():
        if task in names:
            return fam
    return None


def split(name: str) -> Split:
    """The split called ``name`` (:data:`SPLITS` or :data:`COMPOSITION_SPLITS`, the latter checked). Raises
    SplitError naming the known splits."""
    if name in COMPOSITION_SPLITS:
        return composition_split(name, COMPOSITION_SPLITS[name])
    if name not in SPLITS:
        raise SplitError(f"unknown split {name!r}; known splits: {', '.join(split_names())}")
    held = sorted(t for fam in SPLITS[name] for t in BUILTIN_FAMILIES[fam])
    train = sorted(t for fam, names in BUILTIN_FAMILIES.items() if fam not in SPLITS[name] for t in names)
    return Split(name, tuple(train), tuple(held))
