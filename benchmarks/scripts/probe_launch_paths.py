"""What one launch costs through each launch path, timed as the harness times a call, and the launch-bound
KernelBench level 1 references against their one-launch solutions (``kernelbench_v0`` or its ``pending/``). One GPU
process, < 90 s:

    PYTHONPATH=packages/harness/src:packages/kernelzoo/src python3 benchmarks/scripts/probe_launch_paths.py \
        [--rounds 300] [--out probe.json]

Part 1, a (16, 16384) fp32 ReLU (KernelBench level 1's size), each variant an ``nn.Module`` called as
``model(x)``: ``torch.empty_like(x)`` alone (the floor: every variant allocates its output), eager
``torch.relu``, a Triton kernel through ``kernel[grid]``, the same kernel through ``fast_launch.FastLaunch``
(its guard: the warm-up calls build it) and through FastLaunch's keyed path alone (a handle made with
``fast_launch.MAX_GUARDS = 0``), its ``CompiledKernel`` launcher called bare (tensors, then int pointers: what the fast path costs beyond the
launcher), a CuPy ``RawKernel`` through ``cuda_jit.launch``, and the same ``RawKernel`` called bare on a CuPy
stream made once. Part 2, each task's reference (the task's forward, at the task's sizes) against the pending
solution's ``ModelNew``, and the same solution with ``$CUDAL1_FAST_LAUNCH=0`` (its kernel through
``kernel[grid]``): what the launch path buys.

Timing: ``cudal1.harness.timing.Timer(cuda, l2_flush_bytes=256 MiB).time_call`` (L2 flushed, device
synchronised, host clock, synchronised again) inside ``torch.no_grad()``; ``--rounds`` rounds, each timing
every variant of a group once in a shuffled order; reported: median, 10th and 90th percentile (ms), and
pipelined host time (us per call, 500 calls back to back, one synchronisation). Every variant's output is
checked against the group's reference with the harness's comparison. Prints a markdown table; ``--out`` also
writes it as JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
import torch.nn as nn
import triton
import triton.language as tl

from cudal1.harness.compare import compare_outputs
from cudal1.harness.timing import Timer
from cudal1.kernelzoo import cuda_jit, fast_launch
from cudal1.kernelzoo.fast_launch import FAST_LAUNCH_ENV, FastLaunch
from cudal1.kernelzoo.kernel_specs import CudaSource
from cudal1.kernelzoo.solutions import KERNELBENCH_V0

PENDING = Path(KERNELBENCH_V0) / "pending"
BUDGET_S = 80.0  # stop starting new groups past this (the script must end within 90 s)
RELU_BLOCK = 2048
FLOOR = "torch.empty_like alone (floor)"
F = torch.nn.functional

RELU_CUDA = CudaSource(
    name="probe_launch_relu",
    code=r"""
extern "C" __global__ void probe_launch_relu(const float* __restrict__ x, float* __restrict__ y,
                                             long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v < 0.f ? 0.f : v; }
}
""",
    kernels=("probe_launch_relu",),
)


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.where(x < 0.0, 0.0, x), mask=mask)


class Call(nn.Module):
    """``fn`` as a module, called as ``model(*args)`` like the harness calls a model."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


# -- part 1: one ReLU launch through each path ---------------------------------------------------------------
def relu_variants(x: torch.Tensor) -> dict[str, Callable[..., Any]]:
    n = x.numel()
    grid = (triton.cdiv(n, RELU_BLOCK),)
    dev = x.device.index if x.device.index is not None else torch.cuda.current_device()

    def triton_grid(t):
        y = torch.empty_like(t)
        _relu_kernel[grid](t, y, n, BLOCK=RELU_BLOCK, num_warps=4)
        return y

    fast = FastLaunch(_relu_kernel, BLOCK=RELU_BLOCK, num_warps=4)

    def fast_guard(t):
        y = torch.empty_like(t)
        fast(grid, t, y, n)
        return y

    saved, fast_launch.MAX_GUARDS = fast_launch.MAX_GUARDS, 0
    try:
        keyed = FastLaunch(_relu_kernel, BLOCK=RELU_BLOCK, num_warps=4)
    finally:
        fast_launch.MAX_GUARDS = saved

    def fast_keyed(t):
        y = torch.empty_like(t)
        keyed(grid, t, y, n)
        return y

    compiled = _relu_kernel[grid](x, torch.empty_like(x), n, BLOCK=RELU_BLOCK, num_warps=4)
    run, function, meta = compiled.run, compiled.function, compiled.packed_metadata
    raw_stream = torch._C._cuda_getCurrentRawStream

    def launcher_tensors(t):
        y = torch.empty_like(t)
        run(grid[0], 1, 1, raw_stream(dev), function, meta, None, None, None, t, y, n, RELU_BLOCK)
        return y

    def launcher_ints(t):
        y = torch.empty_like(t)
        run(grid[0], 1, 1, raw_stream(dev), function, meta, None, None, None, t.data_ptr(), y.data_ptr(), n,
            RELU_BLOCK)
        return y

    variants: dict[str, Callable[..., Any]] = {
        FLOOR: torch.empty_like,
        "triton kernel[grid]": triton_grid,
        "fast_launch.FastLaunch (guard)": fast_guard,
        "fast_launch.FastLaunch, keyed path (no guard)": fast_keyed,
        "CompiledKernel.run, tensors (no key)": launcher_tensors,
        "CompiledKernel.run, int pointers (no key)": launcher_ints,
    }
    if cuda_jit.cupy_available():
        import numpy as np

        cupy = cuda_jit.require_cupy()
        cblocks = (triton.cdiv(n, 256),)

        def cupy_launch(t):
            y = torch.empty_like(t)
            cuda_jit.launch(RELU_CUDA, "probe_launch_relu", cblocks, (256,), (t, y, cuda_jit.i64(n)),
                            t.device)
            return y

        fn = cuda_jit.get_kernel(RELU_CUDA, "probe_launch_relu", dev)
        cupy.cuda.Device(dev).use()
        # torch's current stream as CuPy's current stream, made once (cuda_jit.launch enters it per call)
        handle = torch.cuda.current_stream(dev).cuda_stream

        class TorchStream:
            def __cuda_stream__(self) -> tuple[int, int]:
                return (0, handle)

        from_external = getattr(cupy.cuda.Stream, "from_external", None)
        stream = from_external(TorchStream()) if from_external else cupy.cuda.ExternalStream(handle, dev)
        stream.use()
        nn64 = np.int64(n)

        def cupy_bare(t, _stream=stream):  # (the default keeps the stream object alive)
            y = torch.empty_like(t)
            fn(cblocks, (256,), (np.uint64(t.data_ptr()), np.uint64(y.data_ptr()), nn64))
            return y

        variants["cupy RawKernel via cuda_jit.launch"] = cupy_launch
        variants["cupy RawKernel bare, stream made once"] = cupy_bare
    return variants


# -- part 2: the tasks ---------------------------------------------------------------------------------------
#: task -> (the task's forward, its inputs at the task's sizes, its init inputs)
TASKS: dict[str, tuple[Callable[..., Any], Callable[[], list[Any]], list[Any]]] = {
    "94_MSELoss": (lambda p, t: torch.mean((p - t) ** 2),
                   lambda: [torch.randn(128, 4096), torch.randn(128, 4096)], []),
    "95_CrossEntropyLoss": (lambda p, t: F.cross_entropy(p, t),
                            lambda: [torch.randn(4096, 10), torch.randint(0, 10, (4096,))], []),
    "38_L1Norm_": (lambda x: x / torch.sum(torch.abs(x), dim=1, keepdim=True),
                   lambda: [torch.randn(16, 16384)], []),
    "96_HuberLoss": (lambda p, t: F.smooth_l1_loss(p, t),
                     lambda: [torch.randn(128, 4096), torch.randn(128, 4096)], []),
    "39_L2Norm_": (lambda x: x / torch.norm(x, p=2, dim=1, keepdim=True),
                   lambda: [torch.randn(16, 16384)], []),
    "93_masked_cumsum": (lambda x, m: torch.cumsum(x * m, dim=1),
                         lambda: [torch.randn(128, 4000), torch.randint(0, 2, (128, 4000)).bool()], [1]),
    "91_cumsum_reverse": (lambda x: torch.cumsum(x.flip(1), dim=1).flip(1),
                          lambda: [torch.randn(128, 4000)], [1]),
    "25_Swish": (lambda x: x * torch.sigmoid(x), lambda: [torch.randn(16, 16384)], []),
}


def load_pending(task: str, tag: str) -> ModuleType | None:
    """The task's solution file (in the set, else in ``pending/``) as a fresh module, or None."""
    path = next((p for p in (PENDING.parent / f"{task}.py", PENDING / f"{task}.py") if p.is_file()), None)
    if path is None:
        return None
    spec = importlib.util.spec_from_file_location(f"_probe_{tag}_{task}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def solution_through_kernel_grid(task: str, init: list[Any], args: list[Any]) -> nn.Module | None:
    """The solution with every FastLaunch handle of a fresh copy of its module sent through ``kernel[grid]``
    (a handle decides at its first call; the environment variable is set only for that call)."""
    mod = load_pending(task, "slow")
    if mod is None:
        return None
    model = mod.ModelNew(*init).cuda().eval()
    os.environ[FAST_LAUNCH_ENV] = "0"
    try:
        model(*args)
    finally:
        del os.environ[FAST_LAUNCH_ENV]
    return model


# -- timing --------------------------------------------------------------------------------------------------
def pipelined_us(model: nn.Module, args: list[Any], calls: int = 500) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        model(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def time_group(name: str, ref: tuple[str, nn.Module], variants: dict[str, nn.Module], args: list[Any],
               rounds: int, timer: Timer, rng: random.Random) -> list[dict[str, Any]]:
    """Time the reference ``ref`` (label, model) and each variant ``rounds`` times, interleaved; check each
    one's output against the reference's (not the floor's: it computes nothing)."""
    models = {ref[0]: ref[1], **variants}
    want = ref[1](*args)
    checks = {}
    for k, m in models.items():
        for _ in range(10):
            m(*args)
        cmp = compare_outputs(m(*args), want)
        checks[k] = "ok" if cmp.ok or k == FLOOR else f"WRONG: {cmp.reason}"
    times: dict[str, list[float]] = {k: [] for k in models}
    keys = list(models)
    for _ in range(rounds):
        rng.shuffle(keys)
        for k in keys:
            ms, out = timer.time_call(models[k], args)
            times[k].append(ms)
            del out
    last = {k: compare_outputs(m(*args), want) for k, m in models.items()}
    rows = []
    ref_med = statistics.median(times[ref[0]])
    for k in models:
        ts = sorted(times[k])
        med = statistics.median(ts)
        check = checks[k] if last[k].ok or k == FLOOR else f"WRONG (last call): {last[k].reason}"
        rows.append({"group": name, "variant": k, "median_ms": med, "p10_ms": ts[len(ts) // 10],
                     "p90_ms": ts[(9 * len(ts)) // 10], "pipelined_us": pipelined_us(models[k], args),
                     "speedup_vs_reference": ref_med / med, "output": check})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--out", type=Path, default=None, help="also write the rows as JSON here")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    start = time.perf_counter()
    dev = torch.device("cuda")
    timer = Timer(dev, l2_flush_bytes=256 << 20)
    rng = random.Random(0)
    torch.manual_seed(0)
    cupy_version = cuda_jit.require_cupy().__version__ if cuda_jit.cupy_available() else "not installed"
    env = {"gpu": torch.cuda.get_device_name(dev), "torch": torch.__version__, "triton": triton.__version__,
           "cuda": torch.version.cuda, "cupy": cupy_version, "python": sys.version.split()[0],
           "rounds": a.rounds}
    print(" ".join(f"{k}={v}" for k, v in env.items()), flush=True)
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    with torch.no_grad():
        x = torch.randn(16, 16384, device=dev)
        relu = {k: Call(f) for k, f in relu_variants(x).items()}
        rows += time_group("relu (16, 16384)", ("eager torch.relu", Call(torch.relu)), relu, [x], a.rounds,
                           timer, rng)
        print(f"part 1 done at {time.perf_counter() - start:.1f} s", flush=True)
        for task, (forward, make_inputs, init) in TASKS.items():
            if time.perf_counter() - start > BUDGET_S:
                skipped.append(task)
                continue
            mod = load_pending(task, "fast")
            if mod is None:
                skipped.append(f"{task} (no solution file)")
                continue
            args = [t.to(dev) for t in make_inputs()]
            variants = {"solution (fast_launch)": mod.ModelNew(*init).to(dev).eval()}
            slow = solution_through_kernel_grid(task, init, args)
            if slow is not None:
                variants["solution, kernel[grid]"] = slow
            ref = ("reference (eager)", Call(forward))
            rows += time_group(task, ref, variants, args, a.rounds, timer, rng)
            print(f"{task} done at {time.perf_counter() - start:.1f} s", flush=True)
    print()
    print("| group | variant | median ms | p10 | p90 | pipelined host us/call | x reference | output |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['group']} | {r['variant']} | {r['median_ms']:.4f} | {r['p10_ms']:.4f} | "
              f"{r['p90_ms']:.4f} | {r['pipelined_us']:.1f} | {r['speedup_vs_reference']:.2f}x | "
              f"{r['output']} |")
    if skipped:
        print(f"\nnot run (time budget or missing file): {', '.join(skipped)}")
    print(f"\ntotal {time.perf_counter() - start:.1f} s")
    if a.out is not None:
        a.out.write_text(json.dumps({"env": env, "rows": rows, "skipped": skipped}, indent=1))
    return 1 if any(r["output"] != "ok" for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
