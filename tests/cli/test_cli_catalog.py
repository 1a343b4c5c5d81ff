from whichgpu.catalog.prices.market import market_feed_names

"""The catalog commands as a user runs them: output, JSON shape, exit codes, no tracebacks."""


def test_gpus_json_lists_every_gpu_with_the_stable_keys(cli):
    r = cli("gpus", "--json")
    assert r.code == 0
    data = r.json()
    assert len(data["gpus"]) >= 25
    for g in data["gpus"]:
        assert {"id", "name", "memory_bytes", "bandwidth_bytes_per_s", "tflops"} <= set(g)


def test_gpus_prices_come_from_the_store_in_one_currency_with_their_age(cli):
    data = cli("gpus", "--json").json()
    priced = [g for g in data["gpus"] if g.get("price_per_hour")]
    assert priced and {g["price_per_hour"]["currency"] for g in priced} == {data["currency"]}
    feeds = {f["feed"]: f for f in data["price_selection"]["feeds"]}
    assert set(market_feed_names()) <= set(feeds)  # the market snapshot, dated
    assert not any(f["undated"] for f in feeds.values())
    shipped = cli("gpus", "--prices", "shipped", "--json").json()["price_selection"]
    feeds = {f["feed"]: f for f in shipped["feeds"]}
    assert feeds["article-000"]["undated"] and feeds["vramfarm-2026-11"]["age_s"] > 0
    assert any("converted to" in w for w in shipped["warnings"])


def test_gpus_json_with_prices_gives_price_and_cost_per_tflop(cli):
    r = cli("gpus", "--prices", "vramfarm-2026-11", "--priced-only", "--json")
    rows = {g["id"]: g for g in r.json()["gpus"]}
    assert rows["rtx-4090"]["price_per_hour"] == {"amount": 0.59, "currency": "EUR"}
    assert rows["h100-sxm"]["cost_per_tflop_hour"]["amount"] == round(3.90 / 989.5, 6)


def test_gpus_filters_by_memory_vendor_and_form_factor(cli):
    ids = {g["id"] for g in cli("gpus", "--min-memory", "141GB", "--json").json()["gpus"]}
    assert {"h200-sxm", "b200", "mi300x"} <= ids and "h100-sxm" not in ids
    amd = cli("gpus", "--vendor", "amd", "--json").json()["gpus"]
    assert amd and all(g["vendor"] == "amd" for g in amd)
    sxm = cli("gpus", "--form-factor", "sxm", "--json").json()["gpus"]
    assert sxm and all(g["form_factor"] == "sxm" for g in sxm)


def test_gpus_table_says_which_figure_it_uses(cli):
    r = cli("gpus", "--prices", "article-000", "--precision", "article-000:fp16")
    assert r.code == 0 and "article-000:fp16" in r.out and "rtx-4090" in r.out


def test_gpu_shows_sources_offers_and_best_uses(cli):
    r = cli("gpu", "rtx-4090")
    assert r.code == 0
    assert "nv-ada-wp" in r.out and "S24" in r.out
    assert "skypilot/" in r.out or "RunPod" in r.out  # offers from the market snapshot


def test_ambiguous_gpu_prints_a_note_on_stderr(cli):
    r = cli("gpu", "h100", "--json")
    assert r.code == 0 and r.json()["id"] == "h100-sxm"
    assert "ambiguous" in r.err


def test_unknown_gpu_exits_2_with_suggestions_and_no_traceback(cli):
    r = cli("gpu", "h10")
    assert r.code == 2
    assert "did you mean h100-sxm" in r.err and "Traceback" not in r.err


def test_bad_size_and_bad_option_exit_2(cli):
    assert cli("gpus", "--min-memory", "48").code == 2
    assert cli("gpus", "--bogus").code == 2
    assert cli("gpus", "--precision", "fp7").code == 2


def test_gpus_unknown_vendor_or_form_factor_exits_2_with_the_valid_values(cli):
    r = cli("gpus", "--vendor", "qualcomm")
    assert r.code == 2 and "nvidia, amd, intel, apple" in r.err and r.out == ""
    r = cli("gpus", "--form-factor", "foo", "--json")
    assert r.code == 2 and "sxm, pcie, nvl, oam, superchip, consumer, unified" in r.err
    assert r.out == ""
    # case does not matter for valid values
    assert cli("gpus", "--vendor", "AMD", "--json").code == 0


def test_gpu_without_a_public_price_says_unknown_and_why(cli):
    r = cli("gpu", "a10g")
    assert r.code == 0 and "unknown: no public price" in r.out and "AWS" in r.out
    data = cli("gpu", "a10g", "--json").json()
    assert data["purchase_price"] is None and data["purchase_price_status"] == "unknown"
    assert data["no_public_price"]["source"] in data["sources"]


def test_gpu_shows_form_factor_and_host_link_with_their_sources(cli):
    r = cli("gpu", "h100-sxm")
    assert r.code == 0
    lines = r.out.splitlines()
    assert any("host link" in line and "pcie5" in line and "nv-h100" in line for line in lines)
    assert any("Form factor" in line and "sxm" in line and "S21" in line for line in lines)
    assert "25,000-33,600 USD (2026)" in r.out
