import json, sys, tempfile
sys.path.insert(0, "tests/kernelzoo")
import test_solutions as T
from cudal1.harness import EvalConfig, EvalPool
cfg = EvalConfig(device="cpu", trials=2, time_budget_s=0.1, min_rounds=5, max_rounds=20, attempts=2,
                 input_sets=2, compile_timeout_s=300, run_timeout_s=300, cpu_threads=1, cache_dir=tempfile.mkdtemp())
names = [n for n in sorted(T.RELEASED) if n in T.TASKS and (T.SMALL / f"{n}.json").is_file()]
pairs = [(T.shrunk(T.TASKS[n], json.loads((T.SMALL / f"{n}.json").read_text())), T.candidate_for(n)) for n in names]
res = EvalPool(cfg).map(pairs)
with open("/tmp/rd/zoo_waits.jsonl", "w") as f:
    for n, r in zip(names, res):
        t = r.timing or {}
        f.write(json.dumps({"name": n, "status": r.status, "flags": list(r.flags), "speedup": r.speedup,
                            "alone": t.get("reference_alone_cpu_wait"),
                            "att": [(a.get("ref_cpu_wait"), a.get("ref_cpu_waited_ms"), a.get("ratio_spread")) for a in t.get("attempts", [])]}) + "\n")
print("done", len(res))
