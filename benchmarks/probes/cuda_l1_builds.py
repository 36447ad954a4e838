"""Do the CUDA kernels of CUDA-L1's released solutions build? (No GPU needed: ``load_inline`` compiles on the CPU.)

For each named task of the release file, the solution's ``load_inline`` calls are made as the solution makes them
(its own ``cpp_sources``, ``cuda_sources`` and ``functions``), in a scratch build folder, and the outcome printed:
built, or the compiler's first error lines. A solution whose build fails runs its PyTorch fallback, so the figure
measured for it is the fallback's.

    uv run python benchmarks/probes/cuda_l1_builds.py ../shared/cuda-l1-release/h100.json 1:12 1:15 2:67
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


def main() -> int:
    from torch.utils.cpp_extension import load_inline

    release = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    for spec in sys.argv[2:]:
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
