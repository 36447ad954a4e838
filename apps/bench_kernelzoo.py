"""Benchmark the kernel zoo's released solutions on a GPU, through the harness (issue 4).

    uv run apps/bench_kernelzoo.py --out benchmarks/results/zoo [--baselines eager,compile] [--tasks a,b]
                                   [--store zoo.sqlite] [--skip-harness] [--skip-profile] [--skip-portability]
    uv run apps/bench_kernelzoo.py --report benchmarks/results/zoo/zoo.json --md report.md

Phases, each written to ``OUT/zoo.json`` as soon as it finishes (nothing measured is lost when a later
phase is cut off; with ``--store`` the harness phase resumes pair by pair):

1. device: GPU, versions, measured device-to-device copy bandwidth (``x.copy_(y)`` on 1 GiB, bytes read +
   written per second) and fp32 matmul throughput (8192^3, TF32 off), which set the roofline.
2. harness: every released solution through :class:`cudal1.harness.EvalPool` against each baseline
   (``eager``, ``compile``): status, speedup with CI, flags, ``uses_custom_kernel``.
3. profile (in this process, trusted code): per task the ideal traffic (bytes of inputs, outputs and
   parameters, each moved once), FLOPs (``torch.utils.flop_counter``), memory-bound or not (arithmetic
   intensity below the measured ridge point), and peak GPU memory of one forward of the eager reference
   and of the solution.
4. portability: each architecture family's launch configs forced (``CUDAL1_ARCH``) on the GPU at hand:
   every solution checked against the reference (harness tolerance) and timed (median of CUDA-event
   timed calls, no L2 flush).

The markdown report (``--md``) has the summary against the issue's targets, the per-task table with
bandwidth / FLOP fractions, and the portability table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from cudal1.harness import EvalConfig, EvalPool, ResultStore, load_suite
from cudal1.harness.compare import compare_outputs
from cudal1.harness.environment import device_info
from cudal1.harness.loading import load_candidate
from cudal1.harness.models import clone_args, construct_model, exact_fp32, load_reference, make_inputs
from cudal1.harness.params import share_parameters
from cudal1.harness.roofline import nbytes_of, tensors_of
from cudal1.kernelzoo import arch
from cudal1.kernelzoo.bench_timer import time_ms
from cudal1.kernelzoo.solutions import available, candidate_for, solution_source

SEED = 1234


# ----------------------------------------------------------------------------------------------- device
def _time_ms(fn, reps: int = 20) -> float:
    """Median milliseconds of ``fn()`` over ``reps`` timed calls after 3 warm-up calls, cold L2 (the zoo's one
    timer, cudal1.kernelzoo.bench_timer)."""
    return time_ms(fn, warmup=3, reps=reps)


def device_figures(device: torch.device) -> dict[str, Any]:
    """Copy bandwidth (bytes/s, read + written) and fp32 matmul FLOP/s measured on ``device``."""
    exact_fp32()
    n = 1 << 28  # 1 GiB of fp32
    x, y = torch.empty(n, device=device), torch.randn(n, device=device)
    copy_ms = _time_ms(lambda x=x, y=y: x.copy_(y))
    del x, y
    m = 8192
    a, b = torch.randn(m, m, device=device), torch.randn(m, m, device=device)
    mm_ms = _time_ms(lambda a=a, b=b: torch.mm(a, b), reps=10)
    del a, b
    torch.cuda.empty_cache()
    return {"copy_bytes_per_s": 2 * 4 * n / (copy_ms / 1e3), "fp32_flop_per_s": 2 * m**3 / (mm_ms / 1e3),
            "copy_ms_1gib": copy_ms, "mm_ms_8192": mm_ms}


# ---------------------------------------------------------------------------------------------- harness
def run_harness(tasks: dict[str, Any], names: list[str], baseline: str, store: ResultStore | None,
                device: str) -> list[dict[str, Any]]:
    cfg = EvalConfig(device=device, baseline=baseline)
    pairs = [(tasks[n], candidate_for(n)) for n in names]
    t0 = time.monotonic()

    def progress(_i: int, r: Any) -> None:
        sp = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
        print(f"  [{baseline}] {time.monotonic() - t0:6.0f}s {r.task:<34} {r.status:<12} {sp:>7} {','.join(r.flags)}"
              f" {r.reason[:120] if r.status != 'ok' else ''}", flush=True)

    results = EvalPool(cfg).map(pairs, store=store, run=f"kernelzoo-{baseline}", on_result=progress)
    return [json.loads(r.to_json()) for r in results]


# ---------------------------------------------------------------------------------------------- profile
def _peak_forward(model: torch.nn.Module, args: list[Any], device: torch.device) -> int:
    """Bytes allocated at the peak of one forward beyond what was allocated before it (output included)."""
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    base = torch.cuda.memory_allocated(device)
    out = model(*args)
    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device) - base
    del out
    return int(peak)


def load_pair(task: Any, device: torch.device, workdir: Path) -> tuple[Any, Any, Any]:
    """(reference, solution with the reference's parameters, inputs module), as the harness sets them up."""
    reference, inp_mod, init_inputs = load_reference(task.source, workdir, SEED, device)
    cls = load_candidate(solution_source(task.name), workdir)
    cand = construct_model(cls, init_inputs, SEED, device)
    share_parameters(reference, cand)
    cand.eval()
    return reference, cand, inp_mod


def profile_task(task: Any, device: torch.device, ridge: float, workdir: Path) -> dict[str, Any]:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad():
        reference, cand, inp_mod = load_pair(task, device, workdir)
        args = make_inputs(inp_mod, SEED, device)
        ref_peak = _peak_forward(reference, clone_args(args), device)
        cand_peak = _peak_forward(cand, clone_args(args), device)
        counter = FlopCounterMode(display=False)
        with counter:
            out = reference(*clone_args(args))
        flops = int(counter.get_total_flops())
        params = list(reference.parameters()) + list(reference.buffers())
        ideal = nbytes_of(tensors_of(args)) + nbytes_of(tensors_of(out)) + nbytes_of(params)
        del out, args, reference, cand
    torch.cuda.empty_cache()
    intensity = flops / ideal if ideal else math.inf
    return {"ideal_bytes": ideal, "flops": flops, "intensity_flop_per_byte": intensity,
            "memory_bound": intensity < ridge, "ref_peak_bytes": ref_peak, "cand_peak_bytes": cand_peak}


# ------------------------------------------------------------------------------------------ portability
def portability_task(task: Any, device: torch.device, workdir: Path) -> dict[str, Any]:
    """Per family: correct against the reference (harness tolerance), median ms of the solution."""
    row: dict[str, Any] = {}
    with torch.no_grad():
        reference, cand, inp_mod = load_pair(task, device, workdir)
        args = make_inputs(inp_mod, SEED + 7, device)
        want = reference(*clone_args(args))
        for fam in arch.CAPABILITY:
            os.environ[arch.ENV] = fam
            try:
                got = cand(*clone_args(args))
                cmp = compare_outputs(got, want)
                del got
                ms = _time_ms(lambda c=cand, a=args: c(*a), reps=10)
                row[fam] = {"ok": cmp.ok, "reason": cmp.reason, "ms": ms, "max_abs_err": cmp.max_abs_err}
            except Exception as e:  # noqa: BLE001 - a failing variant is a result, not a crash of the benchmark
                row[fam] = {"ok": False, "reason": f"{type(e).__name__}: {e}"[:300], "ms": None}
            finally:
                os.environ.pop(arch.ENV, None)
        del reference, cand, args, want
    torch.cuda.empty_cache()
    return row


# --------------------------------------------------------------------------------------------- report
def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _fmt(x: Any, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def render_markdown(data: dict[str, Any]) -> str:
    dev, figs = data.get("device", {}), data.get("figures", {})
    by_base: dict[str, dict[str, dict]] = {b: {r["task"]: r for r in rs} for b, rs in data.get("harness", {}).items()}
    prof, port = data.get("profile", {}), data.get("portability", {})
    levels = data.get("levels", {})
    names = sorted(data.get("tasks", []), key=lambda n: (levels.get(n, 9), n))
    copy_bw = figs.get("copy_bytes_per_s")
    peak = figs.get("fp32_flop_per_s")
    lines = [f"# Kernel zoo benchmark: released solutions on {dev.get('gpu_name', '?')} ({data.get('date', '')})", "",
             f"GPU {dev.get('gpu_name')} (cc {dev.get('compute_capability')}, {dev.get('sm_count')} SMs), driver "
             f"{dev.get('driver')}, torch {dev.get('torch')}, CUDA {dev.get('cuda_runtime')}, triton {dev.get('triton')}, "
             f"Python {dev.get('python')}. Produced by `apps/bench_kernelzoo.py`; raw data in the JSON beside this file.",
             "", f"Measured device copy bandwidth {_fmt(copy_bw and copy_bw / 1e12)} TB/s (1 GiB `copy_`, read + "
             f"written); fp32 matmul {_fmt(peak and peak / 1e12, '.1f')} TFLOP/s (8192^3, TF32 off); ridge point "
             f"{_fmt(peak / copy_bw if peak and copy_bw else None, '.1f')} FLOP/byte.", ""]
    # summary against targets
    l12 = [n for n in names if levels.get(n) in (1, 2)]

    def sp(b: str, n: str) -> float | None:
        r = by_base.get(b, {}).get(n)
        return r["speedup"] if r and r.get("status") == "ok" else None

    ge = geomean([sp("eager", n) for n in l12])
    gc = geomean([sp("compile", n) for n in l12])
    ok_e = [n for n in names if sp("eager", n) is not None]
    slower = [n for n in ok_e if sp("eager", n) < 1.0]
    flagged = [n for n in names if by_base.get("eager", {}).get(n) and
               set(by_base["eager"][n].get("flags", [])) - {"uses_custom_kernel"}]
    not_ok = [n for n in names if any(by_base.get(b, {}).get(n, {}).get("status") not in (None, "ok") for b in by_base)]
    mem = [n for n in names if prof.get(n, {}).get("memory_bound")]

    def bw_frac(n: str) -> float | None:
        r, p = by_base.get("eager", {}).get(n), prof.get(n)
        if not (r and p and copy_bw and r.get("cand_ms")):
            return None
        return p["ideal_bytes"] / (r["cand_ms"] / 1e3) / copy_bw

    mem_80 = [n for n in mem if (bw_frac(n) or 0) >= 0.8]
    more_mem = [n for n in names if n in prof and prof[n]["cand_peak_bytes"] > prof[n]["ref_peak_bytes"]]
    lines += ["## Summary", "", "| figure | value | target |", "|---|---|---|",
              f"| solutions | {len(names)} ({sum(1 for n in names if levels.get(n) == 1)} level 1, "
              f"{sum(1 for n in names if levels.get(n) == 2)} level 2, {sum(1 for n in names if levels.get(n) == 3)} "
              f"level 3) | >= 40 |",
              f"| status ok against every baseline | {len(names) - len(not_ok)}/{len(names)} | all |",
              f"| flags other than uses_custom_kernel (eager run) | {len(flagged)} {', '.join(flagged)} | none |",
              f"| geomean speedup over eager, levels 1-2 | {_fmt(ge)}x | >= 2.0x |",
              f"| geomean speedup over torch.compile, levels 1-2 | {_fmt(gc)}x | >= 1.3x |",
              f"| solutions slower than eager (speedup < 1.00) | {len(slower)} {', '.join(slower)} | none |",
              f"| memory-bound solutions at >= 80% of copy bandwidth | {len(mem_80)}/{len(mem)} | all |",
              f"| solutions with more peak memory than eager | {len(more_mem)} {', '.join(more_mem)} | none |", ""]
    lines += ["## Per task", "",
              "Speedups are the harness's (median of bucket ratios, rounded toward 1; 95% CI from the bootstrap). "
              "`custom` = a kernel of the zoo ran (profiled). For memory-bound tasks `BW` is the ideal traffic "
              "(inputs + outputs + parameters, once) over the solution's time, as a fraction of the measured copy "
              "bandwidth; for the others `FLOP` is the achieved fraction of the measured fp32 matmul rate.", "",
              "| task | lvl | eager ms | sol ms | vs eager | 95% CI | vs compile | custom | bound | BW / FLOP | "
              "peak MiB eager / sol | flags |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        e, c, p = by_base.get("eager", {}).get(n, {}), by_base.get("compile", {}).get(n, {}), prof.get(n, {})
        ci = e.get("speedup_ci") or [None, None]
        frac = "-"
        if p and e.get("cand_ms"):
            if p.get("memory_bound"):
                frac = f"BW {_fmt(bw_frac(n), '.0%')}"
            elif peak:
                frac = f"FLOP {_fmt(p['flops'] / (e['cand_ms'] / 1e3) / peak, '.0%')}"
        stat = "" if e.get("status") in (None, "ok") else f" ({e['status']})"
        cstat = "" if c.get("status") in (None, "ok") else f" ({c['status']})"
        lines.append(
            f"| {n} | {levels.get(n, '?')} | {_fmt(e.get('ref_ms'), '.3f')} | {_fmt(e.get('cand_ms'), '.3f')} | "
            f"{_fmt(e.get('speedup'))}{stat} | {_fmt(ci[0])}-{_fmt(ci[1])} | {_fmt(c.get('speedup'))}{cstat} | "
            f"{'yes' if e.get('uses_custom_kernel') else 'no'} | "
            f"{'' if not p else ('memory' if p.get('memory_bound') else 'compute')} | {frac} | "
            f"{_fmt(p.get('ref_peak_bytes') and p['ref_peak_bytes'] / 2**20, '.0f')} / "
            f"{_fmt(p.get('cand_peak_bytes') and p['cand_peak_bytes'] / 2**20, '.0f')} | "
            f"{', '.join(f for f in e.get('flags', []) if f != 'uses_custom_kernel')} |")
    if port:
        fams = list(arch.CAPABILITY)
        lines += ["", "## Portability: each family's launch configs forced on this GPU", "",
                  "`CUDAL1_ARCH=<family>` set for the solution's calls; output checked against the eager reference "
                  "at the harness's tolerance; ms = median of 10 CUDA-event timed calls (no L2 flush).", "",
                  "| task | " + " | ".join(fams) + " |", "|---|" + "---|" * len(fams)]
        for n in names:
            if n not in port:
                continue
            cells = []
            for f in fams:
                v = port[n].get(f, {})
                cells.append(f"{'ok' if v.get('ok') else 'FAIL'} {_fmt(v.get('ms'), '.3f')}" if v else "-")
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        bad = [(n, f, port[n][f].get("reason")) for n in port for f in port[n] if not port[n][f].get("ok")]
        lines += ["", f"Failing variants: {len(bad)}"] + [f"- {n} {f}: {why}" for n, f, why in bad]
    if data.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in data["notes"]]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="folder for zoo.json (and zoo.md)")
    ap.add_argument("--baselines", default="eager,compile")
    ap.add_argument("--tasks", help="comma-separated task names (default: every released solution)")
    ap.add_argument("--store", help="SQLite results store (resume the harness phase)")
    ap.add_argument("--skip-harness", action="store_true")
    ap.add_argument("--skip-profile", action="store_true")
    ap.add_argument("--skip-portability", action="store_true")
    ap.add_argument("--report", help="only render the markdown of an existing zoo.json")
    ap.add_argument("--md", help="markdown output path (default OUT/zoo.md)")
    ap.add_argument("--note", action="append", default=[],
                    help="with --report: add this line to the JSON's notes (analysis of the figures), repeatable")
    args = ap.parse_args(argv)
    if args.report:
        data = json.loads(Path(args.report).read_text())
        if args.note:
            data.setdefault("notes", []).extend(args.note)
            Path(args.report).write_text(json.dumps(data, indent=1, default=str))
        md = Path(args.md or Path(args.report).with_suffix(".md"))
        md.write_text(render_markdown(data))
        print(f"wrote {md}")
        return 0
    if not args.out:
        ap.error("--out is required (or --report)")
    if not torch.cuda.is_available():
        print("bench_kernelzoo: needs a CUDA GPU (the zoo's kernels are GPU kernels; on CPU the solutions run "
              "their PyTorch fallbacks, and their correctness is checked by `uv run pytest tests/kernelzoo`)",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jpath = out / "zoo.json"
    data: dict[str, Any] = json.loads(jpath.read_text()) if jpath.exists() else {}
    suite = {t.name: t for t in load_suite("builtin")}
    names = [n for n in (args.tasks.split(",") if args.tasks else available()) if n]
    unknown = [n for n in names if n not in suite or n not in available()]
    if unknown:
        print(f"bench_kernelzoo: no task or no released solution for {unknown}", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    exact_fp32()  # every in-process phase runs the references as the harness does: no TF32, no cuDNN autotuning
    data.update(tasks=sorted(set(data.get("tasks", [])) | set(names)), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                levels={n: t.level for n, t in suite.items() if n in available()})
    data["device"] = device_info(device)

    def save() -> None:
        jpath.write_text(json.dumps(data, indent=1, default=str))
        (Path(args.md) if args.md else out / "zoo.md").write_text(render_markdown(data))

    if "figures" not in data:
        data["figures"] = device_figures(device)
        save()
    print(f"copy {data['figures']['copy_bytes_per_s'] / 1e12:.2f} TB/s, fp32 mm "
          f"{data['figures']['fp32_flop_per_s'] / 1e12:.1f} TFLOP/s", flush=True)
    if not args.skip_harness:
        store = ResultStore(args.store) if args.store else None
        for b in [b for b in args.baselines.split(",") if b]:
            rs = run_harness(suite, names, b, store, "cuda")
            prev = {r["task"]: r for r in data.setdefault("harness", {}).get(b, [])}
            prev.update({r["task"]: r for r in rs})
            data["harness"][b] = list(prev.values())
            save()
    workdir = Path(tempfile.mkdtemp(prefix="cudal1-zoo-bench-"))
    ridge = data["figures"]["fp32_flop_per_s"] / data["figures"]["copy_bytes_per_s"]
    if not args.skip_profile:
        for n in names:
            try:
                data.setdefault("profile", {})[n] = profile_task(suite[n], device, ridge, workdir)
            except Exception as e:  # noqa: BLE001
                print(f"  profile {n}: {type(e).__name__}: {e}", flush=True)
            save()
        print("profile done", flush=True)
    if not args.skip_portability:
        for n in names:
            data.setdefault("portability", {})[n] = portability_task(suite[n], device, workdir)
            print(f"  portability {n}: " + " ".join(f"{f}={'ok' if v.get('ok') else 'FAIL'}"
                                                    for f, v in data["portability"][n].items()), flush=True)
            save()
    save()
    print(f"wrote {jpath}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
