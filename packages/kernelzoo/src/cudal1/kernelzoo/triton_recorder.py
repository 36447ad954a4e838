"""Recording every Triton compilation of a process, with the specialisation it was compiled for (on a GPU).

:class:`Recorder` sets ``triton.knobs.runtime.jit_post_compile_hook`` (Triton 3.6 and later): for each kernel a
``JITFunction`` compiles, it writes down an entry of :mod:`cudal1.kernelzoo.triton_manifest` (the kernel, signature
types, constexpr values, argument attributes, compile options not at the backend's default, shared memory) and the
files the entry depends on (the kernel's, its ``@triton.jit`` helpers', the launcher's on the stack). A value it
cannot write down is kept as ``{"unserialisable": ...}`` with a problem on its entry, never dropped; a failure of
the recorder itself is kept in :attr:`Recorder.errors` and never fails the launch.
``benchmarks/scripts/kb_triton_manifest.py`` uses it to record the kernelbench-v0 solutions.

Not seen: kernels compiled outside ``JITFunction.run`` (``torch.compile``'s Inductor, a direct ``triton.compile``).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .triton_manifest import (
    LAUNCH_OPTIONS,
    PACKAGE_DIR,
    TARGET_OPTIONS,
    KernelRef,
    Unserialisable,
    encode_value,
)

__all__ = ["Recorder", "not_launched"]


class Recorder:
    """Records every Triton compilation through ``triton.knobs.runtime.jit_post_compile_hook``.

    target: the ``GPUTarget`` whose backend defaults tell which options a launch set (default: the GPU at hand).
    The caller sets ``solution`` (the solution file now running: each entry's ``used_by``) and ``workdir`` (where
    the harness writes candidate files), and maps each loaded candidate's scratch file to its solution file in
    ``sources``, so that kernels are named by the solution file they come from. :meth:`take` hands over the entries
    (dicts of :class:`~cudal1.kernelzoo.triton_manifest.Entry` fields, family aside) and errors; ``kernels`` (kernel
    id -> :class:`~cudal1.kernelzoo.triton_manifest.KernelRef` fields) and ``files`` (package-relative paths the
    entries depend on) accumulate until the caller clears them.
    """

    def __init__(self, target: Any = None) -> None:
        import dataclasses

        import triton
        from triton.compiler import make_backend

        self.package_dir = PACKAGE_DIR
        self.triton_dir = str(Path(triton.__file__).resolve().parent)
        if target is None:  # the GPU at hand (a dry run on CPU passes one)
            from triton.runtime.driver import driver

            target = driver.active.get_current_target()
        backend = make_backend(target)
        self.defaults = _plain(dataclasses.asdict(backend.parse_options({})))
        self.sources: dict[str, str] = {}
        self.workdir: Path | None = None
        self.kernels: dict[str, dict[str, Any]] = {}
        self.files: set[str] = set()
        self.entries: list[dict[str, Any]] = []
        self.compiled: list[Any] = []
        self.errors: list[str] = []
        self.solution = ""
        self._undo: list[tuple[Any, str, Any]] = []

    # -- installing ---------------------------------------------------------------------------------------------
    def install(self) -> list[str]:
        """Set the hook (chaining any hook already set); returns notes for the manifest."""
        import triton
        from triton.runtime import jit

        notes = []
        prev = triton.knobs.runtime.jit_post_compile_hook

        def hook(**kw: Any) -> Any:
            try:
                self.record(kw["fn"], kw["key"], kw["compile"])
            except Exception as e:  # noqa: BLE001 - recording must never break a launch
                self.errors.append(f"{self.solution}: recording {getattr(kw.get('fn'), 'name', '?')} failed: "
                                   f"{type(e).__name__}: {e}")
            return prev(**kw) if prev is not None else None

        self._undo = [(triton.knobs.runtime, "jit_post_compile_hook", prev)]
        triton.knobs.runtime.jit_post_compile_hook = hook
        # With a hook set, Triton first serialises the specialisation with json.dumps (serialize_specialization_data)
        # and raises on a value JSON cannot take (a @triton.jit function passed as a constexpr, in triton 3.6):
        # the launch would fail because of the recorder. This recorder does not use that text, so a failure there
        # yields a placeholder instead of an exception.
        original = getattr(jit, "serialize_specialization_data", None)
        if original is not None:
            def tolerant(*args: Any, **kwargs: Any) -> str:
                try:
                    return original(*args, **kwargs)
                except (TypeError, ValueError) as e:
                    return json.dumps({"unserialisable": f"{type(e).__name__}: {e}"})

            self._undo.append((jit, "serialize_specialization_data", original))
            jit.serialize_specialization_data = tolerant
            notes.append("triton.runtime.jit.serialize_specialization_data wrapped so that a value json.dumps cannot "
                         "take does not fail the launch (the recorder encodes values itself)")
        return notes

    def uninstall(self) -> None:
        """Put back what :meth:`install` replaced."""
        for owner, name, value in reversed(self._undo):
            setattr(owner, name, value)
        self._undo = []

    # -- naming -------------------------------------------------------------------------------------------------
    def relpath(self, filename: str) -> str | None:
        """A file as the manifest names it: its solution file for a loaded candidate, relative to the kernelzoo
        package inside it, None elsewhere (torch, triton, this script)."""
        if filename in self.sources:
            return self.sources[filename]
        path = Path(filename)
        if self.workdir is not None and path.parent == self.workdir and path.name.startswith("cudal1_candidate_"):
            self.sources[filename] = self.solution  # a candidate file seen before load_candidate returned
            return self.solution
        try:
            return Path(filename).resolve().relative_to(self.package_dir).as_posix()
        except ValueError:
            return None

    def ref_of(self, jf: Any) -> Any:
        """The :class:`KernelRef` of a JIT function (kept in ``self.kernels``)."""
        fn = jf.fn
        filename = fn.__code__.co_filename
        rel = self.relpath(filename)
        if filename in self.sources:
            ref = KernelRef(qualname=fn.__qualname__, module=None, file=rel)
        else:
            ref = KernelRef(qualname=fn.__qualname__, module=fn.__module__, file=rel or filename)
        self.kernels.setdefault(ref.id, asdict(ref))
        if rel is not None:
            self.files.add(rel)
        return ref

    def helper_files(self, jf: Any, seen: set[int] | None = None) -> None:
        """Files of the ``@triton.jit`` functions ``jf`` calls (by global name), recursively."""
        from triton.runtime.jit import JITFunction

        seen = seen if seen is not None else set()
        if id(jf) in seen:
            return
        seen.add(id(jf))
        names = set()
        stack = [jf.fn.__code__]
        while stack:
            code = stack.pop()
            names.update(code.co_names)
            stack += [c for c in code.co_consts if hasattr(c, "co_names")]
        for name in names:
            obj = jf.fn.__globals__.get(name)
            if isinstance(obj, JITFunction):
                rel = self.relpath(obj.fn.__code__.co_filename)
                if rel is not None:
                    self.files.add(rel)
                self.helper_files(obj, seen)

    # -- recording ----------------------------------------------------------------------------------------------
    def record(self, info: Any, key: Any, compile: dict[str, Any]) -> None:
        jf = info.jit_function
        ref = self.ref_of(jf)
        self.helper_files(jf)
        frame = sys._getframe()
        while frame is not None:  # the launcher's files: op modules, blocks, the solution
            name = frame.f_code.co_filename
            if not name.startswith(self.triton_dir) and name != __file__:
                rel = self.relpath(name)
                if rel is not None:
                    self.files.add(rel)
            frame = frame.f_back
        problems = []
        constexprs = []
        for path, value in sorted(compile["constants"].items()):
            try:
                enc = encode_value(value, self.ref_of)
            except Unserialisable as e:
                enc = {"unserialisable": str(e)}
                problems.append(f"constexpr at {list(path)}: {e}")
            constexprs.append([list(path), enc])
        attrs = [[list(p), [list(a) for a in v]] for p, v in sorted(compile["configs"][0].items())]
        kernel = jf.device_caches[compile["device"]][0].get(key)
        meta = _plain(kernel.metadata._asdict()) if hasattr(getattr(kernel, "metadata", None), "_asdict") else {}
        if not meta:
            problems.append("compiled kernel not found in the JIT cache: options beyond the launch's not recorded")
        options = {k: compile[k] for k in LAUNCH_OPTIONS}
        not_replayed: dict[str, Any] = {}
        for name, default in self.defaults.items():
            if name in options or name not in meta or meta[name] == default:
                continue
            if name in TARGET_OPTIONS:
                not_replayed[name] = meta[name]
            else:
                options[name] = meta[name]
        self.entries.append({
            "kernel": ref.id, "signature": _plain(compile["signature"]), "constexprs": constexprs, "attrs": attrs,
            "options": options, "shared_bytes": meta.get("shared"), "used_by": [self.solution],
            "problems": problems, "not_replayed": not_replayed})
        self.compiled.append(kernel)

    def take(self) -> tuple[list[dict[str, Any]], list[str]]:
        """The entries recorded since the last call (with registers and spills where the kernel was loaded), and
        the recording errors."""
        for entry, kernel in zip(self.entries, self.compiled, strict=True):
            entry["n_regs"] = _int_or_none(getattr(kernel, "n_regs", None))
            entry["n_spills"] = _int_or_none(getattr(kernel, "n_spills", None))
        out, errors = self.entries, self.errors
        self.entries, self.compiled, self.errors = [], [], []
        return out, errors


def _plain(obj: Any) -> Any:
    """JSON-shaped copy: tuples to lists, dict keys to strings, anything else JSON cannot hold to its repr."""
    return json.loads(json.dumps(obj, default=repr))


def _int_or_none(v: Any) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


def not_launched(module: Any, compiled: set[str]) -> list[dict[str, Any]]:
    """``@triton.jit`` functions defined in ``module`` with no compilation of their own, each with the functions of
    the module whose source names it (callers: it was inlined into them)."""
    import inspect

    from triton.runtime.jit import JITFunction

    jits = {n: v for n, v in vars(module).items() if isinstance(v, JITFunction) and v.fn.__module__ == module.__name__}
    sources = {}
    for n, v in jits.items():
        try:
            sources[n] = inspect.getsource(v.fn)
        except (OSError, TypeError):
            sources[n] = ""
    out = []
    for n in sorted(jits):
        if jits[n].fn.__qualname__ in compiled:
            continue
        callers = sorted(m for m in jits if m != n and re.search(rf"\b{re.escape(n)}\b", sources[m]))
        out.append({"name": n, "called_from": callers})
    return out
