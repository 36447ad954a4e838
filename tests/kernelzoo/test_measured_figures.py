"""``kernelbench_v0/measured.json`` (the set's measured figures, ``cudal1.kernelzoo.measured``) against the stores it
names, and the set's docstrings: they state intent and design and point to the data file, with no measured figure
of their own (issue 44, item 5)."""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

from cudal1.kernelzoo.measured import code_identity, load, measured, measured_path
from cudal1.kernelzoo.solutions import KERNELBENCH_V0, available

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT / "benchmarks/results/2026-12-05-kernelbench-v0-docstring-figures.md"
POINTER = "Measured figures: ``kernelbench_v0/measured.json``"
#: what a measured figure looks like in prose (paths, which name dated result pages, are left out first)
FIGURES = {
    "a speedup": r"(?<![\w/.-])\d+(?:\.\d+)?\s?[x×](?!\w)",
    "a time": r"\d\s*(?:ms|us|µs|ns)\b",
    "a date": r"\b20\d\d-\d\d-\d\d\b",
    "a rate": r"\d\s*(?:T|G|M)?(?:FLOP|FMA|B|iB)/s\b",
    "a GPU's name": r"\b(?:H100|H200|A100)\b",
}
needs_results = pytest.mark.skipif(not (ROOT / "benchmarks/results").is_dir(),
                                   reason="needs the repository's benchmarks/results")


def figures_in(text: str) -> list[str]:
    """The measured figures ``text`` states, as ``what: token``."""
    prose = re.sub(r"\S*/\S*", " ", text)
    return [f"{what}: {m.group(0)!r}" for what, pat in FIGURES.items() for m in re.finditer(pat, prose)]


def _script():
    spec = importlib.util.spec_from_file_location("set_figures", ROOT / "benchmarks/scripts/set_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_results
def test_figures_match_their_stores(tmp_path, capsys):
    """Each set's committed file is what set_figures.py reads from the stores for the current code; a copy with one
    figure changed is reported out of date and left as it was."""
    script = _script()
    assert script.main([]) == 0, capsys.readouterr()
    assert script.main(["--set", "kernelzoo"]) == 0, capsys.readouterr()
    assert script.main(["--set", "nope"]) == 2 and "no solution set 'nope'" in capsys.readouterr().err
    doc = json.loads(measured_path().read_text(encoding="utf-8"))
    doc["tasks"]["12_Matmul_with_diagonal_matrices_"]["h100-eager"]["speedup"] = 99.0
    forged = tmp_path / "measured.json"
    forged.write_text(json.dumps(doc), encoding="utf-8")
    before = forged.read_text(encoding="utf-8")
    assert script.main(["--out", str(forged)]) == 1
    assert "12_Matmul_with_diagonal_matrices_" in capsys.readouterr().out
    assert forged.read_text(encoding="utf-8") == before


@needs_results
def test_a_code_edit_leaves_the_figures_behind_and_a_docstring_edit_keeps_them(tmp_path, capsys):
    files = tmp_path / "set"
    files.mkdir()
    names = ("12_Matmul_with_diagonal_matrices_", "23_Conv3d_GroupNorm_Mean")
    for n in names:
        shutil.copy(KERNELBENCH_V0 / f"{n}.py", files / f"{n}.py")
    doc_only, code = files / f"{names[0]}.py", files / f"{names[1]}.py"
    doc_only.write_text(doc_only.read_text().replace('"""', '"""Rewritten docstring.\n\n', 1))
    code.write_text(code.read_text() + "\n_EDITED = 1\n")
    out = tmp_path / "measured.json"
    shutil.copy(measured_path(), out)
    assert _script().main(["--set-dir", str(files), "--out", str(out), "--write"]) == 0, capsys.readouterr()
    new, committed = load(out), measured()
    assert new.figure(names[0], "h100-eager", path=doc_only) == committed.figure(names[0], "h100-eager") is not None
    assert new.figures[names[1]] == {} and new.figure(names[1], "h100-eager", path=code) is None
    assert committed.figure(names[1], "h100-eager", path=code) is None  # the committed figure is for the old code
    assert set(new.code) == set(names)


def test_every_file_has_its_release_figure():
    """Each file of the set was measured on the release's run as it is now: an improvement, or a task the harness
    found degenerate (left out of every average)."""
    m = measured()
    assert m.runs["h100-eager"].gpu == "NVIDIA H100 80GB HBM3" and m.runs["h100-eager"].baseline == "eager"
    for name, path in available("kernelbench-v0").items():
        fig = m.figure(name, "h100-eager", path=path)
        assert fig is not None, f"{name}: no h100-eager figure for its current code (run set_figures.py)"
        assert fig.improves or "task_degenerate" in fig.flags, (name, fig)
        assert fig.ci is not None and fig.ci[0] - 0.01 <= (fig.speedup or 0) <= fig.ci[1] + 0.01, (name, fig)  # rounded


def test_every_released_zoo_solution_has_its_figures():
    """The built-in tasks' released solutions (set ``kernelzoo``): each measured as it is now against all five
    baselines of the zoo's report run, verified."""
    m = measured("kernelzoo")
    assert len(m.runs) == 5 and {r.gpu for r in m.runs.values()} == {"NVIDIA H100 80GB HBM3"}
    for name, path in available("kernelzoo").items():
        for run in m.runs:
            fig = m.figure(name, run, path=path)
            assert fig is not None and fig.verified, (name, run, fig)


@pytest.mark.parametrize("path", [*available("kernelbench-v0").values(), *sorted((KERNELBENCH_V0 / "pending").glob(
    "*.py"))], ids=lambda p: p.stem)
def test_docstrings_state_design_and_point_to_the_figures(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert POINTER in doc, f"{path.name}: its docstring does not point to measured.json"
    assert figures_in(doc) == [], f"{path.name}: measured figures belong in measured.json: {figures_in(doc)}"


@needs_results
def test_the_figure_rule_catches_the_archived_docstrings():
    """The twin of the test above: the docstrings as they were before the figures moved out (archived verbatim) are
    caught, every one of them; the pointer sentence itself is not."""
    sections = re.findall(r"^## (\S+)\n\n```text\n(.*?)\n```", ARCHIVE.read_text(encoding="utf-8"), re.S | re.M)
    assert len(sections) == 210
    assert all(figures_in(text) for _, text in sections), [n for n, t in sections if not figures_in(t)]
    assert figures_in("1.42x, 95% CI [1.36, 1.46]; 0.37 ms; 2026-11-25; 3.3 TB/s; on an H100") and not figures_in(
        "7x7 conv, 128 MiB of traffic, 137 GFLOP; " + POINTER + " benchmarks/results/2026-12-05-x-h100.md")


def test_load_names_what_is_malformed(tmp_path):
    bad = tmp_path / "measured.json"
    run = {"gpu": "g", "baseline": "eager", "store": "s", "page": "p"}
    fig = {"measured": "2026-11-25T15:36", "status": "ok", "speedup": 2.0, "ci": [1.9, 2.1], "flags": [],
           "verified": True, "improves": True}
    bad.write_text(json.dumps({"format": 1, "runs": {"r": run}, "tasks": {"1_A": {"code": "c", "r": fig}}}))
    assert load(bad).figures["1_A"]["r"].speedup == 2.0
    for doc, words in [({"format": 2}, "format 2"),
                       ({"format": 1, "runs": {"r": {"gpu": "g"}}}, "run 'r'"),
                       ({"format": 1, "runs": {"r": run}, "tasks": {"1_A": {"r": fig}}}, "task '1_A'"),
                       ({"format": 1, "runs": {"r": run}, "tasks": {"1_A": {"code": "c", "r": {"status": "ok"}}}},
                        "task '1_A'"),
                       ({"format": 1, "runs": {"r": run}, "tasks": {"1_A": {"code": "c", "q": fig}}}, "'q'")]:
        bad.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match=words):
            load(bad)
    with pytest.raises(KeyError, match="no run 'q'"):
        measured().figure("23_Conv3d_GroupNorm_Mean", "q")


def test_code_identity_ignores_docstrings_comments_and_layout_only():
    src = 'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    assert code_identity(src) == code_identity('"""Module."""\ndef f(x):\n\n    return (x + 1)\n')
    assert code_identity(src) != code_identity(src.replace("x + 1", "x + 2"))
    with pytest.raises(SyntaxError):
        code_identity("def f(:\n")


ZOO = KERNELBENCH_V0.parent


@pytest.mark.parametrize("path", sorted(p for p in ZOO.rglob("*.py") if KERNELBENCH_V0 not in p.parents),
                         ids=lambda p: str(p.relative_to(ZOO)))
def test_zoo_library_docstrings_state_no_figures(path):
    """The zoo's other modules (ops, blocks, the built-in tasks' released solutions, launch helpers): every docstring
    (module, class, function) states design; the figures are on the result pages they link (the docstrings as they
    were: benchmarks/results/2026-12-05-kernelzoo-docstring-figures.md)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [f"{getattr(n, 'name', 'module')}: {f}" for n in ast.walk(tree)
             if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
             for f in figures_in(ast.get_docstring(n) or "")]
    assert found == [], f"{path.name}: measured figures belong on a result page: {found}"
