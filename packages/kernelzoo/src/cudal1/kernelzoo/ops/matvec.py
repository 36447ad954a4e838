"""Matrix-vector product (GEMV) ``y = A @ x``, as ``torch.matmul`` with a (K,) or (K, 1) right side.

Shapes: ``a`` (M, K), ``x`` (K,) or (K, 1); float32; output (M,) or (M, 1) float32. Memory-bound on ``a``: 4*M*K
bytes read once (``x`` stays in L2), 2*M*K FLOP. Each program owns BLOCK_M rows and walks K in BLOCK_K
chunks with wide contiguous loads, keeping a (BLOCK_M, BLOCK_K) fp32 partial sum that is reduced once at the
end (fp32 throughout; the summation order differs from cuBLAS's, so results agree to fp32 rounding).

cuBLAS's GEMV already reads ``a`` at close to the copy bandwidth (at 32768x32768 this kernel only matches it,
benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md), so the kernel is at parity with cuBLAS;
``CONFIGS[family]["backend"]`` selects it ("triton") or cuBLAS ("torch").

Backward (CUDA, registered with the op): ``dA = outer(dy, x)`` (one write of A's size) and ``dx = A^T @ dy``
(cuBLAS's transposed GEMV, one read of ``a``), each only when wanted, no forward recompute. Both are single
memory-bound passes already at the copy bandwidth in PyTorch (as the forward's cuBLAS GEMV), so a custom
kernel would have nothing to fuse.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "matvec", "matvec_launch", "matvec_ref"]

CONFIGS = {  # sm90 measured: 1.02x cuBLAS (3.05 vs 2.99 TB/s), i.e. a tie
    "sm80": {"backend": "torch", "BLOCK_M": 4, "BLOCK_K": 1024, "num_warps": 4},
    "sm86": {"backend": "torch", "BLOCK_M": 4, "BLOCK_K": 1024, "num_warps": 4},
    "sm89": {"backend": "torch", "BLOCK_M": 4, "BLOCK_K": 1024, "num_warps": 4},
    "sm90": {"backend": "triton", "BLOCK_M": 4, "BLOCK_K": 2048, "num_warps": 8},
}
check_table(CONFIGS, "matvec")


def matvec_ref(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """PyTorch reference."""
    return torch.matmul(a, x)


@triton.jit
def _matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
                   EVEN_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = tl.where(rows < M, rows, M - 1).to(tl.int64)  # clamp: loads stay in bounds, the store is masked
    cols = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * K + cols[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_K), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            x = tl.load(x_ptr + k + cols)
            a = tl.load(a_ptrs + k, eviction_policy="evict_first")
        else:
            kmask = (k + cols) < K
            x = tl.load(x_ptr + k + cols, mask=kmask, other=0.0)
            a = tl.load(a_ptrs + k, mask=kmask[None, :], other=0.0, eviction_policy="evict_first")
        acc += a * x[None, :]
    y = tl.sum(acc, axis=1)
    out_rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(y_ptr + out_rows, y, mask=out_rows < M)


def _check(a: torch.Tensor, x: torch.Tensor) -> None:
    if a.dim() != 2 or x.dim() not in (1, 2) or (x.dim() == 2 and x.shape[1] != 1) or x.shape[0] != a.shape[1]:
        raise ValueError(f"matvec takes a (M, K) and x (K,) or (K, 1), got {tuple(a.shape)} and {tuple(x.shape)}")
    if a.dtype != torch.float32 or x.dtype != torch.float32:
        raise TypeError(f"matvec takes float32 tensors, got {a.dtype} and {x.dtype}")


def matvec_launch(a: torch.Tensor, x: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel: ``a`` (M, K) @ ``x`` (K,) or (K, 1) -> (M,) or (M, 1)."""
    _check(a, x)
    cfg = config or pick(CONFIGS, a.device if a.is_cuda else None)
    ac, xc = a.contiguous(), x.contiguous().view(-1)
    m, k = ac.shape
    y = torch.empty(m, device=a.device, dtype=torch.float32)
    if m:
        if k == 0:
            y.zero_()
        else:
            block_k = min(cfg["BLOCK_K"], triton.next_power_of_2(k))
            _matvec_kernel[(triton.cdiv(m, cfg["BLOCK_M"]),)](
                ac, xc, y, m, k, BLOCK_M=cfg["BLOCK_M"], BLOCK_K=block_k, EVEN_K=k % block_k == 0,
                num_warps=cfg["num_warps"])
    return y if x.dim() == 1 else y.view(m, 1)


def _matvec_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """``(dA, dx)`` with PyTorch's outer product and cuBLAS GEMV on CUDA (see the module docstring), None
    elsewhere (the reference's VJP, ``registry.kernel_backward``)."""
    (a, x), (dy,) = args, grads
    if not on_kernels(a, x):
        return None
    if dy is None:
        return None, None
    g = dy.reshape(-1)
    da = torch.outer(g, x.reshape(-1)) if needs[0] else None
    dx = torch.mv(a.T, g).view(x.shape) if needs[1] else None
    return da, dx


@zoo_custom_op("cudal1::matvec", mutates_args=(), ref=matvec_ref, fast_backward=_matvec_backward)
def _matvec_op(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    if not a.is_cuda or pick(CONFIGS, a.device)["backend"] == "torch":
        return matvec_ref(a, x).contiguous()
    return matvec_launch(a, x)


@_matvec_op.register_fake
def _(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    _check(a, x)
    return a.new_empty((a.shape[0],) if x.dim() == 1 else (a.shape[0], 1))


def matvec(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``a @ x`` for ``a`` (M, K) and ``x`` (K,) or (K, 1), float32 -> (M,) or (M, 1): one read of ``a``
    (the family's backend on CUDA: Triton through ``torch.ops.cudal1.matvec`` or cuBLAS called directly; the
    reference on CPU)."""
    if not a.is_cuda or pick(CONFIGS, a.device)["backend"] == "torch":
        return matvec_ref(a, x)
    return call("matvec", a, x)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel("_matvec_kernel",
                               {"a_ptr": "*fp32", "x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "K": "i64"},
                               constexprs={"EVEN_K": True})]
