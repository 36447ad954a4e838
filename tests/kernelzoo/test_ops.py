"""Each op's Triton kernel against its PyTorch reference on fresh random inputs, "weird" shapes included,
with per-dtype tolerances; the public functions, their torch.library registration and the CPU fallback;
every kernel compiled for sm80/86/89/90 without a GPU."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from cudal1.kernelzoo import arch
from cudal1.kernelzoo.ops import gelu, layer_norm, relu, rms_norm, silu, softmax

from .helpers import close_elementwise
from .helpers import rnd as random_normal

DEV = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: Triton's interpreter
SHAPES = [(5, 123), (3, 7, 33), (1, 1), (4, 2049)]
TOL = {torch.float32: (1e-5, 1e-5)}  # (atol, rtol)


def rnd(shape, seed, scale=3.0):
    return random_normal(shape, seed, scale=scale, shift=0.3)


def assert_close(got, want, dtype=torch.float32):
    close_elementwise(got, want, *TOL[dtype], same_shape=False)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("family", list(arch.CAPABILITY))
def test_relu_kernel(shape, family):
    x = rnd(shape, 1)
    x.view(-1)[0] = float("nan")
    got = relu.relu_launch(x, relu.CONFIGS[family])
    assert torch.isnan(got.view(-1)[0])
    assert_close(got.view(-1)[1:], relu.relu_ref(x).view(-1)[1:])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("family", list(arch.CAPABILITY))
@pytest.mark.parametrize("op", [gelu, silu], ids=["gelu", "silu"])
def test_activation_kernels(op, shape, family):
    name = op.__name__.rsplit(".", 1)[1]
    x = rnd(shape, 10)
    got = getattr(op, f"{name}_launch")(x, op.CONFIGS[family])
    assert_close(got, getattr(op, f"{name}_ref")(x))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("family", list(arch.CAPABILITY))
@pytest.mark.parametrize("path", ["tile", "loop"])
def test_softmax_kernel(shape, family, path):
    x = rnd(shape, 2)
    cfg = dict(softmax.CONFIGS[family], BLOCK=min(softmax.CONFIGS[family]["BLOCK"], 256))  # several column blocks
    if path == "loop":
        cfg["MAX_N"] = 0  # rows too long for the register tile
    else:
        cfg["MIN_TILE"] = 256  # several rows per program where rows are short
    assert_close(softmax.softmax_launch(x, cfg), softmax.softmax_ref(x))


def test_softmax_handles_minus_infinity():
    x = rnd((3, 50), 3)
    x[0, :10] = float("-inf")
    assert_close(softmax.softmax_launch(x, {"BLOCK": 16, "num_warps": 1}), softmax.softmax_ref(x))
    tile = {"MAX_N": 64, "MIN_TILE": 128, "EPT": 4, "MAX_WARPS": 4, "BLOCK": 16, "num_warps": 1}
    assert_close(softmax.softmax_launch(x, tile), softmax.softmax_ref(x))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("family", list(arch.CAPABILITY))
def test_layer_norm_kernel(shape, family):
    x = rnd(shape, 4)
    w, b = rnd(shape[-1:], 5, 1.0), rnd(shape[-1:], 6, 1.0)
    cfg = dict(layer_norm.CONFIGS[family], BLOCK=min(layer_norm.CONFIGS[family]["BLOCK"], 256))
    assert_close(layer_norm.layer_norm_launch(x, w, b, 1e-5, cfg), layer_norm.layer_norm_ref(x, w, b, 1e-5))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("family", list(arch.CAPABILITY))
@pytest.mark.parametrize("one_tile_max", [16384, 16])  # rows whole in registers; rows looped in 2 passes
def test_rms_norm_kernel(shape, family, one_tile_max, monkeypatch):
    monkeypatch.setattr(rms_norm, "ONE_TILE_MAX", one_tile_max)
    x = rnd(shape, 8)
    w = rnd(shape[-1:], 9, 1.0)
    cfg = dict(rms_norm.CONFIGS[family], BLOCK=min(rms_norm.CONFIGS[family]["BLOCK"], 256))
    assert_close(rms_norm.rms_norm_launch(x, w, 1e-6, cfg), rms_norm.rms_norm_ref(x, w, 1e-6))


def test_layer_norm_rejects_wrong_weight_shape():
    x = rnd((4, 8), 7)
    with pytest.raises(ValueError, match="shape"):
        layer_norm.layer_norm_launch(x, torch.ones(7, device=DEV), torch.zeros(8, device=DEV))


def test_public_functions_and_cpu_fallback():
    from cudal1.kernelzoo import layer_norm as ln
    from cudal1.kernelzoo import relu as r
    from cudal1.kernelzoo import rms_norm as rn
    from cudal1.kernelzoo import softmax as sm

    x = torch.randn(6, 40)
    w, b = torch.randn(40), torch.randn(40)
    assert torch.equal(r(x), torch.relu(x))
    from cudal1.kernelzoo import gelu as g
    from cudal1.kernelzoo import silu as si

    assert torch.allclose(g(x), torch.nn.functional.gelu(x)) and torch.allclose(si(x), torch.nn.functional.silu(x))
    assert torch.allclose(sm(x), torch.softmax(x, -1))
    assert torch.allclose(ln(x, w, b), torch.nn.functional.layer_norm(x, (40,), w, b))
    assert torch.allclose(rn(x, w), x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)


@pytest.mark.parametrize("op, args", [
    ("relu", (torch.randn(4, 9),)),
    ("gelu", (torch.randn(4, 9),)),
    ("silu", (torch.randn(4, 9),)),
    ("softmax", (torch.randn(4, 9),)),
    ("layer_norm", (torch.randn(4, 9), torch.randn(9), torch.randn(9), 1e-5)),
    ("rms_norm", (torch.randn(4, 9), torch.randn(9), 1e-6)),
])
def test_torch_library_registration(op, args):
    torch.library.opcheck(getattr(torch.ops.cudal1, op), args)


def test_arch_families_and_override(monkeypatch):
    assert arch.family_of((9, 0)) == "sm90" and arch.family_of((8, 7)) == "sm86"
    assert arch.family_of((10, 0)) == "sm90" and arch.family_of((7, 5)) == "sm80"
    monkeypatch.setenv(arch.ENV, "sm89")
    assert arch.current_family() == "sm89" and arch.pick(relu.CONFIGS) is relu.CONFIGS["sm89"]
    monkeypatch.setenv(arch.ENV, "sm75")
    with pytest.raises(ValueError, match="sm80"):
        arch.current_family()


def test_every_kernel_compiles_for_every_architecture():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, "-m", "cudal1.kernelzoo.compile_targets"], capture_output=True, text=True,
                         env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = [ln for ln in res.stdout.splitlines() if "cubin" in ln]
    from cudal1.kernelzoo.compile_targets import triton_kernels
    assert len(lines) == len(triton_kernels()) * 4 >= 6 * 4 and all(int(ln.split()[-2]) > 0 for ln in lines)
