"""The fused ops of the level-2/3 solutions (add_layer_norm, layer_norm_modulate, embedding_layer_norm,
bias_act, swiglu, rotary, bce_with_logits_mean, bias_relu_max_pool2d, bias_glu, bias_act_mean): each
launcher against its PyTorch reference in Triton's interpreter (CPU) or on the GPU, for every family's
config and a shrunk one (several programs, the multi-pass path), odd sizes; in-place variants; the
torch.library registrations (opcheck); the CPU fallbacks of the public functions; errors for bad input."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import arch
from cudal1.kernelzoo.ops import (
    _fused_norm,
    add_layer_norm,
    bce_with_logits_mean,
    bias_act,
    bias_act_mean,
    bias_glu,
    bias_relu_max_pool2d,
    embedding_layer_norm,
    layer_norm_modulate,
    rotary,
    swiglu,
)

from .helpers import close_elementwise
from .helpers import rnd as random_normal

DEV = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: Triton's interpreter
FAMILIES = list(arch.CAPABILITY)
ATOL, RTOL = 2e-5, 2e-5  # float32


def rnd(shape, seed, scale=2.0, shift=0.3):
    return random_normal(shape, seed, scale=scale, shift=shift)


def assert_close(got, want, atol=ATOL, rtol=RTOL):
    close_elementwise(got, want, atol, rtol)


def norm_configs(family):
    """The family's config, and one shrunk so rows of ~100 columns take the three-pass path."""
    return [_fused_norm.CONFIGS[family], dict(_fused_norm.CONFIGS[family], TILE=128, MAX_N=64, BLOCK=32, num_warps=2)]


# --- add_layer_norm -------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape", [(5, 123), (3, 7, 33), (2, 1)])
def test_add_layer_norm_kernel(family, shape):
    n = shape[-1]
    x, r = rnd(shape, 1), rnd(shape, 2)
    pb, w, b = rnd((n,), 3, 1.0), rnd((n,), 4, 0.5, 1.0), rnd((n,), 5, 1.0)
    for cfg in norm_configs(family):
        for act in ("none", "relu", "gelu", "silu"):
            got = add_layer_norm.add_layer_norm_launch(x, r, w, b, pb, 1e-5, act, config=cfg)
            assert_close(got, add_layer_norm.add_layer_norm_ref(x, r, w, b, pb, 1e-5, act))
        got = add_layer_norm.add_layer_norm_launch(x, None, None, None, None, 1e-6, "none", config=cfg)
        assert_close(got, add_layer_norm.add_layer_norm_ref(x, eps=1e-6))


@pytest.mark.parametrize("one_tile", [True, False])
def test_add_layer_norm_in_place(one_tile):
    x, r = rnd((6, 100), 6), rnd((6, 100), 7)
    w, b, pb = rnd((100,), 8), rnd((100,), 9), rnd((100,), 10)
    want = add_layer_norm.add_layer_norm_ref(x, r, w, b, pb, 1e-5, "gelu")
    cfg = _fused_norm.CONFIGS["sm90"] if one_tile else norm_configs("sm90")[1]
    out = x.clone()
    assert add_layer_norm.add_layer_norm_launch(out, r, w, b, pb, 1e-5, "gelu", out=out, config=cfg) is out
    assert_close(out, want)


def test_add_layer_norm_shifted_rows_keep_precision():
    x = rnd((4, 300), 11, scale=0.1, shift=100.0)  # large offset: E[x^2] - E[x]^2 would cancel
    for cfg in norm_configs("sm90"):
        got = add_layer_norm.add_layer_norm_launch(x, config=cfg)
        assert_close(got, add_layer_norm.add_layer_norm_ref(x), atol=2e-3, rtol=1e-3)


# --- layer_norm_modulate / embedding_layer_norm --------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_layer_norm_modulate_kernel(family):
    x, shift, scale = rnd((3, 5, 77), 12), rnd((3, 77), 13), rnd((3, 77), 14)
    for cfg in norm_configs(family):
        got = layer_norm_modulate.layer_norm_modulate_launch(x, shift, scale, 1e-6, cfg)
        assert_close(got, layer_norm_modulate.layer_norm_modulate_ref(x, shift, scale, 1e-6))


@pytest.mark.parametrize("family", FAMILIES)
def test_embedding_layer_norm_kernel(family):
    g = torch.Generator().manual_seed(15)
    ids = torch.randint(0, 50, (3, 7), generator=g).to(DEV)
    ids[0, 0], ids[-1, -1] = 0, 49
    tok, pos = rnd((50, 90), 16), rnd((9, 90), 17)
    w, b = rnd((90,), 18), rnd((90,), 19)
    for cfg in norm_configs(family):
        got = embedding_layer_norm.embedding_layer_norm_launch(ids, tok, pos, w, b, 1e-5, cfg)
        assert_close(got, embedding_layer_norm.embedding_layer_norm_ref(ids, tok, pos, w, b, 1e-5))


# --- bias_act ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("channel_dim, shape", [(-1, (7, 130)), (-1, (2, 3, 5)), (1, (3, 6, 5, 7)), (1, (4, 3))])
def test_bias_act_kernel(family, channel_dim, shape):
    c = shape[channel_dim]
    x, res = rnd(shape, 20), rnd(shape, 21)
    w, b = rnd((c,), 22), rnd((c,), 23)
    for cfg in (bias_act.CONFIGS[family], dict(bias_act.CONFIGS[family], BLOCK=16, num_warps=1)):
        for act in ("none", "relu", "gelu", "silu"):
            got = bias_act.bias_act_launch(x, w, b, res, 0.5, act, channel_dim, config=cfg)
            assert_close(got, bias_act.bias_act_ref(x, w, b, res, 0.5, act, channel_dim))
        got = bias_act.bias_act_launch(x, None, b, None, 1.0, "relu", channel_dim, config=cfg)
        assert_close(got, bias_act.bias_act_ref(x, None, b, None, 1.0, "relu", channel_dim))


def test_bias_act_in_place():
    x, b, res = rnd((9, 33), 24), rnd((33,), 25), rnd((9, 33), 26)
    want = bias_act.bias_act_ref(x, None, b, res, 0.5, "none")
    out = x.clone()
    bias_act.bias_act_launch(out, None, b, res, 0.5, "none", out=out, config={"BLOCK": 64, "num_warps": 2})
    assert_close(out, want)


# --- swiglu, rotary ---------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:overflow encountered in exp")
@pytest.mark.parametrize("family", FAMILIES)
def test_swiglu_kernel(family):
    g, u = rnd((7, 301), 27, 4.0), rnd((7, 301), 28)
    g.view(-1)[:3] = torch.tensor([-100.0, 100.0, 0.0])
    for cfg in (swiglu.CONFIGS[family], {"BLOCK": 128, "num_warps": 2}):
        assert_close(swiglu.swiglu_launch(g, u, config=cfg), swiglu.swiglu_ref(g, u))
    out = g.clone()
    swiglu.swiglu_launch(out, u, out=out, config={"BLOCK": 128, "num_warps": 2})
    assert_close(out, swiglu.swiglu_ref(g, u))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape", [(2, 3, 11, 16), (5, 6)])
def test_rotary_kernel(family, shape):
    x = rnd(shape, 29)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, shape[-1], 2, dtype=torch.float32) / shape[-1]))
    cos, sin = rotary.rotary_tables(shape[-2], inv_freq.to(DEV))
    for cfg in (rotary.CONFIGS[family], {"TILE": 64, "num_warps": 1}):
        assert_close(rotary.rotary_launch(x, cos, sin, cfg), rotary.rotary_ref(x, cos, sin))


def test_rotary_matches_the_written_out_form():
    x = rnd((2, 2, 9, 12), 30)
    inv_freq = 1.0 / (100.0 ** (torch.arange(0, 12, 2, dtype=torch.float32) / 12))
    pos = torch.arange(9, dtype=torch.float32)
    emb = torch.cat((torch.outer(pos, inv_freq),) * 2, dim=-1)
    want = x.cpu() * emb.cos() + torch.cat((-x.cpu()[..., 6:], x.cpu()[..., :6]), dim=-1) * emb.sin()
    cos, sin = rotary.rotary_tables(9, inv_freq)
    assert_close(rotary.rotary(x.cpu(), cos, sin), want)


# --- reductions and pooling -------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_bce_with_logits_mean_kernel(family):
    z = rnd((9, 70), 31, 4.0)
    z[0, :3] = torch.tensor([60.0, -60.0, 0.0])
    t = (rnd((9, 70), 32) > 0).float()
    b = rnd((70,), 33)
    for cfg in (bce_with_logits_mean.CONFIGS[family], {"TILE": 64, "MAX_BLOCK_N": 32, "num_warps": 2}):
        assert_close(bce_with_logits_mean.bce_with_logits_mean_launch(z, t, b, cfg),
                     bce_with_logits_mean.bce_with_logits_mean_ref(z, t, b))
        assert_close(bce_with_logits_mean.bce_with_logits_mean_launch(z, t, None, cfg),
                     bce_with_logits_mean.bce_with_logits_mean_ref(z, t))


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape", [(2, 3, 9, 11), (1, 2, 2, 2), (1, 1, 3, 2)])
def test_bias_relu_max_pool2d_kernel(family, shape):
    x, b = rnd(shape, 34), rnd((shape[1],), 35)
    for cfg in (bias_relu_max_pool2d.CONFIGS[family], {"BLOCK": 8, "num_warps": 1}):
        assert_close(bias_relu_max_pool2d.bias_relu_max_pool2d_launch(x, b, cfg),
                     bias_relu_max_pool2d.bias_relu_max_pool2d_ref(x, b), atol=0, rtol=0)
        assert_close(bias_relu_max_pool2d.bias_relu_max_pool2d_launch(x, None, cfg),
                     bias_relu_max_pool2d.bias_relu_max_pool2d_ref(x), atol=0, rtol=0)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("shape", [(2, 6, 5, 7), (3, 4, 33)])
def test_bias_glu_kernel(family, shape):
    x, b = rnd(shape, 36), rnd((shape[1],), 37)
    for cfg in (bias_glu.CONFIGS[family], {"BLOCK": 16, "num_warps": 1}):
        assert_close(bias_glu.bias_glu_launch(x, b, cfg), bias_glu.bias_glu_ref(x, b))
        assert_close(bias_glu.bias_glu_launch(x, None, cfg), bias_glu.bias_glu_ref(x))


@pytest.mark.parametrize("family", FAMILIES)
def test_bias_act_mean_kernel(family):
    x, w, b = rnd((3, 5, 9, 7), 38), rnd((5,), 39), rnd((5,), 40)
    for cfg in (bias_act_mean.CONFIGS[family], {"TILE": 32, "MAX_BLOCK_N": 16, "num_warps": 1}):
        for act in ("silu", "relu", "none"):
            assert_close(bias_act_mean.bias_act_mean_launch(x, w, b, act, cfg),
                         bias_act_mean.bias_act_mean_ref(x, w, b, act))


# --- registration, CPU fallback, errors ------------------------------------------------------------------
def _cpu(*shape):
    return torch.randn(*shape)


OPCHECKS = [
    ("add_layer_norm", (_cpu(4, 9), _cpu(4, 9), _cpu(9), _cpu(9), _cpu(9), 1e-5, "gelu")),
    ("add_layer_norm", (_cpu(4, 9), None, None, None, None, 1e-5, "none")),
    ("add_layer_norm_", (_cpu(4, 9), _cpu(4, 9), _cpu(9), _cpu(9), _cpu(9), 1e-5, "silu")),
    ("layer_norm_modulate", (_cpu(2, 3, 9), _cpu(2, 9), _cpu(2, 9), 1e-6)),
    ("embedding_layer_norm", (torch.randint(0, 5, (2, 3)), _cpu(5, 8), _cpu(4, 8), _cpu(8), _cpu(8), 1e-5)),
    ("bias_act", (_cpu(4, 9), _cpu(9), _cpu(9), _cpu(4, 9), 0.5, "relu", -1)),
    ("bias_act_", (_cpu(2, 3, 4, 5), _cpu(3), _cpu(3), None, 1.0, "silu", 1)),
    ("swiglu", (_cpu(4, 9), _cpu(4, 9))),
    ("swiglu_", (_cpu(4, 9), _cpu(4, 9))),
    ("rotary", (_cpu(2, 5, 8), _cpu(5, 4), _cpu(5, 4))),
    ("bce_with_logits_mean", (_cpu(4, 9), (_cpu(4, 9) > 0).float(), _cpu(9))),
    ("bias_relu_max_pool2d", (_cpu(2, 3, 5, 6), _cpu(3))),
    ("bias_glu", (_cpu(2, 6, 5), _cpu(6))),
    ("bias_act_mean", (_cpu(2, 3, 4, 5), _cpu(3), _cpu(3), "silu")),
]


@pytest.mark.parametrize("op, args", OPCHECKS, ids=[f"{o}-{i}" for i, (o, _) in enumerate(OPCHECKS)])
def test_torch_library_registration(op, args):
    torch.library.opcheck(getattr(torch.ops.cudal1, op), args)


def test_public_functions_cpu_fallback():
    x, r, w, b = _cpu(4, 10), _cpu(4, 10), _cpu(10), _cpu(10)
    want = torch.nn.functional.silu(torch.nn.functional.layer_norm(x + b + r, (10,), w, b))
    assert torch.allclose(add_layer_norm.add_layer_norm(x, r, w, b, pre_bias=b, activation="silu"), want, atol=1e-6)
    out = x.clone()
    assert add_layer_norm.add_layer_norm_(out, r, w, b, pre_bias=b, activation="silu") is out
    assert torch.allclose(out, want, atol=1e-6)
    out = x.clone()
    bias_act.bias_act_(out, bias=b, residual=r, scale=0.5, activation="relu")
    assert torch.allclose(out, torch.relu(x + b) * 0.5 + r)
    assert torch.allclose(bias_act.bias_act(x, w, b, activation="gelu"), torch.nn.functional.gelu(x * w + b))
    g = x.clone()
    swiglu.swiglu_(g, r)
    assert torch.allclose(g, torch.nn.functional.silu(x) * r) and torch.allclose(swiglu.swiglu(x, r), g)
    xs = _cpu(2, 3, 6, 6)
    assert torch.equal(bias_relu_max_pool2d.bias_relu_max_pool2d(xs), torch.nn.functional.max_pool2d(xs.relu(), 2))
    assert torch.allclose(bias_glu.bias_glu(xs[:, :2]), torch.nn.functional.glu(xs[:, :2], 1))
    assert torch.allclose(bias_act_mean.bias_act_mean(xs, activation="relu"), xs.relu().mean((2, 3)))
    t = (r > 0).float()
    assert torch.allclose(bce_with_logits_mean.bce_with_logits_mean(x, t),
                          torch.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="none").mean(-1))


def test_bad_inputs_are_clear_errors():
    x = _cpu(4, 8)
    with pytest.raises(ValueError, match="activation"):
        add_layer_norm.add_layer_norm(x, activation="tanh")
    with pytest.raises(ValueError, match="contiguous"):
        add_layer_norm.add_layer_norm_(_cpu(8, 4).t())
    with pytest.raises(ValueError, match="residual"):
        add_layer_norm.add_layer_norm_launch(x, _cpu(4, 7))
    with pytest.raises(ValueError, match=r"weight must have shape \(8,\)"):
        add_layer_norm.add_layer_norm_launch(x, None, _cpu(7))
    with pytest.raises(ValueError, match="shift and scale"):
        layer_norm_modulate.layer_norm_modulate(_cpu(2, 3, 8), _cpu(3, 8), _cpu(2, 8))
    with pytest.raises(ValueError, match="int64"):
        embedding_layer_norm.embedding_layer_norm(torch.zeros(2, 3, dtype=torch.int32), _cpu(5, 8), _cpu(4, 8),
                                                  _cpu(8), _cpu(8))
    with pytest.raises(ValueError, match="fewer than the sequence"):
        embedding_layer_norm.embedding_layer_norm(torch.zeros(2, 6, dtype=torch.int64), _cpu(5, 8), _cpu(4, 8),
                                                  _cpu(8), _cpu(8))
    with pytest.raises(ValueError, match="channel_dim"):
        bias_act.bias_act(x, channel_dim=0)
    with pytest.raises(ValueError, match="one per channel"):
        bias_act.bias_act_launch(x, bias=_cpu(3))
    with pytest.raises(ValueError, match="same shape"):
        swiglu.swiglu(x, _cpu(4, 9))
    with pytest.raises(ValueError, match="D even"):
        rotary.rotary(_cpu(2, 3, 5), _cpu(3, 2), _cpu(3, 2))
    with pytest.raises(ValueError, match=r"\(S, D/2\)"):
        rotary.rotary(_cpu(2, 3, 6), _cpu(4, 3), _cpu(4, 3))
    with pytest.raises(ValueError, match="one shape"):
        bce_with_logits_mean.bce_with_logits_mean(x, _cpu(4, 9))
    with pytest.raises(ValueError, match="B, C, H, W"):
        bias_relu_max_pool2d.bias_relu_max_pool2d(x)
    with pytest.raises(ValueError, match="2x2"):
        bias_relu_max_pool2d.bias_relu_max_pool2d(_cpu(1, 1, 1, 5))
    with pytest.raises(ValueError, match="even channel count"):
        bias_glu.bias_glu(_cpu(2, 3, 4))
    with pytest.raises(ValueError, match="spatial"):
        bias_act_mean.bias_act_mean(x)


# --- the released solutions with the Triton kernels (interpreter on CPU) ------------------------------------
_OPS = [add_layer_norm, layer_norm_modulate, embedding_layer_norm, bias_act, swiglu, rotary, bce_with_logits_mean,
        bias_relu_max_pool2d, bias_glu, bias_act_mean]
SOLVED = ["add_layernorm", "layernorm_modulate", "embedding_add_layernorm", "rotary_embedding", "gemm_bias_relu",
          "gemm_scale_residual", "gemm_swiglu", "matmul_layernorm_silu", "linear_dropout_residual_layernorm",
          "linear_bce_with_logits", "conv2d_bn_relu", "conv2d_relu_maxpool", "conv1x1_bn_silu_avgpool", "conv2d_glu",
          "bn_relu_conv2d", "mlp", "transformer_encoder_layer", "causal_transformer_block",
          "multihead_attention_block", "vit_tiny"]


def _load(source: str, name: str) -> dict:
    ns: dict = {"__name__": name}
    exec(compile(source, name, "exec"), ns)  # test code: the harness loads candidates its own way
    return ns


@pytest.mark.skipif(DEV == "cuda", reason="the CPU fallback swap is for machines without a GPU")
@pytest.mark.parametrize("task", SOLVED)
def test_solution_with_triton_kernels(task, monkeypatch):
    """Each solution at its small sizes with every zoo op's CPU path replaced by its Triton launcher (run in the
    interpreter), against the task's reference with the same randomised parameters."""
    import json
    from pathlib import Path

    from cudal1.harness import load_suite
    from cudal1.harness.params import randomise_, share_parameters
    from cudal1.kernelzoo.solutions import solution_source

    for mod in _OPS:
        name = mod.__name__.rsplit(".", 1)[1]
        monkeypatch.setattr(mod, f"{name}_ref", getattr(mod, f"{name}_launch"))
    t = next(t for t in load_suite("builtin") if t.name == task)
    src = t.source
    for k, v in json.loads((Path(__file__).parent / "small_sizes" / f"{task}.json").read_text()).items():
        src = "\n".join(f"{k} = {v!r}" if ln.startswith(f"{k} =") else ln for ln in src.splitlines())
    ref_ns, sol_ns = _load(src, f"task_{task}"), _load(solution_source(task), f"sol_{task}")
    torch.manual_seed(0)
    ref = ref_ns["Model"](*ref_ns["get_init_inputs"]()).eval()
    new = sol_ns["ModelNew"](*ref_ns["get_init_inputs"]()).eval()
    randomise_(ref, seed=1)
    assert share_parameters(ref, new) == []
    inputs = ref_ns["get_inputs"]()
    with torch.no_grad():
        want = ref(*[i.clone() for i in inputs])
        got = new(*inputs)
    rms = float(want.pow(2).mean().sqrt())
    assert_close(got, want, atol=1e-4 * max(rms, 1e-6), rtol=1e-4)
