import os, sys, time
from cudal1.harness import EvalConfig
from cudal1.harness.types import Candidate
from cudal1.policy.evaluators import LocalEvaluator
from cudal1.policy.tasks import select_tasks
FAST = EvalConfig(device="cpu", trials=2, time_budget_s=0.2, min_rounds=10, max_rounds=30, attempts=1, cpu_threads=1)
RIGHT = ("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "    def forward(self, x):\n        return x.clamp_min(0)\n")
relu = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 512, "DIM": 2048}})[0]
bad = 0
for it in range(int(sys.argv[1])):
    with LocalEvaluator(FAST) as ev:
        [r] = ev.evaluate([(relu, Candidate(RIGHT + f"# {it}\n", relu.name))])
        a = r.timing["attempts"][0]
        bad += a["reported_cand_ms"] > 1.2
        print(it, r.status, "reported", round(a["reported_cand_ms"], 3), "excess", round(a["clock_excess_ms"], 3), "alone", round(r.timing["reference_alone_ms"], 3), flush=True)
print("bad pools", bad)
