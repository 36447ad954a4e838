"""One timing lane of the pool: a device, candidate workers started ahead, and the clean reference of the task
it is evaluating (see :mod:`cudal1.harness.pool`). A lane is made from a :class:`LaneSpec` (what the pool decided
for every lane) and knows nothing of the pool: data flows pool -> lane -> pair -> verdict. Lanes of one device share
a :class:`~cudal1.harness.gate.DeviceGate`: their work overlaps, their timing phases run alone (:meth:`Lane.timed`)."""

from __future__ import annotations

import collections
import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from .config import EvalConfig
from .gate import DeviceGate, PairTurns
from .process import WorkerGone, WorkerProcess
from .reference_side import ReferenceSide
from .sandbox import Limits
from .template import WorkerTemplate
from .types import Task
from .verdict import Failure


@dataclasses.dataclass(frozen=True)
class LaneSpec:
    """What every lane of a pool shares.

    Attributes:
        config: the pool's evaluation settings.
        sandboxed: whether candidate workers run in the OS sandbox.
        limits: resource limits of every worker (a lane pins its own CPUs on top).
        reference_env: environment added to reference workers (their own kernel caches).
        hidden: the paths hidden from candidate workers now (the pool hides a result store once it is used).
        on_reference: called with each reference a lane sets up (the pool stores its figures).
    """

    config: EvalConfig
    sandboxed: bool
    limits: Limits
    reference_env: Mapping[str, str]
    hidden: Callable[[], Sequence[Path]]
    on_reference: Callable[[ReferenceSide], None]


def lane_cpus(lane: int, per_lane: int = 2) -> tuple[int, ...] | None:
    """The CPU cores of GPU lane ``lane`` (``per_lane`` of them, after the first two, which stay with the parent;
    lanes numbered across the pool, several per GPU included), shared by the lane's reference and candidate workers,
    which never run at the same time. None when
    ``CUDAL1_PIN_CPUS=0`` turns pinning off or the machine has too few cores.

    Pinning is the default because it is what makes the clock check quiet. With launch-bound KernelBench
    references timed against themselves, one run each way, unpinned workers gave attempts' excess host time large
    enough to reject some self-pairs ``timing_disagrees``; pinned ones stayed quiet and rejected none
    (benchmarks/results/2026-11-27-kernelbench-v0-pinned-h100.md). Two pools on one machine would pin to the same
    cores; they would share one GPU as well, which no timing survives either."""
    if os.environ.get("CUDAL1_PIN_CPUS", "1") == "0":
        return None
    try:
        cores = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    first = 2 + lane * per_lane
    if len(cores) < first + per_lane:
        return None
    return tuple(cores[first : first + per_lane])


class Lane:
    """One timing lane: a device, spare candidate workers started ahead, and the reference of its task.

    ``gate``: shared by the lanes of one device (the pool makes it); ``None``: a gate of this lane alone.
    ``turns``: the device's :class:`~cudal1.harness.gate.PairTurns`, shared like the gate; ``None``: its own.
    ``name`` labels the lane in the gate's log."""

    def __init__(self, spec: LaneSpec, device: str, env: dict[str, str], spares: int,
                 cpus: tuple[int, ...] | None = None, fork: bool = False, gate: DeviceGate | None = None,
                 name: str = "", turns: PairTurns | None = None) -> None:
        self.spec, self.device, self.env = spec, device, env
        self.name = name or device
        self.gate = gate if gate is not None else DeviceGate(quiesce=lambda _timer: self.quiesce())
        self.turns = turns if turns is not None else PairTurns()
        self.current: WorkerProcess | None = None  # the candidate worker of the pair running now (candidate code)
        self._held = False  # current stopped for another lane's timing
        self.fork = fork  # workers forked from warm templates (cudal1.harness.template), not started
        self.spares = 0 if fork else max(0, spares)
        self.template: WorkerTemplate | None = None  # forks candidate workers
        self.ref_template: WorkerTemplate | None = None  # forks reference workers
        self._template_hidden: list = []
        self.gpu = device.startswith("cuda")
        self.limits = dataclasses.replace(spec.limits, cpus=cpus) if cpus else spec.limits
        self._spares: collections.deque[WorkerProcess] = collections.deque()
        self._ref_spare: WorkerProcess | None = None
        self.ref: ReferenceSide | None = None
        self.ref_failure: tuple[str, Failure] | None = None
        self.previous: WorkerProcess | None = None

    def new_candidate_worker(self, extensions_dir: Path | None = None) -> WorkerProcess:
        """A candidate worker started now; with ``extensions_dir`` (a candidate that builds extensions), that
        folder is its ``TORCH_EXTENSIONS_DIR``, bound writable into its sandbox."""
        env = self.env if extensions_dir is None else {**self.env, "TORCH_EXTENSIONS_DIR": str(extensions_dir)}
        return WorkerProcess("candidate", env, sandboxed=self.spec.sandboxed, gpu=self.gpu,
                             writable=[] if extensions_dir is None else [extensions_dir],
                             hidden=list(self.spec.hidden()), limits=self.limits)

    def new_reference_worker(self) -> WorkerProcess:
        """A clean reference worker (never sandboxed: it runs only the task's own code): forked from the lane's
        reference template on a forking lane (so that it runs the protocol as a forked candidate does), else
        started. Both sides alike: a forking lane whose reference cannot be forked stops forking, candidates
        included (a forked candidate beside a started reference has the difference of their protocol speeds to
        hide work in)."""
        if self.fork:
            try:
                tpl = self._reference_template()
                tpl.wait_ready()
                tpl.wait_children_gone()  # the last task's reference, just killed
                return tpl.fork()
            except WorkerGone:
                self.stop_forking()
        return WorkerProcess("reference", self._reference_env(), gpu=self.gpu, limits=self.limits)

    def stop_forking(self) -> None:
        """From now on, start both sides' workers (the templates are closed)."""
        self.fork = False
        self.close_template()
        self.close_reference_template()

    def _reference_env(self) -> dict[str, str]:
        return {**self.env, **self.spec.reference_env}

    def _reference_template(self) -> WorkerTemplate:
        """The lane's reference template, started (again) when there is none or it died."""
        if self.ref_template is not None and not self.ref_template.alive:
            self.close_reference_template()
        if self.ref_template is None:
            self.ref_template = WorkerTemplate(self._reference_env(), role="reference", gpu=self.gpu,
                                               limits=self.limits)
        return self.ref_template

    def close_reference_template(self) -> None:
        if self.ref_template is not None:
            self.ref_template.close()
            self.ref_template = None

    def take_candidate_worker(self) -> WorkerProcess:
        """The next candidate's worker: forked from the lane's template, or a spare started ahead, or a new one."""
        if self.fork:
            try:
                return self._template().fork()
            except WorkerGone:  # the template is gone or refused: a worker started the usual way
                self.close_template()
                return self.new_candidate_worker()
        return self._spares.popleft() if self._spares else self.new_candidate_worker()

    def take_twin_worker(self) -> WorkerProcess:
        """A second candidate-role worker while the candidate's is still alive (the drift re-check's twin): a
        template forks one child at a time, so on a forking lane it is started the usual way."""
        return self.new_candidate_worker() if self.fork else self.take_candidate_worker()

    def _template(self) -> WorkerTemplate:
        """The lane's template, started (again) when there is none, it died, or the pool hides more paths now."""
        hidden = list(self.spec.hidden())
        if self.template is not None and (not self.template.alive or self._template_hidden != hidden):
            self.close_template()
        if self.template is None:
            self._template_hidden = hidden
            self.template = WorkerTemplate(self.env, sandboxed=self.spec.sandboxed, gpu=self.gpu, hidden=hidden,
                                           limits=self.limits)
        return self.template

    def close_template(self) -> None:
        if self.template is not None:
            self.template.close()
            self.template = None

    def prestart(self, remaining: int) -> None:
        """Top the spares up, but never beyond the ``remaining`` pairs this lane may still run (a forking lane: its
        template starts, when it has none)."""
        if self.fork:
            if remaining > 0:
                self._template()
            return
        while len(self._spares) < min(self.spares, remaining):
            self._spares.append(self.new_candidate_worker())

    def wait_spares(self) -> None:
        """Block until every spare (the next reference's too) has started (torch imported, CUDA context made): no
        process creates a CUDA context while a pair is being timed."""
        for w in list(self._spares):
            try:
                w.wait_ready()
            except WorkerGone:
                self._spares.remove(w)
                w.close()
        if self.template is not None:
            try:
                self.template.wait_ready()
            except WorkerGone:
                self.close_template()
        if self.ref_template is not None:
            try:
                self.ref_template.wait_ready()
            except WorkerGone:
                self.close_reference_template()
        if self._ref_spare is not None:
            try:
                self._ref_spare.wait_ready()
            except WorkerGone:
                self._ref_spare.close()
                self._ref_spare = None

    def quiesce(self) -> None:
        """Wait until every worker this lane started ahead is ready (CUDA context made) and the last one it retired
        is gone: what a timer of the lane's device waits for, holding the device (:class:`DeviceGate`)."""
        self.wait_spares()
        self.settle_previous()

    def hold_still(self) -> None:
        """Stop this lane's loaded candidate (every process of its worker) while another lane of the device times;
        one that cannot be stopped is killed (its pair then fails: a worker gone). :meth:`let_go` resumes it."""
        w = self.current
        if w is None or w.frozen or w.proc.poll() is not None:
            return
        if w.freeze():
            self._held = True
        else:
            w.kill(wait=False)

    def let_go(self) -> None:
        """Resume what :meth:`hold_still` stopped."""
        if self._held and self.current is not None:
            self.current.thaw()
        self._held = False

    def work(self) -> AbstractContextManager[None]:
        """A section of this lane's work (shared with the other lanes of its device; :meth:`DeviceGate.work`)."""
        return self.gate.work(self.name)

    def timed(self) -> AbstractContextManager[None]:
        """The device alone for one of this lane's timing phases (:meth:`DeviceGate.timing`)."""
        return self.gate.timing(self.name)

    def prestart_one(self) -> None:
        """Make sure one candidate worker (a forking lane: its template) is starting (even on a lane that keeps no
        spares)."""
        if self.fork:
            self._template()
            return
        if not self._spares:
            self._spares.append(self.new_candidate_worker())

    def holds(self, task: Task) -> bool:
        """Whether the lane's current reference is ``task``'s."""
        return self.ref is not None and self.ref.task.hash == task.hash

    def reference_for(self, task: Task) -> ReferenceSide | Failure:
        """The set-up reference of ``task`` (the lane's current one, or a new one replacing it)."""
        if self.holds(task) and self.ref is not None and self.ref.worker.proc.poll() is None:
            return self.ref
        if self.ref_failure is not None and self.ref_failure[0] == task.hash:
            return self.ref_failure[1]
        self.drop_reference()
        w = self._ref_spare or self.new_reference_worker()
        self._ref_spare = None
        side = ReferenceSide.start(w, task, self.spec.config, self.device, timed=self.timed)
        if isinstance(side, Failure):
            w.close()
            self.ref_failure = (task.hash, side)
            return side
        self.ref = side
        self.spec.on_reference(side)
        return side

    def prestart_reference(self) -> None:
        """Start the next task's reference worker ahead (while this task's pairs run); a forking lane starts its
        reference template instead (a reference is forked when its task comes: one child of a template at a
        time, and the current task's reference is still alive)."""
        if self.fork:
            self._reference_template()
        elif self._ref_spare is None:
            self._ref_spare = self.new_reference_worker()

    def drop_reference(self) -> None:
        if self.ref is not None:
            self.ref.close()
            self.ref = None

    def running(self, worker: WorkerProcess) -> None:
        """``worker`` runs this lane's candidate now (another lane's timing stops it: :meth:`hold_still`)."""
        self.current, self._held = worker, False

    def retire(self, worker: WorkerProcess) -> None:
        """``worker`` (killed, its pair done) is waited for before the lane's next worker runs
        (:meth:`settle_previous`)."""
        if self.current is worker:
            self.current, self._held = None, False
        self.previous = worker

    def settle_previous(self) -> None:
        """Wait until the last candidate worker is gone (its GPU context torn down) and remove its folder."""
        if self.previous is not None:
            self.previous.join()
            self.previous.cleanup()
            self.previous = None

    def close(self) -> None:
        while self._spares:
            self._spares.popleft().close()
        if self._ref_spare is not None:
            self._ref_spare.close()
            self._ref_spare = None
        self.drop_reference()
        self.settle_previous()
        self.close_template()
        self.close_reference_template()
        self.ref_failure = None


#: ``warm_spares`` settings and the ``CUDAL1_WARM_CUDA`` value each gives a GPU lane's workers
#: (:data:`cudal1.harness.worker.WARM_LEVELS`)
WARM_SPARES = {"context": "1", "libraries": "libraries"}


def device_lanes(spec: LaneSpec, kind: str, gpus: Sequence[int], base_env: Mapping[str, str], *, lanes_per_gpu: int,
                 spares: int, fork: bool, cpus_per_lane: int = 2, warm_spares: str = "context") -> list[Lane]:
    """A pool's lanes, each device's sharing one :class:`DeviceGate`.

    ``kind`` ``"cuda"``: ``lanes_per_gpu`` lanes on each GPU index of ``gpus`` (``CUDA_VISIBLE_DEVICES`` pins each
    lane to its GPU, through the physical index where the parent's own ``CUDA_VISIBLE_DEVICES`` renumbers them; each
    lane ``cpus_per_lane`` cores of its own, :func:`lane_cpus`). ``kind`` ``"cpu"``: ``lanes_per_gpu`` lanes on the
    CPU (no GPU visible), sharing one gate. ``spares``: candidate workers each lane starts ahead; ``fork``: workers
    forked from warm templates; ``warm_spares``: what a GPU lane's spare does while it waits (``"context"``: its
    CUDA context; ``"libraries"``: also the digest kernel, a seeded draw and cuBLAS:
    :func:`cudal1.harness.worker.warm_cuda`)."""
    if warm_spares not in WARM_SPARES:
        raise ValueError(f"warm_spares {warm_spares!r}: use one of {sorted(WARM_SPARES)}")
    lanes: list[Lane] = []
    if kind == "cuda":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        physical = visible.split(",") if visible else None
        for gi, g in enumerate(gpus):
            gate, turns = DeviceGate(), PairTurns()
            env = {**base_env, "CUDA_VISIBLE_DEVICES": physical[g] if physical else str(g),
                   "CUDAL1_WARM_CUDA": WARM_SPARES[warm_spares]}
            for j in range(lanes_per_gpu):
                cpus = lane_cpus(gi * lanes_per_gpu + j, cpus_per_lane)
                lanes.append(Lane(spec, "cuda:0", dict(env), spares, cpus=cpus, fork=fork, gate=gate,
                                  name=f"gpu{g}.{j}", turns=turns))
    else:
        gate, turns = DeviceGate(), PairTurns()
        lanes = [Lane(spec, "cpu", {**base_env, "CUDA_VISIBLE_DEVICES": ""}, spares, fork=fork, gate=gate,
                      name=f"cpu.{j}", turns=turns) for j in range(lanes_per_gpu)]
    for gate in {id(ln.gate): ln.gate for ln in lanes}.values():
        mine = [ln for ln in lanes if ln.gate is gate]
        gate.quiesce, gate.resume = functools.partial(_quiesce, mine), functools.partial(_resume, mine)
    return lanes


def _quiesce(lanes: Sequence[Lane], timer: str) -> None:
    """What lane ``timer`` waits for, holding the device: every lane's workers started ahead ready, retired ones
    gone, and every other lane's loaded candidate stopped."""
    for lane in lanes:
        lane.quiesce()
        if lane.name != timer:
            lane.hold_still()


def _resume(lanes: Sequence[Lane], timer: str) -> None:
    """Lane ``timer``'s timing ended: the candidates :func:`_quiesce` stopped go on."""
    for lane in lanes:
        if lane.name != timer:
            lane.let_go()

