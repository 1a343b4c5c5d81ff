"""Issue 32: the advisor asks what the command line asks (own card by catalog id or memory,
llama.cpp with system RAM, spot) and says the weights' real format, in English and French."""

from __future__ import annotations

import html as html_lib
import re


def _text(page: str) -> str:
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_own_card_by_its_catalog_id(web):
    """Was: 'Your own card' refused rtx-3060-12gb (a KEY=VALUE spec only) and its line showed
    'decode_tokens_per_s'."""
    q = {"task": "inference", "model": "llama-3.1-8b", "quant": "q4_k_m", "amount": "1M",
         "unit": "tokens", "gpu": "rtx-3060-12gb"}
    r = web.get("/", params=q)
    assert r.status_code == 200, _text(r.text)[:300]
    owned = re.search(r"<h3>Your card \(owned: no rental price\)</h3>\s*<ul>(.*?)</ul>",
                      r.text, re.S)
    assert owned, "no own-card section"
    line = _text(owned.group(1)).strip()
    assert line.startswith("rtx-3060-12gb: fits")
    api = web.get("/api/v1/recommend", params={**{k: v for k, v in q.items()
                                                  if k not in ("amount", "unit")},
                                               "tokens": "1M"}).json()
    assert api["owned"][0]["gpu"] == "rtx-3060-12gb" and api["owned"][0]["fits"]
    assert "tokens/s" in line and "decode_tokens_per_s" not in r.text
    assert re.search(r'<input id="f-gpu" name="gpu" type="text" value="rtx-3060-12gb"', r.text)


def test_llamacpp_with_system_ram_on_your_card(web):
    """gpt-oss-120b with its experts in system RAM on a 24 GB card, asked on the advisor:
    the answer says llama.cpp's plan and its speed (as recommend --json's notes do)."""
    q = {"task": "inference", "model": "gpt-oss-120b", "amount": "1M", "unit": "tokens",
         "engine": "llamacpp", "gpu": "rtx-4090", "host_ram": "64GB"}
    api = web.get("/api/v1/recommend", params={**{k: v for k, v in q.items()
                                                  if k not in ("amount", "unit")},
                                               "tokens": "1M"}).json()
    note = next(n for n in api["notes"] if "not ranked with the rentals" in n)
    en = web.get("/", params=q).text
    assert 'data-msg="recommend.own_offload"' in en
    assert _text(note) in _text(en)  # the same plan and the same tokens/s as the JSON
    assert re.search(r'<option value="llamacpp" selected>', en)
    fr = _text(web.get("/", params={**q, "lang": "fr"}).text)
    assert "votre carte n’est pas classée avec les locations" in fr
    assert "-ngl 999 --n-cpu-moe" in fr  # llama.cpp's own flags, which the user runs


def test_spot_is_a_control_and_asks_the_apis_question(web):
    q = {"task": "lora", "model": "llama-3.1-8b", "amount": "2000", "unit": "steps"}
    on = web.get("/", params={**q, "spot": "true"}).text
    assert re.search(r'<select id="f-spot" name="spot">\s*<option value="">[^<]*</option>\s*'
                     r'<option value="true" selected>', on)
    api = web.get("/api/v1/recommend", params={"task": "lora", "model": "llama-3.1-8b",
                                               "steps": "2000", "spot": "true"}).json()
    first = re.search(r'<tr class="best" data-gpu="([^"]+)"', on).group(1)
    assert first == api["options"][0]["gpu"]
    assert "on spot, expected" in _text(on) or "spot" in api["options"][0]["pricing"]


def test_an_awq_answer_says_its_weights_are_4_bit(web):
    """Was: 'Speed second: memory-bandwidth-bound at bf16' for an AWQ model."""
    q = {"task": "inference", "model": "llama-3.1-70b", "quant": "awq", "amount": "1M",
         "unit": "tokens"}
    en = _text(web.get("/", params=q).text)
    assert re.search(r"-bound with awq weights \(computed at [^)]+\)", en), en[:2000]
    assert not re.search(r"-bound at bf16", en)
    fr = _text(web.get("/", params={**q, "lang": "fr"}).text)
    assert re.search(r"avec des poids en awq \(calculés en [^)]+\)", fr)
    bf16 = _text(web.get("/", params={**q, "model": "llama-3.1-8b", "quant": "bf16"}).text)
    assert "-bound at bf16" in bf16  # weights at the compute precision: said once


NEMO = {"model_type": "mistral", "hidden_size": 5120, "intermediate_size": 14336,
        "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
        "head_dim": 128, "vocab_size": 131072, "max_position_embeddings": 1024000,
        "torch_dtype": "bfloat16"}  # Mistral-Nemo-Instruct-2407's config.json (its Hub card)


def test_a_pasted_config_json_gets_the_whole_answer(web):
    """Was: a model that is not a preset led nowhere offline (the VRAM selector's paste gave
    memory only). The advisor's paste gives the ranking, as POST /api/v1/recommend does."""
    import json

    api = web.post("/api/v1/recommend", json={"config": NEMO, "quant": "q4_k_m",
                                              "tokens": "1M"}).json()
    r = web.post("/", data={"config": json.dumps(NEMO), "quant": "q4_k_m", "amount": "1M",
                            "unit": "tokens", "task": "inference"})
    assert r.status_code == 200, _text(r.text)[:400]
    first = re.search(r'<tr class="best" data-gpu="([^"]+)"', r.text).group(1)
    assert first == api["options"][0]["gpu"]
    assert 'id="export-form"' not in r.text  # a GET export cannot carry the paste
    assert json.dumps(NEMO) in html_lib.unescape(r.text)  # kept in the box to change it
    bad = web.post("/", data={"config": "{'a': 1}", "amount": "1M", "unit": "tokens",
                              "lang": "fr"})
    assert bad.status_code == 422 and 'role="alert"' in bad.text


def test_an_unreachable_hub_is_said_in_the_pages_words(web, monkeypatch):
    """Was: 'check the network (or HF_ENDPOINT), set HF_HUB_OFFLINE=1' on the page, in
    English on the French page: variables of the server its reader cannot set."""
    import socket

    import huggingface_hub.constants as constants

    from whichgpu.web import resolve

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the 'Hub' refuses the connection
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        f"http://127.0.0.1:{port}" + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("WHICHGPU_OFFLINE", raising=False)
    resolve.clear_hub_cache()
    q = {"task": "inference", "model": "someone/uncached-model-xyz", "amount": "1M",
         "unit": "tokens"}
    en = web.get("/", params=q)
    assert en.status_code == 422
    text = _text(en.text)
    assert "this server cannot reach the Hugging Face Hub" in text, text[-600:]
    assert "HF_" not in text and "paste the config.json" in text
    fr = _text(web.get("/", params={**q, "lang": "fr"}).text)
    assert "HF_" not in fr and "collez le config.json" in fr
    resolve.clear_hub_cache()


def test_the_chat_answer_says_its_speed_and_a_borderline_fit_in_the_verdict(web):
    """Was: 'rtx-6000-ada, $0.37 per hour' with the speed only in the table and the
    borderline fit in the 7th line of 'Why'."""
    q = {"task": "inference", "model": "llama-3.1-70b", "quant": "awq", "context": "8k"}
    api = web.get("/api/v1/recommend", params=q).json()
    best = api["options"][0]
    page = web.get("/", params=q).text
    verdict = _text(re.search(r'<div class="verdict">(.*?)</div>', page, re.S).group(1))
    rate = best["rate"]["typical"]
    assert re.search(rf"About {rate:.3g} tokens/s \(", verdict), verdict
    borderline = any("borderline fit" in n for n in best["notes"])
    assert ("borderline fit" in verdict) == borderline


def test_an_hourly_ranking_does_not_repeat_the_price(web):
    """Was: Price/h, Cost and Cost range three copies of one number, Time '–' and a Pareto
    column without a time, for a question with no amount of work."""
    chat = web.get("/", params={"task": "inference", "model": "llama-3.1-8b"}).text
    head = re.search(r'<table class="options" data-sortable>\s*<thead>(.*?)</thead>', chat,
                     re.S).group(1)
    cols = [_text(c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)]
    assert "Price/h" in cols and not {"Time", "Cost", "Cost range", "Pareto"} & set(cols)
    row = re.search(r'<tr class="best".*?</tr>', chat, re.S).group(0)
    assert len(re.findall(r"<t[dh][ >]", row)) == len(cols)
    job = web.get("/", params={"task": "inference", "model": "llama-3.1-8b", "amount": "1M",
                               "unit": "tokens"}).text
    assert "<th scope=\"col\" class=\"num\">Cost range</th>" in job


def test_a_chosen_engine_is_said_in_french(web):
    """Was: 'Understood: ... engine llamacpp.' left in English on the French page as soon
    as an engine was chosen (the engine vocabulary had no French words)."""
    for engine in ("llamacpp", "vllm"):
        page = web.get("/", params={"task": "inference", "model": "llama-3.1-8b",
                                    "amount": "1M", "unit": "tokens", "engine": engine,
                                    "lang": "fr"}).text
        understood = re.search(r'<p class="understood">(.*?)</p>', page, re.S).group(1)
        assert 'lang="en"' not in understood and "Compris" in understood, understood


def test_the_english_page_names_the_engine_as_the_french_one_does(web):
    """Was: 'Understood: ... engine vllm.' on the English page where the French page said
    'moteur vLLM' (the English page printed the engine's identifier)."""
    for engine, name in (("vllm", "vLLM"), ("llamacpp", "llama.cpp")):
        said = {}
        for lang in ("en", "fr"):
            page = web.get("/", params={"task": "inference", "model": "llama-3.1-8b",
                                        "amount": "1M", "unit": "tokens", "engine": engine,
                                        "lang": lang}).text
            said[lang] = re.search(r'<p class="understood">(.*?)</p>', page, re.S).group(1)
        assert f"engine {name}." in said["en"], said["en"]
        assert f"moteur {name}." in said["fr"], said["fr"]
