"""Why do the zoo's elementwise solutions time differently from one harness process to the next, and what
does the compile-reduce-overhead baseline run? One GPU call (issue 7's follow-up):

    python3 benchmarks/probes/gpu_elementwise_probe.py --procs 3 --out "$OUT/probe.json"

Part 1, in ``--procs`` fresh processes each: the built-in task's input (relu/gelu: float32 16384 x 32768,
2 GiB), then round-robin ``--reps`` timed calls of every variant: eager torch, the zoo's public op (what the
released solution calls), its Triton kernel launched directly with several (BLOCK, num_warps), and its CUDA C
kernel. Timed like the harness (``cudal1.harness.timer.Timer``: L2 flushed, device synchronised, host clock).
Part 2: ``torch.compile(mode="reduce-overhead")`` and default ``torch.compile`` of the relu task's model, one
call of each under ``torch.profiler``: every kernel and memcpy it ran, with CUDA time.
Prints a table and writes everything to ``--out`` (JSON)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any

OPS = ("relu", "gelu")
TRITON_CONFIGS = ((8192, 16), (4096, 8), (2048, 8), (1024, 4))


def one_process(reps: int) -> dict[str, Any]:
    import importlib

    import torch

    from cudal1.harness.timer import Timer
    from cudal1.kernelzoo.ops._elementwise import launch_unary

    zrelu = importlib.import_module("cudal1.kernelzoo.ops.relu")
    zgelu = importlib.import_module("cudal1.kernelzoo.ops.gelu")

    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    timer = Timer(dev, l2_flush_bytes=2 * int(l2))
    torch.manual_seed(0)
    x = torch.randn(16384, 32768, device=dev)
    mods = {"relu": (zrelu, torch.relu, "_relu_kernel"), "gelu": (zgelu, torch.nn.functional.gelu, "_gelu_kernel")}
    out: dict[str, Any] = {"x_ptr_mod_2MiB": x.data_ptr() % (2 << 20), "ops": {}}
    for op in OPS:
        mod, eager, kname = mods[op]
        kernel = getattr(mod, kname)
        variants: dict[str, Any] = {"eager": lambda t, f=eager: f(t), "zoo_public": getattr(mod, op)}
        for block, warps in TRITON_CONFIGS:
            variants[f"triton_{block}_{warps}"] = (
                lambda t, b=block, w=warps, k=kernel: launch_unary(k, t, {"BLOCK": b, "num_warps": w}))
        cuda_launch = getattr(mod, f"{op}_launch_cuda", None)
        if cuda_launch is not None:
            variants["cuda_c_256"] = lambda t, f=cuda_launch: f(t, {"cuda_threads": 256})
        times: dict[str, list[float]] = {k: [] for k in variants}
        for fn in variants.values():  # compile / warm up
            for _ in range(3):
                fn(x)
        torch.cuda.synchronize()
        for _ in range(reps):
            for name, fn in variants.items():
                ms, y = timer.time_call(fn, (x,))
                times[name].append(ms)
                del y
        out["ops"][op] = {k: {"median_ms": statistics.median(v), "min_ms": min(v), "max_ms": max(v)}
                          for k, v in times.items()}
    return out


def profile_compiled() -> dict[str, Any]:
    import torch
    from torch.profiler import ProfilerActivity, profile

    model = torch.nn.ReLU().cuda()
    x = torch.randn(16384, 32768, device="cuda")
    res: dict[str, Any] = {}
    for mode in ("default", "reduce-overhead"):
        cm = torch.compile(model, mode=None if mode == "default" else mode)
        for _ in range(4):
            y = cm(x)
            del y
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            y = cm(x)
            torch.cuda.synchronize()
        del y
        events = [{"name": e.key[:100], "cuda_us": round(e.device_time_total, 1), "count": e.count}
                  for e in prof.key_averages() if e.device_time_total > 0]
        res[mode] = sorted(events, key=lambda e: -e["cuda_us"])[:8]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--out", required=True)
    ap.add_argument("--child", choices=("time", "profile"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "time":
        print(json.dumps(one_process(args.reps)))
        return 0
    if args.child == "profile":
        print(json.dumps(profile_compiled()))
        return 0
    result: dict[str, Any] = {"procs": [], "profile": None}
    for p in range(args.procs):
        r = subprocess.run([sys.executable, __file__, "--child", "time", "--reps", str(args.reps), "--out", "-"],
                           capture_output=True, text=True, env=dict(os.environ), timeout=300)
        if r.returncode:
            print(r.stderr[-3000:])
            result["procs"].append({"error": r.stderr[-3000:]})
            continue
        one = json.loads(r.stdout.strip().splitlines()[-1])
        result["procs"].append(one)
        print(f"process {p}: x at {one['x_ptr_mod_2MiB']} mod 2 MiB")
        for op, vs in one["ops"].items():
            print(f"  {op:5s} " + "  ".join(f"{k}={v['median_ms']:.3f}" for k, v in vs.items()))
    r = subprocess.run([sys.executable, __file__, "--child", "profile", "--out", "-"],
                       capture_output=True, text=True, env=dict(os.environ), timeout=300)
    if r.returncode == 0:
        result["profile"] = json.loads(r.stdout.strip().splitlines()[-1])
        for mode, evs in result["profile"].items():
            print(f"torch.compile {mode}: " + "; ".join(f"{e['name']} {e['cuda_us']} us x{e['count']}" for e in evs))
    else:
        print(r.stderr[-3000:])
        result["profile"] = {"error": r.stderr[-3000:]}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
