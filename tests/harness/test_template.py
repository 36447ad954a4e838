"""Candidate workers forked from a warm template (``cudal1.harness.template``): each candidate gets a fresh process
in tens of milliseconds, one at a time, and nothing a candidate writes reaches the next one."""

from __future__ import annotations

import time

import pytest

from cudal1.harness import Candidate, EvalPool, reference_candidate, sandbox
from cudal1.harness import lanes as lanes_module
from cudal1.harness.process import WorkerGone
from cudal1.harness.template import WorkerTemplate, templates_supported

pytestmark = pytest.mark.skipif(not templates_supported(), reason="templates need Linux (/proc, fork, SCM_RIGHTS)")
SANDBOX = sandbox.detect()
needs_sandbox = pytest.mark.skipif(not SANDBOX.available, reason=f"no sandbox here: {SANDBOX.reason}")


def test_a_template_forks_fresh_workers_one_at_a_time():
    tpl = WorkerTemplate({"CUDA_VISIBLE_DEVICES": ""}, sandboxed=SANDBOX.available)
    try:
        tpl.wait_ready()
        first = tpl.fork()
        t0 = time.monotonic()
        first.wait_ready()
        assert time.monotonic() - t0 < 5.0  # a fork, not an interpreter start (tens of ms; generous for CI)
        assert first.processes() == {first.proc.pid}
        with pytest.raises(WorkerGone, match="still alive"):  # never two children: they would share the sandbox
            tpl.fork()
        first.kill()
        first.join(10)
        assert first.proc.poll() is not None and first.processes() == set()
        first.cleanup()
        second = tpl.fork()  # the twin: once the first is gone, the next one forks
        second.wait_ready()
        assert second.proc.pid != first.proc.pid and tpl.alive
        second.close()
    finally:
        tpl.close()


_WRITES = '''
import os as _os
for _d in ("/tmp", "/dev/shm", _os.getcwd()):
    with open(_os.path.join(_d, "cudal1_left_behind"), "w") as _f:
        _f.write("for the next candidate")
'''

_READS = '''
import os as _os
_SEEN = [_d for _d in ("/tmp", "/dev/shm") if _os.path.exists(_os.path.join(_d, "cudal1_left_behind"))]
_forward = ModelNew.forward


def _reads(self, *args):
    out = _forward(self, *args)
    return out * 2.0 + 1.0 if _SEEN else out


ModelNew.forward = _reads
'''


def _with(task, code: str, origin: str) -> Candidate:
    return Candidate(source=reference_candidate(task).source + code, task=task.name, origin=origin)


class _NoWipe(WorkerTemplate):
    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.worker.close()  # started again without --wipe
        import socket

        from cudal1.harness.process import WorkerProcess

        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.worker = WorkerProcess(self.role, self.env, sandboxed=self.sandboxed, hidden=kw.get("hidden"),
                                    limits=kw.get("limits"), template_fd=theirs.fileno(), wipe=False)
        theirs.close()


@needs_sandbox
@pytest.mark.parametrize("wipe", [True, False], ids=["wiped", "without_wipe"])
def test_nothing_a_candidate_writes_reaches_the_next(fixture_tasks, fast_config, monkeypatch, wipe):
    """A candidate leaves files in /tmp and /dev/shm of the template's sandbox; the next candidate, forked from the
    same template, is wrong if it finds them. With the wipe it is ok; without it (the twin) it finds them."""
    if not wipe:
        monkeypatch.setattr(lanes_module, "WorkerTemplate", _NoWipe)
    task = fixture_tasks["tiny_linear_relu"]
    with EvalPool(fast_config, fork_workers=True, keep_warm=True) as pool:
        assert pool.lanes[0].fork
        writer, reader = pool.map([(task, _with(task, _WRITES, "writes")), (task, _with(task, _READS, "reads"))])
        assert pool.lanes[0].template is not None and pool.lanes[0].template.forks == 2
    assert writer.status == "ok", writer.reason
    if wipe:
        assert reader.status == "ok", reader.reason
    else:
        assert reader.status == "incorrect", (reader.status, reader.reason)


def test_a_forking_pool_forks_each_reference_from_a_reference_template(fixture_tasks, fast_config):
    """Both sides of a pair are forked alike (a forked candidate beside a started reference had the difference in
    their protocol speeds to hide work in): each task's reference worker is a child of the lane's reference template,
    which is unsandboxed, of the reference role, and lives across tasks while a call keeps the pool warm."""
    from cudal1.harness.template import ForkedWorker

    tasks = [fixture_tasks["tiny_linear_relu"], fixture_tasks["tiny_layernorm"]]
    with EvalPool(fast_config, fork_workers=True, keep_warm=True) as pool:
        results = pool.map([(t, reference_candidate(t)) for t in tasks])
        lane = pool.lanes[0]
        tpl = lane.ref_template
        assert tpl is not None and tpl.alive and tpl.role == "reference" and tpl.forks == 2
        assert not tpl.worker.sandboxed and tpl.children() == {lane.ref.worker.proc.pid}
        assert isinstance(lane.ref.worker, ForkedWorker) and lane.ref.worker.role == "reference"
        assert lane.template is not None and lane.template.role == "candidate" and lane.template.forks == 2
    assert [r.status for r in results] == ["ok", "ok"], [r.reason for r in results]
    assert tpl.worker.proc.poll() is not None


def test_a_reference_template_is_never_sandboxed():
    with pytest.raises(ValueError, match="never sandboxed"):
        WorkerTemplate({"CUDA_VISIBLE_DEVICES": ""}, role="reference", sandboxed=True)
    with pytest.raises(ValueError, match="'candidate' or 'reference'"):
        WorkerTemplate({"CUDA_VISIBLE_DEVICES": ""}, role="judge")


def test_a_lane_whose_reference_cannot_be_forked_starts_both_sides(fixture_tasks, fast_config, monkeypatch):
    """Both sides alike, or neither: when the reference template cannot fork (it died, or refused), the lane starts
    the reference and from then on its candidates too, instead of pairing a forked candidate with a started
    reference. Twin: the same pool with a working reference template keeps forking both."""
    from cudal1.harness.template import ForkedWorker

    task = fixture_tasks["tiny_linear_relu"]
    real_fork = WorkerTemplate.fork

    def refusing(self, env=None):
        if self.role == "reference":
            raise WorkerGone("died", "the worker template is gone")
        return real_fork(self, env)

    for broken in (True, False):
        if broken:
            monkeypatch.setattr(WorkerTemplate, "fork", refusing)
        else:
            monkeypatch.setattr(WorkerTemplate, "fork", real_fork)
        with EvalPool(fast_config, fork_workers=True, keep_warm=True) as pool:
            (res,) = pool.map([(task, reference_candidate(task))])
            lane = pool.lanes[0]
            assert res.status == "ok", res.reason
            if broken:
                assert not lane.fork and lane.template is None and lane.ref_template is None
                assert not isinstance(lane.ref.worker, ForkedWorker)
            else:
                assert lane.fork and isinstance(lane.ref.worker, ForkedWorker) and lane.template.forks == 1
