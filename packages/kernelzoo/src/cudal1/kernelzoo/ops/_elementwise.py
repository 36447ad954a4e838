"""Shared launchers, launch configs and registration of the elementwise ops (relu, gelu, silu, ...): one program
per BLOCK elements, 64-bit offsets, any shape (flattened contiguous view); optionally a CUDA C kernel per op,
built from one template (:func:`unary_cuda_source`): float4 loads and stores, ``ELEMENTWISE_UNROLL`` of them
in flight per thread, a scalar path for misaligned tensors and a scalar tail."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from string import Template
from typing import Any

import torch

from .. import autotune, cuda_jit
from .._triton import triton
from ..arch import check_table, pick
from ..kernel_specs import CudaSource
from ..registry import call, zoo_custom_op

#: Triton: BLOCK, num_warps. CUDA C: cuda_threads (threads per block; each moves 4 * ELEMENTWISE_UNROLL floats).
#: backend: the default implementation of the ops sharing this table ("triton" or "cuda", see cuda_jit).
CONFIGS = {
    "sm80": {"BLOCK": 4096, "num_warps": 8, "cuda_threads": 256, "backend": "triton"},
    "sm86": {"BLOCK": 2048, "num_warps": 8, "cuda_threads": 256, "backend": "triton"},
    "sm89": {"BLOCK": 2048, "num_warps": 8, "cuda_threads": 256, "backend": "triton"},
    "sm90": {"BLOCK": 8192, "num_warps": 16, "cuda_threads": 256, "backend": "triton"},
}
check_table(CONFIGS, "elementwise")

#: float4 loads each CUDA C thread issues before computing (ZOO_UNROLL in the template)
ELEMENTWISE_UNROLL = 4

#: what cudal1.kernelzoo.autotune times for an elementwise op on a new input class (dtype, numel bucket,
#: 16-byte alignment): Triton (BLOCK, num_warps) and, for float32 ops with CUDA C, CUDA C threads per block
TRITON_CANDIDATES: tuple[dict[str, Any], ...] = tuple(
    {"backend": "triton", "BLOCK": b, "num_warps": w}
    for b, w in ((1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8), (8192, 8), (8192, 16)))
CUDA_CANDIDATES: tuple[dict[str, Any], ...] = tuple({"backend": "cuda", "cuda_threads": t} for t in (128, 256, 512))


#: (op, device index, input class, has_cuda, table, $CUDAL1_BACKEND, autotune.choice_state()) -> the config
#: elementwise_config chose. Resolving it again on every call cost
#: 0.04-0.27 ms of host time per call on the H100 machines (benchmarks/results/
#: 2026-11-23-elementwise-host-overhead-h100.md), which shows in a 1.5 ms op timed from the host.
_CONFIG_MEMO: dict[tuple, Mapping[str, Any]] = {}
_CONFIG_MEMO_MAX = 4096


def elementwise_config(name: str, x: torch.Tensor, table: Mapping[str, dict], run: Callable[[Mapping], Any], *,
                       has_cuda: bool) -> Mapping[str, Any]:
    """The config an elementwise op runs on CUDA tensor ``x``: the autotuned winner among
    :data:`TRITON_CANDIDATES` (+ :data:`CUDA_CANDIDATES` where ``has_cuda`` and CuPy imports) for ``x``'s
    input class, or the family's ``table`` entry (autotune off, or ``$CUDAL1_ARCH`` forced). A
    ``$CUDAL1_BACKEND`` choice limits the candidates to that backend. ``run(config)`` launches the op once."""
    key = (str(x.dtype).removeprefix("torch."), autotune.numel_bucket(x.numel()), x.data_ptr() % 16 == 0)
    forced = os.environ.get(cuda_jit.BACKEND_ENV)
    memo_key = (name, x.device.index, key, has_cuda, id(table), forced, autotune.choice_state())
    hit = _CONFIG_MEMO.get(memo_key)
    if hit is not None:
        return hit
    backend = cuda_jit.choose_backend(table, x.device, has_cuda=has_cuda)
    default = dict(pick(table, x.device), backend=backend)
    cuda_ok = has_cuda and cuda_jit.cupy_available()
    candidates: Sequence[Mapping[str, Any]] = (
        (TRITON_CANDIDATES if forced != "cuda" or not cuda_ok else ())
        + (CUDA_CANDIDATES if cuda_ok and forced != "triton" else ()))
    got = autotune.tuned(name, key, candidates, run, default, x.device)
    if len(_CONFIG_MEMO) >= _CONFIG_MEMO_MAX:
        _CONFIG_MEMO.clear()
    _CONFIG_MEMO[memo_key] = got
    return got


def op_configs(backend: str = "triton") -> dict[str, dict[str, Any]]:
    """A copy of :data:`CONFIGS` for one op, so that op's ``backend`` can differ from its siblings'."""
    return {family: dict(cfg, backend=backend) for family, cfg in CONFIGS.items()}


def launch_unary(kernel: Any, x: torch.Tensor, config: dict | None = None, *,
                 table: Mapping[str, dict] | None = None) -> torch.Tensor:
    """``y = f(x)`` with ``kernel(x_ptr, y_ptr, n, BLOCK)``; output contiguous, same shape and dtype.
    ``config`` defaults to the device's entry of ``table`` (default :data:`CONFIGS`)."""
    cfg = config or pick(table or CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n = xc.numel()
    if n:
        kernel[(triton.cdiv(n, cfg["BLOCK"]),)](xc, y, n, BLOCK=cfg["BLOCK"], num_warps=cfg["num_warps"])
    return y


_UNARY_CUDA = Template(r"""
#define ZOO_UNROLL ${unroll}  // float4 loads in flight per thread (ELEMENTWISE_UNROLL)

__device__ __forceinline__ float zoo_${name}_f(float v) { ${body} }

// y[i] = f(x[i]) for i < n. Block b covers elements [b * 4 * ZOO_UNROLL * blockDim.x, ...); vec != 0 when x
// and y are 16-byte aligned: float4 accesses, the last n % 4 elements done by block 0.
extern "C" __global__ void __launch_bounds__(1024)
zoo_${name}_f32(const float* __restrict__ x, float* __restrict__ y, long long n, int vec) {
    const long long bd = blockDim.x, tid = threadIdx.x;
    const long long first = (long long)blockIdx.x * bd * ZOO_UNROLL;  // in float4 units
    if (vec) {
        const long long n4 = n >> 2;
        const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
        float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
        float4 v[ZOO_UNROLL];
#pragma unroll
        for (int u = 0; u < ZOO_UNROLL; ++u) {
            const long long j = first + u * bd + tid;
            v[u] = j < n4 ? x4[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < ZOO_UNROLL; ++u) {
            const long long j = first + u * bd + tid;
            if (j < n4) {
                float4 o;
                o.x = zoo_${name}_f(v[u].x);
                o.y = zoo_${name}_f(v[u].y);
                o.z = zoo_${name}_f(v[u].z);
                o.w = zoo_${name}_f(v[u].w);
                y4[j] = o;
            }
        }
        if (blockIdx.x == 0 && tid < (n & 3)) {
            const long long j = (n & ~3LL) + tid;
            y[j] = zoo_${name}_f(x[j]);
        }
    } else {
        const long long first1 = first * 4;
#pragma unroll
        for (int u = 0; u < 4 * ZOO_UNROLL; ++u) {
            const long long j = first1 + u * bd + tid;
            if (j < n) y[j] = zoo_${name}_f(x[j]);
        }
    }
}
""")


def unary_cuda_source(name: str, body: str) -> CudaSource:
    """The CUDA C of elementwise op ``name``: kernel ``zoo_<name>_f32(x, y, n, vec)`` applying
    ``float zoo_<name>_f(float v) { <body> }`` (fp32 math) to every element."""
    return CudaSource(name, _UNARY_CUDA.substitute(name=name, body=body, unroll=ELEMENTWISE_UNROLL), (f"zoo_{name}_f32",))


def launch_unary_cuda(source: CudaSource, x: torch.Tensor, config: dict | None = None, *,
                      table: Mapping[str, dict] | None = None) -> torch.Tensor:
    """``y = f(x)`` with the CUDA C kernel of ``source`` (see :func:`unary_cuda_source`); float32 only;
    output contiguous, same shape. ``config`` defaults to the device's entry of ``table``."""
    if x.dtype != torch.float32:
        raise TypeError(f"the CUDA C kernel {source.kernels[0]} takes float32, got {x.dtype}")
    cfg = config or pick(table or CONFIGS, x.device if x.is_cuda else None)
    threads = int(cfg["cuda_threads"])
    if threads % 32 or not 32 <= threads <= 1024:
        raise ValueError(f"cuda_threads must be a multiple of 32 in [32, 1024], got {threads}")
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n = xc.numel()
    if n:
        vec = xc.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0
        blocks = triton.cdiv(n, 4 * ELEMENTWISE_UNROLL * threads)
        cuda_jit.launch(source, source.kernels[0], (blocks,), (threads,), (xc, y, cuda_jit.i64(n), cuda_jit.i32(vec)),
                        xc.device)
    return y


def unary_op(name: str, kernel: Any, ref: Callable[[torch.Tensor], torch.Tensor], *,
             cuda_launch: Callable[..., torch.Tensor] | None = None,
             table: Mapping[str, dict] | None = None,
             fast_backward: Callable[..., Any] | None = None,
             ) -> tuple[Callable[..., torch.Tensor], Callable[[torch.Tensor], torch.Tensor]]:
    """(launcher, public function) of an elementwise op: the launcher runs ``kernel`` through
    :func:`launch_unary`; the public function is ``torch.ops.cudal1.<name>``, registered here with a fake
    implementation for ``torch.compile`` and the reference as CPU fallback. CUDA inputs run the config
    :func:`elementwise_config` picks (autotuned, or ``table``'s entry: the op's config table, default
    :data:`CONFIGS`); with ``cuda_launch`` (the op's CUDA C launcher, ``cuda_launch(x, config)``) the CUDA C
    kernel is among the choices for float32 inputs; ``fast_backward``: the op's backward kernel
    (``registry.kernel_backward``; :func:`._activation_backward.fast_backward`)."""
    configs = table or CONFIGS

    def launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
        return launch_unary(kernel, x, config, table=configs)

    @zoo_custom_op(f"cudal1::{name}", mutates_args=(), ref=ref, fast_backward=fast_backward)
    def op(x: torch.Tensor) -> torch.Tensor:
        if not x.is_cuda:
            return ref(x)
        has_cuda = cuda_launch is not None and x.dtype == torch.float32

        def run(cfg: Mapping) -> torch.Tensor:
            if cfg.get("backend") == "cuda" and has_cuda:
                return cuda_launch(x, cfg)
            return launch(x, cfg)

        return run(elementwise_config(name, x, configs, run, has_cuda=has_cuda))

    @op.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    def public(x: torch.Tensor) -> torch.Tensor:
        return call(name, x)

    return launch, public
