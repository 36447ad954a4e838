"""Every differentiable zoo op on a CUDA GPU in fp32, bf16 and fp16: forward and backward against the PyTorch
reference computed in fp64 on the CPU, within a per-dtype tolerance (:data:`TOLERANCE`, one table for every
op). Skipped without a GPU; the same ops' gradients are checked in fp64 on the CPU in test_gradients.py."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo import registry
from cudal1.kernelzoo.registry import call

from .test_gradients import CASES, CONSTANT

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

#: (atol, rtol) of an op's output and of its input gradients against the fp64 reference, per dtype: the kernels
#: compute in fp32 and round once at the store; bf16 keeps 8 bits of mantissa, fp16 11
TOLERANCE = {torch.float32: (1e-4, 1e-4), torch.bfloat16: (5e-2, 5e-2), torch.float16: (1e-2, 1e-2)}


def assert_op_matches_ref(name: str, args: tuple, dtype: torch.dtype) -> None:
    """Forward and backward of zoo op ``name`` on CUDA in ``dtype`` against its reference in fp64 on the CPU."""
    wrt = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.is_floating_point()
           and i not in CONSTANT.get(name, ())]

    def build(device, dt, grad):
        out = []
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                a = a.to(device=device, dtype=dt if a.is_floating_point() else a.dtype)
                if grad and i in wrt:
                    a = a.detach().requires_grad_(True)
            out.append(a)
        return out

    gpu, cpu = build("cuda", dtype, True), build("cpu", torch.float64, True)
    got, want = call(name, *gpu), registry.reference(name)(*cpu)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    atol, rtol = TOLERANCE[dtype]
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g.double().cpu(), w, atol=atol, rtol=rtol, msg=lambda m: f"{name} forward: {m}")
    ups = [torch.randn(w.shape, dtype=torch.float64) for w in want]
    g_grads = torch.autograd.grad(got, [gpu[i] for i in wrt], [u.to("cuda", g.dtype) for u, g in zip(ups, got)])
    w_grads = torch.autograd.grad(want, [cpu[i] for i in wrt], ups, allow_unused=True)
    for i, g, w in zip(wrt, g_grads, w_grads, strict=True):
        w = w if w is not None else torch.zeros_like(cpu[i])
        torch.testing.assert_close(g.double().cpu(), w, atol=2 * atol, rtol=2 * rtol,
                                   msg=lambda m, i=i: f"{name} gradient of argument {i}: {m}")


#: ops whose kernels are float32 only (seen on the H100, 2026-11-25): half-precision input is a TypeError naming
#: float32, never a silent cast
FP32_ONLY = {"avg_pool2d", "avg_pool3d", "depthwise_conv2d", "diag_matmul", "matvec", "max_pool2d"}


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_forward_and_backward_per_dtype_on_gpu(name, dtype):
    torch.manual_seed(0)
    if name in FP32_ONLY and dtype != torch.float32:
        with pytest.raises(TypeError, match="float32"):
            assert_op_matches_ref(name, CASES[name](), dtype)
        return
    assert_op_matches_ref(name, CASES[name](), dtype)


#: the ops with backward kernels of their own at LLM-like sizes (the CASES above are tiny): args builder
LLM_SIZES = {
    "rms_norm": lambda: (torch.randn(64, 4096), torch.randn(4096), 1e-6),
    "add_rms_norm": lambda: (torch.randn(64, 4096), torch.randn(64, 4096), torch.randn(4096), 1e-6),
    "layer_norm": lambda: (torch.randn(64, 4096), torch.randn(4096), torch.randn(4096), 1e-5),
    "swiglu": lambda: (torch.randn(64, 11008), torch.randn(64, 11008)),
    "geglu": lambda: (torch.randn(64, 11008), torch.randn(64, 11008), "tanh"),
    "rope_qk": lambda: (torch.randn(2, 32, 128, 128), torch.randn(2, 8, 128, 128), torch.randn(1, 128, 128),
                        torch.randn(1, 128, 128), None),
    "cross_entropy_loss": lambda: (torch.randn(64, 32000) * 3, torch.randint(0, 32000, (64,)), -100),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("name", sorted(LLM_SIZES))
def test_backward_kernels_at_llm_sizes(name, dtype):
    assert registry.has_backward_kernels(name)
    torch.manual_seed(0)
    assert_op_matches_ref(name, LLM_SIZES[name](), dtype)
