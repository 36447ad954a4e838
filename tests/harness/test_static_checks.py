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
])
def test_each_flag_fires(snippet, flag):
    rep = analyse(snippet)
    assert flag in rep.flags, rep
    assert rep.evidence[flag] and rep.evidence[flag][0].startswith("line ")


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

    from cudal1.harness.integrity import classify_kernels
    from cudal1.harness.static_checks import imported_modules, library_kernels

    if importlib.util.find_spec("cudal1.kernelzoo") is None:
        pytest.skip("cudal1-kernelzoo is not installed")
    src = "import torch\nfrom cudal1.kernelzoo.ops.relu import relu\n"
    assert "cudal1.kernelzoo.ops.relu" in imported_modules(src)
    names = library_kernels(src)
    assert "_relu_kernel" in names and "zoo_softmax_f32" in names  # Triton and CUDA C kernels of the zoo
    assert library_kernels("import torch\n") == []
    lib, custom = classify_kernels(["_relu_kernel", "void at::native::vectorized_elementwise_kernel<4>"], names)
    assert custom == ["_relu_kernel"] and len(lib) == 1
