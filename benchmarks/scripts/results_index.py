"""benchmarks/README.md's index of committed results, made from the result files themselves (issue 44).

    uv run python benchmarks/scripts/results_index.py            # rewrite the index between its markers
    uv run python benchmarks/scripts/results_index.py --check     # exit 1 when the index is not current

One row per result page (``benchmarks/results/*.md``): its date and title, the hardware its name and text give,
the scripts and apps it names (what made it), the first command it quotes (how to reproduce it), and what the
files beside it weigh (its folder and the files sharing its name). A second table lists the scripts no result
names. ``tests/layout/test_results_index.py`` checks that the committed index is current.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
SCRIPTS = ROOT / "benchmarks" / "scripts"
PROBES = ROOT / "benchmarks" / "probes"  #: one-off investigations, apart from the scripts that make release numbers
README = ROOT / "benchmarks" / "README.md"
BEGIN, END = "<!-- results index: begin (benchmarks/scripts/results_index.py) -->", "<!-- results index: end -->"
_FILE = re.compile(r"[A-Za-z0-9_]+\.(?:py|sh)\b")
_COMMAND = re.compile(r"`((?:[A-Z_][A-Z0-9_]*=\S+ )*(?:uv run|python3?|bash|accelerate launch) [^`]*)`")
APPS = ROOT / "apps"
_HARDWARE = (("h200x2", "2x H200"), ("h200", "H200"), ("h100", "H100"), ("cpu", "2-core CPU"))


def hardware(name: str) -> str:
    """What the file's name says it ran on (the page itself names the GPU and versions)."""
    for key, label in _HARDWARE:
        if re.search(rf"-{key}(?:-|$)", name):
            return label
    return "see the page"


def weight(page: Path) -> int:
    """Bytes of the page's companions: its folder and every file whose name starts with the page's stem."""
    stem = page.stem
    total = 0
    for p in RESULTS.iterdir():
        if p == page or not p.name.startswith(stem):
            continue
        total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size
    return total


def _size(n: int) -> str:
    return "-" if n == 0 else f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB" if n >= 1e3 else f"{n} B"


def rows() -> list[dict[str, str]]:
    out = []
    for page in sorted(RESULTS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        title = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("#")), page.stem)
        scripts = sorted({f"benchmarks/{d.name}/{n}" for n in _FILE.findall(text) for d in (SCRIPTS, PROBES)
                          if (d / n).is_file()} | {f"apps/{n}" for n in _FILE.findall(text) if (APPS / n).is_file()})
        cmd = next(iter(_COMMAND.findall(text)), "")
        out.append({"file": page.name, "date": page.name[:10], "title": title.replace("|", "/"),
                    "hardware": hardware(page.stem), "scripts": scripts, "command": cmd.replace("|", "\\|"),
                    "weight": _size(weight(page))})
    return out


def unnamed_scripts(named: set[str]) -> list[str]:
    """Scripts of benchmarks/scripts and benchmarks/probes that no result page names (directly), as paths from
    benchmarks/."""
    return sorted(f"{d.name}/{p.name}" for d in (SCRIPTS, PROBES) for p in d.iterdir()
                  if p.suffix in (".py", ".sh") and f"benchmarks/{d.name}/{p.name}" not in named)


def users_of(script: str) -> list[str]:
    """Files that use ``script`` though no result page names it: other scripts, tests and package modules that
    name it (its file name, or its module name where a script imports it), sorted."""
    pattern = re.compile(rf"\b{re.escape(Path(script).stem)}\b")
    return sorted(path for path, text in _code_files()
                  if Path(path).name != Path(script).name and pattern.search(text))


@functools.lru_cache(maxsize=1)
def _code_files() -> tuple[tuple[str, str], ...]:
    """(path from the root, text) of every .py and .sh file of benchmarks/scripts, benchmarks/probes, tests and
    packages, read once for all the scripts :func:`users_of` is asked about."""
    return tuple((str(f.relative_to(ROOT)), f.read_text(encoding="utf-8", errors="replace"))
                 for base in (SCRIPTS, PROBES, ROOT / "tests", ROOT / "packages") for f in base.rglob("*")
                 if f.suffix in (".py", ".sh") and f.is_file())


def render() -> str:
    rs = rows()
    lines = [BEGIN, "", f"{len(rs)} result pages, oldest first; the weight is that of the files beside each page.", "",
             "| date | page | hardware | made by (scripts the page names) | first command it quotes | weight |",
             "|---|---|---|---|---|---|"]
    named: set[str] = set()
    for r in rs:
        named.update(r["scripts"])
        made = ", ".join(f"`{s}`" for s in r["scripts"][:4]) + (" ..." if len(r["scripts"]) > 4 else "") or "-"
        cmd = f"`{r['command']}`" if r["command"] else "-"
        lines.append(f"| {r['date']} | [{r['title']}](results/{r['file']}) | {r['hardware']} | {made} | {cmd} | "
                     f"{r['weight']} |")
    left = unnamed_scripts(named)
    kept = []
    for s in left:
        users = users_of(s)
        kept.append(f"`{s}` ({'used by ' + ', '.join(f'`{u}`' for u in users[:3]) if users else 'used by nothing'})")
    lines += ["", f"Scripts no result page names ({len(left)}), kept because something uses them: "
              + ("; ".join(kept) or "none") + ".", "", END]
    return "\n".join(lines)


def current(text: str) -> str:
    """``text`` (benchmarks/README.md) with its index replaced by a fresh one."""
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{README} has no index markers; add {BEGIN!r} and {END!r}")
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + render() + text[b:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed index is not current")
    a = ap.parse_args()
    text = README.read_text(encoding="utf-8")
    new = current(text)
    if a.check:
        if new != text:
            print("benchmarks/README.md's index is not current: run uv run python benchmarks/scripts/results_index.py",
                  file=sys.stderr)
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
