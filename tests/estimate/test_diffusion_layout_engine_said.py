"""A diffusion layout the default engine does not run is run by the engine that does, said
(audit 8, defect 5 / fix9): ``--ring-degree 2`` (or ``--tp 2``) with no engine named was
refused because diffusers, the default, does not split a diffusion model that way; it is now
estimated with SGLang, and the answer says so and names xDiT's USP, the same split. An engine
the user named that cannot run the layout is still refused."""

from __future__ import annotations

ASK = ("hunyuanvideo", "--gpu", "h100-sxm", "--count", "2")


def test_a_ring_degree_with_no_engine_named_is_run_by_sglang_and_said(cli):
    r = cli("speed", *ASK, "--ring-degree", "2", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["engine"] == "sglang" and d["layout_ring"] == 2 and d["layout_sp"] == 2
    said = d["assumptions"][0]
    assert said.startswith("diffusers, the default engine,") and "ring=2" in said
    assert "xDiT" in said and "sglang" in said


def test_the_memory_answer_takes_the_same_engine(cli):
    r = cli("memory", *ASK, "--ring-degree", "2", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert d["engine"] == "sglang"
    assert any("xDiT" in n for n in d["notes"])


def test_a_named_engine_that_cannot_split_is_still_refused(cli):
    r = cli("speed", *ASK, "--ring-degree", "2", "--engine", "diffusers")
    assert r.code == 2 and "ring attention" in r.err


def test_the_default_layout_is_not_moved(cli):
    d = cli("speed", *ASK, "--json").json()  # no split asked: no sentence of this change
    assert not any("the default engine, does not split" in a for a in d["assumptions"])
