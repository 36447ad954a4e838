"""A worker's setup, apart from any candidate: the cores and GPU a lane pins its workers to, what a GPU lane's
spares warm, the allocator settings both roles get, the address-space cap, and the only paths a worker imports
from (the launch folder never)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def test_lane_cpus_pin_by_default_and_leave_the_first_cores_to_the_parent(monkeypatch):
    from cudal1.harness import lanes as pool

    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False)
    monkeypatch.delenv("CUDAL1_PIN_CPUS", raising=False)
    assert pool.lane_cpus(0) == (2, 3) and pool.lane_cpus(1) == (4, 5) and pool.lane_cpus(7) is None
    monkeypatch.setenv("CUDAL1_PIN_CPUS", "1")
    assert pool.lane_cpus(0) == (2, 3)
    monkeypatch.setenv("CUDAL1_PIN_CPUS", "0")
    assert pool.lane_cpus(0) is None
    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda _pid: {0, 1, 2}, raising=False)
    monkeypatch.delenv("CUDAL1_PIN_CPUS")
    assert pool.lane_cpus(0) is None  # too few cores: no pinning rather than a lane squeezed onto the parent's


def test_several_lanes_per_gpu_share_its_gate_and_get_cores_of_their_own(monkeypatch):
    from cudal1.harness import EvalConfig, lanes
    from cudal1.harness.sandbox import Limits

    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False)
    monkeypatch.delenv("CUDAL1_PIN_CPUS", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    spec = lanes.LaneSpec(config=EvalConfig(device="cpu"), sandboxed=False, limits=Limits(memory_bytes=1 << 30),
                          reference_env={}, hidden=lambda: (), on_reference=lambda side: None)
    made = lanes.device_lanes(spec, "cuda", [0, 1], {}, lanes_per_gpu=2, spares=0, fork=False, cpus_per_lane=3)
    assert [ln.name for ln in made] == ["gpu0.0", "gpu0.1", "gpu1.0", "gpu1.1"]
    assert [ln.limits.cpus for ln in made] == [(2, 3, 4), (5, 6, 7), (8, 9, 10), (11, 12, 13)]
    assert [ln.env["CUDA_VISIBLE_DEVICES"] for ln in made] == ["5", "5", "7", "7"]  # physical indices
    assert made[0].gate is made[1].gate and made[2].gate is made[3].gate and made[0].gate is not made[2].gate
    cpu = lanes.device_lanes(spec, "cpu", [], {}, lanes_per_gpu=3, spares=0, fork=False)
    assert len({id(ln.gate) for ln in cpu}) == 1 and all(ln.limits.cpus is None for ln in cpu)


def test_warm_spares_sets_what_a_gpu_lanes_workers_warm_and_refuses_other_values(monkeypatch):
    """``warm_spares`` reaches a GPU lane's workers as ``CUDAL1_WARM_CUDA`` (a value the worker knows); a CPU lane's
    workers warm nothing; an unknown setting is refused before any worker starts."""
    from cudal1.harness import EvalConfig, EvalPool, lanes, worker
    from cudal1.harness.sandbox import Limits

    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda _pid: set(range(4)), raising=False)
    spec = lanes.LaneSpec(config=EvalConfig(device="cpu"), sandboxed=False, limits=Limits(memory_bytes=1 << 30),
                          reference_env={}, hidden=lambda: (), on_reference=lambda side: None)
    for setting, value in (("context", "1"), ("libraries", "libraries")):
        made = lanes.device_lanes(spec, "cuda", [0], {}, lanes_per_gpu=1, spares=0, fork=False, warm_spares=setting)
        assert made[0].env["CUDAL1_WARM_CUDA"] == value and value in worker.WARM_LEVELS
    assert lanes.device_lanes(spec, "cuda", [0], {}, lanes_per_gpu=1, spares=0,
                              fork=False)[0].env["CUDAL1_WARM_CUDA"] == "1"  # the default: the context alone
    cpu = lanes.device_lanes(spec, "cpu", [], {}, lanes_per_gpu=1, spares=0, fork=False, warm_spares="libraries")
    assert "CUDAL1_WARM_CUDA" not in cpu[0].env
    with pytest.raises(ValueError, match="warm_spares 'all'"):
        lanes.device_lanes(spec, "cuda", [0], {}, lanes_per_gpu=1, spares=0, fork=False, warm_spares="all")
    with pytest.raises(ValueError, match="warm_spares 'all'"):
        EvalPool(EvalConfig(device="cpu"), warm_spares="all")


def test_both_workers_get_the_same_fixed_allocator_settings(monkeypatch):
    """glibc moves its mmap threshold with each process's history of frees; left alone, an identical model
    measured 1.3x faster in the candidate's process than in the reference's (a 147 KB output: page faults on
    every call in one process only). Both roles get the same fixed settings, and a parent's own value (or a
    secret beside it) does not pass."""
    from cudal1.harness.process import MALLOC_TUNABLES, worker_environment

    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=1024")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    ref = worker_environment({})
    cand = worker_environment({"TRITON_CACHE_DIR": "/tmp/x"})
    assert ref["GLIBC_TUNABLES"] == cand["GLIBC_TUNABLES"] == MALLOC_TUNABLES
    assert "mmap_threshold=" in MALLOC_TUNABLES and "trim_threshold=" in MALLOC_TUNABLES
    assert "OPENAI_API_KEY" not in ref and "OPENAI_API_KEY" not in cand


#: in a process with a worker's environment: a batch's worth of 4 MiB blocks (160 MiB) drawn and freed; prints the
#: resident MiB the frees handed back to the kernel (which the next batch pays for again in page faults)
_ALLOCATOR_PROBE = """
import resource, torch
def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
blocks = [torch.empty(1 << 20).fill_(1.0) for _ in range(40)]
before = resident_mib()
del blocks
print(round(before - resident_mib()))
"""


def test_a_worker_keeps_what_a_batch_frees_for_the_next_batch():
    """The harness's allocator settings keep the heap a batch freed resident for the next one: with a trim threshold
    that a batch's inputs and outputs reach (128 MiB before), the heap went back to the kernel after some batches and
    not others, and in 5 of 22 pools timing a 4 MiB relu in batches of 16 the candidate's process paid page faults on
    every call (5x the reference's time: rejected; benchmarks/results/2026-12-05-allocator-faults-cpu.md). Whether
    glibc trims also depends on where the process's heap lies (a process with the old settings handed 160 MiB back
    when run alone and nothing in the full suite), so the rule is checked twice: the threshold lies beyond what a
    worker may hold at all (its memory limit), which the old 128 MiB did not, and a process with a worker's
    environment keeps 160 MiB of freed blocks resident."""
    import re
    import subprocess
    import sys

    from cudal1.harness.pool import default_memory_limit
    from cudal1.harness.process import MALLOC_TUNABLES, worker_environment

    def trim_threshold(tunables: str) -> int:
        return int(re.search(r"glibc\.malloc\.trim_threshold=(\d+)", tunables)[1])

    assert trim_threshold(MALLOC_TUNABLES) > default_memory_limit()
    assert not trim_threshold("glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728") \
        > default_memory_limit()  # the settings before: the same check fails
    env = worker_environment({})
    out = subprocess.run([sys.executable, "-c", _ALLOCATOR_PROBE], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    handed_back_mib = int(out.split()[0])
    assert handed_back_mib < 16, handed_back_mib


_CAP_PROBE = """
import os, sys
from cudal1.harness.address_space import limit_address_space
from cudal1.harness.wire import ADDRESS_SPACE_ENV
cap = limit_address_space()
assert ADDRESS_SPACE_ENV not in os.environ  # used once, not passed on to children
small = bytearray(64 << 20)  # well inside the cap: the imports' own mappings are not counted against it
try:
    big = bytearray(int(sys.argv[1]))
except MemoryError:
    print("capped", cap)
else:
    print("not capped", cap)
"""


@pytest.mark.parametrize("limit_env", ["", str(256 << 20)])
def test_a_worker_caps_its_address_space_after_its_imports(limit_env):
    """Without a memory cgroup a CPU worker calls ``address_space.limit_address_space`` after importing torch: the cap is
    what is mapped then plus the limit, so a CUDA build of torch (gigabytes of library mappings) still starts, and
    an allocation beyond the limit fails. Twin: without the variable nothing is capped."""
    import subprocess
    import sys

    from cudal1.harness.wire import ADDRESS_SPACE_ENV

    env = {k: v for k, v in os.environ.items() if k != ADDRESS_SPACE_ENV}
    if limit_env:
        env[ADDRESS_SPACE_ENV] = limit_env
    res = subprocess.run([sys.executable, "-c", "import torch\n" + _CAP_PROBE, str(1 << 30)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("capped" if limit_env else "not capped None"), res.stdout


def test_workers_import_only_installed_paths_never_the_launch_folder(tmp_path, monkeypatch):
    """``python -m`` and ``python script.py`` put the launching folder first on ``sys.path``; the sandbox binds, and
    ``PYTHONPATH`` names, only the installation, the virtual environment, ``.pth`` entries (editable installs),
    ``$PYTHONPATH`` and the ``cudal1`` packages' folders (issue 40)."""
    import sys

    from cudal1.harness import sandbox
    from cudal1.harness.process import worker_environment

    launch = tmp_path / "launch"
    launch.mkdir()
    monkeypatch.chdir(launch)
    monkeypatch.setattr(sys, "path", [str(launch), *sys.path])
    monkeypatch.delenv("PYTHONPATH", raising=False)
    paths = sandbox.installed_paths()
    assert str(launch) not in paths and not any(p.startswith(str(launch)) for p in sandbox._python_paths())
    assert str(launch) not in worker_environment()["PYTHONPATH"]
    harness_home = str(Path(sandbox.__file__).resolve().parents[2])  # the folder holding cudal1/
    assert harness_home in paths or any(harness_home.startswith(p + "/") for p in paths)
    extra = tmp_path / "site"
    extra.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(extra))  # an install location named on purpose (pip --target)
    monkeypatch.setattr(sys, "path", [str(launch), *sys.path[1:], str(extra)])
    assert str(extra) in sandbox.installed_paths()
