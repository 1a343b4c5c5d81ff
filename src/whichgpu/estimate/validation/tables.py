"""The accuracy tables of docs/validation.md, rendered from the validation reports themselves.

Each table lives in docs/validation.md (:data:`TARGET`) between ``<!-- BEGIN accuracy:NAME -->``
and ``<!-- END accuracy:NAME -->``. ``python -m whichgpu.estimate.validation.tables --write``
(``make readme-accuracy``) rewrites them from what ``whichgpu validate`` computes; ``--check``
exits 1 when a figure there has drifted; ``--quick`` skips the tables that need the
leave-one-out refits (minutes), which is what the test suite checks.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from whichgpu.estimate.validation import Outcome, default_path, read_rows, summarize
from whichgpu.estimate.validation.ranges import engine_group

Table = Literal["counts", "memory-holdout", "memory-engine", "memory-verdicts", "fits",
                "questions",
                "speed-holdout",
                "speed-engine", "speed-per-engine", "speed-cv", "serving-holdout", "serving-engine",
                "serving-loso"]

# The issues' targets, median absolute error on held-out rows. Memory: issue 5 (weights 2 %,
# inference 7 %, training 12 %, restated by issue 15). Speed: issue 15's "Done when" (decode
# 12 %, prefill 20 %, training 20 %, diffusion 20 %; video is diffusion's). Serving: issue 18
# (max-throughput tables 20 %, TTFT and TPOT under load 25 %).
MEMORY_TARGETS: dict[str, float] = {"weights": 0.02, "inference": 0.07, "training": 0.12}
SPEED_TARGETS: dict[str, float] = {"decode": 0.12, "prefill": 0.20, "training": 0.20,
                                   "diffusion": 0.20, "video": 0.20}

# Issue 28's "Done when", per engine: prefill 20 % and decode 10 % median on every engine with
# at least ENGINE_MIN_ROWS rows (an engine with fewer is listed, not judged).
ENGINE_TARGETS: dict[str, float] = {"prefill": 0.20, "decode": 0.10}
ENGINE_MIN_ROWS = 10
ENGINE_CATEGORIES = ("decode", "prefill", "serving")

MEMORY_CATEGORIES = ("weights", "inference", "training", "lora", "qlora", "full-ft",
                     "pretrain", "image", "video")
SPEED_CATEGORIES = ("decode", "prefill", "training", "diffusion", "video", "serving")


def pct(x: float | None) -> str:
    """0.1234 -> '12.3 %' (three significant figures above 100 %)."""
    if x is None:
        return "–"
    v = 100 * x
    return f"{v:.0f} %" if abs(v) >= 100 else f"{v:.1f} %"


def signed(x: float | None) -> str:
    if x is None:
        return "–"
    s = pct(abs(x))
    return ("+" if x >= 0 else "−") + s


def verdict(median: float | None, target: float | None) -> str:
    """'12 %: met' or '12 %: **missed**' (the target's median absolute error)."""
    if target is None:
        return "no target"
    goal = f"{100 * target:g} %"
    if median is None:
        return f"{goal}: no rows"
    return f"{goal}: met" if median <= target else f"{goal}: **missed**"


def inside(s: Any) -> str:
    """'39/50 (78 %)': rows inside the stated range (validation_ranges.RangeStats)."""
    if s is None or not s.n_ranged:
        return "–"
    return f"{s.inside}/{s.n_ranged} ({100 * s.coverage:.0f} %)"


def width(s: Any, p90: bool = True) -> str:
    """'1.67× / 4.04×': the median (and 90th percentile) of high / low."""
    if s is None or s.median_width is None:
        return "–"
    return f"{s.median_width:.2f}×" + (f" / {s.p90_width:.2f}×" if p90 else "")


def balanced_cell(b: Any) -> str:
    """The balanced figure: median of the engines' medians, and the worst engine."""
    if b is None or b.median_abs_error is None:
        return "–"
    if b.engines == 1:
        return f"{pct(b.median_abs_error)} (1 engine)"
    return (f"{pct(b.median_abs_error)} ({b.engines} engines; worst {b.worst_engine} "
            f"{pct(b.worst_error)})")


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


@dataclass
class Reports:
    """What ``whichgpu validate`` computes, gathered once (the leave-one-out parts on demand)."""

    full: bool

    def __post_init__(self) -> None:
        from whichgpu.estimate.validation import (
            ceilings as validation_ceilings,
        )
        from whichgpu.estimate.validation import (
            fits as validation_fits,
        )
        from whichgpu.estimate.validation import (
            memory as validation_memory,
        )
        from whichgpu.estimate.validation import (
            ranges as validation_ranges,
        )
        from whichgpu.estimate.validation import serving_report
        from whichgpu.estimate.validation import (
            speed as validation_speed,
        )
        from whichgpu.estimate.validation.report import engine_arch_key, group_errors

        self.memory_rows = read_rows(default_path("memory"))
        self.memory: list[Outcome] = validation_memory.run(default_path("memory"))
        by_id = {r["id"]: r for r in self.memory_rows}
        self.memory_engine = group_errors(
            self.memory, by_id,
            lambda r: (r.get("category", ""), (r.get("engine") or "-").strip()))
        self.speed_rows = read_rows(default_path("speed"))
        # rows above a physical ceiling are listed, not scored (validation_ceilings)
        self.speed_excluded = validation_ceilings.excluded(self.speed_rows)
        self.speed: list[Outcome] = [o for o in validation_speed.run(default_path("speed"))
                                     if o.id not in self.speed_excluded]
        by_speed_id = {r["id"]: r for r in self.speed_rows}
        self.speed_engine = group_errors(self.speed, by_speed_id, engine_arch_key)
        self.speed_engine_ranges = {s.key: s for s in validation_ranges.grouped(
            self.speed, lambda o: engine_arch_key(by_speed_id[o.id]))}
        self.speed_ranges = validation_ranges.report(
            [o for o in self.speed if o.split == "holdout"], by_speed_id)
        self.memory_ranges = validation_ranges.report(
            [o for o in self.memory if o.split == "holdout"], by_id)
        self.fits = validation_fits.run(None)
        self.serving: dict[str, Any] = serving_report.report(None, "all", leave_one_out=self.full)
        self.serving_rows = read_rows(default_path("serving"))
        self.cv: dict[str, Any] | None = None
        if self.full:
            from whichgpu.estimate.validation import cv as validation_cv

            with validation_cv.shared_refits():
                self.cv = {by: validation_cv.summarize(validation_cv.leave_one_out(
                    self.speed_rows, by)) for by in ("gpu", "source")}


def _summary(outcomes: list[Outcome], category: str, split: str):
    for s in summarize(outcomes):
        if s.category == category and s.split == split:
            return s
    return None


def render_counts(r: Reports) -> str:
    def modelled(xs: list[Outcome]) -> int:
        return sum(1 for x in xs if x.error is not None)

    serving_modelled = sum(1 for x in r.serving["rows"] if x.get("error") is not None)
    hold_sources = ", ".join(r.serving["split_rule"])
    return (f"`validation/memory.csv`: {len(r.memory_rows)} rows, {modelled(r.memory)} "
            f"modelled; `validation/speed.csv`: {len(r.speed_rows)} rows, "
            f"{modelled(r.speed)} modelled; `validation/fits.csv`: {len(r.fits)} set-ups people "
            f"run; `validation/serving.csv`: {len(r.serving_rows)} rows, {serving_modelled} "
            f"modelled (holdout sources: {hold_sources}).")


def render_memory_holdout(r: Reports) -> str:
    rows = []
    for cat in MEMORY_CATEGORIES:
        h = _summary(r.memory, cat, "holdout")
        a = _summary(r.memory, cat, "all")
        if a is None:
            continue
        name = cat if cat in MEMORY_TARGETS or cat in ("image", "video") else f"· {cat}"
        rg = r.memory_ranges.category(cat)
        rows.append([name, str(h.n) if h else "0", pct(h.median_abs_error) if h else "–",
                     pct(h.p90_abs_error) if h else "–",
                     signed(h.median_signed_error) if h else "–", inside(rg), width(rg),
                     f"{pct(a.median_abs_error)} ({a.n})",
                     verdict(h.median_abs_error if h else None, MEMORY_TARGETS.get(cat))])
    return md_table(["memory (holdout)", "rows", "median", "p90", "signed", "inside range",
                     "width", "all rows", "target"], rows)


def _dates(first: str, last: str) -> str:
    return first if first == last else f"{first} to {last}"


def render_memory_engine(r: Reports) -> str:
    rows = [[g.key[0], g.key[1], str(g.n), pct(g.median_abs_error),
             signed(g.median_signed_error),
             f"{pct(g.holdout_median_abs_error)} ({g.n_holdout})" if g.n_holdout else "–",
             _dates(g.first_date, g.last_date)] for g in r.memory_engine]
    return md_table(["category", "engine", "rows", "median", "signed", "holdout", "dates"],
                    rows)


def render_memory_verdicts(r: Reports) -> str:
    from collections import Counter

    from whichgpu.estimate.constants import memory_constant
    from whichgpu.estimate.validation import memory as validation_memory

    band = memory_constant("memory_uncertainty").value
    by_id = {x["id"]: x for x in r.memory_rows}
    counts = Counter(v["verdict"] for v in validation_memory.verdicts(
        [by_id[o.id] for o in r.memory])["rows"])
    told = ", ".join(f"{pct(band[g])} for {g}" for g in ("inference", "training", "diffusion"))
    line = ", ".join(f'{v} "{k}"' for k, v in sorted(counts.items()))
    return (f"Borderline means within {told} of the card's usable memory (the p90 error of "
            f"the memory validation's calibration rows per task group, which `make calibrate` "
            f"writes to `memory_constants.toml`). Of the {sum(counts.values())} memory rows "
            f"measured on a card (`whichgpu validate memory`): {line}"
            + ("" if counts.get("does not fit") else '; none "does not fit"') + ".")


def render_fits(r: Reports) -> str:
    from collections import Counter

    counts = Counter(x.verdict for x in r.fits)
    line = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    edge = [f"`{x.id}` ({x.detail})" for x in r.fits if x.verdict == "borderline"]
    out = f"`whichgpu validate fits` on {len(r.fits)} set-ups: {line}."
    if edge:
        out += " Borderline (at the card's edge): " + "; ".join(edge) + "."
    return out


def render_questions(r: Reports) -> str:
    from collections import Counter

    from whichgpu.estimate.validation import questions as vq

    judged = vq.run()
    counts = Counter(str(x.judgement) for x in judged)
    n = len(judged)
    line = ", ".join(f"{counts.get(str(j), 0)} {j}" for j in vq.Judgement)
    wrong = [f"`{x.id}`" for x in judged if x.judgement == vq.Judgement.WRONG]
    out = (f"`whichgpu validate questions` on {n} questions people asked in 2025-26, each "
           f"with its published outcome and source (`validation/questions.csv`): {line}; "
           f"{counts.get('right', 0)} of {n} right "
           f"({100 * counts.get('right', 0) / max(n, 1):.0f} %).")
    if wrong:
        out += " Wrong, each explained in the file: " + ", ".join(wrong) + "."
    return out


def render_speed_holdout(r: Reports) -> str:
    rows = []
    for cat in SPEED_CATEGORIES:
        h = _summary(r.speed, cat, "holdout")
        c = _summary(r.speed, cat, "calibration")
        if h is None:
            continue
        target = SPEED_TARGETS.get(cat)
        rg = r.speed_ranges.category(cat)
        bal = next((b for b in r.speed_ranges.balanced if b.category == cat), None)
        rows.append([cat, str(h.n), pct(h.median_abs_error), pct(h.p90_abs_error),
                     signed(h.median_signed_error), inside(rg), width(rg),
                     balanced_cell(bal),
                     f"{pct(c.median_abs_error)} ({c.n})" if c else "–",
                     verdict(h.median_abs_error, target) if target else
                     "no target here (see *Serving*)"])
    return md_table(["speed (holdout)", "rows", "median", "p90", "signed", "inside 80 % range",
                     "width median / p90", "balanced over engines", "calibration", "target"],
                    rows)


def render_speed_engine(r: Reports) -> str:
    rows = [[g.key[0], g.key[1], g.key[2], str(g.n), pct(g.median_abs_error),
             signed(g.median_signed_error),
             f"{pct(g.holdout_median_abs_error)} ({g.n_holdout})" if g.n_holdout else "–",
             inside(r.speed_engine_ranges.get(g.key)),
             width(r.speed_engine_ranges.get(g.key), p90=False),
             _dates(g.first_date, g.last_date)] for g in r.speed_engine]
    return md_table(["category", "engine (build)", "architecture", "rows", "median", "signed",
                     "holdout", "inside range", "width", "dates"], rows)


def answered_by(category: str) -> str:
    """Which path computes a speed row's estimate in the validation: whichgpu's own model,
    unless the measured-kernel database (the optional ``[kernels]`` extra, opted in) is there
    for a serving row (estimate/speed/kernel_db.py: it answers serving step times only)."""
    from whichgpu.estimate.speed import kernel_db

    if category == "serving" and kernel_db.opted_in() and kernel_db.installed():
        return "kernel database where it covers the row, else whichgpu's model"
    return "whichgpu's model"


def render_speed_per_engine(r: Reports) -> str:
    """Decode, prefill and serving error per engine (llama.cpp's backends and Ollama count as
    llama.cpp, NIM as TensorRT-LLM): rows, their dates, which path answered, and issue 28's
    per-engine target where the engine has enough rows to judge."""
    from whichgpu.estimate.validation.report import group_errors

    by_id = {row["id"]: row for row in r.speed_rows}
    wanted = [o for o in r.speed if o.category in ENGINE_CATEGORIES]
    groups = group_errors(wanted, by_id, lambda row: (
        row.get("category", ""), engine_group(row.get("engine") or "")))
    undated: dict[tuple[str, ...], int] = {}
    for o in wanted:
        row = by_id[o.id]
        if o.error is not None and not (row.get("date") or "").strip():
            k = (row.get("category", ""), engine_group(row.get("engine") or ""))
            undated[k] = undated.get(k, 0) + 1
    order = {c: i for i, c in enumerate(ENGINE_CATEGORIES)}
    rows = []
    for g in sorted(groups, key=lambda g: (order.get(g.key[0], 9), -g.n, g.key[1])):
        target = ENGINE_TARGETS.get(g.key[0])
        if target is None:
            judged = "no per-engine target"
        elif g.n < ENGINE_MIN_ROWS:
            judged = f"not judged (under {ENGINE_MIN_ROWS} rows)"
        else:
            judged = verdict(g.median_abs_error, target)
        n_undated = undated.get(g.key, 0)
        dates = ("undated" if n_undated == g.n else _dates(g.first_date, g.last_date)
                 + (f"; {n_undated} undated" if n_undated else ""))
        rows.append([g.key[0], g.key[1], str(g.n), pct(g.median_abs_error),
                     signed(g.median_signed_error),
                     f"{pct(g.holdout_median_abs_error)} ({g.n_holdout})" if g.n_holdout
                     else "–", dates, answered_by(g.key[0]), judged])
    return md_table(["category", "engine", "rows", "median", "signed", "holdout", "dates",
                     "answered by", "target (issue 28)"], rows)


def _kept(s: Any) -> str:
    """The rows a leave-one-out figure leaves out: their constants keep the value fitted on
    them (validation_cv.LeftOut.kept_fit)."""
    return f"; {s.kept_fit} not refittable without them" if s.kept_fit else ""


def render_speed_cv(r: Reports) -> str:
    assert r.cv is not None
    by = {k: {s.category: s for s in v} for k, v in r.cv.items()}
    rows = []
    for cat in SPEED_CATEGORIES:
        h = _summary(r.speed, cat, "holdout")
        g, s = by["gpu"].get(cat), by["source"].get(cat)
        if h is None or g is None or s is None:
            continue
        rows.append([cat, f"{pct(h.median_abs_error)} ({h.n})",
                     f"{pct(g.median_abs_error)} ({g.n} rows, {g.groups} GPUs{_kept(g)})",
                     f"{pct(s.median_abs_error)} ({s.n} rows, {s.groups} sources{_kept(s)})",
                     _cv_inside(g), _cv_inside(s)])
    return md_table(["category", "holdout", "leave one GPU out", "leave one source out",
                     "inside range, GPU out", "inside range, source out"], rows)


def _cv_inside(s: Any) -> str:
    """Left-out rows measured inside the range around their left-out estimate (issue 30)."""
    if not s.n_ranged:
        return "–"
    return f"{s.inside}/{s.n_ranged} ({100 * s.coverage:.0f} %)"


_FAMILY_TARGET = {"throughput": "max_throughput", "ttft": "ttft", "tpot": "tpot"}


def render_serving_holdout(r: Reports) -> str:
    fam = {(x["split"], x["family"]): x for x in r.serving["by_family"]}
    targets = r.serving["holdout_targets"]
    rows = []
    for family in ("throughput", "tpot", "ttft", "e2e"):
        c, h = fam.get(("calibration", family)), fam.get(("holdout", family))
        t = targets.get(_FAMILY_TARGET.get(family, ""), None)
        goal = "no target"
        if t:  # issue 18's rows: max-throughput tables, latency under load
            goal = verdict(t["median_abs_error"], t["target"])
            if not h or t["n"] != h["n"]:
                goal = f"{pct(t['median_abs_error'])} on {t['n']} rows: {goal}"
        rg = next((x for x in r.serving["ranges_holdout"]["by_category"]
                   if x["key"] == [family]), None)
        rows.append([
            family,
            f"{pct(c['median_abs_error'])} ({c['n']})" if c else "–",
            f"{pct(h['median_abs_error'])} ({h['n']})" if h else "–",
            f"{h['inside_range']}/{h['n']}" if h else "–",
            _balanced(r.serving.get("ranges_holdout_by_source", {}).get(family)),
            _json_width(rg), goal])
    return md_table(["serving metric", "calibration", "holdout", "holdout inside range",
                     "inside, balanced over sources", "width median / p90",
                     "target (holdout)"], rows)


def _balanced(x: dict[str, Any] | None) -> str:
    """The holdout's share inside its range, the mean over its sources (issue 30)."""
    if not x or x.get("balanced") is None:
        return "–"
    n = len(x["by_source"])
    return f"{100 * x['balanced']:.0f} % ({n} source{'s' if n != 1 else ''})"


def _json_width(x: dict[str, Any] | None, p90: bool = True) -> str:
    if not x or x.get("median_width") is None:
        return "–"
    return f"{x['median_width']:.2f}×" + (f" / {x['p90_width']:.2f}×" if p90 else "")


def render_serving_engine(r: Reports) -> str:
    widths = {tuple(x["key"]): x for x in r.serving["ranges_holdout"]["by_engine"]}
    rows = [[x["engine"], x["family"], str(x["n"]), pct(x["median_abs_error"]),
             f"{x['inside_range']}/{x['n']}",
             _json_width(widths.get((x["family"], engine_group(x["engine"]))), p90=False)]
            for x in r.serving["by_engine"] if x["split"] == "holdout"]
    return md_table(["engine (holdout)", "metric", "rows", "median", "inside range", "width"],
                    rows)


def render_serving_loso(r: Reports) -> str:
    loso = r.serving["leave_one_source_out"]
    assert loso is not None
    rows = [[x["name"], str(x["n"]), pct(x["median_abs_error"])] for x in loso["by_family"]]
    rows += [[f"source `{x['name']}`", str(x["n"]), pct(x["median_abs_error"])]
             for x in loso["by_source"]]
    return md_table(["left out (calibration sources)", "rows", "median"], rows)


RENDERERS: dict[Table, tuple[Callable[[Reports], str], bool]] = {
    # name: (renderer, needs the leave-one-out refits)
    "counts": (render_counts, False),
    "memory-holdout": (render_memory_holdout, False),
    "memory-engine": (render_memory_engine, False),
    "memory-verdicts": (render_memory_verdicts, False),
    "fits": (render_fits, False),
    "questions": (render_questions, False),
    "speed-holdout": (render_speed_holdout, False),
    "speed-engine": (render_speed_engine, False),
    "speed-per-engine": (render_speed_per_engine, False),
    "speed-cv": (render_speed_cv, True),
    "serving-holdout": (render_serving_holdout, False),
    "serving-engine": (render_serving_engine, False),
    "serving-loso": (render_serving_loso, True),
}

_BLOCK = re.compile(r"(<!-- BEGIN accuracy:(?P<name>[a-z-]+) -->\n)(?P<body>.*?)"
                    r"(\n<!-- END accuracy:(?P=name) -->)", re.S)


#: the page that holds the tables, from the repository root (the README links to it)
TARGET = "docs/validation.md"


def render(quick: bool = False) -> dict[str, str]:
    """Every table's markdown (without the leave-one-out ones when ``quick``)."""
    reports = Reports(full=not quick)
    return {name: fn(reports) for name, (fn, slow) in RENDERERS.items()
            if not (quick and slow)}


def blocks(text: str) -> dict[str, str]:
    """The tables a page holds now, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def replace(text: str, tables: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        body = tables.get(m["name"], m["body"])
        return m.group(1) + body + m.group(4)

    return _BLOCK.sub(sub, text)


def drift(text: str, tables: dict[str, str]) -> list[str]:
    """Names of the tables whose text on the page differs from what validation computes."""
    have = blocks(text)
    return [name for name, body in tables.items() if have.get(name) != body]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--file", "--readme", dest="file", default=TARGET,
                   help=f"the markdown page holding the tables (default {TARGET})")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help="skip the leave-one-out tables (they refit the constants: minutes)")
    args = p.parse_args(argv)
    path = Path(args.file).resolve()
    # The tables are computed as the test suite computes them: from the shipped presets, with
    # an empty, offline Hugging Face cache (a developer's cache would model more rows).
    import os
    import tempfile

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="whichgpu-hf-")
    text = path.read_text(encoding="utf-8")
    tables = render(args.quick)
    missing = [n for n in tables if n not in blocks(text)]
    if missing:
        print(f"{path}: no BEGIN/END markers for {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.write:
        path.write_text(replace(text, tables), encoding="utf-8")
        print(f"{path}: wrote {len(tables)} accuracy tables")
        return 0
    stale = drift(text, tables)
    if stale:
        print(f"{path}: accuracy tables out of date: {', '.join(stale)} "
              "(make readme-accuracy rewrites them)", file=sys.stderr)
        return 1
    print(f"{path}: {len(tables)} accuracy tables match the validation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
