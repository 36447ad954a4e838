"""A device call refuses wheels built before the tree's last source change (benchmarks/scripts/installed_matches_tree.py):
on 2026-12-07 a recipe's grpo.trl.num_iterations ran on a policy wheel that predated the fix that makes it count."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("installed_matches_tree",
                                              ROOT / "benchmarks/scripts/installed_matches_tree.py")
imt = importlib.util.module_from_spec(spec)
sys.modules["installed_matches_tree"] = imt
spec.loader.exec_module(imt)


def _tree(root: Path) -> None:
    for pkg, body in (("policy", "x = 1\n"), ("harness", "y = 2\n")):
        d = root / "packages" / pkg / "src" / "cudal1" / pkg
        d.mkdir(parents=True)
        (d / "__init__.py").write_text(body)
        (d / "__pycache__").mkdir()
        (d / "__pycache__" / "stale.cpython-312.pyc").write_bytes(b"\0")


def _install(tree: Path, site: Path, pkgs: tuple[str, ...]) -> None:
    for pkg in pkgs:
        shutil.copytree(tree / "packages" / pkg / "src" / "cudal1" / pkg, site / "cudal1" / pkg,
                        ignore=shutil.ignore_patterns("__pycache__"))


def test_an_install_of_the_trees_sources_passes_and_names_what_is_not_installed(tmp_path):
    _tree(tmp_path / "repo")
    _install(tmp_path / "repo", tmp_path / "site", ("policy",))
    assert imt.differences(tmp_path / "repo", tmp_path / "site") == ([], ["harness"])


def test_a_stale_or_incomplete_install_is_named_file_by_file(tmp_path):
    _tree(tmp_path / "repo")
    _install(tmp_path / "repo", tmp_path / "site", ("policy", "harness"))
    (tmp_path / "site" / "cudal1" / "policy" / "__init__.py").write_text("x = 0\n")  # built before the change
    new = tmp_path / "repo" / "packages" / "harness" / "src" / "cudal1" / "harness" / "added.py"
    new.write_text("z = 3\n")  # a module added since the wheel was built
    problems, absent = imt.differences(tmp_path / "repo", tmp_path / "site")
    assert absent == []
    assert problems == ["cudal1/harness/added.py: in the tree, not installed",
                        "cudal1/policy/__init__.py: the installed copy differs from the tree"]


def test_the_script_exits_non_zero_on_a_stale_install(tmp_path, capsys):
    _install(ROOT, tmp_path / "site", ("rewards",))
    assert imt.main(["--site", str(tmp_path / "site")]) == 0
    (tmp_path / "site" / "cudal1" / "rewards" / "__init__.py").write_text("# old\n")
    assert imt.main(["--site", str(tmp_path / "site")]) == 1
    assert "rebuild the wheels" in capsys.readouterr().err
