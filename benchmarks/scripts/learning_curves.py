"""The learning experiment's training curves (issue 42, item 5): per GRPO round, on train tasks, the mean reward the
completions *earned* and the rate of verified improvements, for the ``grpo`` arm and its shuffled-reward control,
pooled over seeds, with bootstrap 95% CIs; a plain-SVG plot of both; and the train-side finding, which says GRPO
learnt on its train tasks only when, at the last round both arms reached, both of its intervals lie above the
shuffled arm's.

Read from each arm's ``completions.jsonl`` (every completion the pipeline drew, cudal1.policy.rewarding): rows of
stage ``grpo:<round>``; the earned reward is ``true_reward`` where the control paid a shuffled one, else ``reward``;
a verified improvement is the row's ``improves`` (the harness's one rule, cudal1.harness.flags.improves). A *new*
improvement is one whose code (by :func:`cudal1.harness.novelty.source_identity`: names, docstrings, comments,
imports and layout aside) is no verified answer of the same task in an earlier stage of the same folder, and whose
behaviour (:func:`cudal1.harness.novelty.behaviour_identity`, kept in the folder's ``results.sqlite`` since
2026-12-07: the same operators and kernels) is none either: a GRPO prompt shows earlier verified answers of its task
as exemplars, and handing one back, even with a line rewritten, is the prompt's work, not something the policy made
(2026-12-07: every verified answer of learning-v2's GRPO arms in round 3 was such a copy).

The bootstrap resamples prompt groups (a seed's prompt and its completions), not single completions: the completions
of one prompt share the prompt and the policy state, so resampling them one by one would understate the spread.

    uv run python benchmarks/scripts/learning_curves.py DIR --seeds 0,1,2   # DIR/learning-curves.svg, tables printed
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CURVE_ARMS = ("grpo", "shuffled")
COLOURS = {"grpo": "#1f77b4", "shuffled": "#d62728"}


def behaviours(run: Path) -> dict[str, str]:
    """Candidate source (stripped) -> behaviour of every result in the run folder's ``results.sqlite`` that has one
    (results measured before the harness kept it have none; an absent store gives nothing)."""
    import sqlite3

    f = run / "results.sqlite"
    if not f.exists():
        return {}
    out: dict[str, str] = {}
    db = sqlite3.connect(f"file:{f}?mode=ro", uri=True)  # raw, as completion_outcomes.stored_verdicts reads it
    try:
        for src, record in db.execute("SELECT candidate_source, record FROM results ORDER BY id"):
            b = (json.loads(record).get("integrity") or {}).get("behaviour")
            if src and isinstance(b, str):
                out[src.strip()] = b  # stripped: a completion's code block is read without its outer blank lines
    finally:
        db.close()
    return out


def code_keys(task: str, text: str, by_source: dict[str, str]) -> set[tuple[str, str]]:
    """What identifies a completion's code for "new": ``(task, source identity)`` by
    :func:`cudal1.harness.novelty.source_identity`, the one the GRPO reward's shown-copy rule uses (code that does not
    parse is keyed by its text), and, where the store has it, ``("behaviour:" + task, behaviour)`` (``by_source``:
    :func:`behaviours`); empty for a completion without code. Two completions repeat one another when their keys meet
    (``completion_outcomes.py`` counts so too)."""
    from cudal1.harness.novelty import source_identity
    from cudal1.prompts.parsing import ResponseFormatError, extract_code

    try:
        code = extract_code(text)
    except ResponseFormatError:
        return set()
    if not code:
        return set()
    b = by_source.get(code.strip())
    return {(task, source_identity(code) or code)} | ({("behaviour:" + task, b)} if b else set())


def training_rows(run: Path) -> list[dict[str, Any]]:
    """The GRPO completions of one arm's run folder: ``round``, ``group`` (its prompt), ``task``, ``reward``
    (earned), ``improves``, ``new_improvement`` (an improvement whose code, by source or by behaviour, is no
    verified answer of its task in an earlier stage of the folder, the parent stages a forked arm copied included)
    and ``shown_copy`` (the reward found it handing back an exemplar its prompt showed: cudal1.policy.rewarding;
    None in logs from before that rule, 2026-12-07); none when the folder has no completions file. Rows without a
    finite earned reward are left out."""
    f = run / "completions.jsonl"
    if not f.exists():
        return []
    rows = []
    by_source = behaviours(run)
    earlier: set[tuple[str, str]] = set()  # verified answers of the stages before the current one
    current: set[tuple[str, str]] = set()
    last_stage = None
    for line in f.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        stage = str(r.get("stage", ""))
        if stage != last_stage:
            earlier |= current
            current, last_stage = set(), stage
        task = str(r.get("task", ""))
        verified = r.get("status") == "ok" and "same_as_reference" not in (r.get("flags") or [])
        keys = code_keys(task, str(r.get("text", "")), by_source) if verified else set()
        current |= keys
        if not stage.startswith("grpo:"):
            continue
        earned = r.get("true_reward", r.get("reward"))
        if not isinstance(earned, (int, float)) or not math.isfinite(earned):
            continue
        improves = bool(r.get("improves"))
        rows.append({"round": int(stage.split(":", 1)[1]), "group": str(r.get("prompt_id", "")), "task": task,
                     "reward": float(earned), "improves": improves,
                     "new_improvement": improves and bool(keys) and not keys & earlier,
                     "shown_copy": r.get("shown_copy")})  # None: a log from before the reward's rule
    return rows


def _group_bootstrap(groups: list[list[float]], bootstrap: int, rng: random.Random) -> tuple[float, float, float]:
    """(mean over all values, 95% CI) with whole groups resampled."""
    flat = [v for g in groups for v in g]
    mean = statistics.fmean(flat)
    if len(groups) < 2:
        return mean, mean, mean
    boots = []
    for _ in range(bootstrap):
        pick = [v for _ in groups for v in rng.choice(groups)]
        boots.append(statistics.fmean(pick))
    boots.sort()
    return mean, boots[int(0.025 * (bootstrap - 1))], boots[int(0.975 * (bootstrap - 1))]


def _all_equal(rewards: list[float], tol: float = 0.02) -> bool:
    """Whether a prompt group's completions all earned the same reward within ``tol`` (0.02 in log shaping: about 2% in
    speedup, timing noise): GRPO's advantages are then zero or noise (trl's default divides them by the group's
    spread, however small) and the group teaches the policy nothing it earned."""
    return max(rewards) - min(rewards) <= tol


def _rows_by_round(out: Path, seeds: Sequence[int], arm: str,
                   key: str) -> dict[int, dict[tuple[int, str], list[dict[str, Any]]]]:
    """One arm's GRPO rows: round -> (seed, the row's ``key``: ``group`` or ``task``) -> rows."""
    by_round: dict[int, dict[tuple[int, str], list[dict[str, Any]]]] = {}
    for s in seeds:
        for r in training_rows(out / f"seed{s}" / arm):
            by_round.setdefault(r["round"], {}).setdefault((s, r[key]), []).append(r)
    return by_round


def curves(out: Path, seeds: Sequence[int], *, bootstrap: int = 2000, seed: int = 0) -> dict[str, list[dict[str, Any]]]:
    """arm -> one point per GRPO round: ``round``, ``completions``, ``groups``, ``equal_groups`` (groups whose
    completions all earned the same reward within 0.02: no signal), ``reward_mean``, ``reward_ci``,
    ``improved_rate``, ``improved_ci``, ``new_improved_rate``, ``new_improved_ci`` (new improvements: not an earlier
    stage's verified code), ``shown_copies`` (completions the reward found handing back a shown exemplar; None when
    a row's log predates that rule); pooled over ``seeds`` (``out/seed<N>/<arm>/``). Arms with no GRPO
    completion yet are left out."""
    rng = random.Random(seed)
    new_rng = random.Random(seed + 1)  # its own stream: the reward and improvement intervals stay as they were
    result: dict[str, list[dict[str, Any]]] = {}
    for arm in CURVE_ARMS:
        by_round = _rows_by_round(out, seeds, arm, "group")
        points = []
        for rnd in sorted(by_round):
            groups = list(by_round[rnd].values())
            m, lo, hi = _group_bootstrap([[r["reward"] for r in g] for g in groups], bootstrap, rng)
            p, plo, phi = _group_bootstrap([[float(r["improves"]) for r in g] for g in groups], bootstrap, rng)
            n, nlo, nhi = _group_bootstrap([[float(r["new_improvement"]) for r in g] for g in groups], bootstrap,
                                           new_rng)
            points.append({"round": rnd, "completions": sum(len(g) for g in groups), "groups": len(groups),
                           "equal_groups": sum(1 for g in groups if _all_equal([r["reward"] for r in g])),
                           "reward_mean": m, "reward_ci": [lo, hi], "improved_rate": p, "improved_ci": [plo, phi],
                           "new_improved_rate": n, "new_improved_ci": [nlo, nhi],
                           "shown_copies": (None if any(r["shown_copy"] is None for g in groups for r in g)
                                            else sum(bool(r["shown_copy"]) for g in groups for r in g))})
        if points:
            result[arm] = points
    return result


def paired_difference(out: Path, seeds: Sequence[int], *, bootstrap: int = 2000,
                      seed: int = 0) -> dict[str, Any] | None:
    """grpo minus shuffled at the last GRPO round both arms reached, paired by (seed, train task): the mean difference
    of the earned reward and of the verified-improvement rate, each with a bootstrap 95% CI over the pairs. The two
    arms draw the same tasks in the same round, so pairing takes the tasks' own spread (a task the policy always
    solves against one it never does) out of the comparison. Reported beside the train verdict, not instead of it:
    the verdict's rule (both of grpo's intervals above the control's) is the issue's. None without a common round."""
    per_arm = {arm: _rows_by_round(out, seeds, arm, "task") for arm in CURVE_ARMS}
    common = sorted(set(per_arm["grpo"]) & set(per_arm["shuffled"]))
    if not common:
        return None
    last = common[-1]
    g, c = per_arm["grpo"][last], per_arm["shuffled"][last]
    pairs = sorted(set(g) & set(c))
    if not pairs:
        return None
    rng = random.Random(seed)
    result: dict[str, Any] = {"round": last, "pairs": len(pairs)}
    for name, key in (("reward", "reward"), ("improved_rate", "improves"), ("new_improved_rate", "new_improvement")):
        diffs = [statistics.fmean(float(r[key]) for r in g[p]) - statistics.fmean(float(r[key]) for r in c[p])
                 for p in pairs]
        mean = statistics.fmean(diffs)
        if len(diffs) < 2:
            lo = hi = mean
        else:
            boots = sorted(statistics.fmean(rng.choice(diffs) for _ in diffs) for _ in range(bootstrap))
            lo, hi = boots[int(0.025 * (bootstrap - 1))], boots[int(0.975 * (bootstrap - 1))]
        result[name] = {"mean": mean, "ci": [lo, hi]}
    return result


def paired_line(d: dict[str, Any] | None) -> str:
    """One line of results.md for :func:`paired_difference`."""
    if d is None:
        return "Paired by (seed, task): no GRPO round both arms reached."
    r, i = d["reward"], d["improved_rate"]
    n = d.get("new_improved_rate")
    new = (f", new-improvement rate {n['mean']:+.2f} [{n['ci'][0]:+.2f}, {n['ci'][1]:+.2f}]" if n else "")
    return (f"Paired by (seed, task), round {d['round']}, {d['pairs']} pairs, grpo minus shuffled: earned reward "
            f"{r['mean']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}], verified-improvement rate {i['mean']:+.2f} "
            f"[{i['ci'][0]:+.2f}, {i['ci'][1]:+.2f}]{new} (beside the verdict, not its rule).")


def train_verdict(cs: dict[str, list[dict[str, Any]]]) -> str:
    """The train-side finding at the last round both arms reached: learning only when the ``grpo`` arm's reward CI
    and its improvement-rate CI each lie above the shuffled arm's."""
    missing = [a for a in CURVE_ARMS if a not in cs]
    if missing:
        return f"no train verdict: arms {missing} have no GRPO rounds yet"
    common = sorted({p["round"] for p in cs["grpo"]} & {p["round"] for p in cs["shuffled"]})
    if not common:
        return "no train verdict: the arms share no GRPO round"
    last = common[-1]
    g = next(p for p in cs["grpo"] if p["round"] == last)
    c = next(p for p in cs["shuffled"] if p["round"] == last)
    apart = {"reward": g["reward_ci"][0] > c["reward_ci"][1], "improved rate": g["improved_ci"][0] > c["improved_ci"][1]}
    said = (f"round {last}: reward {g['reward_mean']:.3f} [{g['reward_ci'][0]:.3f}, {g['reward_ci'][1]:.3f}] against "
            f"{c['reward_mean']:.3f} [{c['reward_ci'][0]:.3f}, {c['reward_ci'][1]:.3f}]; verified improvements "
            f"{g['improved_rate']:.2f} [{g['improved_ci'][0]:.2f}, {g['improved_ci'][1]:.2f}] against "
            f"{c['improved_rate']:.2f} [{c['improved_ci'][0]:.2f}, {c['improved_ci'][1]:.2f}]")
    if all(apart.values()):
        return f"learning on train tasks: grpo's intervals lie above the shuffled arm's ({said})"
    return f"no learning shown on train tasks: {', '.join(k for k, v in apart.items() if not v)} not apart ({said})"


def table(cs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Markdown rows: arm, round, completions, groups with equal rewards, mean earned reward [CI], verified-improvement
    rate [CI], new-improvement rate [CI] (not an earlier stage's verified code), shown exemplars handed back."""
    lines = ["| arm | GRPO round | completions (prompt groups) | groups with equal rewards (within 0.02) | "
             "mean earned reward [95% CI] | verified improvements [95% CI] | of them new code [95% CI] | "
             "shown exemplars handed back |", "|---|---|---|---|---|---|---|---|"]
    for arm, points in cs.items():
        for p in points:
            new = (f"{p['new_improved_rate']:.2f} [{p['new_improved_ci'][0]:.2f}, {p['new_improved_ci'][1]:.2f}]"
                   if "new_improved_rate" in p else "-")
            lines.append(f"| {arm} | {p['round']} | {p['completions']} ({p['groups']}) | "
                         f"{p.get('equal_groups', '-')} | {p['reward_mean']:.3f} "
                         f"[{p['reward_ci'][0]:.3f}, {p['reward_ci'][1]:.3f}] | {p['improved_rate']:.2f} "
                         f"[{p['improved_ci'][0]:.2f}, {p['improved_ci'][1]:.2f}] | {new} | "
                         f"{'-' if p.get('shown_copies') is None else p['shown_copies']} |")
    return lines


def svg(cs: dict[str, list[dict[str, Any]]], title: str = "") -> str:
    """Two panels (mean earned reward, verified-improvement rate) against the GRPO round, one line per arm with its
    95% CI as bars, as a self-contained SVG document."""
    w, h, pad = 360, 260, 48
    panels = [("mean earned reward", "reward_mean", "reward_ci"), ("verified improvements", "improved_rate",
                                                                   "improved_ci")]
    rounds = sorted({p["round"] for pts in cs.values() for p in pts}) or [0]
    x0, x1 = rounds[0], max(rounds[-1], rounds[0] + 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{h + 40}" font-family="sans-serif" '
             f'font-size="11">', f'<text x="{w}" y="16" text-anchor="middle" font-size="13">{_esc(title)}</text>']
    for k, (name, key, ci) in enumerate(panels):
        ox = k * w
        lo = min([p[ci][0] for pts in cs.values() for p in pts] + [0.0])
        hi = max([p[ci][1] for pts in cs.values() for p in pts] + [lo + 1e-9])
        span = hi - lo or 1.0

        def px(r: float, ox: int = ox) -> float:
            return ox + pad + (r - x0) / (x1 - x0) * (w - 2 * pad)

        def py(v: float, lo: float = lo, span: float = span) -> float:
            return 30 + (1 - (v - lo) / span) * (h - 60)

        parts.append(f'<rect x="{ox + pad}" y="30" width="{w - 2 * pad}" height="{h - 60}" fill="none" stroke="#888"/>')
        parts.append(f'<text x="{ox + w - pad}" y="{h + 4}" text-anchor="end">GRPO round</text>')
        parts.append(f'<text x="{ox + pad}" y="26">{_esc(name)}</text>')
        for v in (lo, hi):
            parts.append(f'<text x="{ox + pad - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{v:.2f}</text>')
        for r in rounds:
            parts.append(f'<text x="{px(r):.1f}" y="{h - 16}" text-anchor="middle">{r}</text>')
        for j, (arm, pts) in enumerate(cs.items()):
            colour = COLOURS.get(arm, "#444")
            dx = (j - (len(cs) - 1) / 2) * 4  # the arms' bars side by side, not on top of each other
            line = " ".join(f"{px(p['round']) + dx:.1f},{py(p[key]):.1f}" for p in pts)
            parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for p in pts:
                x = px(p["round"]) + dx
                parts.append(f'<line x1="{x:.1f}" y1="{py(p[ci][0]):.1f}" x2="{x:.1f}" y2="{py(p[ci][1]):.1f}" '
                             f'stroke="{colour}"/>')
                parts.append(f'<circle cx="{x:.1f}" cy="{py(p[key]):.1f}" r="3" fill="{colour}"/>')
            parts.append(f'<text x="{ox + pad + 80 * j}" y="{h + 20}" fill="{colour}">&#9679; {_esc(arm)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the experiment folder (benchmarks/scripts/learning_experiment.py --out)")
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args(argv)
    out = Path(a.out)
    cs = curves(out, [int(s) for s in a.seeds.split(",") if s.strip()])
    (out / "learning-curves.svg").write_text(svg(cs, "train tasks: grpo against shuffled rewards"))
    print("\n".join(table(cs)))
    print(train_verdict(cs))
    print(paired_line(paired_difference(out, [int(s) for s in a.seeds.split(",") if s.strip()])))
    return 0 if cs else 1


if __name__ == "__main__":
    raise SystemExit(main())
