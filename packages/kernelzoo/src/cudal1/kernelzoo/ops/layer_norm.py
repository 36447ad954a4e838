"""Layer norm over the last dimension with affine weight and bias:
``y = (x - mean) / sqrt(var + eps) * weight + bias`` (biased variance, as torch).

Shapes: ``x`` (..., N), ``weight`` and ``bias`` (N,); float32 (statistics in fp32); output like ``x``.
One program per row: a mean pass, a variance pass (no cancellation from E[x^2] - E[x]^2), a write pass.
CUDA C (``layer_norm_launch_cuda``, float32): one block per row held in registers where it fits (one read,
one write; mean and variance from the registers). Backward: the shared row-norm backward kernel
(``_norm_backward``; fp32/bf16/fp16 rows up to its MAX_N on CUDA), the reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .. import cuda_jit
from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import CudaSource, TritonKernel
from ..registry import call, zoo_custom_op
from ._fused_norm import fused_norm_launch
from ._norm_backward import CONFIGS as NORM_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._norm_backward import backward_kernel, norm_backward_launch, takes
from ._rows_cuda import ROW_COMMON, row_launch_cuda

__all__ = ["CONFIGS", "CUDA_SOURCES", "layer_norm", "layer_norm_launch", "layer_norm_launch_cuda", "layer_norm_ref"]

#: Triton: BLOCK, num_warps. CUDA C: cuda_max_threads, cuda_cols_per_thread (see _rows_cuda.row_threads).
#: backend: the default implementation on CUDA, "triton" or "cuda" (cudal1.kernelzoo.cuda_jit).
_CUDA_CFG = {"cuda_max_threads": 1024, "cuda_cols_per_thread": 16, "backend": "triton"}
CONFIGS = {
    "sm80": {"BLOCK": 1024, "num_warps": 4, **_CUDA_CFG, "backend": "cuda"},
    "sm86": {"BLOCK": 1024, "num_warps": 4, **_CUDA_CFG, "backend": "cuda"},
    "sm89": {"BLOCK": 1024, "num_warps": 4, **_CUDA_CFG, "backend": "cuda"},
    "sm90": {"BLOCK": 2048, "num_warps": 8, **_CUDA_CFG, "backend": "cuda"},
}
# backend cuda: on the H100 (2026-11-22, cuda_check --bench, suite-sized rows) the CUDA C kernel beat the
# Triton one (1.42 vs 2.53 ms); other families unmeasured, same choice; without CuPy the op uses Triton
check_table(CONFIGS, "layer_norm")


def layer_norm_ref(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """PyTorch reference."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, 0) / n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32) - mean
        acc += tl.where(mask, d * d, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def layer_norm_launch(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                      config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N) with ``weight``, ``bias`` (N,)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,) or bias.shape != (n_cols,):
        raise ValueError(f"weight and bias must have shape ({n_cols},), got {tuple(weight.shape)} and {tuple(bias.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel():
        block = min(cfg["BLOCK"], triton.next_power_of_2(n_cols))
        _layer_norm_kernel[(xc.numel() // n_cols,)](xc, weight.contiguous(), bias.contiguous(), y, n_cols, eps,
                                                   BLOCK=block, num_warps=cfg["num_warps"])
    return y


_CUDA = CudaSource("layer_norm", ROW_COMMON + r"""
// y = (x - mean) * rsqrt(var + eps) * w + b over each row of n (biased variance); one block per row.
extern "C" __global__ void __launch_bounds__(1024)
zoo_layer_norm_f32(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                   float* __restrict__ y, int n, float eps, int vec) {
    __shared__ float smem[32];
    const long long base = (long long)blockIdx.x * n;
    const float* __restrict__ xr = x + base;
    float* __restrict__ yr = y + base;
    if (n <= ZOO_ROW_REGS * (int)blockDim.x) {  // the row fits in registers: one read
        float r[ZOO_ROW_REGS];
        zoo_row_load(xr, n, vec, r, 0.0f);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) s += r[k];
        const float mean = zoo_block_sum(s, smem) / n;
        float q = 0.0f;
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) {
            const float d = zoo_row_col(k, vec) < n ? r[k] - mean : 0.0f;
            q += d * d;
        }
        const float rstd = rsqrtf(zoo_block_sum(q, smem) / n + eps);
        zoo_row_affine_store(yr, n, vec, r, mean, rstd, w, b);
    } else {  // mean pass, variance pass, write pass
        float s = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];
        const float mean = zoo_block_sum(s, smem) / n;
        float q = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            const float d = xr[j] - mean;
            q += d * d;
        }
        const float rstd = rsqrtf(zoo_block_sum(q, smem) / n + eps);
        for (int j = threadIdx.x; j < n; j += blockDim.x) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
    }
}
""", ("zoo_layer_norm_f32",))


def layer_norm_launch_cuda(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5,
                           config: dict | None = None) -> torch.Tensor:
    """Run the CUDA C kernel on ``x`` (..., N) with ``weight``, ``bias`` (N,), float32 on CUDA (needs CuPy)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,) or bias.shape != (n_cols,):
        raise ValueError(f"weight and bias must have shape ({n_cols},), got {tuple(weight.shape)} and {tuple(bias.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    return row_launch_cuda(_CUDA, x, (weight, bias), (eps,), cfg)


def _layer_norm_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, weight, bias, eps), (dy,) = args, grads
    if dy is None or not takes(x, weight) or bias.shape != weight.shape:
        return None
    dx, dw, db = norm_backward_launch(x, weight, dy, eps, rms=False, bias=True)
    return dx if needs[0] else None, dw if needs[1] else None, db.to(bias.dtype) if needs[2] else None, None


@zoo_custom_op("cudal1::layer_norm", mutates_args=(), ref=layer_norm_ref, fast_backward=_layer_norm_backward)
def _layer_norm_op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    if not x.is_cuda:
        return layer_norm_ref(x, weight, bias, eps)
    if cuda_jit.use_cuda(CONFIGS, x, weight, bias):
        return layer_norm_launch_cuda(x, weight, bias, eps)
    # other dtypes (the CUDA C kernel is fp32) and no CuPy: the fused-norm kernel, which keeps rows of up to its
    # MAX_N in registers (one read, one write; the three-pass kernel above measured 0.10 ms against eager's 0.066
    # ms forward on 8192 x 4096 bf16 rows, H100, benchmarks/results/2026-11-25-zoo-vs-liger-h100)
    xc = x.contiguous()
    return fused_norm_launch(xc, torch.empty_like(xc), xc.numel() // max(x.shape[-1], 1), weight=weight, bias=bias,
                             eps=eps)


@_layer_norm_op.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Layer norm of ``x`` (..., N) with ``weight``, ``bias`` (N,) (the family's backend on CUDA, the reference on CPU);
    ``torch.ops.cudal1.layer_norm``."""
    return call("layer_norm", x, weight, bias, eps)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_layer_norm_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"}),
                  backward_kernel(rms=False, bias=True)]
#: for the nvcc compile test and NVRTC (cudal1.kernelzoo.cuda_jit)
CUDA_SOURCES = [_CUDA]
