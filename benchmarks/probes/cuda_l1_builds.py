"""Do the CUDA kernels of CUDA-L1's released solutions build? (No GPU needed: ``load_inline`` compiles on the CPU.)

For each named task of the release file, the solution's ``load_inline`` calls are made as the solution makes them
(its own ``cpp_sources``, ``cuda_sources`` and ``functions``), in a scratch build folder, and the outcome printed:
built, or the compiler's first error lines. A solution whose build fails runs its PyTorch fallback, so the figure
measured for it is the fallback's. ``--triangular N``: level 1 task 15's solution, run on the CPU (where it takes its
fallback) at size N, against the reference ``tril(A @ B)``, on lower-triangular inputs (what its ``get_inputs``
draws) and on general ones (the solution's module is executed from the release file, not copied here).

    TORCH_CUDA_ARCH_LIST=9.0 uv run python benchmarks/probes/cuda_l1_builds.py ../shared/cuda-l1-release/h100.json \
        1:12 1:15 2:67 --triangular 2048
"""

from __future__ import annotations

import ast
import json
import sys
import tempfile
from pathlib import Path


def load_inline_calls(source: str) -> list[dict]:
    """The literal keyword arguments of every ``load_inline(...)`` call in ``source`` (module-level string constants
    the call names are resolved)."""
    tree = ast.parse(source)
    consts = {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
              for t in n.targets if isinstance(t, ast.Name) and isinstance(n.value, ast.Constant)}
    calls = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) == "load_inline":
            kw = {}
            for k in n.keywords:
                v = k.value
                if isinstance(v, ast.Constant):
                    kw[k.arg] = v.value
                elif isinstance(v, ast.Name) and v.id in consts:
                    kw[k.arg] = consts[v.id]
                elif isinstance(v, ast.List) and all(isinstance(e, ast.Constant) for e in v.elts):
                    kw[k.arg] = [e.value for e in v.elts]
            calls.append(kw)
    return calls


def triangular_check(release: dict, n: int) -> None:
    """Level 1 task 15's ModelNew on the CPU against ``tril(A @ B)`` at size ``n``: largest error on triangular and on
    general inputs."""
    import torch

    entry = next(e for e in release["1"] if e["task_id"] == 15)
    ns: dict = {"__name__": "cuda_l1_15"}
    exec(compile(entry["custom_code"], "cuda_l1_15", "exec"), ns)  # noqa: S102 - the release's own file, on purpose
    model = ns["ModelNew"]()
    g = torch.Generator().manual_seed(0)
    for kind in ("lower-triangular", "general"):
        a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
        if kind == "lower-triangular":
            a, b = torch.tril(a), torch.tril(b)
        want = torch.tril(a @ b)
        got = model(a, b)
        err = (got - want).abs().max().item() / want.abs().max().item()
        print(f"  task 15 on {kind} inputs (N={n}): largest error {err:.3g} of the output's largest value")


def main() -> int:
    from torch.utils.cpp_extension import load_inline

    args = sys.argv[1:]
    tri = None
    if "--triangular" in args:
        i = args.index("--triangular")
        tri = int(args[i + 1])
        del args[i : i + 2]
    release = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    for spec in args[1:]:
        level, task = spec.split(":")
        entry = next(e for e in release[level] if e["task_id"] == int(task))
        calls = load_inline_calls(entry["custom_code"] or "")
        print(f"level {level} task {task} (score {entry['score']}): {len(calls)} load_inline call(s)")
        for kw in calls:
            args = {k: kw[k] for k in ("name", "cpp_sources", "cuda_sources", "functions") if k in kw}
            try:
                load_inline(**args, build_directory=tempfile.mkdtemp(), verbose=False)
                print(f"  {kw.get('name')}: built")
            except Exception as e:  # the solution catches this and runs its fallback
                lines = [ln.strip() for ln in str(e).splitlines() if "error" in ln][:2]
                print(f"  {kw.get('name')}: build failed ({type(e).__name__}): {' | '.join(lines)}")
    if tri:
        triangular_check(release, tri)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
