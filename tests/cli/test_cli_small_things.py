"""Small things a user meets at once (issue 14): --version, lists that say "and N more"."""

import re
from importlib.metadata import version

from whichgpu.listing import join_some, more_line


def test_version_prints_the_package_version(cli):
    r = cli("--version")
    assert r.code == 0 and r.out.strip() == f"whichgpu {version('whichgpu')}"


def test_a_shortened_list_says_how_many_it_leaves_out():
    assert join_some(["a", "b", "c"], 4) == "a, b, c"
    assert join_some(list("abcdefg"), 4) == "a, b, c, d and 3 more"
    assert more_line(20, 14, "more GPUs") == "... and 6 more GPUs"
    assert more_line(5, 14) is None


def test_memory_fits_on_says_and_n_more(cli):
    r = cli("memory", "llama-3.1-8b", "--quant", "q4_k_m")
    data = cli("memory", "llama-3.1-8b", "--quant", "q4_k_m", "--json").json()
    assert len(data["gpus_that_fit"]) > 14
    assert f"and {len(data['gpus_that_fit']) - 14} more GPUs hold it" in r.out


def test_recommend_says_how_many_options_it_leaves_out(cli):
    r = cli("recommend", "llama-3.1-8b", "--quant", "q4_k_m", "--tokens", "1M", "--prices",
            "vramfarm-2026-11", "--top", "3")
    n = len(cli("recommend", "llama-3.1-8b", "--quant", "q4_k_m", "--tokens", "1M",
                "--prices", "vramfarm-2026-11", "--top", "0", "--json").json()["options"])
    assert r.code == 0 and f"and {n - 3} more options" in r.out


def test_web_memory_page_says_how_many_more_gpus_hold_it(web):
    html = web.get("/memory", params={"model": "llama-3.1-8b", "quant": "q4_k_m"}).text
    assert re.search(r"and \d+ more configurations that hold it", html)  # and the rows
