"""``allocator.CacheRewarm``: after a worker returns its cached GPU memory, the next timed batch's allocations come
from the cache, not from ``cudaMalloc`` inside the timed calls (the rule), and without the re-warm they do not
(its twin, which shows the test can fail). CPU: both steps do nothing.
``allocator.placement_offsets``: where a batch's tensors landed (timing diagnostics)."""

from __future__ import annotations

import pytest
import torch

from cudal1.harness.allocator import CacheRewarm, placement_offsets

MIB = 1 << 20


def test_cpu_release_and_rewarm_do_nothing():
    c = CacheRewarm()
    c.release(torch.device("cpu"))
    assert c.target_bytes == 0
    assert c.rewarm(torch.device("cpu")) == 0 and c.last_reserved_bytes == 0


def test_cpu_tensors_have_no_placement():
    assert placement_offsets([torch.zeros(3), [None, torch.zeros(2)], None]) == [-1, -1, -1]


def _segments(dev: torch.device) -> int:
    """cudaMalloc calls PyTorch's allocator has made on ``dev`` (a counter; it only grows)."""
    return int(torch.cuda.memory_stats(dev).get("segment.all.allocated", 0))


def _batch_of_outputs(dev: torch.device, n: int = 4, each: int = 96 * MIB) -> list[torch.Tensor]:
    return [torch.empty(each, dtype=torch.uint8, device=dev) for _ in range(n)]



@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("rewarm", [True, False], ids=["rewarmed", "without_rewarm"])
def test_batch_after_a_release_allocates_from_the_cache_only_when_rewarmed(rewarm):
    dev = torch.device("cuda", torch.cuda.current_device())
    c = CacheRewarm()
    torch.cuda.empty_cache()
    kept = _batch_of_outputs(dev)  # the last batch's outputs, as a worker keeps them until its release
    del kept
    c.release(dev)
    assert c.target_bytes >= 4 * 96 * MIB
    assert torch.cuda.memory_reserved(dev) < 4 * 96 * MIB  # the release gave the batch's memory back
    if rewarm:
        missing = 4 * 96 * MIB - torch.cuda.memory_reserved(dev)
        assert c.rewarm(dev) >= missing > 0
        assert c.target_bytes == 0  # one re-warm per release
    before = _segments(dev)
    outs = _batch_of_outputs(dev)  # what the timed calls allocate
    grown = _segments(dev) - before
    del outs
    if rewarm:
        assert grown == 0, f"{grown} cudaMalloc calls in the timed calls after a re-warm"
    else:
        assert grown > 0  # the twin: without the re-warm the calls allocate (what the rule removes)
    torch.cuda.empty_cache()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_rewarm_without_a_pending_release_reserves_nothing():
    dev = torch.device("cuda", torch.cuda.current_device())
    c = CacheRewarm()
    assert c.rewarm(dev) == 0
    c.release(dev)
    c.rewarm(dev)
    assert c.rewarm(dev) == 0  # the second batch after one release reuses the first's cache
