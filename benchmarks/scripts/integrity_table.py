"""Every integrity rule's cases on the GPU at hand: what a naive harness says, what cudal1's says.

    PYTHONPATH=packages/harness/src python3 benchmarks/scripts/integrity_table.py --out DIR [--budget-s S]

The cases are the test suite's (tests/harness/test_integrity.py: CPU-runnable rules; tests/harness/
test_timing_integrity.py: the timing rules of issue 40; tests/harness/test_gpu.py: streams, graph capture, stale
device memory, device-side timing patches, custom kernels),
all evaluated here with device cuda. The naive harness (one shared namespace, the same inputs on every
call, reference then candidate once for correctness, CUDA events on the current stream, default init,
1e-2 tolerance) runs each case in a child process. Each case's row is appended to DIR/integrity-rows.jsonl as it
is done, and a later run with the same DIR evaluates only the cases missing there (a device call of at most ten
minutes takes part of the table; ``--budget-s`` stops starting new chunks after that many seconds). Once every case
has a row, writes DIR/integrity.json and DIR/integrity.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests/harness/fixtures"

NAIVE = r'''
import json, sys, torch
t_src, c_src = json.loads(sys.stdin.read())
ns = {}
exec(compile(t_src, "task.py", "exec"), ns)
exec(compile(c_src, "candidate.py", "exec"), ns)
init = ns["get_init_inputs"]()
torch.manual_seed(42); ref = ns["Model"](*init).cuda()
torch.manual_seed(42); new = ns["ModelNew"](*init).cuda()
torch.manual_seed(1); inputs = [x.cuda() for x in ns["get_inputs"]()]
with torch.no_grad():
    r = ref(*inputs); c = new(*inputs); torch.cuda.synchronize()
    ok = bool(torch.allclose(c, r, atol=1e-2, rtol=1e-2))
    def t(m):
        for _ in range(3): m(*inputs)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20): m(*inputs)
        e.record(); torch.cuda.synchronize()
        return s.elapsed_time(e)
    sp = t(ref) / max(t(new), 1e-9) if ok else None
print("NAIVE", json.dumps({"correct": ok, "speedup": sp}))
'''


CHUNK = 6  #: cases evaluated together (one EvalPool.map); each chunk's rows are kept as soon as it ends


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


NAIVE_MARKER = "CUDAL1_NAIVE_RUN"  #: environment variable marking every process a naive run starts


def naive(task_src: str, cand_src: str, timeout_s: float = 120.0, script: str = NAIVE) -> dict:
    """The naive harness's finding on one case, in a child process: ``{"correct", "speedup"}``, or with ``error``
    when it printed none (its last stderr line, or that it did not end within ``timeout_s``). The child writes to
    files, not pipes, so a process the candidate leaves behind (``setsid_daemon``, which holds the child's output
    open for ever and hung this table for 300 s on an H100) cannot keep the answer from being read; such processes,
    found by a marker in their environment, are killed after, so that they do not load the machine for later cases."""
    marker = f"naive-{os.getpid()}-{time.monotonic_ns()}"
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=out, stderr=err,
                             text=True, env={**os.environ, NAIVE_MARKER: marker}, start_new_session=True)
        try:
            p.communicate(json.dumps([task_src, cand_src]), timeout=timeout_s)
            late = None
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            late = f"no answer within {timeout_s:.0f} s"
        finally:
            _kill_marked(marker)
        out.seek(0)
        err.seek(0)
        for line in out.read().splitlines():
            if line.startswith("NAIVE "):
                return json.loads(line[6:])
        return {"correct": None, "speedup": None,
                "error": late or (err.read().strip().splitlines() or ["?"])[-1][:120]}


def _kill_marked(marker: str) -> int:
    """SIGKILL every process whose environment holds ``NAIVE_MARKER=marker``; how many (Linux /proc)."""
    needle = f"{NAIVE_MARKER}={marker}".encode() + b"\0"
    killed = 0
    for d in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (d / "environ").read_bytes() + b"\0":
                os.kill(int(d.name), signal.SIGKILL)
                killed += 1
        except (OSError, ValueError):
            continue  # gone, or not ours to read
    return killed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=float("inf"), help="start no new chunk of cases after this")
    ap.add_argument("--device", default="cuda", help="cuda (the table); cpu only to try the script on a few cases")
    ap.add_argument("--limit", type=int, default=None, help="the first N cases only (a smoke run)")
    a = ap.parse_args()
    from cudal1.harness import Candidate, EvalConfig, EvalPool, Task

    ti = _load(ROOT / "tests/harness/test_integrity.py", "cudal1_test_integrity")
    tg = _load(ROOT / "tests/harness/test_gpu.py", "cudal1_test_gpu")
    rows = []
    for c in ti.CASES:
        rows.append({"rule": c.rule, "kind": c.kind, "case": Path(c.candidate).name, "task": c.task,
                     "task_src": ti.task_source(c.task), "cand_src": ti.case_candidate(c).source,
                     "expect_status": c.status, "expect_flag": c.flag})
    lin = (FIX / "tasks/tiny_linear_relu.py").read_text()
    tb = _load(ROOT / "tests/harness/test_trust_boundary.py", "cudal1_test_trust_boundary")
    special = {"forge_through_stack": ("rejected", "protocol_violation"), "forge_times": ("rejected", "timing_disagrees")}
    for adv, twin in tb.CASES.items():
        st, fl = special.get(adv, (None, None))
        rows.append({"rule": f"boundary: {adv}", "kind": "adversarial", "case": adv, "task": "tiny_linear_relu",
                     "task_src": lin, "cand_src": (FIX / "boundary" / f"{adv}.py").read_text(),
                     "expect_status": st, "expect_flag": fl})
        if twin:
            rows.append({"rule": f"boundary: {adv}", "kind": "legitimate", "case": twin, "task": "tiny_linear_relu",
                         "task_src": lin, "cand_src": (FIX / "boundary" / f"{twin}.py").read_text(),
                         "expect_status": "ok", "expect_flag": None})
    tt = _load(ROOT / "tests/harness/test_timing_integrity.py", "cudal1_test_timing_integrity")
    timing_tasks = tt.tasks()
    for c in tt.CASES:  # issue 40's timing rules: an adversarial case must not win a speedup, its twin stays ok
        task = timing_tasks[c.task]
        rows.append({"rule": f"timing: {c.rule}", "kind": c.kind, "case": Path(c.name).name, "task": c.task,
                     "task_src": task.source, "cand_src": tt.case_candidate(c, task).source,
                     "expect_status": None if c.kind == "adversarial" else "ok", "expect_flag": None})
    for c in tg.GPU_CASES:
        rows.append({"rule": c.rule, "kind": c.kind, "case": c.candidate, "task": "tiny_linear_relu", "task_src": lin,
                     "cand_src": (FIX / "integrity_gpu" / f"{c.candidate}.py").read_text(),
                     "expect_status": c.status, "expect_flag": c.flag})
    rows = rows[: a.limit]
    cfg = EvalConfig(device=a.device, time_budget_s=0.5, cache_dir="/tmp/cudal1-integrity-cache")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    done_path = out / "integrity-rows.jsonl"
    done = {}
    if done_path.exists():
        for line in done_path.read_text().splitlines():
            d = json.loads(line)
            done[(d["rule"], d["kind"], d["case"])] = d
    todo = [r for r in rows if (r["rule"], r["kind"], r["case"]) not in done]
    print(f"{len(rows)} cases, {len(rows) - len(todo)} done before, {len(todo)} to run", flush=True)
    t0 = time.perf_counter()
    pool = EvalPool(cfg)
    for start in range(0, len(todo), CHUNK):
        if time.perf_counter() - t0 > a.budget_s:
            break
        chunk = todo[start:start + CHUNK]
        results = pool.map([(Task(name=r["task"], source=r["task_src"]), Candidate(source=r["cand_src"]))
                            for r in chunk])
        for r, res in zip(chunk, results, strict=True):
            _judge(r, res)
            env = res.environment
            r["env"] = {"gpu": env.get("gpu_name"), "driver": env.get("driver"), "torch": env.get("torch"),
                        "cuda": env.get("cuda_runtime"), "triton": env.get("triton"), "python": env.get("python"),
                        "date": time.strftime("%Y-%m-%d")}
            with done_path.open("a") as f:
                f.write(json.dumps(r) + "\n")
            done[(r["rule"], r["kind"], r["case"])] = r
    left = [r for r in rows if (r["rule"], r["kind"], r["case"]) not in done]
    if left:
        print(f"{len(left)} cases left for the next run (rows so far in {done_path})")
        return
    rows = [done[(r["rule"], r["kind"], r["case"])] for r in rows]
    _write_tables(out, rows, time.perf_counter() - t0)


def _judge(r: dict, res) -> None:
    """Fill ``r`` with the naive harness's and cudal1's findings on its case, and whether they are as expected."""
    r["naive"] = naive(r["task_src"], r["cand_src"])
    r.update(status=res.status, flags=list(res.flags), speedup=res.speedup, reason=res.reason,
             uses_custom_kernel=res.uses_custom_kernel)
    adversarial = r["kind"] == "adversarial"
    if adversarial and r["expect_status"] is None:  # a boundary attack: it must not win a speedup
        good = not (res.status == "ok" and (res.speedup or 0.0) > 2.5)
    elif adversarial:
        good = (res.status != "ok" or (r["expect_flag"] in res.flags)) and res.status == r["expect_status"]
    else:
        good = res.status == "ok"
    r["as_expected"] = bool(good and (r["expect_flag"] is None or r["expect_flag"] in res.flags
                                      or res.status != "ok"))
    del r["task_src"], r["cand_src"]
    print(f"{r['rule']:<20} {r['kind']:<12} {r['case']:<32} naive={r['naive']} ours={res.status} "
          f"{list(res.flags)} {res.speedup} {'OK' if r['as_expected'] else 'UNEXPECTED'}", flush=True)


def _write_tables(out: Path, rows: list[dict], wall_s: float) -> None:
    info = {**rows[0]["env"], "wall_s_last_run": wall_s}
    (out / "integrity.json").write_text(json.dumps({"info": info, "rows": rows}, indent=1))
    lines = [f"# Integrity rules on {info['gpu']} ({info['date']})", "",
             f"torch {info['torch']}, CUDA {info['cuda']}, triton {info['triton']}, driver {info['driver']}, "
             f"Python {info['python']}. Produced by `benchmarks/scripts/integrity_table.py`; cases from "
             "`tests/harness/test_integrity.py` and `tests/harness/test_gpu.py`, all run on the GPU.", "",
             "Naive harness: one shared namespace, the same inputs every call, reference then candidate once "
             "for correctness, CUDA events on the current stream, default init, 1e-2 tolerance.", "",
             "| rule | kind | case | naive: correct / speedup | cudal1: status | cudal1: flags | cudal1: speedup | as expected |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["naive"]
        nsp = f"{n['speedup']:.2f}x" if isinstance(n.get("speedup"), float) else "-"
        lines.append(f"| {r['rule']} | {r['kind']} | `{r['case']}` | {n.get('correct')} / {nsp} | {r['status']} | "
                     f"{', '.join(r['flags']) or '-'} | {r['speedup'] if r['speedup'] is not None else '-'} | "
                     f"{'yes' if r['as_expected'] else 'NO'} |")
    bad = [r for r in rows if not r["as_expected"]]
    lines += ["", f"{len(rows) - len(bad)} of {len(rows)} cases as expected."]
    (out / "integrity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-3:]))


if __name__ == "__main__":
    main()
