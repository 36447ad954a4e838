"""Benchmark of the harness itself on a GPU (issue 2): the whole built-in suite with each reference as
its own candidate, and a load_inline candidate evaluated twice.

    PYTHONPATH=packages/harness/src python3 benchmarks/scripts/bench_harness.py --out DIR [--label run1]

Writes DIR/<label>.json (every EvalResult, the total wall time, GPU and versions) and prints a table.
benchmarks/scripts/report_harness.py turns one or two such files into the committed markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from cudal1.harness import Candidate, EvalConfig, EvalPool, ResultStore, load_suite, reference_candidate

CUDA_RELU_LINEAR = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_cuda = """
#include <torch/extension.h>
__global__ void relu_kernel(float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] > 0.f ? y[i] : 0.f;
}
torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b) {
    auto y = torch::addmm(b, x, w.t());
    long n = y.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), n);
    return y;
}
"""
_cpp = "torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor b);"
_ext = load_inline(name="cudal1_bench_linear_relu", cpp_sources=[_cpp], cuda_sources=[_cuda],
                   functions=["linear_relu"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return _ext.linear_relu(x, self.linear.weight, self.linear.bias)
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="run1")
    ap.add_argument("--suite", default="builtin")
    ap.add_argument("--inline-task", default="tests/harness/fixtures/tasks")
    ap.add_argument("--skip-suite", action="store_true")
    ap.add_argument("--skip-inline", action="store_true")
    ap.add_argument("--cache", default="/tmp/cudal1-bench-cache", help="build cache root")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = EvalConfig(device="cuda", cache_dir=a.cache)
    record: dict = {"label": a.label, "config": cfg.to_dict(), "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}

    if not a.skip_inline:
        # load_inline candidate evaluated twice (first, so a long suite cannot crowd it out): the second
        # evaluation must not build
        task = next(t for t in load_suite(f"dir:{a.inline_task}") if t.name == "tiny_linear_relu")
        cand = Candidate(source=CUDA_RELU_LINEAR, task=task.name, origin="bench")
        inline = []
        for i in range(2):
            t0 = time.perf_counter()
            r = EvalPool(cfg).evaluate(task, cand)
            inline.append({"eval": i + 1, "status": r.status, "reason": r.reason, "wall_s": time.perf_counter() - t0,
                           "build": r.build, "speedup": r.speedup})
            print("load_inline eval", i + 1, inline[-1], flush=True)
        key = EvalPool(cfg).build_key(cand)
        rec_path = Path(a.cache) / "builds" / key / "build.json"
        record["load_inline"] = {"evals": inline, "build_record": json.loads(rec_path.read_text()) if rec_path.exists() else None}
    if not a.skip_suite:
        tasks = load_suite(a.suite)
        pool = EvalPool(cfg)
        t0 = time.perf_counter()

        def progress(i: int, r) -> None:
            mem = r.environment.get("memory", {})
            print(f"[{i + 1:>3}/{len(tasks)}] {time.perf_counter() - t0:6.0f}s {r.task:<36} {r.status:<13} "
                  f"{r.speedup if r.speedup is not None else '-':>5} ref {r.ref_ms or 0:8.3f} ms  wall {r.wall_s:5.1f}s "
                  f"timed {r.timing.get('timed_s', 0):5.2f}s mem {mem.get('task_peak_bytes', 0) / 2**30:5.2f}/"
                  f"{mem.get('harness_peak_bytes', 0) / 2**30:5.2f} GiB {list(r.flags)} {r.reason[:80]} "
                  f"{r.timing.get('phases_s', '')}", flush=True)

        store = ResultStore(out / f"{a.label}.sqlite")  # every result on disk as it is made
        results = pool.map([(t, reference_candidate(t)) for t in tasks], on_result=progress, store=store,
                           run=a.label)
        record["suite_wall_s"] = time.perf_counter() - t0
        store.close()
        record["results"] = [r.to_dict() for r in results]
        print(f"suite wall time {record['suite_wall_s']:.1f} s for {len(results)} tasks", flush=True)

    (out / f"{a.label}.json").write_text(json.dumps(record, indent=1))
    print("wrote", out / f"{a.label}.json", file=sys.stderr)


if __name__ == "__main__":
    main()
