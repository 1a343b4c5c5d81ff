"""Issue 26, part 2: an answer that needs more GPUs of one kind from one provider than it is
assumed to rent on demand is flagged, with the number it needs and the assumption (a stated
ceiling with its basis, cost/data/capacity.toml, overridable)."""

from __future__ import annotations

from whichgpu.cost.capacity import ENV, ceiling

MILLION = ("recommend", "llama-3.1-8b", "--users", "1000000", "--tokens-per-s-each", "20")


def test_the_ceiling_is_stated_with_its_basis():
    c = ceiling("Vast.ai")
    assert c.gpus == 256 and "S5" in c.source and "capacity.toml" in c.source


def test_the_million_user_question_is_flagged_with_the_machines_it_needs(cli):
    out = cli(*MILLION, "--json")
    assert out.code == 0, out.err
    data = out.json()
    best = data["options"][0]
    cap = best["capacity"]
    assert cap["exceeds"] and cap["gpus_needed"] == best["gpus_paid"] > cap["ceiling"]["gpus"]
    line = data["explanation"][1]  # second, right after the winner
    assert f"{best['machines']:,} machines" in line and f"{best['gpus_paid']:,} x" in line
    assert "no provider is known to rent that many" in line
    assert cap["ceiling"]["source"] in line
    assert any(f"{best['gpus_paid']:,} GPUs" in n for n in best["notes"])
    text = " ".join(cli(*MILLION).out.split())
    assert "no provider is known to rent that many on demand" in text


def test_an_ordinary_answer_is_not_flagged(cli):
    data = cli("recommend", "llama-3.1-8b", "--tokens", "10M", "--json").json()
    assert all("capacity" not in o for o in data["options"])
    assert not any("known to rent that many" in line for line in data["explanation"])


def test_the_ceiling_can_be_overridden(cli, monkeypatch):
    monkeypatch.setenv(ENV, "10000000")
    data = cli(*MILLION, "--json").json()
    assert "capacity" not in data["options"][0]
    monkeypatch.setenv(ENV, "lots")
    bad = cli(*MILLION, "--json")
    assert bad.code == 2 and ENV in bad.err and "Traceback" not in bad.err


def test_cost_count_says_when_it_is_more_than_a_provider_rents(cli):
    big = cli("cost", "--gpu", "h100-sxm", "--count", "1000", "--duration", "30d",
              "--json").json()
    assert big["capacity"]["exceeds"] and big["capacity"]["gpus_needed"] == 1000
    assert any("more than the 256 GPUs" in a for a in big["assumptions"])
    small = cli("cost", "--gpu", "h100-sxm", "--count", "8", "--duration", "1h",
                "--json").json()
    assert not small["capacity"]["exceeds"]


def test_rest_and_the_page_flag_it_in_english_and_french(web):
    api = web.get("/api/v1/recommend?model=llama-3.1-8b&users=1000000&tokens_per_s_each=20")
    assert api.status_code == 200, api.text
    assert api.json()["options"][0]["capacity"]["exceeds"]
    q = "/?model=llama-3.1-8b&users=1000000&tokens_per_s_each=20"
    en = web.get(q).text
    fr = web.get(q, headers={"Accept-Language": "fr"}).text
    assert "no provider is known to rent that many on demand" in en
    assert "aucun fournisseur n’est connu pour en louer autant" in fr
