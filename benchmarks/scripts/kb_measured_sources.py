"""Write, for every ``kernelbench-v0`` solution file, the exact source the results store measured for it (the
latest stored candidate whose code equals the file's code, docstrings aside; see kb_release_table.py) into
a folder, so that ``apps/evaluate.py --report-only --set kernelbench-v0=FOLDER`` renders every measured solution
from the store (the store keys a pair by the whole source, and docstrings were edited after measuring).
``--baseline compile`` writes the sources measured against that baseline instead, for the report's
``--baseline-set compile:kernelbench-v0=FOLDER`` (a later docstring of the same code may have been measured there).

    python benchmarks/scripts/kb_measured_sources.py --store STORE --out /tmp/measured [--baseline compile]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from kb_release_table import latest_records, measured_records  # noqa: E402

from cudal1.kernelzoo.solutions import available  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--baseline", default="eager", help="the baseline whose measured sources are written")
    args = ap.parse_args()
    rows, missing = measured_records(latest_records(args.store, args.baseline), available("kernelbench-v0"))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, record in rows:
        (args.out / f"{name}.py").write_text(record["_source"], encoding="utf-8")
    print(f"{len(rows)} sources measured against {args.baseline} written to {args.out}; no stored result for: {', '.join(missing) or 'none'}")


if __name__ == "__main__":
    main()
