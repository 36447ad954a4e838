"""Worker side: a model's output written down for the parent, as leaf records (each a tensor's dtype, shape,
device, digest and sampled values, or a plain value) and value files in the worker's outbox.

:func:`describe_output` (:func:`describe_outputs` for a batch) turns an output (tensor, or nested tuple/list) into
JSON-able leaf records and writes the sampled values to one file of the outbox; :func:`commit_outputs` writes every
value of a timed batch's outputs there instead, without digests. The parent reads, checks and judges them
(:mod:`cudal1.harness.leaves`), trusting nothing beyond their shape. The vocabulary both share is
:mod:`cudal1.harness.wire`.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import torch

from .compare import flatten_outputs, resolve_tolerance
from .digest import FULL_MAX, digest_tensors, sample_positions
from .wire import DTYPES, MAX_VALUE_CHARS


class Outbox:
    """Writes values into ``<dir>/<name>.bin``, one file per described output (or committed batch), from offset 0.

    The file is written in place, never truncated: a committed batch's file keeps its pages allocated from one batch
    to the next (a fresh 48 MB file in /dev/shm a batch took its page faults inside the clocked window, and their
    time swung by tens of ms). The reader takes the offsets and sizes from the records, never the file's length."""

    def __init__(self, directory: Path, name: str) -> None:
        self.name = f"{name}.bin"
        self.path = directory / self.name
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        self.offset = 0

    def write(self, values: torch.Tensor) -> int:
        """Append ``values`` (any dtype, any device); returns the byte offset they start at."""
        raw = values.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy()
        view = memoryview(raw).cast("B")
        at = self.offset
        done = 0
        while done < len(view):
            done += os.pwrite(self._fd, view[done:], at + done)
        self.offset += len(view)
        return at

    def close(self) -> None:
        os.close(self._fd)


def describe_output(out: Any, *, digest_seed: int | None, sample_seed: int | None, outbox: Outbox | None,
                    rtol: float | None = None, atol: float | None = None, reference: bool = False) -> list[dict]:
    """Leaf records of ``out``: kind, dtype, shape, device, exact type; a digest when ``digest_seed`` is given
    (with ``rms``/``s1``/``s2`` when ``reference``); samples written to ``outbox`` when ``sample_seed`` is
    given."""
    return describe_outputs([out], digest_seed=digest_seed, sample_seed=sample_seed, outbox=outbox, rtol=rtol,
                            atol=atol, reference=reference)[0]


def describe_outputs(outs: list[Any], *, digest_seed: int | None, sample_seed: int | None = None,
                     outbox: Outbox | None = None, rtol: float | None = None, atol: float | None = None,
                     reference: bool = False) -> list[list[dict]]:
    """:func:`describe_output` of each of ``outs`` (a timed batch's outputs), their digests computed together
    (:func:`~cudal1.harness.digest.digest_tensors`: one host copy for the whole batch)."""
    described: list[list[dict]] = []
    pending: list[tuple[dict, torch.Tensor]] = []
    for out in outs:
        leaves: list[dict] = []
        for x in flatten_outputs(out):
            if isinstance(x, torch.Tensor):
                rec: dict[str, Any] = {
                    "kind": "tensor", "dtype": str(x.dtype).removeprefix("torch."), "shape": list(x.shape),
                    "device": str(x.device), "exact": type(x) is torch.Tensor,
                    "storage": not (x.numel() > 0 and type(x) is torch.Tensor and x.data_ptr() == 0),
                }
                plain = x.as_subclass(torch.Tensor) if type(x) is not torch.Tensor else x
                if digest_seed is not None:
                    pending.append((rec, plain))
                if sample_seed is not None and outbox is not None and rec["dtype"] in DTYPES:
                    flat = plain.detach().reshape(-1)
                    pos = sample_positions(flat.numel(), sample_seed, flat.device)
                    vals = flat if pos is None else flat[pos]
                    rec["sample"] = {"file": outbox.name, "offset": outbox.write(vals), "count": vals.numel(),
                                     "seed": sample_seed}
                leaves.append(rec)
            elif x is None or isinstance(x, (bool, int, float, str)):
                v = x if not isinstance(x, str) else x[:MAX_VALUE_CHARS]
                if isinstance(v, float) and not math.isfinite(v):
                    v = repr(v)
                leaves.append({"kind": "value", "value": v})
            else:
                leaves.append({"kind": "object", "type": type(x).__name__[:100]})
        described.append(leaves)
    if digest_seed is not None and pending:
        tols = [resolve_tolerance(t.dtype, rtol, atol) if reference else None for _, t in pending]
        for (rec, _), d in zip(pending, digest_tensors([t for _, t in pending], digest_seed, tols), strict=True):
            rec["digest"] = d.to_dict()
    return described


def commit_outputs(outs: list[Any], directory: Path, name: str) -> list[list[dict]]:
    """Worker side: leaf records of a timed batch's outputs with **every** value of each tensor leaf written to
    ``<directory>/<name>.bin`` (the record's ``sample`` covers all ``numel`` values, seed None), and no digest: the
    parent digests the committed values itself once it has stopped this process (:func:`digest_committed`). A tensor
    leaf of a dtype the outbox does not carry, or larger than :data:`~cudal1.harness.digest.FULL_MAX` elements, is
    described without values (the parent then finds no digest for it and fails the output)."""
    box = Outbox(directory, name)
    described: list[list[dict]] = []
    try:
        for out in outs:
            recs = describe_output(out, digest_seed=None, sample_seed=None, outbox=None)
            for rec, x in zip(recs, flatten_outputs(out), strict=True):
                if rec["kind"] != "tensor" or rec["dtype"] not in DTYPES or x.numel() > FULL_MAX:
                    continue
                plain = x.as_subclass(torch.Tensor) if type(x) is not torch.Tensor else x
                rec["sample"] = {"file": box.name, "offset": box.write(plain), "count": x.numel(), "seed": None}
            described.append(recs)
    finally:
        box.close()
    return described
