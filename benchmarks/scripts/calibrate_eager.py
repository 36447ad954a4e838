"""Measure each built-in task's eager reference time on the GPU at hand (one process, CUDA events).

A quick sizing aid, not the harness: construct Model, draw inputs on the device, 3 warm-ups, then the
median of 10 timed forwards (fp32, TF32 off, eval, no_grad). Writes JSON to --out and prints a table.

    PYTHONPATH=packages/harness/src python3 benchmarks/scripts/calibrate_eager.py --out calib.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time

import torch

from cudal1.harness import load_suite


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="builtin")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    rows = []
    for task in load_suite(a.suite):
        row = {"task": task.name, "level": task.level}
        t0 = time.perf_counter()
        try:
            spec = importlib.util.spec_from_file_location(f"calib_{task.name}", task.path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            torch.manual_seed(0)
            with torch.device(dev):
                model = mod.Model(*mod.get_init_inputs()).eval()
                args = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            with torch.no_grad():
                for _ in range(3):
                    out = model(*args)
                torch.cuda.synchronize()
                times = []
                for _ in range(10):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    out = model(*args)
                    e.record()
                    torch.cuda.synchronize()
                    times.append(s.elapsed_time(e))
            o = out[0] if isinstance(out, (tuple, list)) else out
            row.update(ms=statistics.median(times), ms_min=min(times), peak_gib=torch.cuda.max_memory_allocated() / 2**30,
                       out_shape=list(o.shape), out_dtype=str(o.dtype), finite=bool(torch.isfinite(o).all()))
        except Exception as e:  # noqa: BLE001
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        row["wall_s"] = time.perf_counter() - t0
        rows.append(row)
        model = args = out = o = None  # noqa: F841 - free this task's GPU memory before the next
        torch.cuda.empty_cache()
        flag = "" if "error" in row or 1.0 <= row["ms"] <= 15.0 else "  <-- outside 1-15 ms"
        print(f"{task.name:<40} L{task.level} {row.get('ms', float('nan')):8.3f} ms  "
              f"{row.get('peak_gib', 0):6.2f} GiB {row.get('error', '')}{flag}", flush=True)
    info = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "python": sys.version.split()[0], "date": time.strftime("%Y-%m-%d")}
    with open(a.out, "w") as f:
        json.dump({"info": info, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
