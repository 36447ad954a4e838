"""LoRA adapters merged while the policy generates (``policy.merge_for_generation``): the same completions, the
base weights restored bit for bit, and GRPO's generation merged when the recipe asks."""

from __future__ import annotations

import torch

from cudal1.policy.backends.base import SamplingParams
from cudal1.policy.backends.transformers_local import TransformersBackend
from cudal1.policy.merging import adapters_merged


def _lora_model():
    from peft import get_peft_model

    from cudal1.policy.loading import load_policy
    from cudal1.policy.recipe import Recipe

    recipe = Recipe.from_dict({"policy": {"model": "tiny", "lora": True, "lora_r": 4, "lora_alpha": 8,
                                          "device": "cpu"}})
    model, tok, peft_config = load_policy(recipe.policy)
    model = get_peft_model(model, peft_config)
    with torch.no_grad():  # adapters that change the output (peft starts B at zero)
        g = torch.Generator().manual_seed(0)
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return model, tok


def _base_weights(model):
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" not in n}


def test_merged_generation_writes_the_same_and_restores_the_weights_exactly():
    model, tok = _lora_model()
    before = _base_weights(model)
    prompt = [[{"role": "user", "content": "write relu"}]]
    greedy = SamplingParams(max_new_tokens=12, temperature=0.0, n=1, seed=0)
    plain = TransformersBackend(model, tok).generate(prompt, greedy)
    merged = TransformersBackend(model, tok, merge_adapters=True).generate(prompt, greedy)
    assert merged == plain
    after = _base_weights(model)
    assert all(torch.equal(before[n], after[n]) for n in before)
    with adapters_merged(model) as n:
        assert n > 0
        # inside, the base weights carry the adapters (the merge is real, not a no-op)
        assert any(not torch.equal(before[k], p) for k, p in _base_weights(model).items())
    assert all(torch.equal(before[k], p) for k, p in _base_weights(model).items())


def test_nothing_is_merged_when_disabled_or_not_peft():
    model, tok = _lora_model()
    with adapters_merged(model, enabled=False) as n:
        assert n == 0
    with adapters_merged(model.get_base_model()) as n:
        assert n == 0


def test_grpo_generates_with_the_adapters_merged_when_the_recipe_asks(tmp_path, monkeypatch):
    import contextlib

    from cudal1.policy import grpo
    from cudal1.policy.pipeline import train
    from cudal1.policy.run_log import RunDir

    from .test_stages import tiny_recipe

    merged_layers = []

    @contextlib.contextmanager
    def counting(model, enabled=True):
        with adapters_merged(model, enabled) as n:
            merged_layers.append(n)
            yield n

    monkeypatch.setattr(grpo, "adapters_merged", counting)
    lora = {"lora": True, "lora_r": 4, "lora_alpha": 8}
    train(tiny_recipe(policy=lora, sft={"max_steps": 1}), RunDir(tmp_path / "off"), log=lambda s: None)
    assert merged_layers and not any(merged_layers)  # asked for nothing: nothing merged
    merged_layers.clear()
    run = RunDir(tmp_path / "on")
    train(tiny_recipe(policy={**lora, "merge_for_generation": True}, sft={"max_steps": 1}), run, log=lambda s: None)
    assert merged_layers and all(n > 0 for n in merged_layers) and len(run.events("grpo_step")) == 2
