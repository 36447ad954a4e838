"""``cudal1.kernelzoo.patch(model)`` on tiny random transformers models (configs built in code, nothing
downloaded): the patched model computes the same logits and every parameter's gradient as the unpatched one,
and says what it swapped; a model it cannot patch is an error, not a silent no-op."""

from __future__ import annotations

import copy

import pytest
import torch

from cudal1.kernelzoo import RMSNorm, SwiGLUMLP, patch
from cudal1.kernelzoo.patch import unpatch_rope

transformers = pytest.importorskip("transformers")

SMALL = {"vocab_size": 97, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}


def tiny(kind):
    cfg = {"llama": transformers.LlamaConfig, "qwen2": transformers.Qwen2Config,
           "mistral": transformers.MistralConfig}[kind](**SMALL)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg)  # float32: their RMSNorm computes in fp32
    with torch.no_grad():  # norms start at ones: make them count
        for n, p in model.named_parameters():
            if "norm" in n:
                p.add_(0.1 * torch.randn_like(p))
    return model


@pytest.mark.parametrize("kind", ["llama", "qwen2", "mistral"])
def test_patched_model_matches_logits_and_every_gradient(kind):
    ref = tiny(kind)
    model = copy.deepcopy(ref)
    ids = torch.randint(0, SMALL["vocab_size"], (2, 9))
    labels = ids.clone()
    labels[0, :3] = -100  # a prompt the loss ignores
    want_logits = ref(ids).logits  # before patching: patch() also replaces RoPE module-wide
    want = ref(ids, labels=labels)
    want.loss.backward()
    report = patch(model)
    layers = SMALL["num_hidden_layers"]
    assert report.rope == [f"{type(model).__module__}.apply_rotary_pos_emb"] and report.loss == ["forward"]
    assert len(report.rms_norm) == 2 * layers + 1 and len(report.swiglu) == layers, report
    assert sum(isinstance(m, RMSNorm) for m in model.modules()) == 2 * layers + 1
    assert sum(isinstance(m, SwiGLUMLP) for m in model.modules()) == layers
    # the same Parameters: nothing re-initialised, optimizers and state dicts unchanged
    assert list(model.state_dict()) == list(ref.state_dict())
    torch.testing.assert_close(model(ids).logits, want_logits, rtol=1e-5, atol=1e-6)
    out = model(ids, labels=labels)
    assert out.logits is None  # the fused loss never made the (tokens, vocabulary) logits
    torch.testing.assert_close(out.loss, want.loss, rtol=1e-5, atol=1e-6)
    out.loss.backward()
    for (n, p), (_, q) in zip(model.named_parameters(), ref.named_parameters(), strict=True):
        assert p.grad is not None, f"{n}: no gradient after patching"
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-7, msg=n)


@pytest.fixture(autouse=True)
def _restore_rope():
    """patch() replaces apply_rotary_pos_emb module-wide: put the original back after each test."""
    yield
    for kind in ("llama", "qwen2", "mistral"):
        unpatch_rope(tiny(kind))


def test_rope_patch_is_used_and_can_be_undone(monkeypatch):
    from cudal1.kernelzoo.ops import rope_qk as rq

    model = tiny("llama")
    ref = copy.deepcopy(model)
    ids = torch.randint(0, SMALL["vocab_size"], (2, 9))
    want = ref(ids).logits
    patch(model)
    calls = []
    real = rq.rope_qk_ref
    monkeypatch.setattr(rq, "rope_qk_ref", lambda *a: calls.append(1) or real(*a))
    torch.testing.assert_close(model(ids).logits, want, rtol=1e-5, atol=1e-6)
    assert len(calls) == SMALL["num_hidden_layers"]  # one q/k call per attention layer, through the zoo op
    assert unpatch_rope(model) and not unpatch_rope(model)


def test_patching_twice_changes_nothing_more_and_unknown_models_are_refused():
    model = tiny("llama")
    patch(model)
    with pytest.raises(ValueError, match="nothing to swap"):
        patch(model)
    with pytest.raises(ValueError, match="nothing to swap in Sequential"):
        patch(torch.nn.Sequential(torch.nn.Linear(3, 3)))


def test_gemma_style_norms_are_left_alone_and_reported():
    class GemmaRMSNorm(torch.nn.Module):  # scales by (1 + weight): another function
        def __init__(self):
            super().__init__()
            self.weight, self.eps = torch.nn.Parameter(torch.zeros(4)), 1e-6

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = GemmaRMSNorm()
            self.mlp = torch.nn.Module()
            self.mlp.gate_proj, self.mlp.up_proj, self.mlp.down_proj = (torch.nn.Linear(4, 8), torch.nn.Linear(4, 8),
                                                                        torch.nn.Linear(8, 4))
            self.mlp.act_fn = torch.nn.SiLU()

    b = Block()
    report = patch(b)
    assert report.rms_norm == [] and report.swiglu == ["mlp"] and "norm" in report.skipped
    assert isinstance(b.norm, GemmaRMSNorm)


def test_the_fused_loss_honours_num_items_in_batch_and_eval_mode():
    ref = tiny("llama")
    model = copy.deepcopy(ref)
    patch(model, rms_norm=False, swiglu=False, rope=False)
    ids = torch.randint(0, SMALL["vocab_size"], (2, 7))
    want = ref(ids, labels=ids, num_items_in_batch=5).loss
    torch.testing.assert_close(model(ids, labels=ids, num_items_in_batch=5).loss, want, rtol=1e-5, atol=1e-6)
    model.eval()  # not training: the model's own forward, logits included
    out = model(ids, labels=ids)
    assert out.logits is not None
    torch.testing.assert_close(out.loss, ref.eval()(ids, labels=ids).loss, rtol=1e-5, atol=1e-6)


def test_models_whose_logits_are_transformed_keep_their_loss():
    cfg = transformers.LlamaConfig(**SMALL)
    cfg.final_logit_softcapping = 30.0
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    report = patch(model)
    assert report.loss == [] and "softcapping" in report.skipped["lm_head"]
