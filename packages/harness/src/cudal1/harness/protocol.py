"""The messages between the parent and a worker, and their strict parsing on the parent's side.

The parent sends one command at a time (``{"op": ..., "id": <random>, ...}``) and waits for exactly one
reply carrying that ``id``. A reply is parsed into a :class:`WorkerReport`: every field is checked for type
and range, and a reply of the wrong type, with another id, or malformed in any way raises
:class:`ProtocolError` (the pair then fails as ``protocol_violation``). Replies of type ``error`` are a
worker's own account of a failure (the candidate raised, the task failed to load); they can only fail a
pair, never pass one.

Reply types per command (worker role in brackets):

==========  =========  ==========================================================================
command     reply      fields
==========  =========  ==========================================================================
setup       setup      [reference] task_check, stateful, leaves, set/out/model/peak/free bytes,
                       environment, low_precision_ops
configure   configured [reference] free_bytes
load        loaded     [candidate] build, unmapped, free_bytes, hints
build       built      [candidate] status, reason, seconds
trial       trial      outputs (leaves per call), steps_ms, hints
batch       batch      ms (one per call), event_ms, placement (CUDA: input/output offsets), steps_ms, hints;
                       with ``commit``: outputs (leaves per call, every value in the outbox, no digests)
digest      digest     outputs (leaves with digests, per call), steps_ms
outputs     outputs    outputs (leaves with samples, per chosen call)
release     released   free_bytes
rewarm      rewarmed   (the bytes taken back into the allocator's cache: a figure for the log only)
observe     observe    [candidate] low_precision_ops, kernels, hints
check       checked    [candidate] hints (the in-process checks after timed batches)
monitor     monitor    [reference] clocks
==========  =========  ==========================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .leaves import Leaf, LeafError, parse_leaves

REPLY_TYPES = {"setup": "setup", "configure": "configured", "load": "loaded", "build": "built", "trial": "trial",
               "batch": "batch", "digest": "digest", "outputs": "outputs", "release": "released",
               "rewarm": "rewarmed", "observe": "observe", "monitor": "monitor", "check": "checked"}
ERROR_STATUSES = frozenset({"runtime_error", "compile_error", "rejected", "incorrect", "task_error"})


class ProtocolError(ValueError):
    """A reply that breaks the protocol: out of turn, unknown, malformed or for another command."""


@dataclass(frozen=True)
class Hints:
    """Findings of the in-process checks of a candidate worker (claims: they can only flag or fail it)."""

    flags: tuple[str, ...] = ()
    evidence: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkerReport:
    """One parsed reply. Which fields are set depends on ``type`` (see the module docstring)."""

    type: str
    id: str
    hints: Hints = Hints()
    # error replies
    status: str = ""
    reason: str = ""
    flag: str | None = None
    # outputs of trial / digest / outputs, one list of leaves per call
    outputs: tuple[tuple[Leaf, ...], ...] = ()
    ms: tuple[float, ...] = ()
    event_ms: tuple[float, ...] | None = None
    #: batch replies on CUDA: where each call's inputs and output landed (address modulo 2 MiB; diagnostics only,
    #: nothing is decided on it)
    placement: dict[str, tuple[int, ...]] | None = None
    #: trial, batch and digest replies with ``CUDAL1_TIMING_DEBUG=1``: the worker's own clock over the command's steps
    #: (ms: ``draw``, ``calls``, ``reply`` of a batch; ``digest``; a trial's ``draw``, ``calls`` and ``digest``, its
    #: outputs described and sampled), where the protocol's time goes (diagnostics only)
    steps_ms: dict[str, float] | None = None
    # setup / configure / load / release
    task_check: dict[str, Any] = field(default_factory=dict)
    stateful: bool = False
    leaves: tuple[Leaf, ...] = ()
    set_bytes: int = 0
    out_bytes: int = 0
    model_bytes: int = 0
    peak_bytes: int | None = None
    call_ms: float = 1.0
    free_bytes: int | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    low_precision_ops: tuple[str, ...] | None = None
    op_signature: str | None = None
    build: dict[str, Any] = field(default_factory=dict)
    unmapped: tuple[str, ...] = ()
    kernels: tuple[str, ...] | None = None
    clocks: dict[str, Any] = field(default_factory=dict)
    built_status: str = ""
    seconds: float = 0.0

    @property
    def is_error(self) -> bool:
        return self.type == "error"


def _strs(x: Any, what: str, limit: int = 1000) -> tuple[str, ...]:
    if not isinstance(x, list) or len(x) > limit or not all(isinstance(s, str) and len(s) <= 2000 for s in x):
        raise ProtocolError(f"{what} is not a list of strings")
    return tuple(x)


def _signature(x: Any) -> str | None:
    if x is None:
        return None
    if not isinstance(x, str) or len(x) != 64 or any(c not in "0123456789abcdef" for c in x):
        raise ProtocolError("op_signature is not a sha256 hex digest")
    return x


def _dict(x: Any, what: str) -> dict[str, Any]:
    if not isinstance(x, dict):
        raise ProtocolError(f"{what} is not an object")
    return x


def _opt_int(x: Any, what: str) -> int | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, int) or x < 0:
        raise ProtocolError(f"{what} is not a byte count")
    return x


def _times(ms: Any, calls: int | None) -> tuple[float, ...]:
    if not isinstance(ms, list) or (calls is not None and len(ms) != calls) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0 for v in ms):
        raise ProtocolError(f"batch times are not {calls} non-negative numbers")
    return tuple(float(v) for v in ms)


STEPS = ("draw", "calls", "reply", "digest")  #: the steps a worker may time (WorkerReport.steps_ms)


def _steps(x: Any) -> dict[str, float] | None:
    if x is None:
        return None
    if not isinstance(x, dict) or not set(x) <= set(STEPS) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
            for v in x.values()):
        raise ProtocolError(f"a reply's steps_ms is not non-negative numbers for some of {STEPS}")
    return {k: float(v) for k, v in x.items()}


def _placement(x: Any, calls: int | None) -> dict[str, tuple[int, ...]] | None:
    if x is None:
        return None
    if not isinstance(x, dict) or set(x) != {"inputs", "outputs"}:
        raise ProtocolError("a batch's placement is not {inputs, outputs}")
    out = {}
    for k, v in x.items():
        if not isinstance(v, list) or (calls is not None and len(v) != calls) or not all(
                isinstance(i, int) and not isinstance(i, bool) and -1 <= i < (1 << 40) for i in v):
            raise ProtocolError(f"a batch's placement {k} is not {calls} offsets")
        out[k] = tuple(v)
    return out


def _pos(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        raise ProtocolError(f"{what} is not a non-negative number")
    return float(x)


def _hints(x: Any) -> Hints:
    if x is None:
        return Hints()
    d = _dict(x, "hints")
    ev = _dict(d.get("evidence", {}), "hints.evidence")
    return Hints(_strs(d.get("flags", []), "hints.flags", 64),
                 {str(k)[:64]: list(_strs(v, "evidence", 50)) for k, v in list(ev.items())[:64]})


def _outputs(x: Any, calls: int | None) -> tuple[tuple[Leaf, ...], ...]:
    if not isinstance(x, list) or len(x) > 4096 or (calls is not None and len(x) != calls):
        raise ProtocolError(f"outputs is not a list of {calls if calls is not None else 'some'} calls")
    try:
        return tuple(tuple(parse_leaves(o)) for o in x)
    except LeafError as e:
        raise ProtocolError(f"malformed output record: {e}") from e


def parse_reply(msg: Any, op: str, cmd_id: str, *, calls: int | None = None) -> WorkerReport:
    """Parse the reply to command ``op`` (id ``cmd_id``); ``calls``: how many outputs/times it must carry.

    Raises:
        ProtocolError: anything but a well-formed reply of the expected type (or an ``error``) with that id.
    """
    if not isinstance(msg, dict):
        raise ProtocolError("a reply that is not a JSON object")
    if msg.get("id") != cmd_id:
        raise ProtocolError(f"a reply for another command (id {str(msg.get('id'))[:40]!r}) arrived while "
                            f"{op!r} was pending: a message out of turn")
    kind = msg.get("type")
    if kind == "error":
        status = msg.get("status")
        if status not in ERROR_STATUSES:
            raise ProtocolError(f"error reply with status {status!r}")
        flag = msg.get("flag")
        if flag is not None and (not isinstance(flag, str) or len(flag) > 64):
            raise ProtocolError("error reply with a malformed flag")
        return WorkerReport("error", cmd_id, _hints(msg.get("hints")), status=status,
                            reason=str(msg.get("reason", ""))[:2000], flag=flag)
    if kind != REPLY_TYPES.get(op):
        raise ProtocolError(f"a {kind!r} reply to a {op!r} command")
    hints = _hints(msg.get("hints"))
    if kind in ("trial", "digest", "outputs"):
        return WorkerReport(kind, cmd_id, hints, outputs=_outputs(msg.get("outputs"), calls),
                            steps_ms=_steps(msg.get("steps_ms")) if kind in ("trial", "digest") else None)
    if kind == "batch":
        ms, ev = _times(msg.get("ms"), calls), msg.get("event_ms")
        outs = msg.get("outputs")  # a committed batch: leaf records, the values in the outbox (pair.py)
        return WorkerReport(kind, cmd_id, hints, ms=ms, event_ms=None if ev is None else _times(ev, calls),
                            placement=_placement(msg.get("placement"), calls), steps_ms=_steps(msg.get("steps_ms")),
                            outputs=() if outs is None else _outputs(outs, calls))
    if kind == "setup":
        tc = _dict(msg.get("task_check"), "task_check")
        try:
            leaves = tuple(parse_leaves(msg.get("leaves")))
        except LeafError as e:
            raise ProtocolError(str(e)) from e
        low = msg.get("low_precision_ops")
        return WorkerReport(kind, cmd_id, hints, task_check=tc, stateful=bool(msg.get("stateful")), leaves=leaves,
                            set_bytes=_opt_int(msg.get("set_bytes"), "set_bytes") or 0,
                            out_bytes=_opt_int(msg.get("out_bytes"), "out_bytes") or 0,
                            model_bytes=_opt_int(msg.get("model_bytes"), "model_bytes") or 0,
                            peak_bytes=_opt_int(msg.get("peak_bytes"), "peak_bytes"),
                            call_ms=_pos(msg.get("call_ms", 1.0), "call_ms"),
                            free_bytes=_opt_int(msg.get("free_bytes"), "free_bytes"),
                            environment=_dict(msg.get("environment", {}), "environment"),
                            low_precision_ops=None if low is None else _strs(low, "low_precision_ops"),
                            op_signature=_signature(msg.get("op_signature")))
    if kind in ("checked", "rewarmed"):
        return WorkerReport(kind, cmd_id, hints)
    if kind in ("configured", "released"):
        return WorkerReport(kind, cmd_id, hints, free_bytes=_opt_int(msg.get("free_bytes"), "free_bytes"))
    if kind == "loaded":
        return WorkerReport(kind, cmd_id, hints, build=_dict(msg.get("build", {}), "build"),
                            unmapped=_strs(msg.get("unmapped", []), "unmapped"),
                            free_bytes=_opt_int(msg.get("free_bytes"), "free_bytes"))
    if kind == "built":
        st = msg.get("status")
        if st not in ("ok", "failed", "not_built"):
            raise ProtocolError(f"build status {st!r}")
        secs = msg.get("seconds", 0.0)
        return WorkerReport(kind, cmd_id, hints, built_status=st, reason=str(msg.get("reason", ""))[:2000],
                            seconds=float(secs) if isinstance(secs, (int, float)) else 0.0)
    if kind == "observe":
        low, kern = msg.get("low_precision_ops"), msg.get("kernels")
        return WorkerReport(kind, cmd_id, hints, low_precision_ops=None if low is None else _strs(low, "ops"),
                            kernels=None if kern is None else _strs(kern, "kernels", 5000),
                            op_signature=_signature(msg.get("op_signature")))
    if kind == "monitor":
        return WorkerReport(kind, cmd_id, hints, clocks=_dict(msg.get("clocks", {}), "clocks"))
    raise ProtocolError(f"unknown reply type {kind!r}")  # pragma: no cover - REPLY_TYPES covers every kind
