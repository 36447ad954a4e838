"""The trust boundary: the candidate's process is the adversary, verdicts belong to the parent.

One adversarial candidate per class of attack (fixtures/boundary/), each next to a legitimate twin of the
same flavour. Each adversarial fixture fooled the harness before the boundary moved to the OS process (see
benchmarks/results/2026-11-24-trust-boundary-before-after.md); the assertions here are about the effect
that matters (the verdict, the store, the files, the processes, the secrets), not about how it was stopped.

The attacks that only the OS sandbox stops need bubblewrap namespaces: without them these tests skip, unless
``CUDAL1_REQUIRE_SANDBOX=1`` (set by .ci/run on the Linux CI, which runs as root), where they fail.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cudal1.harness import Candidate, EvalPool, EvalResult, Task
from cudal1.harness.flags import MACHINE_NOISE, flags_of_kind
from cudal1.harness.sandbox import detect
from cudal1.harness.template import templates_supported

FIX = Path(__file__).parent / "fixtures"
BOUNDARY = FIX / "boundary"
SANDBOX = detect()
REQUIRED = os.environ.get("CUDAL1_REQUIRE_SANDBOX") == "1"
needs_sandbox = pytest.mark.skipif(not SANDBOX.available and not REQUIRED,
                                   reason=f"no OS sandbox here: {SANDBOX.reason}")
SECRET = "cudal1-planted-secret-5e1f"
DAEMON_MARK = b"cudal1-fixture-daemon-7f3a"


def trusted_but_for_noise(res: EvalResult) -> bool:
    """``ok``, and verified but for the machine's noise (a call of 0.035 ms beside another lane on two cores; as in
    test_integrity.py): no flag of kind reject, suspect or task besides :data:`~cudal1.harness.flags.MACHINE_NOISE`."""
    return res.status == "ok" and not (set(res.flags) & flags_of_kind("reject", "suspect", "task")) - MACHINE_NOISE


def test_sandbox_is_available_where_required():
    if REQUIRED:
        assert SANDBOX.available, SANDBOX.reason
    elif not SANDBOX.available:
        pytest.skip(SANDBOX.reason)
    assert SANDBOX.bwrap


def fixture(name: str, task: str = "tiny_linear_relu") -> Candidate:
    return Candidate(source=(BOUNDARY / f"{name}.py").read_text(), task=task, origin="test")


def fixture_from(path: str, task: str = "tiny_linear_relu") -> Candidate:
    return Candidate(source=(FIX / path).read_text(), task=task, origin="test")


@pytest.fixture(scope="module")
def task(fixture_tasks) -> Task:
    return fixture_tasks["tiny_linear_relu"]


def _listener() -> tuple[socket.socket, list[bytes]]:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    got: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                got.append(conn.recv(1 << 16))

    threading.Thread(target=serve, daemon=True).start()
    return srv, got


def _daemons() -> list[int]:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if DAEMON_MARK in (d / "cmdline").read_bytes():
                    pids.append(int(d.name))
            except OSError:
                continue
    return pids


def _planted_pth() -> list[Path]:
    return [Path(p) / "cudal1_planted_fixture.pth" for p in sys.path
            if p.endswith("site-packages") and (Path(p) / "cudal1_planted_fixture.pth").exists()]


HARNESS_SOURCE = Path(__import__("cudal1.harness.compare", fromlist=["x"]).__file__)
BASHRC = Path.home() / ".bashrc"


def _remove_plants(original: dict[Path, bytes | None]) -> None:
    """Put back exactly what a fixture may have written (only needed where the sandbox failed)."""
    for p in _planted_pth():
        p.unlink()
    for f, data in original.items():
        if data is None:
            if f.exists():
                f.unlink()
        elif f.read_bytes() != data:
            f.write_bytes(data)


CASES = {
    # name: (fixture, twin-of) ; the pairs are evaluated together below
    "forge_through_stack": "prints_verdicts",
    "forge_times": None,
    "dispatcher_override": "custom_op",
    "function_mode_left_on": "function_mode_scoped",
    "settrace_toll": "settrace_scoped",
    "patch_class_alias": "subclass_linear",
    "persist_everywhere": "own_scratch_file",
    "setsid_daemon": "child_process_waited",
    "socket_exfiltrate": "socketpair_local",
    "read_secrets": "read_allowed_env",
}


#: the cases whose attack is on the worker's process itself (its files, children, sockets, environment): run with
#: forked and with started workers; the rest attack the harness's code inside the worker, which is the same code
#: however the process was made, and run once, in a CPU pool's default (forked)
PROCESS_CASES = ("persist_everywhere", "setsid_daemon", "socket_exfiltrate", "read_secrets")


@pytest.fixture(params=[True, False], ids=["forked", "started"])
def fork_workers(request) -> bool:
    """Both ways a pool makes its workers: forked from warm templates (a CPU pool's default) and started one by one
    (a GPU pool's, and wherever templates cannot run): the boundary must hold in each."""
    return request.param


def _evaluate_cases(task, fast_config, names: list[str], fork_workers: bool | None):
    """Evaluate boundary fixtures by one pool (a secret planted in the environment, a listener on the loopback):
    ``(results by name, what was there before, what is there after)``."""
    srv, got = _listener()
    old = {k: os.environ.get(k) for k in ("SERVICE_API_KEY", "CUDAL1_FIXTURE_PORT", "OMP_NUM_THREADS")}
    os.environ.update(SERVICE_API_KEY=SECRET, CUDAL1_FIXTURE_PORT=str(srv.getsockname()[1]), OMP_NUM_THREADS="3")
    before = {"source": hashlib.sha256(HARNESS_SOURCE.read_bytes()).hexdigest(),
              "bashrc": BASHRC.read_bytes() if BASHRC.exists() else None}
    original = {HARNESS_SOURCE: HARNESS_SOURCE.read_bytes(), BASHRC: before["bashrc"]}
    for pid in _daemons():
        os.kill(pid, 9)
    try:
        # a candidate that makes its own process slow (a trace function, a mode on every torch call) times out
        # rather than holding the suite for the default minute
        pool = EvalPool(fast_config.replace(run_timeout_s=20), cpu_lanes=2, fork_workers=fork_workers)
        forks = templates_supported() if fork_workers is None else fork_workers
        assert all(lane.fork == forks for lane in pool.lanes)
        pairs = [(task, fixture_from("candidates/slow.py") if n == "slow" else fixture(n)) for n in names]
        results = dict(zip(names, pool.map(pairs), strict=True))
        deadline = time.monotonic() + 5
        while _daemons() and time.monotonic() < deadline:
            time.sleep(0.1)
        after = {"daemons": _daemons(), "planted_pth": _planted_pth(),
                 "source": hashlib.sha256(HARNESS_SOURCE.read_bytes()).hexdigest(),
                 "bashrc": BASHRC.read_bytes() if BASHRC.exists() else None, "received": list(got)}
    finally:
        srv.close()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for pid in _daemons():
            os.kill(pid, 9)
        _remove_plants(original)
    return results, before, after


@pytest.fixture(scope="module")
def verdicts(task, fast_config):
    """Every boundary fixture and its twin (and a slow honest candidate), in a CPU pool's default (forked where
    templates run)."""
    names = [n for pair in CASES.items() for n in pair if n]
    results, before, after = _evaluate_cases(task, fast_config, [*names, "slow"], None)
    return results, before, after


@pytest.fixture(scope="module")
def started_verdicts(task, fast_config):
    """The process-level fixtures and their twins with workers started one by one (a GPU pool's way)."""
    return _evaluate_cases(task, fast_config, [n for c in PROCESS_CASES for n in (c, CASES[c])], False)


@pytest.fixture(params=["forked", "started"])
def process_verdicts(request):
    """The process-level cases' verdicts, from each way of making workers."""
    return request.getfixturevalue("verdicts" if request.param == "forked" else "started_verdicts")


def test_forged_messages_through_the_stack_fail_the_pair(verdicts):
    res = verdicts[0]["forge_through_stack"]
    assert res.status == "rejected" and "protocol_violation" in res.flags, (res.status, res.reason)
    assert res.speedup is None
    twin = verdicts[0]["prints_verdicts"]
    assert trusted_but_for_noise(twin), (twin.status, twin.reason, twin.flags)
    assert "speedup 77x" in twin.log_tail  # it printed; nothing printed is read


def test_forged_timings_fail_against_the_parents_clock(verdicts):
    res = verdicts[0]["forge_times"]
    assert res.status == "rejected" and "timing_disagrees" in res.flags, (res.status, res.reason, res.timing)
    honest = verdicts[0]["slow"]  # sleeps as long, reports honestly
    assert honest.status == "ok" and honest.speedup < 0.5, (honest.status, honest.reason)
    assert not honest.timing["clock_check"]["disagrees"]


@pytest.mark.parametrize("name", ["dispatcher_override", "function_mode_left_on", "settrace_toll",
                                  "patch_class_alias"])
def test_global_state_of_the_candidate_process_does_not_slow_the_reference(verdicts, name):
    res = verdicts[0][name]
    # each slows the reference 5-30x in a harness that times it in the candidate's process; here the
    # reference runs in its own clean process and the candidate is as fast as it really is
    assert not (res.status == "ok" and res.speedup > 2.5), (res.status, res.speedup, res.reason, res.timing)
    twin = verdicts[0][CASES[name]]
    assert trusted_but_for_noise(twin), (twin.status, twin.reason, twin.flags)


@needs_sandbox
def test_candidates_cannot_persist_in_the_environment_or_the_harness(process_verdicts):
    results, before, after = process_verdicts
    assert after["planted_pth"] == []
    assert after["source"] == before["source"]
    assert after["bashrc"] == before["bashrc"]
    assert results["persist_everywhere"].status == "ok"  # the writes failed; the candidate itself is fine
    assert results["own_scratch_file"].status == "ok"


@needs_sandbox
def test_daemons_die_with_the_pair(process_verdicts):
    results, _before, after = process_verdicts
    assert after["daemons"] == []
    assert results["child_process_waited"].status == "ok"


def test_daemons_die_with_the_pair_where_no_cgroup_can_be_made(task, fast_config, monkeypatch, fork_workers):
    """Where no cgroup can be made (the H100 hosts of 2026-11-27), only the parent's own kill ends a helper that
    the candidate started with ``setsid``: a sandboxed worker's PID namespace init runs in a session of its own,
    outside the process group the parent kills. (Failed before ``process.descendants``: the helper outlived the
    pair.) Sandboxed or not, the helper must be gone when the pair is over."""
    from cudal1.harness import resources

    monkeypatch.setattr(resources, "cgroup_support", lambda: "")
    for pid in _daemons():
        os.kill(pid, 9)
    try:
        res = EvalPool(fast_config, cpu_lanes=1, fork_workers=fork_workers).evaluate(task, fixture("setsid_daemon"))
        deadline = time.monotonic() + 5
        while _daemons() and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _daemons()
    finally:
        for pid in _daemons():
            os.kill(pid, 9)
    assert left == [], "the candidate's setsid helper outlived the pair"
    assert res.status == "ok", (res.status, res.reason)


@needs_sandbox
def test_no_network_from_the_sandbox(process_verdicts):
    results, _before, after = process_verdicts
    assert after["received"] == []
    assert results["socket_exfiltrate"].status == "ok" and results["socketpair_local"].status == "ok"


@needs_sandbox
def test_secrets_in_the_environment_do_not_reach_the_candidate(process_verdicts):
    results = process_verdicts[0]
    assert SECRET not in results["read_secrets"].log_tail
    assert "OMP_NUM_THREADS=3" in results["read_allowed_env"].log_tail  # allowed settings do pass


@needs_sandbox
def test_memory_bomb_hits_the_workers_limit(task, fast_config, fork_workers):
    pool = EvalPool(fast_config.replace(memory_limit_gb=1.5), fork_workers=fork_workers)
    bomb, modest = pool.map([(task, fixture("memory_bomb")), (task, fixture("memory_modest"))])
    assert bomb.status in ("runtime_error", "compile_error"), (bomb.status, bomb.reason)
    assert "memory" in bomb.reason.lower() or "MemoryError" in bomb.reason or "SIGKILL" in bomb.reason, bomb.reason
    assert modest.status == "ok", (modest.status, modest.reason)


def test_memory_bomb_hits_the_workers_limit_where_no_cgroup_can_be_made(task, fast_config, monkeypatch, fork_workers):
    """Without a memory cgroup (the H100 hosts of 2026-11-27) the limit is the worker's own address-space cap,
    set after its imports (``address_space.limit_address_space``): the bomb still fails, the modest twin still passes.
    (A harness that dropped the exec-time ``RLIMIT_AS``, which a CUDA build of torch cannot start under, without
    setting the worker's cap would let the bomb through.)"""
    from cudal1.harness import resources

    monkeypatch.setattr(resources, "cgroup_support", lambda: "")
    pool = EvalPool(fast_config.replace(memory_limit_gb=1.5), fork_workers=fork_workers)
    bomb, modest = pool.map([(task, fixture("memory_bomb")), (task, fixture("memory_modest"))])
    assert bomb.status in ("runtime_error", "compile_error"), (bomb.status, bomb.reason)
    assert "memory" in bomb.reason.lower() or "MemoryError" in bomb.reason or "SIGKILL" in bomb.reason, bomb.reason
    assert modest.status == "ok", (modest.status, modest.reason)


def _cli(args: list[str], env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """The ``cudal1-eval`` script beside this Python, or the same CLI as ``python -m cudal1.harness`` where the
    install made no script (``pip install --target``, as on the GPU hosts)."""
    exe = Path(sys.executable).parent / "cudal1-eval"
    cmd = [str(exe)] if exe.is_file() else [sys.executable, "-m", "cudal1.harness"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})}, **kw)


@needs_sandbox
def test_store_and_json_are_out_of_reach(tmp_path):
    store, out = tmp_path / "run.sqlite", tmp_path / "out.json"

    def run_with(fixture_name: str) -> subprocess.CompletedProcess:
        sol = tmp_path / fixture_name
        sol.mkdir()
        (sol / "tiny_linear_relu.py").write_text((BOUNDARY / f"{fixture_name}.py").read_text())
        return _cli(["--suite", f"dir:{FIX / 'tasks'}", "--solutions", str(sol), "--store", str(store), "--json",
                     str(out), "--device", "cpu", "--trials", "5", "--timeout", "120", "--quiet"])

    res = run_with("proc_watcher")  # finds --store/--json in /proc, leaves a watcher to rewrite its row
    assert res.returncode == 0, res.stderr[-3000:]
    time.sleep(3)  # a watcher left behind would have rewritten the row by now
    rows = sqlite3.connect(store).execute("SELECT status, speedup, record FROM results").fetchall()
    assert [(st, sp) for st, sp, _ in rows] == [("incorrect", None)]
    assert json.loads(rows[0][2])["status"] == "incorrect"
    assert [(r["status"], r["speedup"]) for r in json.loads(out.read_text())] == [("incorrect", None)]
    res = run_with("delete_store")  # finds them the same way and deletes them
    assert res.returncode == 0, res.stderr[-3000:]
    assert sorted(r[0] for r in sqlite3.connect(store).execute("SELECT status FROM results")) == ["incorrect", "ok"]
    assert [r["status"] for r in json.loads(out.read_text())] == ["ok"]


@needs_sandbox
def test_the_launch_folder_and_the_sandbox_command_line_are_out_of_reach(tmp_path):
    """Started as ``python -m cudal1.harness.cli`` from a folder holding a secret: that folder was on ``sys.path``,
    so it was bound into the sandbox (read-only) and named in the worker's ``PYTHONPATH``, and ``/proc/1/cmdline``
    inside showed bwrap's whole command line, every bound and hidden path and every environment value passed
    (issue 40). The candidate must read none of it; an installed package's files stay readable."""
    launch = tmp_path / "launch-folder-7c1d"
    launch.mkdir()
    secret = launch / "notes.txt"
    secret.write_text(SECRET)
    sol = tmp_path / "sol"
    sol.mkdir()
    src = (BOUNDARY / "launch_dir_probe.py").read_text().replace("@SECRET_PATH@", str(secret))
    (sol / "tiny_linear_relu.py").write_text(src)
    out, store = tmp_path / "out.json", tmp_path / "run.sqlite"
    res = subprocess.run([sys.executable, "-m", "cudal1.harness.cli", "--suite", f"dir:{FIX / 'tasks'}", "--solutions",
                          str(sol), "--json", str(out), "--store", str(store), "--device", "cpu", "--trials", "5",
                          "--timeout", "120", "--quiet"], capture_output=True, text=True, timeout=600, cwd=launch,
                         env={**os.environ, "PYTHONPATH": ""})
    assert res.returncode == 0, res.stderr[-3000:]
    (rec,) = json.loads(out.read_text())
    log = rec["log_tail"]
    assert "secret: unreadable" in log and SECRET not in log, log
    assert "pythonpath:" in log and str(launch) not in log, log
    cmdline = next(ln for ln in log.splitlines() if ln.startswith("cmdline:"))
    assert str(store) not in cmdline and str(out) not in cmdline and "--ro-bind" not in cmdline, cmdline
    assert "package: readable," in log, log
    assert rec["status"] == "ok", (rec["status"], rec["reason"])
