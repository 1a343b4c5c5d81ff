"""``whichgpu recommend`` and ``checklist`` as a user runs them: the table, the flags, the
price store, and parity of ``--only`` with the REST API's ``only``."""

from __future__ import annotations

from whichgpu.catalog.prices.market import market_feed_names

FLUX = ("recommend", "flux.1-dev", "--task", "image", "--quant", "fp8", "--images", "1000",
        "--sampling-steps", "20", "--prices", "vramfarm-2026-11")
THREE = "rtx-4090,a100-80gb-sxm,h100-sxm"


def table_rows(out: str) -> list[list[str]]:
    """The body rows of the first rich table in ``out``, as stripped cells."""
    return [[c.strip() for c in line.strip("│").split("│")]
            for line in out.splitlines() if line.startswith("│")]


def test_recommend_table_marks_the_pareto_front(cli):
    data = cli(*FLUX, "--json").json()
    text = cli(*FLUX, "--top", "10")
    assert text.code == 0, text.err
    rows = table_rows(text.out)
    assert len(rows) == min(10, len(data["options"]))
    for row, opt in zip(rows, data["options"], strict=False):
        assert row[0].endswith("*") == opt["pareto"], (row, opt["pareto"])
    assert "Pareto front" in text.out


def test_recommend_prints_model_names_with_brackets(cli):
    r = cli(*FLUX, "--top", "3")
    assert r.code == 0 and "FLUX.1 [dev]" in r.out


def test_recommend_shows_small_step_times_with_their_digits(cli):
    args = ("recommend", "llama-2-7b", "--task", "lora", "--context", "512", "--steps", "2000",
            "--prices", "article-000", "--top", "20")
    data = cli(*args, "--json").json()
    rows = table_rows(cli(*args).out)
    assert "s/step" in cli(*args).out
    small = [(row, o) for row, o in zip(rows, data["options"], strict=False)
             if o["rate"]["typical"] < 0.1]
    assert small  # sub-0.1 s steps exist on the big cards
    for row, o in small:
        assert row[-1] != "0.0" and float(row[-1]) == float(f"{o['rate']['typical']:.3g}")


def test_recommend_serving_layouts_are_not_duplicate_rows(cli):
    args = ("recommend", "llama-3.1-70b", "--quant", "awq", "--engine", "vllm", "--users",
            "300", "--tokens-per-s-each", "20", "--prices", "vramfarm-2026-11", "--only",
            "a100,h100-sxm,l40s")
    data = cli(*args, "--json", "--top", "0").json()
    labels = {}
    for o in data["options"]:
        labels.setdefault((o["gpu"], o["count"]), set()).add(o["layout"])
    assert any(len(v) > 1 for v in labels.values())  # e.g. 8 x a100 as 4 x TP2 and 2 x TP4
    rows = table_rows(cli(*args, "--top", "0").out)
    gpus_cells = [r[1] for r in rows if r[1]]
    assert len(gpus_cells) == len(set(gpus_cells)) == len(data["options"])


def test_recommend_nothing_fits_prints_no_empty_table_and_the_closest(cli):
    r = cli("recommend", "llama-3.1-405b", "--quant", "bf16", "--engine", "vllm", "--tokens",
            "1000", "--max-gpus", "1", "--prices", "vramfarm-2026-11")
    assert r.code == 0, r.err
    assert "┏" not in r.out and "Closest" in r.out and "no offer" in r.out


def test_recommend_only_is_the_apis_only(cli, web):
    from web_parity import stable

    c = cli(*FLUX, "--only", THREE, "--json")
    assert c.code == 0, c.err
    r = web.get("/api/v1/recommend?model=flux.1-dev&task=image&quant=fp8&images=1000"
                "&sampling_steps=20&prices=vramfarm-2026-11&only=" + THREE)
    assert r.status_code == 200, r.text
    assert stable(r.json()) == stable(c.json())
    assert {o["gpu"] for o in c.json()["options"]} <= set(THREE.split(","))


def test_recommend_only_with_an_unknown_gpu_exits_2_with_suggestions(cli):
    r = cli(*FLUX, "--only", "rtx-4090,h10")
    assert r.code == 2 and "did you mean" in r.err and "Traceback" not in r.err


def test_checklist_prices_from_the_store_by_default_with_max_age(cli):
    args = ("checklist", "--workload", "inference", "--model", "7B", "--budget-per-hour",
            "none", "--hours-per-month", "50", "--horizon-months", "12", "--json")
    d = cli(*args).json()
    feeds = {f["feed"] for f in d["prices"]["feeds"]}
    assert set(market_feed_names()) <= feeds  # the market: every dated feed's latest
    assert not feeds & {"article-000", "vramfarm-2026-11"}  # the articles only on request
    stale = cli(*args, "--max-age", "0.000001").json()
    assert stale["prices"]["max_age_s"] < 1
    assert any("older than" in w for w in stale["prices"]["warnings"])
    text = cli(*args[:-1])
    assert "Prices from" in text.err


def test_checklist_only_narrows_the_gpus(cli):
    r = cli("checklist", "--workload", "fine-tuning", "--model", "7B", "--budget-per-hour",
            "1USD", "--hours-per-month", "50", "--horizon-months", "12", "--prices",
            "article-000", "--only", "rtx-4090,l4", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["gpu"] in ("rtx-4090", "l4")
    assert {o["gpu"] for o in d["recommendation"]["options"]} <= {"rtx-4090", "l4"}


def test_a_zero_deadline_is_refused_in_the_flags_words(cli):
    r = cli("recommend", "llama-3.1-8b", "--tokens", "1M", "--deadline", "0s")
    assert r.code == 2 and "deadline must be positive" in r.err
