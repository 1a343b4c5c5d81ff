"""Fuzzing the REST API and the pages (issues 21, 36): hypothesis builds query strings and JSON
bodies from each endpoint's and page's own fields, mixing values the CLI reads with hostile
ones (NaN, infinities, 400-digit integers, paths, NUL bytes, 300-byte names, deep nesting,
wrong types) and pasted config.json files with mutated fields. Whatever comes in, the answer
is 200, 413/414 or a one-line 422, never a 500, always strict JSON.

The examples are fixed (``derandomize``) and few, so ``make test`` stays quick; set
``WHICHGPU_FUZZ_EXAMPLES=2000`` for a long run (each test then takes minutes).
"""

from __future__ import annotations

import json
import math
import os
from importlib import resources
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from whichgpu.answers import requests as r
from whichgpu.answers.request import for_web

EXAMPLES = int(os.environ.get("WHICHGPU_FUZZ_EXAMPLES", "25"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck), print_blob=True)
PRESETS = resources.files("whichgpu.models").joinpath("presets")
LLAMA = json.loads(PRESETS.joinpath("llama-3.1-8b", "config.json").read_text("utf-8"))

HOSTILE = ["nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "1e999", "1e400", "-1e400",
           "1e9999k", "9" * 400, "-" + "9" * 400, "1e-320",
           "-" + "9" * 40, "0", "-1", "-0", "1e-400", "", " ", "\x00", "a\x00b", "é" * 150,
           "x" * 300, "../../etc/passwd", "/dev/zero", "etc/passwd", "//evil.example/x",
           "C:\\x", "~/.ssh/id_rsa", "config.json", "a/b/c", "org/name", "1..2", "2h..1h",
           "1,000,000,000,000,000,000", "1e30USD", "-5EUR", "NaNUSD", "0.5", "%", "60%",
           "1e308h", "3h20m", "8k", "1M", "70B", "none", "true", "[]", "{}"]
GOOD = {
    "model": ["llama-3.1-8b", "llama-3.1-70b", "flux.1-dev", "7B", "70B", "deepseek-v3",
              "meta-llama/Llama-3.1-8B-Instruct", "someone/uncached-model"],
    "gpu": ["h100", "h100-sxm", "rtx-4090", "a100", "b200"],
    "task": ["inference", "lora", "qlora", "full-ft", "pretrain", "image", "video"],
    "quant": ["bf16", "fp8", "awq", "q4_k_m", "nf4", "gptq"],
    "engine": ["vllm", "llamacpp", "transformers", "sglang"],
    "context": ["8k", "2k", "128k", "16M"], "prices": ["article-000", "vramfarm-2026-11"],
    "currency": ["EUR", "USD", "ZZZ"], "workload": ["inference", "fine-tuning", "training"],
    "duration": ["3h20m", "2h..4h", "90s"], "rate": [["EURUSD=1.08"], ["EURUSD=nan"]],
    "budget_per_hour": ["1USD", "none", "2EUR"], "hours_per_month": ["100", "730", "0"],
    "horizon_months": ["12", "120", "0"],
}


def field_values(name: str, annotation: Any) -> st.SearchStrategy:
    """Values for one request field: its good values, hostile text, and numbers of any size."""
    text = st.sampled_from(HOSTILE) | st.sampled_from(GOOD.get(name, ["1"])) | st.text(
        max_size=30)
    # issue 36: infinities (Infinity, 1e999 in a body) and 400-digit integers in every field,
    # drawn often enough that each endpoint meets them within the default examples
    extreme = st.sampled_from([math.inf, -math.inf, 10**400, -(10**400), 5e-324])
    numbers = extreme | st.integers(-10**30, 10**30) | st.floats(allow_nan=True,
                                                                 allow_infinity=True)
    values = text | numbers | st.booleans() | st.none()
    if name == "rate":
        return st.lists(text, max_size=3) | values
    return values


def request_strategy(model: type[BaseModel], extra: bool = True) -> st.SearchStrategy:
    fields = model.model_fields
    required = {n: st.sampled_from(GOOD.get(n, ["1"])) | field_values(n, fi.annotation)
                for n, fi in fields.items() if fi.is_required()}
    optional = {n: field_values(n, fi.annotation) for n, fi in fields.items()
                if n not in required}
    body = st.fixed_dictionaries(required, optional=optional)
    if extra:
        body = st.tuples(body, st.dictionaries(st.sampled_from(["colour", "a" * 50, "__x"]),
                                               st.text(max_size=5), max_size=1)).map(
            lambda t: {**t[0], **t[1]})
    return body


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.text(max_size=6), children, max_size=3), max_leaves=12)


@st.composite
def pasted_configs(draw) -> dict:
    """A real config with a few fields replaced by anything JSON can hold."""
    cfg = dict(LLAMA)
    keys = draw(st.lists(st.sampled_from(sorted(cfg) + ["num_experts", "layer_types",
                                                       "text_config", "sliding_window"]),
                         max_size=4, unique=True))
    for k in keys:
        cfg[k] = draw(json_values | st.integers(-10**12, 10**12) | st.sampled_from(
            [0, -1, 100_000, 10**9, 2**63, 1.5, "32", [], {}, None]))
    return cfg


def check(r, where: str) -> None:
    assert r.status_code in (200, 413, 414, 422), (where, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("application/json"), where
    data = json.loads(r.text, parse_constant=lambda c: pytest.fail(f"{c} in {where}"))
    if r.status_code != 200:
        assert isinstance(data["detail"], str) and "\n" not in data["detail"], (where, data)
        assert "internal error" not in data["detail"]


def _query(params: dict) -> list[tuple[str, str]]:
    out = []
    for k, v in params.items():
        if v is None:
            continue
        for item in v if isinstance(v, list) else [v]:
            out.append((k, json.dumps(item) if isinstance(item, float) else str(item)))
    return out


GETS = [(f"/api/v1/{path}", for_web(model)) for path, model in (
    ("memory", r.Memory), ("speed", r.Speed), ("recommend", r.Recommend),
    ("checklist", r.Checklist), ("tco", r.Tco), ("cost", r.Cost), ("gpus", r.Gpus),
    ("prices", r.PricesList), ("prices/history", r.PricesHistory))]
POSTS = [(f"/api/v1/{path}", for_web(model, body=True)) for path, model in (
    ("memory", r.Memory), ("speed", r.Speed), ("recommend", r.Recommend),
    ("checklist", r.Checklist), ("tco", r.Tco))]


@pytest.mark.parametrize("path,model", GETS, ids=[p for p, _ in GETS])
def test_fuzzed_queries_never_get_a_server_error(web, path, model):
    @FUZZ
    @given(params=request_strategy(model))
    def run(params):
        check(web.get(path, params=_query(params)), f"GET {path} {params}")

    run()


@pytest.mark.parametrize("path,model", POSTS, ids=[p for p, _ in POSTS])
def test_fuzzed_bodies_never_get_a_server_error(web, path, model):
    @FUZZ
    @given(body=request_strategy(model))
    def run(body):
        raw = json.dumps(body, allow_nan=True)  # NaN and Infinity literals too
        check(web.post(path, content=raw, headers={"content-type": "application/json"}),
              f"POST {path} {raw[:300]}")

    run()


@pytest.mark.parametrize("path", ["/api/v1/memory", "/api/v1/recommend", "/api/v1/speed"])
def test_fuzzed_pasted_configs_never_get_a_server_error(web, path):
    @FUZZ
    @given(config=pasted_configs(), context=st.sampled_from([None, "8k", "1M"]))
    def run(config, context):
        body = {"config": config, "context": context,
                **({"gpu": "h100-sxm"} if path.endswith("speed") else {})}
        raw = json.dumps(body, allow_nan=True)
        check(web.post(path, content=raw, headers={"content-type": "application/json"}),
              f"POST {path} {raw[:300]}")

    run()


@pytest.mark.parametrize("path", ["/api/v1/models/{}", "/api/v1/gpus/{}", "/memory?model={}",
                                  "/gpus/{}", "/?model={}"])
def test_fuzzed_names_never_get_a_server_error(web, path):
    from urllib.parse import quote

    @FUZZ
    @given(name=st.sampled_from(HOSTILE) | st.text(min_size=1, max_size=120))
    def run(name):
        r = web.get(path.format(quote(name, safe="")), headers={"accept": "text/html"})
        assert r.status_code in (200, 404, 413, 414, 422), (path, name, r.status_code)
        assert "Traceback" not in r.text and "internal error" not in r.text

    run()


PAGES = [("/", r.Recommend), ("/memory", r.Memory), ("/cost", r.Recommend),
         ("/rent-or-buy", r.Tco), ("/prices", r.PricesList), ("/gpus", r.Gpus)]
EXTREMES = ["Infinity", "-Infinity", "1e999", "9" * 400, "-" + "9" * 400]


@pytest.mark.parametrize("path,model", PAGES, ids=[p for p, _ in PAGES])
def test_every_page_field_takes_infinities_and_400_digit_integers_without_a_500(web, path,
                                                                                model):
    """Issue 36: every field of every page's form (and the page's own amount and unit) with an
    infinity or a 400-digit integer: the page answers (200) or says what is wrong (422) in the
    reader's language, never a 500 (a 309+-digit integer overflowed the number formatter)."""
    names = sorted({*for_web(model).model_fields, "amount"})
    for i, name in enumerate(names):
        value = EXTREMES[i % len(EXTREMES)]
        lang = ("en", "fr")[i % 2]
        res = web.get(path, params={"model": "7B", name: value, "lang": lang},
                      headers={"accept": "text/html"})
        assert res.status_code in (200, 413, 414, 422), (path, name, value, res.status_code)
        assert "Traceback" not in res.text and "internal error" not in res.text, (path, name)


@pytest.mark.parametrize("path,model", PAGES, ids=[p for p, _ in PAGES])
def test_fuzzed_page_queries_never_get_a_server_error(web, path, model):
    @FUZZ
    @given(params=request_strategy(model, extra=False))
    def run(params):
        res = web.get(path, params=_query(params), headers={"accept": "text/html"})
        assert res.status_code in (200, 413, 414, 422), (path, params, res.status_code)
        assert "Traceback" not in res.text and "internal error" not in res.text

    run()


def test_fuzzed_memory_form_pastes_never_get_a_server_error(web):
    @FUZZ
    @given(text=st.sampled_from(["[" * 5000, "{" * 3000, '{"a": NaN}', "1e400", "null", "[]",
                                 '"x"', "{}"]) | pasted_configs().map(json.dumps) |
           st.text(max_size=200))
    def run(text):
        r = web.post("/memory", data={"config": text}, headers={"accept": "text/html"})
        assert r.status_code in (200, 413, 422), (text[:100], r.status_code)
        assert "Traceback" not in r.text and "internal error" not in r.text

    run()
