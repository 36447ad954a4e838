"""The evaluation report as one self-contained HTML page: the tables of :mod:`cudal1.harness.report` and
plots made with matplotlib (PNG images embedded as ``data:`` URLs; no file, network or script from
elsewhere is needed to read it).

Plots: the speedup distribution per baseline and set (box plot over ok results, every task a dot), the
speedup of every task per baseline (bars, one per set), and a roofline scatter (arithmetic intensity of the
reference's work against the fraction of the roofline a run attains; the reference and each set) when the
report has device peaks.

matplotlib comes with the ``report`` extra (``pip install cudal1-harness[report]``). The figures are drawn
with matplotlib's object API (``Figure`` + Agg canvas), so no pyplot state or display is touched.

A small inline script records on the page's ``<body>`` how many plots the browser decoded
(``data-plots`` and ``data-plots-rendered``) so that a headless browser test can check the page renders.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Mapping
from typing import Any

from .report import describe_setup, table_rows

__all__ = ["figure_png", "plot_distribution", "plot_per_task", "plot_roofline", "render_html"]

_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def _figure(width_in: float, height_in: float) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("the HTML report's plots need matplotlib: pip install 'cudal1-harness[report]'") from e
    return Figure(figsize=(width_in, height_in), dpi=100, layout="constrained")


def figure_png(fig: Any) -> bytes:
    """PNG bytes of a matplotlib Figure (Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _speedups(report: Mapping[str, Any], s: str, b: str) -> list[tuple[str, float]]:
    out = []
    for row in report["tasks"]:
        r = row["results"].get(f"{s}|{b}")
        if r and r["status"] == "ok" and r["speedup"]:
            out.append((row["task"], float(r["speedup"])))
    return out


def _log2_axis(ax: Any, axis: str) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator

    target = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log", base=2)
    target.set_major_locator(LogLocator(base=2))
    target.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}x"))


def plot_distribution(report: Mapping[str, Any]) -> Any:
    """Box plot of ok speedups per baseline (groups) and set (colours), every task a dot; log2 axis; under each
    baseline the number of ok results per set."""
    sets, baselines = report["sets"], report["baselines"]
    fig = _figure(max(6.0, 1.6 * len(baselines) * max(1, len(sets)) + 2), 4.2)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(sets))
    for j, s in enumerate(sets):
        color = _COLORS[j % len(_COLORS)]
        data, pos = [], []
        for i, b in enumerate(baselines):
            sp = [v for _, v in _speedups(report, s, b)]
            if sp:
                data.append(sp)
                pos.append(i + (j - (len(sets) - 1) / 2) * width)
        if not data:
            continue
        ax.boxplot(data, positions=pos, widths=width * 0.8, patch_artist=True, showfliers=False,
                   boxprops={"facecolor": color, "alpha": 0.35}, medianprops={"color": color})
        for p, sp in zip(pos, data, strict=True):
            n = len(sp)
            xs = [p + width * 0.3 * ((k % 7) / 6 - 0.5) for k in range(n)]
            ax.scatter(xs, sp, s=10, color=color, zorder=3, label=s if p == pos[0] else None)
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    counts = ["/".join(str(len(_speedups(report, s, b))) for s in sets) for b in baselines]
    ax.set_xticks(range(len(baselines)), [f"{b}\nn={n}" for b, n in zip(baselines, counts, strict=True)])
    _log2_axis(ax, "y")
    ax.set_ylabel("speedup (x, log scale)")
    ax.set_title("Speedup distribution (ok results)")
    if len(sets) > 1:
        ax.legend(loc="best")
    return fig


def plot_per_task(report: Mapping[str, Any], baseline: str) -> Any:
    """Horizontal bars: each task's speedup over ``baseline``, one bar per set; failures marked by status."""
    sets, rows = report["sets"], report["tasks"]
    h = 0.8 / max(1, len(sets))
    fig = _figure(8.0, max(2.5, 0.22 * len(rows) * max(1, len(sets)) ** 0.5 + 1.2))
    ax = fig.add_subplot()
    ok_vals = [v for s in sets for _, v in _speedups(report, s, baseline)] or [1.0]
    lo = min(min(ok_vals), 1.0) / 1.5
    for j, s in enumerate(sets):
        color = _COLORS[j % len(_COLORS)]
        ys, widths, fails = [], [], []
        for i, row in enumerate(rows):
            r = row["results"].get(f"{s}|{baseline}")
            y = i + (j - (len(sets) - 1) / 2) * h
            if r is None:
                continue
            if r["status"] == "ok" and r["speedup"]:
                ys.append(y)
                widths.append(float(r["speedup"]))
            else:
                fails.append((y, r["status"]))
        ax.barh(ys, [w - lo for w in widths], left=lo, height=h * 0.9, color=color, label=s)
        for y, status in fails:
            ax.text(lo * 1.05, y, status, va="center", fontsize=6, color="#b00020")
    ax.axvline(1.0, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [f"L{r['level']} {r['task']}" if r["level"] is not None else r["task"]
                                     for r in rows], fontsize=6)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(left=lo)
    _log2_axis(ax, "x")
    ax.set_xlabel(f"speedup over {baseline} (x, log scale)")
    ax.set_title(f"Per task, against {baseline}")
    if len(sets) > 1:
        ax.legend(loc="lower right")
    return fig


def plot_roofline(report: Mapping[str, Any]) -> Any | None:
    """Scatter: x = arithmetic intensity of the reference's work (FLOP/byte; tasks without matmul/conv FLOPs
    on the left edge), y = fraction of the roofline attained, for the reference (grey) and each set (primary
    baseline), each task's pair joined by a line. None when the report has no device peaks."""
    peaks = report.get("peaks")
    if not peaks:
        return None
    p = report["primary_baseline"]
    pts = [r for r in report["tasks"] if r.get("flops") is not None and r.get("ideal_bytes")]
    if not pts:
        return None
    intens = {r["task"]: r["flops"] / r["ideal_bytes"] for r in pts}
    positive = [v for v in intens.values() if v > 0]
    floor = (min(positive) / 8) if positive else 0.01
    fig = _figure(7.5, 4.8)
    ax = fig.add_subplot()
    ridge = peaks["fp32_flop_per_s"] / peaks["copy_bytes_per_s"]
    plotted = False
    for row in pts:
        x = intens[row["task"]] if intens[row["task"]] > 0 else floor
        ref = next((r["ref_roofline"] for k, r in row["results"].items() if k.endswith(f"|{p}") and r["ref_roofline"]),
                   None)
        if ref:
            ax.scatter([x], [ref], s=14, facecolors="none", edgecolors="grey", zorder=2,
                       label="reference" if not plotted else None)
        for j, s in enumerate(report["sets"]):
            r = row["results"].get(f"{s}|{p}")
            if r and r.get("cand_roofline"):
                ax.scatter([x], [r["cand_roofline"]], s=14, color=_COLORS[j % len(_COLORS)], zorder=3,
                           label=s if not plotted else None)
                if ref:
                    ax.plot([x, x], [ref, r["cand_roofline"]], color=_COLORS[j % len(_COLORS)], lw=0.5, alpha=0.6)
        plotted = plotted or bool(ref)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.axvline(ridge, color="#888", lw=0.8, ls=":")
    ax.text(ridge, ax.get_ylim()[0], f" ridge {ridge:.0f} FLOP/B", fontsize=7, va="bottom")
    ax.axvline(floor * 1.5, color="#ccc", lw=0.5)
    ax.set_xlabel("arithmetic intensity of the reference (FLOP/byte; left edge: no matmul/conv FLOPs)")
    ax.set_ylabel(f"fraction of the roofline attained ({p})")
    ax.set_title(f"Roofline on {peaks['name']}: {peaks['copy_bytes_per_s'] / 1e9:.0f} GB/s, "
                 f"{peaks['fp32_flop_per_s'] / 1e12:.1f} TFLOP/s fp32")
    ax.legend(loc="best", fontsize=7)
    return fig


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { margin: 1em 0 2em; } img.plot { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 13px; color: #555; }
"""

_CHECK_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.querySelectorAll('img.plot'));
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0; });
  document.body.setAttribute('data-plots', String(imgs.length));
  document.body.setAttribute('data-plots-rendered', String(ok.length));
});
"""


def _img(fig: Any, alt: str, caption: str) -> str:
    data = base64.b64encode(figure_png(fig)).decode("ascii")
    return (f'<figure><img class="plot" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(report: Mapping[str, Any]) -> str:
    """The whole page (see the module docstring)."""
    parts = [f"<h1>{html.escape(report['title'])}</h1>"]
    parts += [f"<p>{html.escape(line)}</p>" for line in describe_setup(report)]
    parts.append("<h2>Plots</h2>")
    parts.append(_img(plot_distribution(report), "speedup distribution",
                      "Speedup distribution per baseline (box: p25-p75 with median; dots: tasks; dashed: 1x)."))
    roof = plot_roofline(report)
    if roof is not None:
        parts.append(_img(roof, "roofline scatter", "Fraction of the roofline attained against arithmetic "
                          "intensity; grey circles: the reference, filled: each set; dotted: the ridge point."))
    else:
        parts.append("<p>No roofline plot: the report has no measured device peaks.</p>")
    for b in report["baselines"]:
        parts.append(_img(plot_per_task(report, b), f"per-task speedups over {b}",
                          f"Each task's speedup over {b}; a status in red where the candidate failed."))
    for title, header, rows in table_rows(report):
        parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(_table(header, rows) if rows else "<p>(none)</p>")
    title = html.escape(report["title"])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title><style>{_CSS}</style><script>{_CHECK_SCRIPT}</script></head>"
            f"<body>{''.join(parts)}</body></html>\n")
