"""fp32 matrix product ``C = A @ B`` (plain or batched), as ``torch.matmul`` / ``torch.bmm``.

Shapes: ``a`` (M, K) or (BATCH, M, K); ``b`` (K, N) or (BATCH, K, N) (a 2-D ``b`` is shared by every batch);
float32 in, float32 out (M, N) / (BATCH, M, N), contiguous. 2*M*N*K FLOP per batch; traffic 4*(MK + KN + MN)
bytes at best.

Two ways to compute it, chosen per architecture family by ``CONFIGS[family]["backend"]``:

* ``"torch"``: cuBLAS fp32 SGEMM (``torch.matmul``), under whatever TF32 setting the caller has (the harness
  turns TF32 off). This is every family's choice today, so the dense matmul solutions are at parity with eager.
* ``"triton"``: the Triton kernel below: fp32 FFMA (``tl.dot(..., input_precision="ieee")``), tiles of
  BLOCK_M x BLOCK_N in grouped order (L2 reuse), split-K with fp32 atomics when there are fewer output tiles
  than SMs (``torch.zeros`` output then; summation order not fixed).

Measured on Hopper (benchmarks/results/2026-11-22-tune-matmul-conv-pool-h100.md, the six matmul tasks' sizes):
the ieee kernel ran slower than cuBLAS. A 3xTF32 split (hi/lo TF32 parts, three tensor-core products)
ran faster than cuBLAS on some sizes, but its error against an fp64 product was many times torch's fp32 error
(failing the harness tolerance on the K=65536 task) although a CPU emulation of the same split matched fp32:
Hopper's TF32 tensor-core products/accumulation are not exact on TF32 inputs. It was removed; fp32 tasks
stay on FFMA or cuBLAS.

Backward (CUDA, registered with the op): ``dA = dC @ B^T`` and ``dB = A^T @ dC`` (summed over the batch for a
shared 2-D ``b``: one GEMM over the (BATCH*M, K) view), each only when wanted, no forward recompute. These
are GEMMs, so cuBLAS is the fast path for the same reason as the forward's ``"torch"`` backend (the FFMA kernel
ran slower than it); a custom kernel has no elementwise work to fuse here.
"""

from __future__ import annotations

import torch

from .._triton import tl, triton
from ..arch import check_table, pick
from ..kernel_specs import TritonKernel
from ..registry import call, on_kernels, zoo_custom_op

__all__ = ["CONFIGS", "matmul", "matmul_launch", "matmul_ref"]

CONFIGS = {
    "sm80": {"backend": "torch", "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32,
             "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
    "sm86": {"backend": "torch", "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32,
             "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
    "sm89": {"backend": "torch", "BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32,
             "GROUP_M": 8, "num_warps": 4, "num_stages": 3},
    # sm90 measured: best ieee tile 0.74-0.95x cuBLAS at the suite's sizes
    "sm90": {"backend": "torch", "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32,
             "GROUP_M": 8, "num_warps": 8, "num_stages": 3},
}
check_table(CONFIGS, "matmul")


def matmul_ref(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """PyTorch reference (cuBLAS / CPU BLAS, fp32)."""
    return torch.matmul(a, b)


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, k_split,
                   s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                   ATOMIC: tl.constexpr, EVEN_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    # grouped order: GROUP_M row-tiles share the B column-tiles they read while those sit in L2
    width = GROUP_M * grid_n
    group = pid // width
    first_m = group * GROUP_M
    size_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % width) % size_m
    pid_n = (pid % width) // size_m

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M).to(tl.int64)  # in bounds: no row mask
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N).to(tl.int64)
    k0 = pid_k * k_split
    k_end = min(k0 + k_split, K)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + batch * s_ab + ram[:, None] * s_am + (k0 + rk)[None, :].to(tl.int64) * s_ak
    b_ptrs = b_ptr + batch * s_bb + (k0 + rk)[:, None].to(tl.int64) * s_bk + rbn[None, :] * s_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k0, k_end, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=(k + rk)[None, :] < k_end, other=0.0)
            b = tl.load(b_ptrs, mask=(k + rk)[:, None] < k_end, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * s_ak
        b_ptrs += BLOCK_K * s_bk
    rm64 = rm.to(tl.int64)
    rn64 = rn.to(tl.int64)
    c_ptrs = c_ptr + batch * s_cb + rm64[:, None] * s_cm + rn64[None, :] * s_cn
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if ATOMIC:
        tl.atomic_add(c_ptrs, acc, mask=mask, sem="relaxed")
    else:
        tl.store(c_ptrs, acc, mask=mask)


def _num_sms(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 4


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dtype != torch.float32 or b.dtype != torch.float32:
        raise TypeError(f"matmul takes float32 tensors, got {a.dtype} and {b.dtype}")
    if a.dim() not in (2, 3) or b.dim() not in (2, 3) or (b.dim() == 3 and a.dim() != 3):
        raise ValueError(f"matmul takes a (M, K) or (B, M, K) and b (K, N) or (B, K, N), got {tuple(a.shape)} "
                         f"and {tuple(b.shape)}")
    if a.shape[-1] != b.shape[-2] or (b.dim() == 3 and b.shape[0] != a.shape[0]):
        raise ValueError(f"matmul shapes do not match: {tuple(a.shape)} @ {tuple(b.shape)}")


def matmul_launch(a: torch.Tensor, b: torch.Tensor, config: dict | None = None) -> torch.Tensor:
    """Run the Triton kernel: ``a`` (M, K) or (B, M, K) @ ``b`` (K, N) or (B, K, N), fp32 -> fp32 contiguous.

    ``config`` keys: BLOCK_M/N/K, GROUP_M, num_warps, num_stages and optional SPLIT_K (0 or absent: automatic, >1 only when the output has fewer tiles than the GPU has SMs)."""
    _check(a, b)
    cfg = config or pick(CONFIGS, a.device if a.is_cuda else None)
    batched = a.dim() == 3
    a3 = a if batched else a.unsqueeze(0)
    nb, m, k = a3.shape
    n = b.shape[-1]
    s_bb = b.stride(0) if b.dim() == 3 else 0
    s_bk, s_bn = b.stride(-2), b.stride(-1)
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
    split = cfg.get("SPLIT_K", 0)
    if not split:
        sms = _num_sms(a.device)
        split = 1
        if tiles * nb < sms:  # too few tiles to fill the GPU: split K (a power of 2), >= 8 K-steps per split
            split = max(1, min(triton.cdiv(2 * sms, tiles * nb), k // (8 * bk)))
            split = 1 << (split.bit_length() - 1)
    k_split = triton.cdiv(triton.cdiv(k, split), bk) * bk
    split = triton.cdiv(k, k_split) if k else 1
    out = (torch.zeros if split > 1 else torch.empty)((nb, m, n), device=a.device, dtype=torch.float32)
    if m and n:
        grid = (tiles, split, nb)
        _matmul_kernel[grid](
            a3, b, out, m, n, k, k_split,
            a3.stride(0), a3.stride(1), a3.stride(2), s_bb, s_bk, s_bn, out.stride(0), out.stride(1), out.stride(2),
            BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg["GROUP_M"], ATOMIC=split > 1, EVEN_K=k % k_split == 0, num_warps=cfg["num_warps"],
            num_stages=cfg.get("num_stages", 3))
    return out if batched else out.squeeze(0)


def _matmul_backward(args: list, grads: list, needs: tuple) -> tuple | None:
    """``(dA, dB)`` as two cuBLAS GEMMs on CUDA (see the module docstring), None elsewhere (the reference's
    VJP, ``registry.kernel_backward``)."""
    (a, b), (dc,) = args, grads
    if not on_kernels(a, b):
        return None
    if dc is None:
        return None, None
    da = torch.matmul(dc, b.mT) if needs[0] else None
    db = None
    if needs[1]:
        db = torch.bmm(a.mT, dc) if b.dim() == 3 else a.reshape(-1, a.shape[-1]).T @ dc.reshape(-1, dc.shape[-1])
    return da, db


@zoo_custom_op("cudal1::matmul", mutates_args=(), ref=matmul_ref, fast_backward=_matmul_backward)
def _matmul_op(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if not a.is_cuda or pick(CONFIGS, a.device)["backend"] == "torch":
        return matmul_ref(a, b).contiguous()
    return matmul_launch(a, b)


@_matmul_op.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _check(a, b)
    return a.new_empty((*a.shape[:-1], b.shape[-1]))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` in fp32: ``a`` (M, K) or (B, M, K), ``b`` (K, N) or (B, K, N) -> (M, N) or (B, M, N).

    On CUDA: the backend of the device's family (``CONFIGS[family]["backend"]``: the zoo's Triton kernel
    through ``torch.ops.cudal1.matmul``, or cuBLAS called directly so it costs no dispatch overhead); on CPU
    the reference."""
    if not a.is_cuda or pick(CONFIGS, a.device)["backend"] == "torch":
        return matmul_ref(a, b)
    return call("matmul", a, b)


#: for ``python -m cudal1.kernelzoo.compile_targets``
TRITON_KERNELS = [TritonKernel(
    "_matmul_kernel",
    {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "k_split": "i32",
     **{s: "i64" for s in ("s_ab", "s_am", "s_ak", "s_bb", "s_bk", "s_bn", "s_cb", "s_cm", "s_cn")}},
    constexprs={"ATOMIC": False, "EVEN_K": True})]
