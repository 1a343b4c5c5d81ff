"""docs/validation.md's per-engine speed table (issue 28 item 4): one line per category and
engine, its rows, their dates, which path answered, and the per-engine target judged only
where the engine has enough rows."""

from types import SimpleNamespace

from whichgpu.estimate.validation import Outcome
from whichgpu.estimate.validation import tables as vt


def _fake(rows: list[tuple[str, str, str, str, float, float]]) -> SimpleNamespace:
    """Reports with (id, category, engine, date, measured, predicted) speed rows."""
    speed_rows = [{"id": i, "category": c, "engine": e, "date": d} for i, c, e, d, _, _ in rows]
    speed = [Outcome(i, c, "holdout" if n % 2 else "calibration", m, p, "prefill_tokens_per_s")
             for n, (i, c, _, _, m, p) in enumerate(rows)]
    return SimpleNamespace(speed_rows=speed_rows, speed=speed)


def _lines(text: str) -> dict[tuple[str, str], list[str]]:
    out = {}
    for line in text.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[(cells[0], cells[1])] = cells
    return out


def test_an_engine_with_enough_rows_is_judged_and_one_with_few_is_not():
    rows = [(f"a{n}", "prefill", "llamacpp-vulkan" if n % 3 else "llamacpp", "2026-01",
             100.0, 110.0) for n in range(10)]
    rows += [(f"b{n}", "prefill", "vllm", "", 100.0, 150.0) for n in range(3)]
    rows += [(f"c{n}", "decode", "vllm", "2025-11", 100.0, 125.0) for n in range(12)]
    lines = _lines(vt.render_speed_per_engine(_fake(rows)))
    llama = lines[("prefill", "llamacpp")]
    assert llama[2] == "10" and llama[3] == "10.0 %"
    assert llama[-1] == "20 %: met"
    vllm = lines[("prefill", "vllm")]
    assert vllm[2] == "3" and vllm[6] == "undated"
    assert vllm[-1].startswith("not judged")
    decode = lines[("decode", "vllm")]
    assert decode[-1] == "10 %: **missed**"
    assert decode[6] == "2025-11"
    assert all(cells[7] == "whichgpu's model" for cells in lines.values())


def test_undated_rows_are_counted_beside_the_dates():
    rows = [("a", "prefill", "trtllm", "2024-05", 1.0, 1.0),
            ("b", "prefill", "nim", "", 1.0, 1.0),
            ("c", "prefill", "trtllm", "2025-02", 1.0, 1.0)]
    cells = _lines(vt.render_speed_per_engine(_fake(rows)))[("prefill", "trtllm")]
    assert cells[2] == "3"
    assert cells[6] == "2024-05 to 2025-02; 1 undated"


def test_the_page_table_counts_every_scored_prefill_row_once():
    reports = vt.Reports(full=False)
    lines = _lines(vt.render_speed_per_engine(reports))
    scored = [o for o in reports.speed if o.category == "prefill" and o.error is not None]
    listed = sum(int(c[2]) for k, c in lines.items() if k[0] == "prefill")
    assert listed == len(scored)
