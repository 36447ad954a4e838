"""``blocks.skinny_gemm``: the small-K GEMM kernel against fp64 products on small odd shapes (in Triton's
interpreter on a CPU-only machine, tiny tiles so that grids stay small): K not a multiple of the 16-wide step,
K = 1, K past :data:`MAX_K` (the looped path), edge tiles, the default config, strided inputs; and the torch
fallback off CUDA or for other dtypes."""

import pytest
import torch

from cudal1.kernelzoo.blocks.skinny_gemm import (
    GEMM_CONFIGS,
    GEMM_DEFAULT,
    MAX_K,
    small_k_matmul,
    small_k_matmul_triton,
)

DEV = "cuda" if torch.cuda.is_available() else "cpu"
TOL = {torch.float32: (1e-5, 1e-5)}  #: (rtol, atol) against the fp64 product rounded to fp32

TINY = {"BLOCK_M": 16, "BLOCK_N": 32, "BLOCK_K": 16, "num_warps": 4, "num_stages": 1}
GEMM_CASES = {  # M, N, K, config
    "k16_edges": (37, 53, 16, TINY),
    "k20_masked_two_steps": (45, 70, 20, TINY),
    "k32_even": (32, 64, 32, TINY),
    "k1": (9, 11, 1, TINY),
    "k70_looped": (19, 23, MAX_K + 6, TINY),
    "default_config": (40, 50, 32, GEMM_DEFAULT),
}


def close(got: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    want = (a.double() @ b.double()).to(got.dtype)
    rtol, atol = TOL[got.dtype]
    assert got.shape == want.shape and got.dtype == torch.float32 and got.is_contiguous()
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(GEMM_CASES))
def test_small_k_matmul_matches_fp64(name):
    m, n, k, cfg = GEMM_CASES[name]
    gen = torch.Generator().manual_seed(m * 100 + n + k)
    a = torch.randn(m, k, generator=gen).to(DEV)
    b = torch.randn(k, n, generator=gen).to(DEV)
    close(small_k_matmul_triton(a, b, cfg), a, b)


def test_small_k_matmul_reads_strided_inputs():
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(20, 33, generator=gen).to(DEV).t()  # (33, 20), column-major
    b = torch.randn(40, 20, generator=gen).to(DEV).t()[:, ::2]  # (20, 20), stride 2 along N
    close(small_k_matmul_triton(a, b, TINY), a, b)


def test_configs_have_the_launch_keys():
    """Every config carries exactly the keys the launcher reads (a probe winner pasted with extra or missing
    keys would otherwise fail only on a GPU, at the task's shape)."""
    for cfg in [GEMM_DEFAULT, *GEMM_CONFIGS.values()]:
        assert set(cfg) == set(TINY)
        assert cfg["BLOCK_K"] >= 16  # an fp32 tl.dot needs K steps of at least 16


def test_cpu_and_other_dtypes_run_torch():
    a, b = torch.randn(9, 16, dtype=torch.float64), torch.randn(16, 7, dtype=torch.float64)
    assert torch.equal(small_k_matmul(a, b), a @ b)
    a32, b32 = a.float(), b.float()
    assert torch.equal(small_k_matmul(a32, b32), a32 @ b32)  # on CPU: torch, not the interpreter
