import os, sys
os.environ.setdefault("CUDAL1_TIMING_DEBUG", "1")
from cudal1.harness import EvalConfig
from cudal1.harness.types import Candidate
from cudal1.policy.evaluators import LocalEvaluator
from cudal1.policy.tasks import select_tasks
FAST = EvalConfig(device="cpu", trials=2, time_budget_s=0.05, min_rounds=5, max_rounds=10, attempts=1, cpu_threads=1)
RIGHT = ("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "    def forward(self, x):\n        return x.clamp_min(0)\n")
WRONG = RIGHT.replace("clamp_min(0)", "clamp_min(0.5)")
relu = select_tasks("builtin", ["relu"], {"relu": {"BATCH": 512, "DIM": 2048}})[0]
for it in range(int(sys.argv[1])):
    with LocalEvaluator(FAST.replace(time_budget_s=0.4, min_rounds=10, max_rounds=30, attempts=2)) as ev:
        for src in (WRONG, RIGHT, RIGHT.replace('clamp_min(0)', 'relu()'), RIGHT.replace('clamp_min(0)', 'clamp(min=0)')):
            [r] = ev.evaluate([(relu, Candidate(src, relu.name))])
            t = r.timing
            import time; print(round(time.time(),1), it, r.status, sorted(r.flags), r.reason[:300], "sp", r.speedup, flush=True)
            if r.status == "incorrect": continue
            for a in t.get("attempts", []):
                print("   rounds", a["rounds"], "excess", round(a["clock_excess_ms"], 4), "charged", round(a["clock_charged_ms"], 4), "reported", round(a["reported_cand_ms"], 4), "margin", round(a["clock_margin_ms"], 4), "resolved", a["resolved"], "drift", round(a["drift"], 3))
            print("   alone", t.get("reference_alone_ms"), "ref", r.ref_ms, "drift_recheck", t.get("drift_recheck"))
