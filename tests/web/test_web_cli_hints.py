"""Each page shows "the same numbers from the command line": run that command and check it
works and gives the page's answer (the hints once named a flag the CLI lacked, dropped the
cost page's GPU list, and printed 'prices list None')."""

from __future__ import annotations

import html
import re
import shlex

import pytest

ARTICLE_CARDS = "rtx-4090,a100-80gb-sxm,h100-sxm"
FLUX = ("/?task=image&model=flux.1-dev&quant=fp8&amount=1000&unit=images"
        "&prices=vramfarm-2026-11")


def hint(page: str) -> list[str]:
    """The command shown under a result, as arguments (without 'whichgpu' and '--json')."""
    m = re.search(r"<pre[^>]*><code>(.*?) --json</code></pre>", page, re.S)
    assert m, "no command on the page"
    args = shlex.split(html.unescape(m.group(1)))
    assert args[0] == "whichgpu"
    assert "None" not in args
    return args[1:]


def run(cli, args: list[str]):
    """The CLI's JSON for the hint (which must run as shown: exit 0)."""
    result = cli(*args, "--json")
    assert result.code == 0, (args, result.err)
    return result.json()


def rows(page: str, table_class: str) -> list[str]:
    table = re.search(rf'<table[^>]*class="{table_class}".*?</table>', page, re.S).group(0)
    return re.findall(r'<tr[^>]*data-gpu="([^"]+)"', table)


def same_first_gpus(data: dict, page: str, n: int = 3) -> bool:
    """The page's first rows (one per GPU, at its best count) are the GPUs of the command's
    first options, in order (the command lists every count of a GPU)."""
    ranked = list(dict.fromkeys(o["gpu"] for o in data["options"]))[:n]
    return len(ranked) >= 1 and rows(page, "options")[:len(ranked)] == ranked


def test_advisor_hint_gives_the_pages_ranking(web, cli):
    page = web.get(FLUX).text
    data = run(cli, hint(page))
    assert same_first_gpus(data, page)


def test_advisor_hint_keeps_the_compared_gpus(web, cli):
    page = web.get(FLUX + "&only=" + ARTICLE_CARDS).text
    args = hint(page)
    assert args[args.index("--only") + 1] == ARTICLE_CARDS
    data = run(cli, args)
    assert data["options"][0]["gpu"] == rows(page, "options")[0] == "rtx-4090"


def test_cost_page_hint_compares_the_same_gpus(web, cli):
    """Without --only the command ranked the whole catalog (2 x L40S first), not the page's
    three cards."""
    page = web.get("/cost").text
    args = hint(page)
    assert args[args.index("--only") + 1] == ARTICLE_CARDS
    data = run(cli, args)
    assert data["options"][0]["gpu"] == rows(page, "cost-table")[0]
    assert {o["gpu"] for o in data["options"]} <= set(ARTICLE_CARDS.split(","))


def test_memory_hint_gives_the_pages_total(web, cli):
    page = web.get("/memory?model=llama-3.1-70b&quant=q4_k_m&context=8k").text
    total = int(re.search(r'data-total-bytes="(\d+)"', page).group(1))
    assert run(cli, hint(page))["total_bytes"] == total


def test_memory_hint_turns_a_default_on_switch_off_with_no(web, cli):
    page = web.get("/memory?model=llama-3.1-8b&context=8k&flash_attention=false").text
    args = hint(page)
    assert "--no-flash-attention" in args
    total = int(re.search(r'data-total-bytes="(\d+)"', page).group(1))
    assert run(cli, args)["total_bytes"] == total


def test_catalog_hint_gives_the_pages_order(web, cli):
    page = web.get("/gpus?prices=article-000&sort=memory").text
    data = run(cli, hint(page))
    order = re.findall(r'<tr data-gpu="([^"]+)"', page)
    assert [g["id"] for g in data["gpus"]] == order


def test_rent_or_buy_hint_gives_the_pages_break_even(web, cli):
    page = web.get("/rent-or-buy?gpu=h100-sxm&purchase_price=25000USD&rent_price=3.15USD"
                   "&hours_per_month=730&years=2.5&pue=1.2").text
    args = hint(page)
    assert "--curve" in args
    data = run(cli, args)
    assert round(data["break_even_hours_capital_only"]) == 7937  # S11: 25,000 / 3.15
    assert data["inputs"]["years"] == 2.5 and data["inputs"]["pue"] == 1.2


@pytest.mark.parametrize("url", ["/prices", "/prices?gpu=h100&pricing=spot"])
def test_prices_hint_runs_with_or_without_a_gpu(web, cli, url):
    page = web.get(url).text
    args = hint(page)
    assert args[:2] == ["prices", "list"]
    total = int(re.search(r"\(\d+ / (\d+)\)", page).group(1))
    assert run(cli, args)["total"] == total


def test_gpu_page_hint_runs(web, cli):
    page = web.get("/gpus/rtx-4090?lang=fr").text
    args = hint(page)
    assert args == ["gpu", "rtx-4090", "--lang", "fr"]
    assert run(cli, args)["id"] == "rtx-4090"


def test_calibrated_hint_asks_the_cli_for_the_same_profile(web, cli):
    from profile_files import _entry
    from whichgpu.bench.profile import SCHEMA, save_profile

    save_profile({"schema": SCHEMA, "created_at": "2026-11-30T12:00:00Z", "host": "test",
                  "gpus": [_entry(0)]})
    page = web.get("/?task=inference&model=llama-3.1-8b&amount=10M&unit=tokens"
                   "&prices=article-000&calibration=default").text
    args = hint(page)
    assert args[args.index("--calibration") + 1] == "default"
    assert 'id="calibration-note"' in page
    data = run(cli, args)
    assert same_first_gpus(data, page)


def test_every_flag_in_a_hint_is_one_the_cli_has():
    """Each flag a page can print (the request models' flags) is an option of the command
    the CLI generates from the same model."""
    import typer

    from whichgpu.answers import requests as r
    from whichgpu.answers.fields import cli_of, flag, negative_flag
    from whichgpu.answers.request import for_web
    from whichgpu.cli.app import app

    root = typer.main.get_command(app)
    for model in (r.Recommend, r.Memory, r.Gpus, r.Tco, r.PricesList, r.Speed, r.Checklist,
                  r.Cost):
        command = root
        for part in model.COMMAND.split():
            command = command.commands[part]
        options = {o for p in command.params for o in (*getattr(p, "opts", ()),
                                                       *getattr(p, "secondary_opts", ()))}
        web = for_web(model)
        for name in web.model_fields:
            if name == "config" or cli_of(web, name).positional:
                continue
            assert flag(web, name) in options, (model.COMMAND, name)
            off = negative_flag(web, name)
            assert off is None or off in options, (model.COMMAND, off)
