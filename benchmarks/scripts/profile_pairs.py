"""Where the wall time of a pair goes: every parent->worker request timed on the parent's clock, by role and
command, plus time blocked waiting for a worker to start (issue 15: a KernelBench self-pair took ~17 s; issue 41:
the breakdown for failing and correct candidates).

    PYTHONPATH=... python3 benchmarks/scripts/profile_pairs.py --suite kernelbench:DIR --tasks A,B [--device cuda]
    python3 benchmarks/scripts/profile_pairs.py --suite builtin --tasks relu --sizes '{"relu": {"BATCH": 256}}' \
        --kinds syntax,raises,wrong,correct,slow --device cpu

``--kinds`` makes, per task, candidates of these kinds from the task's own source: ``syntax`` (does not parse),
``raises`` (its forward raises), ``wrong`` (its output scaled and shifted), ``correct`` (the reference itself),
``slow`` (the reference computed twice a call). Prints one block per pair and a JSON line per pair (for the results
folder).
"""

from __future__ import annotations

import argparse
import collections
import json
import time

from cudal1.harness import Candidate, EvalConfig, EvalPool, Task, load_suite, reference_candidate
from cudal1.harness import process as P

STATS: dict[tuple[str, str], list[float]] = collections.defaultdict(list)


def _instrument() -> None:
    request, wait_ready = P.WorkerProcess.request, P.WorkerProcess.wait_ready

    def timed_request(self, op, payload, timeout, *, calls=None):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        try:
            return request(self, op, payload, timeout, calls=calls)
        finally:
            STATS[(self.role[:3], op)].append(time.perf_counter() - t)

    def timed_wait(self, timeout=P.STARTUP_TIMEOUT_S):  # type: ignore[no-untyped-def]
        if self.ready:
            return wait_ready(self, timeout)
        t = time.perf_counter()
        try:
            return wait_ready(self, timeout)
        finally:
            STATS[(self.role[:3], "(start wait)")].append(time.perf_counter() - t)

    P.WorkerProcess.request = timed_request  # type: ignore[method-assign]
    P.WorkerProcess.wait_ready = timed_wait  # type: ignore[method-assign]


_WRAP = {
    "raises": "    def forward(self, *args):\n        raise RuntimeError('a candidate that raises')\n",
    "wrong": "    def forward(self, *args):\n        return super().forward(*args) * 1.5 + 1.0\n",
    "slow": "    def forward(self, *args):\n        super().forward(*args)\n        return super().forward(*args)\n",
}


def candidate_of(task: Task, kind: str) -> Candidate:
    """A candidate of ``kind`` (see the module docstring) for ``task``, made from the task's own source."""
    if kind == "correct":
        return reference_candidate(task)
    if kind == "syntax":
        return Candidate("import torch\nclass ModelNew(torch.nn.Module:\n    pass\n", task.name, origin=kind)
    src = task.source.replace("class Model(", "class _Reference(")
    return Candidate(f"{src}\n\nclass ModelNew(_Reference):\n{_WRAP[kind]}", task.name, origin=kind)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True)
    ap.add_argument("--tasks", required=True, help="comma-separated task names, in this order")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--kinds", default="correct", help="candidate kinds per task (syntax,raises,wrong,correct,slow)")
    ap.add_argument("--sizes", default="{}", help="JSON {task: {CONSTANT: value}} (as a recipe's tasks.sizes)")
    ap.add_argument("--harness", default="{}", help="JSON of EvalConfig fields")
    ap.add_argument("--pool", default="{}", help="JSON of EvalPool arguments (fork_workers, keep_warm, spares ...)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="evaluate the batch this many times on one pool kept warm between batches (issue 41's steady "
                         "state: the batches after the first pay no pool start); a total line per batch")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error(f"--repeat {a.repeat}: at least 1")
    _instrument()
    sizes = json.loads(a.sizes)
    by_name = {t.name: t for t in load_suite(a.suite)}
    tasks = [by_name[n] for n in a.tasks.split(",")]
    if sizes:
        # cudal1.policy only where tasks are resized: a GPU call that carries the harness's wheels alone runs the
        # rest (benchmarks/results/2026-12-05-learning-grpo-h100.md)
        from cudal1.policy.tasks import resized_task

        tasks = [resized_task(t, sizes.get(t.name, {})) for t in tasks]
    pool_args = json.loads(a.pool)
    if a.repeat > 1:
        pool_args.setdefault("keep_warm", True)
    pool = EvalPool(EvalConfig(device=a.device, **json.loads(a.harness)), **pool_args)
    pairs = [(t, candidate_of(t, k)) for t in tasks for k in a.kinds.split(",")]
    last = [time.perf_counter()]

    def show(_i: int, r) -> None:  # type: ignore[no-untyped-def]
        now = time.perf_counter()
        t = r.timing
        print(f"{r.task} [{pairs[_i][1].origin}]: {r.status} {r.speedup} {list(r.flags)} wall {r.wall_s:.2f}s (since last {now - last[0]:.2f}s)"
              f" phases {t.get('phases_s')} rounds {[x['rounds'] for x in t.get('attempts', [])]}"
              f" n={t.get('calls_per_batch')} correctness {t.get('correctness_s')}"
              f"{'' if r.status == 'ok' else ' reason ' + repr(r.reason[:300])}", flush=True)
        rows = sorted(STATS.items(), key=lambda kv: -sum(kv[1]))
        for (role, op), v in rows:
            print(f"   {role} {op:13s} n={len(v):4d} total={sum(v):7.3f}s mean={1000 * sum(v) / len(v):8.2f}ms")
        print(json.dumps({"task": r.task, "kind": pairs[_i][1].origin, "status": r.status, "speedup": r.speedup, "flags": sorted(r.flags), "reason": r.reason[:500], "wall_s": r.wall_s, "since_last_s": now - last[0],
                          "phases_s": t.get("phases_s"), "correctness_s": t.get("correctness_s"), "requests": {f"{k[0]}:{k[1]}": [len(v), sum(v)]
                                                                        for k, v in rows}}), flush=True)
        STATS.clear()
        last[0] = now

    gates = {id(ln.gate): ln.gate for ln in pool.lanes}.values()
    for g in gates:
        g.keep_log = True
    for batch in range(a.repeat):
        for g in gates:
            g.log.clear()
            for k in g.waited_s:
                g.waited_s[k] = 0.0
        t0 = time.perf_counter()
        last[0] = t0
        pool.map(pairs, on_result=show)
        wall = time.perf_counter() - t0
        # the whole batch: throughput with this pool's lanes (issue 41 item 4), and how long lanes waited on the gate
        timing_s = sum(e - s for g in gates for _, mode, s, e in g.log if mode == "timing")
        print(json.dumps({"total": {"batch": batch, "pairs": len(pairs), "wall_s": round(wall, 3),
                                    "pairs_per_min": round(60 * len(pairs) / wall, 2), "lanes": len(pool.lanes),
                                    "timing_s": round(timing_s, 3),
                                    "gate_waited_s": [{k: round(v, 3) for k, v in g.waited_s.items()}
                                                      for g in gates]}}), flush=True)
    pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
