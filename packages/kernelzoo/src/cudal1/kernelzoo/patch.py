"""Swap a transformers model's layers for the zoo's, in place: ``cudal1.kernelzoo.patch(model)``.

What is swapped (found by structure, so no transformers import is needed here):

* RMS norms: modules whose class name ends in ``RMSNorm`` with a ``weight`` (N,) and an epsilon
  (``variance_epsilon`` or ``eps``), computing ``weight * (x / sqrt(mean(x^2) + eps))`` as Llama, Qwen2 and
  Mistral do, become :class:`cudal1.kernelzoo.modules.RMSNorm` sharing the same weight Parameter. Gemma's
  ``(1 + weight)`` form is a different function and is left alone (``GemmaRMSNorm`` is reported as skipped).
* Gated MLPs: modules with ``gate_proj``, ``up_proj``, ``down_proj`` and a SiLU ``act_fn`` run ``down_proj(swiglu(gate_proj(x), up_proj(x)))`` with the
  zoo's fused SwiGLU (one kernel for the activation and the product).
* RoPE: the modeling module's ``apply_rotary_pos_emb`` runs the zoo's ``rope_qk`` (q and k in one kernel).
* The loss: a causal LM (a ``model`` body and an ``lm_head`` Linear) called with ``labels`` while training
  computes its loss with :func:`~cudal1.kernelzoo.ops.fused_linear_cross_entropy.fused_linear_cross_entropy`
  from the last hidden states, never materialising the (tokens, vocabulary) logits (the output's ``logits`` is
  None then, as with Liger's); labels are shifted as transformers' causal-LM loss shifts them, ``-100``
  ignored, ``num_items_in_batch`` honoured. Models with logit soft-capping or scaling keep their own forward.

The patched model computes the same function with the same parameters (tests/kernelzoo/test_patch.py: logits and
every parameter's gradient of tiny Llama, Qwen2 and Mistral models against the unpatched model). Every op
keeps its gradient (cudal1.kernelzoo.registry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .modules import RMSNorm, SwiGLUMLP

__all__ = ["PatchReport", "patch", "unpatch_rope"]

@dataclass
class PatchReport:
    """What :func:`patch` changed: module paths swapped per kind, and modules left alone with the reason."""

    rms_norm: list[str] = field(default_factory=list)
    swiglu: list[str] = field(default_factory=list)
    rope: list[str] = field(default_factory=list)
    loss: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    replaced: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.rms_norm) + len(self.swiglu) + len(self.rope) + len(self.loss)


def _eps(module: nn.Module) -> float | None:
    for name in ("variance_epsilon", "eps"):
        v = getattr(module, name, None)
        if isinstance(v, (int, float)):
            return float(v)
    return None


def _is_silu(mlp: nn.Module) -> bool:
    act = getattr(mlp, "act_fn", None)
    return isinstance(act, nn.SiLU) or type(act).__name__ in ("SiLU", "SiLUActivation") or \
        act is torch.nn.functional.silu


def _zoo_rotary(original: Any) -> Any:
    """An ``apply_rotary_pos_emb`` running the zoo's rope_qk where the call has its usual form (heads on dimension
    1, cos/sin (B or 1, S, D)), the original otherwise."""
    from .ops.rope_qk import rope_qk

    def apply_rotary_pos_emb(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                             position_ids: Any = None, unsqueeze_dim: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        usual = (unsqueeze_dim == 1 and q.dim() == 4 and k.dim() == 4 and cos.dim() == 3
                 and cos.shape[0] in (1, q.shape[0]) and cos.shape[1:] == (q.shape[2], q.shape[3])
                 and cos.dtype == q.dtype == k.dtype)
        if not usual:
            return original(q, k, cos, sin, position_ids, unsqueeze_dim)
        return rope_qk(q, k, cos, sin)

    apply_rotary_pos_emb.cudal1_original = original  # type: ignore[attr-defined]
    return apply_rotary_pos_emb


def unpatch_rope(model: nn.Module) -> bool:
    """Put back the ``apply_rotary_pos_emb`` that :func:`patch` replaced in ``model``'s modeling module; whether
    there was one to put back."""
    import sys

    mod = sys.modules.get(type(model).__module__)
    fn = getattr(mod, "apply_rotary_pos_emb", None)
    original = getattr(fn, "cudal1_original", None)
    if original is None:
        return False
    mod.apply_rotary_pos_emb = original  # type: ignore[union-attr]
    return True


def _flce_forward(original: Any) -> Any:
    """A causal LM's ``forward`` computing the training loss with the fused linear cross-entropy (see the module
    docstring); ``original`` (the bound forward) where there is no label or no training."""
    from .ops.fused_linear_cross_entropy import fused_linear_cross_entropy

    def forward(self: nn.Module, input_ids: Any = None, attention_mask: Any = None, position_ids: Any = None,
                past_key_values: Any = None, inputs_embeds: Any = None, labels: torch.Tensor | None = None,
                use_cache: Any = None, **kwargs: Any) -> Any:
        if labels is None or not self.training or kwargs.get("output_hidden_states") or kwargs.get("return_dict") is False:
            return original(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                            past_key_values=past_key_values, inputs_embeds=inputs_embeds, labels=labels,
                            use_cache=use_cache, **kwargs)
        from transformers.modeling_outputs import CausalLMOutputWithPast

        n_items = kwargs.pop("num_items_in_batch", None)
        kwargs.pop("logits_to_keep", None)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                         past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache, **kwargs)
        h = out.last_hidden_state
        targets = torch.nn.functional.pad(labels, (0, 1), value=-100)[..., 1:].to(h.device)
        head = self.lm_head
        loss = fused_linear_cross_entropy(h.reshape(-1, h.shape[-1]), head.weight, targets.reshape(-1), head.bias,
                                          ignore_index=-100, reduction="mean" if n_items is None else "sum")
        if n_items is not None:
            loss = loss / n_items
        return CausalLMOutputWithPast(loss=loss, logits=None, past_key_values=out.past_key_values,
                                      hidden_states=out.hidden_states, attentions=out.attentions)

    forward.cudal1_original = original  # type: ignore[attr-defined]
    return forward


def _patch_loss(model: nn.Module, report: PatchReport) -> None:
    import types

    head, body, cfg = getattr(model, "lm_head", None), getattr(model, "model", None), getattr(model, "config", None)
    if not isinstance(head, nn.Linear) or not isinstance(body, nn.Module) or \
            hasattr(getattr(model, "forward", None), "cudal1_original"):
        return
    for key in ("final_logit_softcapping", "logit_scale", "logits_scaling"):
        if getattr(cfg, key, None) not in (None, 1, 1.0):
            report.skipped["lm_head"] = f"the model's logits are transformed ({key}): its own loss is kept"
            return
    model.forward = types.MethodType(_flce_forward(model.forward), model)
    report.loss.append("forward")


def patch(model: nn.Module, *, rms_norm: bool = True, swiglu: bool = True, rope: bool = True,
          loss: bool = True) -> PatchReport:
    """Swap ``model``'s RMS norms and SiLU-gated MLPs for the zoo's, its RoPE for ``rope_qk`` and its training
    loss for the fused linear cross-entropy (see the module docstring), in place.
    Returns what was swapped; raises ValueError when nothing in the model can be patched (a model of another
    structure: say so rather than run unchanged)."""
    report = PatchReport()
    for path, module in list(model.named_modules()):
        cls = type(module).__name__
        if rms_norm and cls.endswith("RMSNorm") and not isinstance(module, RMSNorm):
            weight, eps = getattr(module, "weight", None), _eps(module)
            if cls.startswith("Gemma"):
                report.skipped[path] = "Gemma's RMSNorm scales by (1 + weight): another function"
            elif not isinstance(weight, nn.Parameter) or weight.dim() != 1 or eps is None:
                report.skipped[path] = "no (N,) weight Parameter and epsilon"
            else:
                _replace(model, path, RMSNorm.from_weight(weight, eps))
                report.rms_norm.append(path)
        elif swiglu and all(hasattr(module, p) for p in ("gate_proj", "up_proj", "down_proj")) \
                and not isinstance(module, SwiGLUMLP):
            if _is_silu(module):
                _replace(model, path, SwiGLUMLP(module.gate_proj, module.up_proj, module.down_proj))
                report.swiglu.append(path)
            else:
                report.skipped[path] = f"gated MLP with activation {type(getattr(module, 'act_fn', None)).__name__}"
    if rope:
        import sys

        mod = sys.modules.get(type(model).__module__)
        fn = getattr(mod, "apply_rotary_pos_emb", None)
        if callable(fn) and not hasattr(fn, "cudal1_original"):
            report.replaced[f"{mod.__name__}.apply_rotary_pos_emb"] = fn  # type: ignore[union-attr]
            mod.apply_rotary_pos_emb = _zoo_rotary(fn)  # type: ignore[union-attr]
            report.rope.append(f"{mod.__name__}.apply_rotary_pos_emb")  # type: ignore[union-attr]
    if loss:
        _patch_loss(model, report)
    if not report.total:
        raise ValueError(f"patch: nothing to swap in {type(model).__name__} (no Llama-style RMSNorm or SiLU-gated "
                         f"MLP found{'; skipped: ' + str(report.skipped) if report.skipped else ''})")
    return report


def _replace(model: nn.Module, path: str, new: nn.Module) -> None:
    parent_path, _, name = path.rpartition(".")
    parent: Any = model.get_submodule(parent_path) if parent_path else model
    setattr(parent, name, new)
