"""``blocks.skinny_gemm_cuda``: the CUDA C small-K GEMM. Without a GPU: its sources compile with nvcc for every
family without spills, bad shapes are refused with a message, the CPU path is ``torch.matmul``. On a GPU: against
the fp64 product for K = 4, 16, 32 and both tile heights, and the fallback for shapes the kernel does not take."""

from __future__ import annotations

import pytest
import torch

from cudal1.kernelzoo.blocks.skinny_gemm_cuda import MAX_K, gemm_source, small_k_matmul, small_k_matmul_cuda

from .test_cuda_sources import assert_compiles_without_spills, find_nvcc

gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_sources_compile_for_every_family_without_spills(tmp_path, arch):
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found (nvidia-cuda-nvcc wheel or PATH)")
    for k, tm in [(16, 8), (32, 8), (32, 4), (4, 4)]:
        assert_compiles_without_spills(nvcc, gemm_source(k, tm), arch, tmp_path)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="multiple of 4"):
        gemm_source(6, 8)
    with pytest.raises(ValueError, match="multiple of 4"):
        gemm_source(MAX_K + 4, 8)
    with pytest.raises(ValueError, match="TM"):
        gemm_source(16, 2)
    with pytest.raises(ValueError, match="float32 CUDA"):
        small_k_matmul_cuda(torch.zeros(128, 16), torch.zeros(16, 128))


def test_cpu_path_is_torch_matmul():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(40, 16, generator=g), torch.randn(16, 24, generator=g)
    torch.testing.assert_close(small_k_matmul(a, b), a @ b)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("m,n,k,tm", [(256, 384, 32, 8), (128, 256, 16, 8), (192, 128, 32, 4), (64, 128, 4, 4)])
def test_matches_the_fp64_product(m, n, k, tm):
    pytest.importorskip("cupy")
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=g)
    b = torch.randn(k, n, device="cuda", generator=g)
    want = (a.double() @ b.double()).float()
    torch.testing.assert_close(small_k_matmul_cuda(a, b, tm), want, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
@gpu
def test_shapes_the_kernel_does_not_take_fall_back():
    pytest.importorskip("cupy")
    g = torch.Generator(device="cuda").manual_seed(1)
    for m, n, k in [(100, 128, 16), (128, 130, 16), (128, 128, 6), (128, 128, 40)]:
        a = torch.randn(m, k, device="cuda", generator=g)
        b = torch.randn(k, n, device="cuda", generator=g)
        torch.testing.assert_close(small_k_matmul(a, b), (a.double() @ b.double()).float(), rtol=1e-5, atol=1e-5)
    a = torch.randn(16, 128, device="cuda", generator=g).t()  # (128, 16) column-major: not contiguous
    b = torch.randn(16, 128, device="cuda", generator=g)
    torch.testing.assert_close(small_k_matmul(a, b), (a.double() @ b.double()).float(), rtol=1e-5, atol=1e-5)
