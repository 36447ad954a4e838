"""Registration of the zoo's ops as ``torch.library`` custom ops, and their eager fast path.

Every op is a custom op ``torch.ops.cudal1.<name>`` (with a fake implementation), so ``torch.compile``
traces through it. Dispatching a custom op costs tens of microseconds of host time per call (measured on
the H100: 64 us for ``torch.ops.cudal1.relu`` against 39 us for its launcher;
benchmarks/scripts/launch_overhead.py), which shows in a 1.5 ms op timed from the host. So the public
functions call the op's implementation directly in eager mode and the registered op while
``torch.compile`` traces (:func:`call`). Both run the same function; only the dispatch differs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

__all__ = ["call", "zoo_custom_op"]

_EAGER: dict[str, Callable[..., Any]] = {}


def zoo_custom_op(qualname: str, *, mutates_args: Iterable[str] | str, **kwargs: Any) -> Callable:
    """``torch.library.custom_op(qualname, mutates_args=...)`` that also remembers the plain function for
    :func:`call`'s eager path. ``qualname`` must be ``cudal1::<name>``."""
    ns, _, name = qualname.partition("::")
    if ns != "cudal1" or not name:
        raise ValueError(f"zoo ops live in the cudal1 namespace: got {qualname!r}")

    def deco(fn: Callable[..., Any]) -> Any:
        op = torch.library.custom_op(qualname, mutates_args=mutates_args, **kwargs)(fn)
        _EAGER[name] = fn
        return op

    return deco


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run zoo op ``name``: the registered ``torch.ops.cudal1.<name>`` while ``torch.compile`` traces,
    its implementation directly otherwise."""
    if torch.compiler.is_compiling():
        return getattr(torch.ops.cudal1, name)(*args, **kwargs)
    return _EAGER[name](*args, **kwargs)
