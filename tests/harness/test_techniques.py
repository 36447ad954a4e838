"""Static technique tags (cudal1.harness.techniques): each tag on a source that has its mark, none on one
that does not, and the reference-relative tags."""

from __future__ import annotations

import pytest

from cudal1.harness.techniques import TECHNIQUES, detect_techniques, forward_calls

REF = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
       "        return torch.relu(x + 1).sum(dim=1)\n")
PLAIN = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x + 1).sum(dim=1)\n"

CASES = {
    "custom_cuda": 'src = "__global__ void k(float* x) {}"\nmod = load_inline(name="k", cpp_sources="", cuda_sources=src)',
    "triton": "import triton\n@triton.jit\ndef k(x_ptr):\n    pass\n",
    "cuda_graph": "g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    pass\n",
    "shared_memory": 'src = "__global__ void k() { __shared__ float buf[256]; }"',
    "warp_reduction": 'src = "v += __shfl_down_sync(0xffffffff, v, 16);"',
    "vectorized_access": 'src = "const float4* p = reinterpret_cast<const float4*>(x);"',
    "loop_unrolling": 'src = "#pragma unroll\\nfor (int i = 0; i < 4; ++i) {}"',
    "tensor_cores": "acc += tl.dot(a, b)\n",
    "memory_layout": "x = x.to(memory_format=torch.channels_last)\n",
    "reduced_precision": "with torch.autocast('cuda'):\n    y = x.half()\n",
    "torch_compile": "f = torch.compile(g)\n",
    "kernel_library": "from cudal1.kernelzoo import relu\n",
}


@pytest.mark.parametrize("tag", sorted(CASES))
def test_each_mark_gives_its_tag(tag):
    assert tag in detect_techniques(CASES[tag]), CASES[tag]


def test_every_tag_is_documented_and_a_plain_rewrite_has_none():
    assert set(CASES) | {"operator_fusion", "algebraic_rewrite"} == set(TECHNIQUES)
    assert detect_techniques(PLAIN) == ()
    assert detect_techniques(PLAIN, REF) == ()  # same operations as the reference: no rewrite


def test_fusion_and_rewrite_are_relative_to_the_reference():
    fused = "import triton\n@triton.jit\ndef k(x_ptr):\n    pass\n" + PLAIN
    assert detect_techniques(fused, REF) == ("triton", "operator_fusion")
    single_op_ref = REF.replace("torch.relu(x + 1).sum(dim=1)", "torch.relu(x)")
    assert "operator_fusion" not in detect_techniques(fused, single_op_ref)
    rewrite = PLAIN.replace("torch.relu(x + 1).sum(dim=1)", "(x + 1).clamp_min(0).sum(dim=1)")
    assert detect_techniques(rewrite, REF) == ("algebraic_rewrite",)
    assert detect_techniques("class ModelNew(: broken", REF) == ()


def test_forward_calls():
    assert forward_calls(REF, "Model") == {"relu", "sum"}
    assert forward_calls(REF, "ModelNew") is None and forward_calls("(", "Model") is None


def test_released_zoo_solutions_get_tags():
    """Real sources: every released solution names the zoo, so each is tagged kernel_library."""
    from cudal1.kernelzoo.solutions import available, solution_source

    names = sorted(available())[:5]
    assert names and all("kernel_library" in detect_techniques(solution_source(n)) for n in names)


# --------------------------------------------------------------------------------- library sources
def _fake_library(tmp_path, monkeypatch):
    """A package ``fakelib`` with ``fakelib.ops`` holding a Triton op that uses a CUDA helper module and
    a wrapper with layout / precision marks, re-exported by ``fakelib/__init__.py``."""
    root = tmp_path / "fakelib"
    (root / "ops").mkdir(parents=True)
    (root / "__init__.py").write_text("from .ops.scale import scale\n")
    (root / "ops" / "__init__.py").write_text("from .scale import scale\nfrom .other import other\n")
    (root / "ops" / "scale.py").write_text(
        "import triton\nfrom ._cuda import SRC\n@triton.jit\ndef k(x_ptr):\n    pass\n"
        "def scale(x):\n    return x.half().contiguous(memory_format=torch.channels_last)\n")
    (root / "ops" / "_cuda.py").write_text('SRC = "__global__ void k() { __shared__ float s[32]; }"\n')
    (root / "ops" / "other.py").write_text('SRC = "__shfl_down_sync(0xffffffff, v, 1)"\n')
    monkeypatch.syspath_prepend(str(tmp_path))


def test_library_sources_follows_imports_into_the_library_only(tmp_path, monkeypatch):
    from cudal1.harness.techniques import library_sources

    _fake_library(tmp_path, monkeypatch)
    src = "import torch\nfrom fakelib import scale\nclass ModelNew(torch.nn.Module):\n    pass\n"
    lib = library_sources(src, root="fakelib.ops")
    assert "@triton.jit" in lib and "__shared__" in lib  # the op and the helper it imports
    assert "__shfl_down_sync" not in lib  # an op the candidate does not import
    assert library_sources("import torch\n", root="fakelib.ops") == ""
    assert library_sources("from nowhere_installed import x\n", root="nowhere_installed") == ""


def test_library_adds_kernel_tags_only(tmp_path, monkeypatch):
    from cudal1.harness.techniques import library_sources

    _fake_library(tmp_path, monkeypatch)
    src = "import torch\nfrom fakelib.ops.scale import scale\n"
    tags = detect_techniques(src, library=library_sources(src, root="fakelib.ops"))
    assert {"triton", "custom_cuda", "shared_memory"} <= set(tags)
    # the wrapper's .half() and channels_last are the library's choices, not the candidate's
    assert "reduced_precision" not in tags and "memory_layout" not in tags
    assert detect_techniques(src) == ()


def test_library_digest_follows_the_imported_library_code_only(tmp_path, monkeypatch):
    import sys

    from cudal1.harness.techniques import library_digest

    for name in [m for m in sys.modules if m == "fakelib" or m.startswith("fakelib.")]:
        monkeypatch.delitem(sys.modules, name)  # another test's fakelib (another tmp_path) was imported
    _fake_library(tmp_path, monkeypatch)
    src = "import torch\nfrom fakelib import scale\nclass ModelNew(torch.nn.Module):\n    pass\n"
    before = library_digest(src, root="fakelib.ops")
    assert before and library_digest("import torch\n", root="fakelib.ops") == ""
    (tmp_path / "fakelib" / "ops" / "other.py").write_text("SRC = 'changed, but not imported'\n")
    assert library_digest(src, root="fakelib.ops") == before
    helper = tmp_path / "fakelib" / "ops" / "_cuda.py"  # imported by the op the source imports
    helper.write_text(helper.read_text() + "TILE = 16\n")
    assert library_digest(src, root="fakelib.ops") != before


def test_library_digest_covers_the_zoo_blocks_a_released_solution_imports():
    """The zoo's kernel root is ``cudal1.kernelzoo.ops``; a solution built on ``cudal1.kernelzoo.blocks`` must
    still get a digest of that code (else a changed block would leave its stale result read back)."""
    from cudal1.harness.techniques import library_digest
    from cudal1.kernelzoo.solutions import available

    users = [p for p in available("kernelbench-v0").values() if "from cudal1.kernelzoo.blocks." in p.read_text()]
    assert users
    src = users[0].read_text()
    digest = library_digest(src)
    assert digest and digest != library_digest(src.replace("from cudal1.kernelzoo.blocks.", "from nowhere_blocks."))
