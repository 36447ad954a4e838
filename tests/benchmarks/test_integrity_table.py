"""The integrity table's naive harness (benchmarks/scripts/integrity_table.py) answers for every case, even one that
leaves a process behind: on an H100 the ``setsid_daemon`` case's detached child held the naive run's output pipe open
and the table stopped after 300 s (2026-12-06). Its output now goes to files, a run that does not end is killed
after its timeout, and every process a run started is killed after it."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("integrity_table", ROOT / "benchmarks/scripts/integrity_table.py")
it = importlib.util.module_from_spec(spec)
sys.modules["integrity_table"] = it
spec.loader.exec_module(it)

TASK = (ROOT / "tests/harness/fixtures/tasks/tiny_linear_relu.py").read_text()
DAEMON = (ROOT / "tests/harness/fixtures/boundary/setsid_daemon.py").read_text()
ANSWER = 'import json, sys\nsys.stdin.read()\nprint("NAIVE", json.dumps({"correct": True, "speedup": 1.5}))\n'
# the naive harness's first steps (the task and the candidate executed), then an answer: runs without a GPU
EXEC_THEN_ANSWER = ('import json, sys\nt, c = json.loads(sys.stdin.read())\nns = {}\nexec(compile(t, "task.py", "exec"), ns)\n'
                    'exec(compile(c, "candidate.py", "exec"), ns)\nprint("NAIVE", json.dumps({"correct": True, '
                    '"speedup": 2.0}))\n')


def _marked() -> list[int]:
    pids = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            if f"{it.NAIVE_MARKER}=naive-".encode() in (d / "environ").read_bytes():
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def test_a_candidate_that_leaves_a_daemon_is_answered_and_its_daemon_killed():
    t0 = time.monotonic()
    got = it.naive(TASK, DAEMON, timeout_s=60, script=EXEC_THEN_ANSWER)
    assert got == {"correct": True, "speedup": 2.0} and time.monotonic() - t0 < 30  # not held by the daemon's pipe
    time.sleep(0.2)
    assert _marked() == []


def test_an_honest_run_is_answered_and_one_that_never_ends_is_stopped():
    assert it.naive(TASK, "", script=ANSWER) == {"correct": True, "speedup": 1.5}
    got = it.naive(TASK, "", timeout_s=1, script="import time\nwhile True: time.sleep(0.1)\n")
    assert got["correct"] is None and got["error"] == "no answer within 1 s" and _marked() == []
    crashed = it.naive(TASK, "", script="raise SystemExit('no GPU here')\n")
    assert crashed == {"correct": None, "speedup": None, "error": "no GPU here"}
