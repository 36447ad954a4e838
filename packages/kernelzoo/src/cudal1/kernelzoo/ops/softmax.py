"""Softmax over the last dimension: ``y[..., j] = exp(x[..., j] - max) / sum_k exp(x[..., k] - max)``.

Shapes: ``x`` (..., N), any N; float32 (fp16/bf16 computed in fp32); output like ``x``. Rows with
``N <= MAX_N`` are held whole in registers (a (BLOCK_M, next_pow2(N)) tile per program, see ``_rows.row_tile``):
one read, one write. Longer rows: one program per row, an online max/sum pass, then a normalising pass
(two reads, one write). CUDA C
(``softmax_launch_cuda``, float32): one block per row held in registers where it fits (one read, one write).

Backward (CUDA, fp32/bf16/fp16): ``dx = p * (dy - sum(dy * p))`` with ``p`` recomputed in fp32 from ``x``
(``_rows_backward``: rows up to its MAX_N in registers, one read of ``x`` and ``dy``; longer rows looped); the
reference's VJP elsewhere.
"""

from __future__ import annotations

import torch

from .. import cuda_jit
from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import CudaSource, TritonKernel
from ..registry import call, zoo_custom_op
from ._rows import row_tile
from ._rows_backward import CONFIGS as ROWS_BWD_CONFIGS  # noqa: F401  (read by compile_targets)
from ._rows_backward import TILE_CONFIGS as ROWS_BWD_TILE_CONFIGS  # noqa: F401  (read by compile_targets)
from ._rows_backward import kernels as backward_kernels
from ._rows_backward import row_fast_backward
from ._rows_cuda import ROW_COMMON, row_launch_cuda

__all__ = ["CONFIGS", "CUDA_SOURCES", "softmax", "softmax_launch", "softmax_launch_cuda", "softmax_ref"]

#: Triton: MAX_N/MIN_TILE/EPT/MAX_WARPS for the register-resident tile (``_rows.row_tile``; MAX_N 0 turns it
#: off), BLOCK/num_warps for the looped kernel. CUDA C: cuda_max_threads, cuda_cols_per_thread (see _rows_cuda.row_threads).
#: backend: the default implementation on CUDA, "triton" or "cuda" (cudal1.kernelzoo.cuda_jit).
_CUDA_CFG = {"cuda_max_threads": 1024, "cuda_cols_per_thread": 16, "backend": "triton"}
CONFIGS = {
    "sm80": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 1024, "num_warps": 4, **_CUDA_CFG},
    "sm86": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 1024, "num_warps": 4, **_CUDA_CFG},
    "sm89": {"MAX_N": 32768, "MIN_TILE": 2048, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 1024, "num_warps": 4, **_CUDA_CFG},
    "sm90": {"MAX_N": 32768, "MIN_TILE": 4096, "EPT": 16, "MAX_WARPS": 32, "BLOCK": 2048, "num_warps": 8, **_CUDA_CFG},
}
check_table(CONFIGS, "softmax")
#: the tile each family runs at the suite's size (32768 rows of 16384), for the compile check
TILE_CONFIGS = {fam: row_tile(32768, 16384, cfg) for fam, cfg in CONFIGS.items()}


def softmax_ref(x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.softmax(x, dim=-1)


@triton.jit
def _softmax_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows < n_rows)[:, None] & (cols < n_cols)[None, :]
    offs = rows[:, None] * n_cols + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 1)[:, None])  # a row of -inf or with a NaN gives NaN, as torch
    y = e / tl.sum(e, 1)[:, None]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        # lanes that have seen only -inf keep s = 0 (avoid inf - inf)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        s = s * scale + tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, 0)
    row_sum = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), 0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / row_sum
        tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_launch(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel on ``x`` (..., N)."""
    cfg = config or pick(CONFIGS, x.device if x.is_cuda else None)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    n_cols = xc.shape[-1] if xc.dim() else 1
    rows = xc.numel() // max(n_cols, 1)
    if not xc.numel():
        return y
    tile = row_tile(rows, n_cols, cfg) if cfg.get("MAX_N") else None
    if tile is not None:
        _softmax_tile_kernel[(triton.cdiv(rows, tile["BLOCK_M"]),)](xc, y, rows, n_cols, **tile)
    else:
        block = min(cfg["BLOCK"], triton.next_power_of_2(n_cols))
        _softmax_kernel[(rows,)](xc, y, n_cols, BLOCK=block, num_warps=cfg["num_warps"])
    return y


_CUDA = CudaSource("softmax", ROW_COMMON + r"""
// y = softmax(x) over each row of n; one block per row.
extern "C" __global__ void __launch_bounds__(1024)
zoo_softmax_f32(const float* __restrict__ x, float* __restrict__ y, int n, int vec) {
    __shared__ float smem[32];
    const long long base = (long long)blockIdx.x * n;
    const float* __restrict__ xr = x + base;
    float* __restrict__ yr = y + base;
    if (n <= ZOO_ROW_REGS * (int)blockDim.x) {  // the row fits in registers: one read
        float r[ZOO_ROW_REGS];
        zoo_row_load(xr, n, vec, r, ZOO_NEG_INF);
        float m = ZOO_NEG_INF;
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) m = fmaxf(m, r[k]);
        m = zoo_block_max(m, smem);
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) {
            r[k] = expf(r[k] - m);  // padding (-inf) gives 0; an all -inf row gives NaN, as torch
            s += r[k];
        }
        s = zoo_block_sum(s, smem);
#pragma unroll
        for (int k = 0; k < ZOO_ROW_REGS; ++k) r[k] = r[k] / s;
        zoo_row_store(yr, n, vec, r);
    } else {  // online max and rescaled sum per thread, then a normalising pass
        float m = ZOO_NEG_INF, s = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            const float v = xr[j];
            if (v > m) {
                s = s * expf(m - v) + 1.0f;
                m = v;
            } else if (v != ZOO_NEG_INF) {
                s += expf(v - m);  // NaN propagates
            }
        }
        const float mb = zoo_block_max(m, smem);
        const float sb = zoo_block_sum(m == ZOO_NEG_INF ? 0.0f : s * expf(m - mb), smem);
        for (int j = threadIdx.x; j < n; j += blockDim.x) yr[j] = expf(xr[j] - mb) / sb;
    }
}
""", ("zoo_softmax_f32",))


def softmax_launch_cuda(x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the CUDA C kernel on ``x`` (..., N), float32 on CUDA (needs CuPy)."""
    return row_launch_cuda(_CUDA, x, (), (), config or pick(CONFIGS, x.device if x.is_cuda else None))


@zoo_custom_op("cudal1::softmax", mutates_args=(), ref=softmax_ref, fast_backward=row_fast_backward("softmax"))
def _softmax_op(x: torch.Tensor) -> torch.Tensor:
    if not x.is_cuda:
        return softmax_ref(x)
    return softmax_launch_cuda(x) if cuda_jit.use_cuda(CONFIGS, x) else softmax_launch(x)


@_softmax_op.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax of ``x`` over its last dimension (the family's backend on CUDA, the reference on CPU);
    ``torch.ops.cudal1.softmax``."""
    return call("softmax", x)

#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [
    TritonKernel("_softmax_tile_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32"},
                 configs="TILE_CONFIGS"),
    TritonKernel("_softmax_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32"}),
    *backward_kernels("softmax"),
]
#: for the nvcc compile test and NVRTC (cudal1.kernelzoo.cuda_jit)
CUDA_SOURCES = [_CUDA]
