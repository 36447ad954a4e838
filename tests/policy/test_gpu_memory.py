"""A finished trainer's GPU memory goes back to the driver: the harness measures in other processes on the same GPU,
and on an H100 the learning experiment's second arm found 65 GiB still reserved by the first arm's SFT, so that the
reference processes of its rewards ran out of memory (``task_error`` on 12 of 32 candidates, 2026-12-06)."""

from __future__ import annotations

import pytest
import torch

from cudal1.policy.loading import release_cached_gpu_memory


def test_without_cuda_releasing_does_nothing_and_raises_nothing():
    release_cached_gpu_memory()  # the CPU main job calls it after every trainer


@pytest.mark.gpu
def test_freed_blocks_are_handed_back_and_live_tensors_kept():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    keep = torch.ones(1 << 20, device="cuda")
    freed = torch.empty(1 << 28, device="cuda")  # 1 GiB of float32
    del freed
    assert torch.cuda.memory_reserved() >= 1 << 30  # the caching allocator keeps the block after del
    release_cached_gpu_memory()
    assert torch.cuda.memory_reserved() < 1 << 30 and float(keep.sum()) == float(1 << 20)
