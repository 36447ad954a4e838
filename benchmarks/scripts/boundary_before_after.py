"""The trust-boundary fixtures (tests/harness/fixtures/boundary/) through whichever harness is importable: run it
once with the old harness on PYTHONPATH and once with the new one, and set the two tables side by side.

    PYTHONPATH=.carry/before/packages/harness/src python3 benchmarks/scripts/boundary_before_after.py --label before
    python3 benchmarks/scripts/boundary_before_after.py --label after

Each adversarial fixture is evaluated on the CPU (tiny_linear_relu) with a secret planted in the environment
and a listener on the loopback; afterwards the script records what escaped (daemons alive, connections
received, files planted in site-packages / the harness source / ~/.bashrc, the secret in the log) and then
removes whatever was planted. Prints one markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import socket
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests/harness/fixtures"
NAMES = ["forge_through_stack", "forge_times", "dispatcher_override", "function_mode_left_on", "settrace_toll",
         "patch_class_alias", "setsid_daemon", "socket_exfiltrate", "read_secrets", "persist_everywhere"]
SECRET = "cudal1-planted-secret-5e1f"
MARK = "cudal1-planted-by-candidate"


def _sources() -> list[Path]:
    return [Path(p) / "cudal1" / "harness" / "compare.py" for p in sys.path
            if p and (Path(p) / "cudal1" / "harness" / "compare.py").is_file()]


def _planted() -> dict[str, object]:
    pth = [str(Path(p) / "cudal1_planted_fixture.pth") for p in sys.path
           if p.endswith("site-packages") and (Path(p) / "cudal1_planted_fixture.pth").exists()]
    src = [str(f) for f in _sources() if MARK in f.read_text()]
    rc = Path.home() / ".bashrc"
    return {"pth": pth, "sources": src, "bashrc": rc.exists() and MARK in rc.read_text()}


_ORIGINAL: dict[Path, bytes | None] = {}


def _remember() -> None:
    """Keep the exact bytes of the files a fixture may write (the harness sources, ~/.bashrc)."""
    for f in [*_sources(), Path.home() / ".bashrc"]:
        _ORIGINAL[f] = f.read_bytes() if f.exists() else None


def _clean() -> None:
    for p in _planted()["pth"]:  # type: ignore[union-attr]
        Path(p).unlink()
    for f, data in _ORIGINAL.items():
        if data is None:
            if f.exists():
                f.unlink()
        elif not f.exists() or f.read_bytes() != data:
            f.write_bytes(data)


def _daemons() -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if b"cudal1-fixture-daemon-7f3a" in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    a = ap.parse_args()
    from cudal1.harness import Candidate, EvalConfig, EvalPool, load_suite

    task = {t.name: t for t in load_suite(f"dir:{FIX / 'tasks'}")}["tiny_linear_relu"]
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    got: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            got.append(c.recv(100))
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    os.environ.update(SERVICE_API_KEY=SECRET, CUDAL1_FIXTURE_PORT=str(srv.getsockname()[1]))
    cfg = EvalConfig(device="cpu", time_budget_s=0.25, min_rounds=10, max_rounds=60, attempts=2,
                     compile_timeout_s=120, run_timeout_s=60, cpu_threads=1, cache_dir=f"/tmp/cudal1-boundary-{a.label}")
    hashes = {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in _sources()}
    _remember()
    rows = []
    try:
        for name in NAMES:
            n_got = len(got)
            res = EvalPool(cfg).evaluate(task, Candidate((FIX / "boundary" / f"{name}.py").read_text(), task.name))
            time.sleep(1.0)
            escaped = []
            if _daemons():
                escaped.append("a daemon outlived the pair")
            if len(got) > n_got:
                escaped.append("it reached a service on the host's loopback")
            if SECRET in res.log_tail:
                escaped.append("it read the planted secret")
            p = _planted()
            if p["pth"]:
                escaped.append(".pth planted in site-packages")
            if p["sources"] or any(hashlib.sha256(Path(f).read_bytes()).hexdigest() != h for f, h in hashes.items()):
                escaped.append("harness source edited")
            if p["bashrc"]:
                escaped.append("~/.bashrc written")
            rows.append((name, res.status, res.speedup, ",".join(res.flags), res.reason[:90], "; ".join(escaped)))
            for pid in _daemons():
                os.kill(pid, 9)
            _clean()
    finally:
        _clean()
        srv.close()
    print(f"### {a.label}\n")
    print("| fixture | status | speedup | flags | reason | escaped |\n|---|---|---|---|---|---|")
    for name, st, sp, fl, why, esc in rows:
        print(f"| `{name}` | {st} | {sp if sp is not None else '-'} | {fl or '-'} | {why or '-'} | {esc or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
