"""Which correct candidates the parent's clock resolves on two cores (2026-12-06): six correct forwards of a task
through LocalEvaluator, one line each (wall s, status, verified, speedup, flags).

    uv run python benchmarks/results/2026-12-06-clock-margin-cap-cpu/resolve_probe.py {mm|relu} SIZE {fast|resolving}

``mm``: matmul_square with N = SIZE; ``relu``: relu with BATCH = SIZE, DIM = 2048."""
import sys, time
from cudal1.harness import Candidate, EvalConfig
from cudal1.policy.evaluators import LocalEvaluator
from cudal1.policy.tasks import select_tasks

FAST = EvalConfig(device="cpu", trials=2, time_budget_s=0.05, min_rounds=5, max_rounds=10, attempts=1, cpu_threads=1)
RESOLVING = FAST.replace(time_budget_s=1.0, min_rounds=30, max_rounds=120, attempts=2)
HEAD = "import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
mm = ["torch.mm(a, b)", "(b.t() @ a.t()).t()", "torch.einsum('ik,kj->ij', a, b)", "torch.bmm(a[None], b[None])[0]",
      "torch.tensordot(a, b, dims=1)", "torch.mm(a, b.t().contiguous().t())"]
which = sys.argv[1]; n = int(sys.argv[2]); cfg = {"fast": FAST, "resolving": RESOLVING}[sys.argv[3]]
if which == "mm":
    task = select_tasks("builtin", ["matmul_square"], {"matmul_square": {"N": n}})[0]
    srcs = [HEAD + f"    def forward(self, a, b):\n        return {e}\n" for e in mm]
else:
    task = select_tasks("builtin", ["relu"], {"relu": {"BATCH": n, "DIM": 2048}})[0]
    srcs = [HEAD + f"    def forward(self, x):\n        return {e}\n" for e in
            ["x.clamp_min(0)", "x.clamp(0)", "torch.clamp_min(x, 0)", "torch.clamp(x, min=0)", "x.clamp_min(0.0)", "torch.maximum(x, torch.zeros_like(x))"]]
with LocalEvaluator(cfg) as ev:
    for s in srcs:
        t = time.time()
        (r,) = ev.evaluate([(task, Candidate(s, task.name))])
        tm = r.timing or {}
        print(f"{time.time()-t:6.1f}s {r.status} {r.verified} {r.speedup} {sorted(r.flags)} {s.splitlines()[-1].strip()}", flush=True)
