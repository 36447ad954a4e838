"""`uv build` gives a cudal1-kernelzoo wheel whose only cudal1 dependency is cudal1-harness; both wheels
install into a fresh virtual environment without the rest of the workspace, and the ops run on CPU
tensors there."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
uv = shutil.which("uv")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(uv is None, reason="needs uv")]


def run(*cmd: str, cwd: Path = ROOT) -> str:
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def test_wheels_install_alone_and_ops_run(tmp_path):
    dist = tmp_path / "dist"
    run(uv, "build", "--package", "cudal1-harness", "--wheel", "--out-dir", str(dist))
    run(uv, "build", "--package", "cudal1-kernelzoo", "--wheel", "--out-dir", str(dist))
    zoo = next(dist.glob("cudal1_kernelzoo-*.whl"))
    with zipfile.ZipFile(zoo) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode()
    requires = [ln.split(":", 1)[1].strip() for ln in meta.splitlines() if ln.startswith("Requires-Dist:")]
    assert [r for r in requires if r.startswith("cudal1")] == ["cudal1-harness"], requires
    venv = tmp_path / "venv"
    run(uv, "venv", "--python", sys.executable, str(venv))
    py = venv / "bin" / "python"
    run(uv, "pip", "install", "--python", str(py), *map(str, sorted(dist.glob("*.whl"))))
    out = run(str(py), "-c", (
        "import torch, cudal1.kernelzoo as k, cudal1.harness as h\n"
        "x = torch.randn(8, 33)\n"
        "assert torch.equal(k.relu(x), torch.relu(x))\n"
        "assert torch.allclose(k.softmax(x), torch.softmax(x, -1))\n"
        "w, b = torch.randn(33), torch.randn(33)\n"
        "assert torch.allclose(k.layer_norm(x, w, b), torch.nn.functional.layer_norm(x, (33,), w, b))\n"
        "import json, importlib.metadata as md\n"
        "ep = {e.name: e for e in md.entry_points(group='cudal1.op_menus')}['kernelzoo']\n"
        "assert len(json.loads(ep.load()().read_text())['ops']) > 40\n"
        "import importlib.util\n"
        "print('policy' if importlib.util.find_spec('cudal1.policy') else 'alone', len(h.load_suite('builtin')))\n"
    ), cwd=tmp_path)
    assert out.split() == ["alone", str(len(list((ROOT / "packages/harness/src/cudal1/harness/builtin_tasks").glob("level*/*.py"))))]
