"""Probe (issue 41): what a fresh candidate process pays for its first GPU work. On an H100 the candidate's first
correctness trial took 0.93-2.39 s and each later one about 0.04 s, though the spare's CUDA context was made before
(benchmarks/results/2026-12-06-pair-breakdown-h100.md); a candidate whose forward raises paid nothing of it.

    PYTHONPATH=/tmp/site python3 benchmarks/probes/probe_first_trial.py [--runs 3]

Each run is a fresh ``python3`` process that first does what a GPU lane's spare does before its candidate arrives
(imports torch and the harness's worker modules, makes its CUDA context), then times, in this order, each step
that a first trial may be the first to need, on the process's own clock (device synchronised after each):

- ``import_triton``: ``import triton``;
- ``digest_import``: ``cudal1.harness.digest_kernel`` (the one-pass digest every GPU trial runs);
- ``digest_first`` / ``digest_again``: the digest's sums of a 1 x 4096 float32 block, twice (the first may compile
  or load the kernel: see the cache modes below);
- ``digest_other_shape``: the sums of a 3 x 1000 block (another specialisation of its integer arguments);
- ``randn``: a seeded ``torch.randn`` of 1M values on the GPU (inputs are drawn so);
- ``softmax``, ``matmul`` (256 x 256, cuBLAS's first handle), ``conv2d`` (cuDNN's first use): one call each;
- ``softmax_again``, ``matmul_again``, ``conv2d_again``: the same calls again, for the difference.

Cache modes, one set of ``--runs`` processes each: ``cold`` (an empty ``TRITON_CACHE_DIR`` of its own: the kernel
and its launcher compiled in the process) and ``seeded`` (a cache a previous process filled, as the parent seeds a
candidate's from the reference's). Prints one JSON line per process (mode, run, ms per step) and a summary line per
mode and step (median ms). Decides nothing: it says where the first trial's time goes, before any change to it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, sys, time
t = time.perf_counter
import torch, torch._dynamo, torch.profiler  # what a worker imports before its first command
from cudal1.harness import candidate_session, reference_session  # noqa: F401
torch.empty(1, device="cuda"); torch.cuda.synchronize()  # the spare's CUDA context (CUDAL1_WARM_CUDA)
ms = {}
def step(name, fn):
    t0 = t(); fn(); torch.cuda.synchronize(); ms[name] = round(1e3 * (t() - t0), 3)
step("import_triton", lambda: __import__("triton"))
holder = {}
def _imp():
    from cudal1.harness import digest_kernel
    holder["k"] = digest_kernel
step("digest_import", _imp)
x = torch.ones(1, 4096, device="cuda"); y = torch.ones(3, 1000, device="cuda")
step("digest_first", lambda: holder["k"].row_sums(x, 5, 123456789))
step("digest_again", lambda: holder["k"].row_sums(x, 7, 987654321))
step("digest_other_shape", lambda: holder["k"].row_sums(y, 0, 42))
g = torch.Generator(device="cuda"); g.manual_seed(1)
step("randn", lambda: torch.randn(1 << 20, device="cuda", generator=g))
a = torch.ones(64, 1000, device="cuda"); m = torch.ones(256, 256, device="cuda")
w = torch.ones(8, 3, 3, 3, device="cuda"); im = torch.ones(2, 3, 32, 32, device="cuda")
for again in ("", "_again"):
    step("softmax" + again, lambda: torch.softmax(a, dim=-1))
    step("matmul" + again, lambda: m @ m)
    step("conv2d" + again, lambda: torch.nn.functional.conv2d(im, w))
print(json.dumps(ms))
"""


def run_child(cache: Path) -> dict[str, float]:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"probe process failed (rc {out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per cache mode")
    a = ap.parse_args()
    results: dict[str, list[dict[str, float]]] = {"cold": [], "seeded": []}
    with tempfile.TemporaryDirectory() as tmp:
        seeded = Path(tmp) / "seeded"
        run_child(seeded)  # fills the cache the seeded runs read
        for i in range(a.runs):
            cold = Path(tmp) / f"cold{i}"
            for mode, cache in (("cold", cold), ("seeded", seeded)):
                ms = run_child(cache)
                results[mode].append(ms)
                print(json.dumps({"mode": mode, "run": i, "ms": ms}), flush=True)
    for mode, runs in results.items():
        med = {k: round(statistics.median(r[k] for r in runs), 1) for k in runs[0]}
        print(f"# {mode}: median ms over {len(runs)} processes: {json.dumps(med)}")


if __name__ == "__main__":
    main()
