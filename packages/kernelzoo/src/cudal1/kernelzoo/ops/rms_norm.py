"""RMS norm over the last dimension: ``y = x / sqrt(mean(x^2) + eps) * weight``.

Shapes: ``x`` (..., N), ``weight`` (N,); float32 (statistics in fp32); output like ``x``. One program per
row: rows up to ``ONE_TILE_MAX`` columns held whole in registers (one read, one write), longer ones in a
sum-of-squares pass and a write pass (two reads, one write). CUDA C (``rms_norm_launch_cuda``,
float32): one block per row held in registers where it fits (one read, one write). Backward: the shared row-norm
backward kernel (``_norm_backward``; fp32/bf16/fp16 rows up to its MAX_N on CUDA), the reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .. import cuda_jit
from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import CudaSource, TritonKernel
from ..registry import call, zoo_custom_op
from ._norm_backward import CONFIGS as NORM_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._norm_backward import backward_kernel, norm_backward_launch, sum_partials_kernel, takes
from ._rows_cuda import ROW_COMMON, row_launch_cuda

__all__ = ["CONFIGS", "CUDA_SOURCES", "rms_norm", "rms_norm_launch", "rms_norm_launch_cuda", "rms_norm_ref"]

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
# Triton one (0.72 vs 0.94 ms); other families unmeasured, same choice; without CuPy the op uses Triton
check_table(CONFIGS, "rms_norm")


def rms_norm_ref(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """PyTorch reference (written out, as the built-in task does)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr, ONE_TILE: tl.constexpr = False):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    if ONE_TILE:  # the whole row in registers: one read
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, 0) / n_cols + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, 0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_ptr + base + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


#: longest row the Triton kernel keeps whole in registers (one read); longer rows take two passes
ONE_TILE_MAX = 16384


def rms_norm_launch(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N) with ``weight`` (N,)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,):
        raise ValueError(f"weight must have shape ({n_cols},), got {tuple(weight.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel():
        whole = triton.next_power_of_2(n_cols)
        one = whole <= ONE_TILE_MAX
        block = whole if one else cfg["BLOCK"]
        warps = min(32, max(cfg["num_warps"], block // 512)) if one else cfg["num_warps"]
        _rms_norm_kernel[(xc.numel() // n_cols,)](xc, weight.contiguous(), y, n_cols, eps, BLOCK=block, ONE_TILE=one,
                                                 num_warps=warps)
    return y


_CUDA = CudaSource("rms_norm", ROW_COMMON + r"""
// y = x * rsqrt(mean(x^2) + eps) * w over each row of n; one block per row.
extern "C" __global__ void __launch_bounds__(1024)
zoo_rms_norm_f32(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int n, float eps,
                 int vec) {
    __shared__ float smem[32];
    const long long base = (long long)blockIdx.x * n;
    const float* __restrict__ xr = x + base;
    float* __restrict__ yr = y + base;
    if (n <= ZOO_ROW_REGS * (int)blockDim.x) {  // the row fits in registers: one read
        float r[ZOO_ROW_REGS];
        zoo_row_load(xr, n, vec, r, 0.0f);
        float q = 0.0f;
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) q += r[k] * r[k];
        const float rstd = rsqrtf(zoo_block_sum(q, smem) / n + eps);
        zoo_row_affine_store(yr, n, vec, r, 0.0f, rstd, w, nullptr);
    } else {  // sum-of-squares pass, write pass
        float q = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) q += xr[j] * xr[j];
        const float rstd = rsqrtf(zoo_block_sum(q, smem) / n + eps);
        for (int j = threadIdx.x; j < n; j += blockDim.x) yr[j] = xr[j] * rstd * w[j];
    }
}
""", ("zoo_rms_norm_f32",))


def rms_norm_launch_cuda(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6,
                         config: dict | None = None) -> torch.Tensor:
    """Run the CUDA C kernel on ``x`` (..., N) with ``weight`` (N,), float32 on CUDA (needs CuPy)."""
    n_cols = x.shape[-1]
    if weight.shape != (n_cols,):
        raise ValueError(f"weight must have shape ({n_cols},), got {tuple(weight.shape)}")
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    return row_launch_cuda(_CUDA, x, (weight,), (eps,), cfg)


def _rms_norm_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """The backward kernel where it applies (see ``registry.kernel_backward``), else None."""
    (x, weight, eps), (dy,) = args, grads
    if dy is None or not takes(x, weight):
        return None
    dx, dw, _ = norm_backward_launch(x, weight, dy, eps, rms=True)
    return dx if needs[0] else None, dw if needs[1] else None, None


@zoo_custom_op("cudal1::rms_norm", mutates_args=(), ref=rms_norm_ref, fast_backward=_rms_norm_backward)
def _rms_norm_op(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    if not x.is_cuda:
        return rms_norm_ref(x, weight, eps)
    if cuda_jit.use_cuda(CONFIGS, x, weight):
        return rms_norm_launch_cuda(x, weight, eps)
    return rms_norm_launch(x, weight, eps)


@_rms_norm_op.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """RMS norm of ``x`` (..., N) with ``weight`` (N,) (the family's backend on CUDA, the reference on CPU);
    ``torch.ops.cudal1.rms_norm``."""
    return call("rms_norm", x, weight, eps)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_rms_norm_kernel", {"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"},
                               constexprs={"ONE_TILE": False}),
                  TritonKernel("_rms_norm_kernel", {"x_ptr": "*bf16", "w_ptr": "*bf16", "y_ptr": "*bf16", "n_cols": "i32", "eps": "fp32"},
                               constexprs={"ONE_TILE": True}),
                  backward_kernel(rms=True), sum_partials_kernel()]
#: for the nvcc compile test and NVRTC (cudal1.kernelzoo.cuda_jit)
CUDA_SOURCES = [_CUDA]
