"""A worker's resource limits: the settings (:class:`Limits`) and the child cgroups (Linux, v2 or v1) that enforce
memory and process counts, with a kill that ends every process in the group. The worker's launcher joins its cgroup
before it execs bubblewrap (:func:`cudal1.harness.sandbox.launch_argv`, which also sets the rlimits); where no child
cgroup can be made here, :func:`cgroup_support` says so and the rlimits are the limit."""

from __future__ import annotations

import functools
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    """Resource limits of one worker. ``memory_bytes``: resident memory (cgroup) or, on a CPU worker without a
    memory cgroup, address space beyond what the worker's own imports mapped
    (:func:`cudal1.harness.address_space.limit_address_space`); ``processes``: tasks in its cgroup (or
    RLIMIT_NPROC); ``file_bytes``: the largest file it may write."""

    memory_bytes: int | None = None
    processes: int = 512
    file_bytes: int = 8 << 30
    cpus: tuple[int, ...] | None = None  #: CPU cores the worker may run on (None: any)



def _own_cgroup_dirs() -> dict[str, Path]:
    """Writable cgroup folders of this process: ``{"v2": dir}`` or ``{"memory": dir, "pids": dir}`` (v1)."""
    found: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    root = Path("/sys/fs/cgroup")
    for ln in lines:
        parts = ln.split(":", 2)
        if len(parts) != 3:
            continue
        _hid, ctrls, path = parts
        rel = path.lstrip("/")
        if ctrls == "":
            for base in (root, root / "unified"):
                d = base / rel
                if (base / "cgroup.controllers").exists() and os.access(d, os.W_OK):
                    ctl = (d / "cgroup.controllers").read_text().split() if (d / "cgroup.controllers").exists() else []
                    if "memory" in ctl and "pids" in ctl:
                        found["v2"] = d
        else:
            for c in ("memory", "pids"):
                if c in ctrls.split(","):
                    d = root / c / rel
                    if os.access(d, os.W_OK):
                        found[c] = d
    return found


@functools.lru_cache(maxsize=1)
def cgroup_support() -> str:
    """``v2``, ``v1`` or "" : whether a child cgroup with memory and pids limits can be made here (probed)."""
    try:
        cg = Cgroup.create(Limits(memory_bytes=1 << 30, processes=64))
    except OSError:
        return ""
    if cg is None:
        return ""
    kind = cg.kind
    cg.remove()
    return kind


class Cgroup:
    """A child cgroup with memory and process-count limits; :meth:`kill` ends every process in it."""

    def __init__(self, kind: str, dirs: list[Path]) -> None:
        self.kind, self.dirs = kind, dirs

    @classmethod
    def create(cls, limits: Limits) -> Cgroup | None:
        own = _own_cgroup_dirs()
        name = f"cudal1-{uuid.uuid4().hex[:12]}"
        if "v2" in own:
            d = own["v2"] / name
            try:
                sub = (own["v2"] / "cgroup.subtree_control").read_text().split()
                if "memory" not in sub or "pids" not in sub:
                    (own["v2"] / "cgroup.subtree_control").write_text("+memory +pids")
                d.mkdir()
                if limits.memory_bytes:
                    (d / "memory.max").write_text(str(limits.memory_bytes))
                    if (d / "memory.swap.max").exists():
                        (d / "memory.swap.max").write_text("0")
                (d / "pids.max").write_text(str(limits.processes))
                return cls("v2", [d])
            except OSError:
                _rmdir(d)
        if "memory" in own and "pids" in own:
            made: list[Path] = []
            try:
                m = own["memory"] / name
                m.mkdir()
                made.append(m)
                if limits.memory_bytes:
                    (m / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                p = own["pids"] / name
                p.mkdir()
                made.append(p)
                (p / "pids.max").write_text(str(limits.processes))
                return cls("v1", made)
            except OSError:
                for d in made:
                    _rmdir(d)
        return None

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids(self) -> set[int]:
        out: set[int] = set()
        for f in self.procs_files:
            try:
                out.update(int(x) for x in Path(f).read_text().split())
            except (OSError, ValueError):
                pass
        return out

    def kill(self) -> None:
        """SIGKILL every process in the cgroup (``cgroup.kill`` on v2), until none is left (at most 5 s)."""
        if self.kind == "v2" and (self.dirs[0] / "cgroup.kill").exists():
            try:
                (self.dirs[0] / "cgroup.kill").write_text("1")
            except OSError:
                pass
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            left = self.pids()
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        self.kill()
        for d in self.dirs:
            _rmdir(d)

    def peak_memory(self) -> int | None:
        """Peak resident bytes of the cgroup, where the kernel reports it."""
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            for d in self.dirs:
                try:
                    return int((d / name).read_text().split()[0])
                except (OSError, ValueError, IndexError):
                    continue
        return None


def _rmdir(d: Path) -> None:
    for _ in range(50):
        try:
            d.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)
