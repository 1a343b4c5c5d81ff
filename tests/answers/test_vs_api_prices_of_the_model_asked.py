"""``--vs-api`` prices the model asked for (audit 8, defect 4 / fix9): DeepSeek-R1 answers as
itself on DeepSeek-V3's preset, so it is compared with R1's own API rows (DeepSeek's
deepseek-reasoner and OpenRouter's deepseek/deepseek-r1), not V3's; a Hub id on a preset with no
rows of its own is compared with the preset's rows, and the answer says whose they are."""

from __future__ import annotations

import datetime as dt
import gzip

from paths import DATA
from whichgpu.cost import api_prices
from whichgpu.cost.api_prices_refresh import convert

ASK = ("--tokens-per-day", "10M", "--vs-api", "--top", "1", "--json")


def _vs_api(cli, model: str) -> dict:
    r = cli("recommend", model, *ASK)
    assert r.code == 0, r.err
    return r.json()["vs_api"]


def test_deepseek_r1_is_compared_with_r1s_own_api_prices(cli):
    v = _vs_api(cli, "deepseek-r1")
    assert "api_prices_of" not in v
    got = {(a["provider"], a["provider_model"]) for a in v["api"]}
    assert {("deepseek", "deepseek-reasoner"), ("openrouter", "deepseek/deepseek-r1")} <= got
    assert {a["model"] for a in v["api"]} == {"deepseek-r1"}
    v3 = {p.provider_model for p in api_prices.shipped() if p.model == "deepseek-v3"}
    assert not got & {(a["provider"], m) for a in v["api"] for m in v3}


def test_a_model_without_rows_says_whose_prices_stand_in(cli):
    v = _vs_api(cli, "deepseek-ai/DeepSeek-V3-0324")
    assert v["api_prices_of"] == "deepseek-v3"
    assert v["api"] and {a["model"] for a in v["api"]} == {"deepseek-v3"}
    said = v["assumptions"][0]
    assert "DeepSeek-V3-0324" in said and "deepseek-v3" in said


def test_the_presets_own_name_takes_no_stand_in():
    class Preset:  # what models.resolve gives for an alias of a preset with rows
        name, source = "DeepSeek-V3", "preset:deepseek-v3"

    found = api_prices.for_model_or_preset(api_prices.shipped(), Preset(), "deepseek-v3")
    assert found.rows and found.stand_in is None


def test_deepseeks_r1_row_is_kept_through_a_refresh():
    # genai-prices lists deepseek-reasoner's off-peak discount as its plain price and the name
    # now serves another model: the shipped row is DeepSeek's standard R1 price, kept as read
    text = gzip.decompress((DATA / "api_prices" / "genai_prices_47df840a_v2_data.json.gz")
                           .read_bytes()).decode("utf-8")
    got = convert(text, origin="data.json", day=dt.date(2026, 12, 7))
    row = next(p for p in got.rows if p.provider == "deepseek" and p.model == "deepseek-r1")
    assert (row.input_per_mtok, row.cached_input_per_mtok, row.output_per_mtok) == (
        0.55, 0.14, 2.19)
    assert row.date == "2025-07-12"
