"""Measured runs in the store change the answers for a matching card, engine and model: the
typical value moves toward the measurements, the range narrows and the runs are named; on
SQLite and on PostgreSQL. Bad runs are refused naming the field, and a refused file stores
nothing."""

from __future__ import annotations

import json
import math

import pytest

from paths import DATA
from whichgpu.answers.estimates import speed
from whichgpu.answers.requests import Speed
from whichgpu.answers.runs import add_runs, export_runs, import_runs, list_runs, remove_run
from whichgpu.catalog.prices import PriceStore
from whichgpu.errors import InputError

DATA = DATA / "runs"
LLAMA = Speed(model="llama-3.1-8b", quant="q4_k_m", gpu="rtx-4090", engine="llamacpp")
VLLM = Speed(model="llama-3.1-8b", gpu="h100-sxm", engine="vllm", batch=32,
             prompt_tokens="1024", output_tokens="128")


def width(r: dict) -> float:
    return r["high"] / r["low"]


@pytest.fixture
def using(store_url, monkeypatch):
    """Answers read the store at ``store_url`` (as WHICHGPU_DATABASE_URL makes them)."""
    url = store_url if "://" in store_url else f"sqlite:///{store_url}"
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", url)
    return url


def test_llama_bench_and_vllm_runs_move_the_matching_answers_and_name_the_runs(using):
    before_l = speed(LLAMA).to_json()
    before_v = speed(VLLM).to_json()
    assert "measured_runs" not in before_l  # no runs yet: the answer as it was
    added = add_runs(DATA / "llama-bench-rtx4090.json", store=using).runs
    added += add_runs(DATA / "vllm-bench-serve-h100.json", {"gpu": "h100-sxm"},
                      store=using).runs
    raw = json.loads((DATA / "llama-bench-rtx4090.json").read_text())
    after_l = speed(LLAMA).to_json()
    for key, metric_row in (("decode_tokens_per_s_per_sequence", raw[1]),
                            ("prefill_tokens_per_s", raw[0])):
        old, new, measured = before_l[key], after_l[key], metric_row["avg_ts"]
        # toward the measurement, and narrower
        assert abs(math.log(new["typical"] / measured)) < abs(
            math.log(old["typical"] / measured))
        assert width(new) < width(old)
    used = after_l["measured_runs"]
    assert used["summary"] == "from 2 run(s) of this store"
    assert used["runs"] == [added[0].id, added[1].id]
    decode = used["rates"]["decode_tokens_per_s_per_sequence"]["runs"]
    assert [(r["id"], r["match"]) for r in decode] == [(added[1].id, "exact")]
    assert any("from 1 run(s) of this store" in a for a in after_l["assumptions"])

    after_v = speed(VLLM).to_json()
    old, new = before_v["output_tokens_per_s"], after_v["output_tokens_per_s"]
    assert width(new) < width(old)
    measured = json.loads((DATA / "vllm-bench-serve-h100.json").read_text())[
        "output_throughput"]
    assert abs(new["typical"] - measured) < abs(old["typical"] - measured)
    assert after_v["measured_runs"]["runs"] == [added[2].id]


def test_runs_match_only_their_card_engine_and_precision_class(using):
    add_runs(DATA / "llama-bench-rtx4090.json", store=using)
    for q in (LLAMA.model_copy(update={"gpu": "rtx-3090"}),
              LLAMA.model_copy(update={"engine": "vllm", "quant": "awq"}),
              LLAMA.model_copy(update={"quant": "bf16"})):
        assert "measured_runs" not in speed(q).to_json(), q


def test_a_run_of_another_model_of_the_family_and_size_class_counts_less(using):
    add_runs(DATA / "runs.csv", store=using)  # Qwen2.5-7B q4_k_m on an RTX 4090, llama.cpp
    rates = speed(LLAMA).to_json()["measured_runs"]["rates"]
    (run,) = rates["decode_tokens_per_s_per_sequence"]["runs"]
    assert run["match"] == "family"
    assert run["weight_sigma"] > 0.15  # weaker evidence than an exact run (0.08)


def test_an_empty_store_changes_no_answer(using, monkeypatch):
    PriceStore(using).current()  # the store exists, with its runs table empty
    with_store = speed(LLAMA).to_json()
    monkeypatch.delenv("WHICHGPU_DATABASE_URL")
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", "/nonexistent/prices.sqlite")
    assert speed(LLAMA).to_json() == with_store


def test_export_then_import_into_another_store_gives_the_same_runs(using, tmp_path):
    add_runs(DATA / "llama-bench-rtx4090.csv", store=using)
    add_runs(DATA / "sglang-bench-serving-h100.jsonl",
             {"gpu": "h100-sxm", "model": "meta-llama/Llama-3.1-8B-Instruct"}, store=using)
    exported = export_runs(tmp_path / "runs.json", store=using)
    other = tmp_path / "other.sqlite"
    imported = import_runs(tmp_path / "runs.json", store=other)

    def kept(runs):
        return [{k: v for k, v in r.to_json().items() if k not in ("id", "added_at")}
                for r in runs]

    assert len(exported.runs) == 3
    assert kept(list_runs(other).runs) == kept(imported.runs) == kept(exported.runs)
    assert remove_run(imported.runs[0].id, other).extra["removed"] == imported.runs[0].id
    assert len(list_runs(other).runs) == 2
    with pytest.raises(InputError, match="no run #"):
        remove_run(999, other)


BAD = [
    ("value", "-5", "field 'value'"),
    ("value", "nan", "field 'value' = 'nan': not a finite number"),
    ("value", "5000", "field 'value' = '5000': above the memory-bandwidth ceiling"),
    ("gpu", "rtx-4090x", "field 'gpu': unknown GPU 'rtx-4090x': did you mean rtx-4090"),
    ("engine", "ollama2", "field 'engine'"),
    ("metric", "latency", "field 'metric'"),
    ("batch", "1.5", "field 'batch'"),
    ("model", "no-such-model-xyz", "field 'model'"),
]


@pytest.mark.parametrize(("column", "value", "said"), BAD, ids=[b[0] + "=" + b[1] for b in BAD])
def test_a_bad_run_refuses_the_whole_file_naming_the_field_and_stores_nothing(
        using, tmp_path, column, value, said):
    good = {"gpu": "rtx-4090", "engine": "llamacpp", "model": "llama-3.1-8b",
            "precision": "q4_k_m", "metric": "decode_tokens_per_s", "value": "150",
            "batch": "1"}
    bad = {**good, column: value}
    path = tmp_path / "runs.csv"
    path.write_text(",".join(good) + "\n" + ",".join(good.values()) + "\n"
                    + ",".join(bad.values()) + "\n")
    with pytest.raises(InputError, match="runs.csv row 3: " + said.replace("(", r"\(")):
        add_runs(path, store=using)
    assert list_runs(using).runs == ()  # the good first row was not stored either


def test_a_file_without_its_card_is_refused_until_the_option_gives_it(using):
    with pytest.raises(InputError, match="field 'gpu' is missing: the file does not say it, "
                                         "so give --gpu"):
        add_runs(DATA / "vllm-bench-serve-h100.json", store=using)
    with pytest.raises(InputError, match=r"field 'gpu': .*name the variant"):  # no guessing
        add_runs(DATA / "vllm-bench-serve-h100.json", {"gpu": "h100"}, store=using)
    assert add_runs(DATA / "vllm-bench-serve-h100.json", {"gpu": "h100-sxm"},
                    store=using).runs


def test_the_command_line(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(tmp_path / "p.sqlite"))
    r = cli("runs", "add", str(DATA / "sglang-bench-serving-h100.jsonl"), "--gpu", "h100-sxm")
    assert r.code == 2 and "field 'model' is missing" in r.err and "Traceback" not in r.err
    r = cli("runs", "add", str(DATA / "llama-bench-rtx4090.json"), "--json")
    assert r.code == 0, r.err
    assert [x["metric"] for x in r.json()["runs"]] == ["prefill_tokens_per_s",
                                                       "decode_tokens_per_s"]
    listed = cli("runs", "list", "--json").json()
    assert [x["id"] for x in listed["runs"]] == [1, 2]
    assert cli("runs", "remove", "7").code == 2


def test_the_mcp_speed_tool_answers_with_the_runs(using):
    import anyio

    from whichgpu.agents.local import LocalSurface
    from whichgpu.agents.tools import call

    add_runs(DATA / "llama-bench-rtx4090.json", store=using)
    answer, said = anyio.run(call, LocalSurface(), "speed", LLAMA.model_dump(
        exclude_defaults=True))
    assert answer.data == speed(LLAMA).to_json()
    assert "Measured: from 2 run(s) of this store (runs [1, 2])." in said


def test_recommend_uses_the_runs_and_names_them(tmp_path, monkeypatch):
    from whichgpu.answers.advice import recommend
    from whichgpu.answers.requests import Recommend

    monkeypatch.setenv("WHICHGPU_PRICE_STORE", str(tmp_path / "p.sqlite"))
    q = Recommend(model="llama-3.1-8b", quant="q4_k_m", engine="llamacpp", tokens="1M",
                  only="rtx-4090")

    def one_card(data):
        return next(o for o in data["options"] if o["gpu"] == "rtx-4090" and o["count"] == 1)

    before = one_card(recommend(q).to_json())
    add_runs(DATA / "llama-bench-rtx4090.json", store=tmp_path / "p.sqlite")
    after = one_card(recommend(q).to_json())
    assert "measured_runs" not in before
    # the decode run (#2) moves a server's throughput, the rate the option is priced by
    moved = after["measured_runs"]["rates"]["output_tokens_per_s"]
    assert [r["id"] for r in moved["runs"]] == [2]
    assert width(after["rate"]) < width(before["rate"])
    assert after["rate"]["typical"] != before["rate"]["typical"]
    assert "speed from 1 run(s) of this store: runs #2" in after["notes"]


def test_a_store_that_cannot_be_reached_leaves_the_answer_without_runs(monkeypatch, caplog):
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    answer = speed(LLAMA).to_json()
    assert "measured_runs" not in answer and answer["decode_tokens_per_s"]["typical"] > 0
    assert "measured runs not used" in caplog.text


def test_family_runs_alone_never_lower_the_confidence(using):
    before = speed(LLAMA).to_json()["confidence"]
    add_runs(DATA / "runs.csv", store=using)
    after = speed(LLAMA).to_json()
    assert "measured_runs" in after
    levels = ("low", "medium", "high")
    assert levels.index(after["confidence"]) >= levels.index(before)


@pytest.mark.parametrize(("named", "preset"), [
    ("Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b"),  # a GGUF file's stem
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),  # vLLM's model_id
    ("Qwen2.5-7B-Instruct", "qwen2.5-7b"),
    ("Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),  # a Hub id without its organisation
])
def test_the_model_names_files_use_resolve_to_the_presets(named, preset):
    from whichgpu.estimate.measured import resolve_run_model

    assert resolve_run_model(named).id == preset


def test_the_same_file_added_twice_is_stored_once(using):
    first = add_runs(DATA / "llama-bench-rtx4090.json", store=using)
    again = add_runs(DATA / "llama-bench-rtx4090.json", store=using)
    assert again.runs == () and len(again.skipped) == 2
    assert all("already stored as #" in s for s in again.skipped)
    assert [r.id for r in list_runs(using).runs] == [r.id for r in first.runs]


def test_many_runs_narrow_the_range_only_down_to_the_floor(using, tmp_path):
    from whichgpu.estimate.measured import FLOOR_SIGMA, Z80

    path = tmp_path / "many.csv"
    rows = [f"rtx-4090,llamacpp,llama-3.1-8b,q4_k_m,decode_tokens_per_s,{150 + i % 3},1,"
            f"2026-11-{i + 1:02d}" for i in range(25)]
    path.write_text("gpu,engine,model,precision,metric,value,batch,date\n" + "\n".join(rows))
    assert len(add_runs(path, store=using).runs) == 25
    r = speed(LLAMA).to_json()["decode_tokens_per_s_per_sequence"]
    assert width(r) == pytest.approx(math.exp(2 * Z80 * FLOOR_SIGMA), rel=1e-6)
    assert 149 < r["typical"] < 153  # at the runs, which agree
