"""Whether the cudal1 packages installed on a device machine are the working tree's sources (run there, after the
carried wheels are installed): a wheel built before a source change runs the old code while the tree, the recipe and
the results page say the new one (2026-12-07: grpo.trl.num_iterations 4 was in the recipe, the carried policy wheel
predated the fix that makes it train every pass, and the GRPO arms trained one pass).

Compares every file of ``packages/*/src/cudal1/<package>/`` with the installed ``cudal1.<package>`` (found under
``--site``, default the first ``cudal1`` folder on ``sys.path`` outside the tree); packages that are not installed are
named and left out. Exit status 1 when a file differs or a source file is missing from the install, else 0.

    PYTHONPATH=/tmp/site python3 benchmarks/scripts/installed_matches_tree.py [--site /tmp/site]
"""

from __future__ import annotations

import argparse
import filecmp
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"__pycache__"}


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")
            if p.is_file() and not SKIP.intersection(p.relative_to(folder).parts) and p.suffix != ".pyc"}


def differences(tree: Path, site: Path) -> tuple[list[str], list[str]]:
    """(problems, packages not installed): ``tree`` is the repository root, ``site`` the folder holding the installed
    ``cudal1/``. A problem is a source file that differs from its installed copy or is missing from the install."""
    problems: list[str] = []
    absent: list[str] = []
    for src in sorted(tree.glob("packages/*/src/cudal1/*")):
        if not src.is_dir():
            continue
        installed = site / "cudal1" / src.name
        if not installed.is_dir():
            absent.append(src.name)
            continue
        have = _files(installed)
        for rel in sorted(_files(src)):
            if rel not in have:
                problems.append(f"cudal1/{src.name}/{rel}: in the tree, not installed")
            elif not filecmp.cmp(src / rel, installed / rel, shallow=False):
                problems.append(f"cudal1/{src.name}/{rel}: the installed copy differs from the tree")
    return problems, absent


def _default_site() -> Path | None:
    for entry in sys.path:
        p = Path(entry or ".").resolve()
        if (p / "cudal1").is_dir() and ROOT not in (p, *p.parents):
            return p
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", type=Path, default=None, help="the folder holding the installed cudal1/ (default: "
                    "the first on sys.path outside the tree)")
    a = ap.parse_args(argv)
    site = a.site or _default_site()
    if site is None:
        print("installed_matches_tree: no installed cudal1 on sys.path (set PYTHONPATH or --site)", file=sys.stderr)
        return 1
    problems, absent = differences(ROOT, site)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"installed_matches_tree: {len(problems)} file(s) of {site} are not the tree's: rebuild the wheels "
              "(uv build --all-packages) and carry them again", file=sys.stderr)
        return 1
    print(f"installed cudal1 packages match the tree ({site}; not installed: {', '.join(absent) or 'none'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
