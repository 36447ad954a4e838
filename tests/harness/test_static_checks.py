"""Static (AST) checks of candidate sources: each flag fires on its hack and stays quiet on honest code."""

from __future__ import annotations

import pytest

from cudal1.harness.static_checks import REJECTING, analyse

HONEST = '''
import os
import torch
import torch.nn as nn
import torch.nn.functional as F
os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)
        self.scale = 2.0

    def forward(self, x):
        y = F.relu(self.linear(x))
        return y * self.scale
'''


def test_honest_code_has_no_flags():
    assert analyse(HONEST).flags == ()


@pytest.mark.parametrize("snippet, flag", [
    ("import torch\ntorch.matmul = lambda a, b: a\n", "monkeypatch"),
    ("import torch.nn.functional as F\nF.relu = abs\n", "monkeypatch"),
    ("import time\ntime.perf_counter = lambda: 0.0\n", "monkeypatch"),
    ("import torch\nsetattr(torch, 'mm', None)\n", "monkeypatch"),
    ("class ModelNew:\n    def forward(self, x):\n        return Model()(x)\n", "calls_reference"),
    ("from cudal1_task_ref_0 import get_inputs\n", "calls_reference"),
    ("import gc\n", "introspection"),
    ("import ctypes\n", "introspection"),
    ("import sys\nf = sys._getframe(1)\n", "introspection"),
    ("import os\nos.write(5, b'{}')\n", "introspection"),
    ("x = open('/proc/self/fd')\n", "introspection"),
    ("m = __import__('o' + 's')\n", "introspection"),
    ("import torch\ns = torch.cuda.Stream()\n", "side_stream"),
    ("import threading\n", "threads"),
    ("from concurrent.futures import ThreadPoolExecutor\n", "threads"),
    ("def f(x):\n    return x.half()\n", "reduced_precision"),
    ("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", "reduced_precision"),
    ("import torch\nwith torch.autocast('cuda'):\n    pass\n", "reduced_precision"),
    ("import triton.language as tl\ndef k(a, b):\n    return tl.dot(a, b)\n", "reduced_precision"),
    ("class M:\n    def forward(self, x):\n        try:\n            return x\n        except Exception:\n            return x\n",
     "exception_fallback"),
    ("class M:\n    def forward(self, x):\n        self.train()\n        return x\n", "mode_call"),
    ("class M:\n    def forward(self, x):\n        self._cache = x\n        return x\n", "stateful_forward"),
    ("import torch\ntorch.backends.cudnn.benchmark = True\n", "library_flag"),
    ("import triton\n@triton.jit\ndef k(x):\n    pass\n", "custom_kernel_source"),
    # the hints of 2026-11-29 (issue 40): each reached the harness's process state or the launch command line
    ("from sys import _getframe as _at\n", "introspection"),
    ("def walk(f):\n    return f.f_back.f_locals\n", "introspection"),
    ("import sys\ntry:\n    raise ValueError\nexcept ValueError:\n    f = sys.exc_info()[2].tb_frame\n", "introspection"),
    ("import sys\nf = getattr(sys, '_getframe')\n", "introspection"),
    ("def walk(f):\n    return getattr(f, 'f_back')\n", "introspection"),
    ("import sys\nargs = sys.argv[1:]\n", "introspection"),
    ("from sys import argv\n", "introspection"),
    ("import posix\npid = posix.fork()\n", "introspection"),
    ("from posix import fork\n", "introspection"),
    ("import os\nos.posix_spawn('/bin/true', ['true'], {})\n", "introspection"),
    ("f = open(3, 'w')\n", "introspection"),
    ("def f(fd):\n    return open(fd, 'w', closefd=False)\n", "introspection"),
    ("import _thread\n_thread.start_new_thread(print, ())\n", "threads"),
    ("import torch.multiprocessing as mp\n", "threads"),
    ("from torch import multiprocessing\n", "threads"),
])
def test_each_flag_fires(snippet, flag):
    rep = analyse(snippet)
    assert flag in rep.flags, rep
    assert rep.evidence[flag] and rep.evidence[flag][0].startswith("line ")


@pytest.mark.parametrize("snippet", [
    "import sys\nprint(sys.version_info >= (3, 10))\n",
    "with open('weights.txt') as f:\n    text = f.read()\n",
    "class M:\n    def forward(self, x):\n        return getattr(self, 'scale') * x\n",
    "import torch\nn = torch.get_num_threads()\n",
])
def test_honest_neighbours_of_the_new_hints_stay_quiet(snippet):
    """Twins of the hints above: reading a version, opening a file by path, a constant-named attribute of the
    candidate's own object, asking torch for its thread count."""
    assert analyse(snippet).flags == (), analyse(snippet)


def test_ieee_triton_dot_is_not_reduced_precision():
    src = "import triton.language as tl\ndef k(a, b):\n    return tl.dot(a, b, input_precision='ieee')\n"
    assert "reduced_precision" not in analyse(src).flags


def test_rejecting_flags_are_the_unambiguous_ones():
    assert REJECTING == {"monkeypatch", "calls_reference", "introspection"}
    assert analyse("import gc\n").rejecting == ["introspection"]


def test_unparsable_source_gives_empty_report():
    assert analyse("def (:").flags == ()


def test_kernels_of_an_imported_zoo_count_as_the_candidates_own():
    """A released solution runs the zoo's kernels: importing cudal1.kernelzoo makes their names custom."""
    import importlib.util

    from cudal1.harness.static_checks import classify_kernels, imported_modules, library_kernels

    if importlib.util.find_spec("cudal1.kernelzoo") is None:
        pytest.skip("cudal1-kernelzoo is not installed")
    src = "import torch\nfrom cudal1.kernelzoo.ops.relu import relu\n"
    assert "cudal1.kernelzoo.ops.relu" in imported_modules(src)
    names = library_kernels(src)
    assert "_relu_kernel" in names and "zoo_softmax_f32" in names  # Triton and CUDA C kernels of the zoo
    assert library_kernels("import torch\n") == []
    lib, custom = classify_kernels(["_relu_kernel", "void at::native::vectorized_elementwise_kernel<4>"], names)
    assert custom == ["_relu_kernel"] and len(lib) == 1
