"""Issue 26: ``cost --count N`` says which machines it prices: one N-GPU machine (which), a
cluster of whole servers, or N separate machines where no machine in the price list holds
them; never N one-GPU machines as if they were one linked server."""

from __future__ import annotations

from prices_support import write_offers

HEADER = "provider,gpu,gpu_count,price_per_hour,currency,spot,region,observed_at,instance_type\n"


def _cost(cli, *args):
    out = cli("cost", *args, "--json")
    assert out.code == 0, out.err
    return out.json()


def test_eight_gpus_are_priced_as_one_eight_gpu_machine_of_the_market(cli):
    d = _cost(cli, "--gpu", "h100-sxm", "--count", "8", "--duration", "1w")
    assert (d["machines"], d["spread"]) == (1, "one machine")
    assert d["gpus_per_machine"] == d["offer"]["gpu_count"] >= 8
    assert d["offer"]["instance_type"] and d["offer"]["instance_type"] in d["shape"]
    assert d["assumptions"][0].startswith("8 GPU(s) in one ")
    text = cli("cost", "--gpu", "h100-sxm", "--count", "8", "--duration", "1w").out
    assert f"on {d['shape']}" in " ".join(text.split())


def test_one_machine_is_preferred_to_cheaper_separate_hosts(cli, tmp_path):
    path = write_offers(tmp_path / "hosts.csv",
                        "Host,rtx-4090,1,0.30,USD,false,,2026-12-01,1x-4090",
                        "Host,rtx-4090,4,2.00,USD,false,,2026-12-01,4x-4090", header=HEADER)
    d = _cost(cli, "--gpu", "rtx-4090", "--count", "4", "--duration", "1h", "--prices",
              str(path))
    assert (d["machines"], d["gpus_per_machine"], d["spread"]) == (1, 4, "one machine")
    assert d["cost"]["typical"]["amount"] == 2.0


def test_with_no_machine_that_holds_them_it_prices_separate_machines_and_says_so(cli, tmp_path):
    path = write_offers(tmp_path / "hosts.csv",
                        "Host,rtx-4090,1,0.30,USD,false,,2026-12-01,1x-4090", header=HEADER)
    d = _cost(cli, "--gpu", "rtx-4090", "--count", "4", "--duration", "1h", "--prices",
              str(path))
    assert (d["machines"], d["gpus_per_machine"], d["spread"]) == (4, 1, "separate machines")
    assert d["cost"]["typical"]["amount"] == 1.2
    assert "independent parts" in d["assumptions"][0]
    assert "4 separate machines of 1 GPU(s)" in d["shape"]


def test_a_price_per_gpu_is_a_machine_of_the_size_asked_and_says_it_is_assumed(cli):
    d = _cost(cli, "--gpu", "h100-sxm", "--count", "4", "--duration", "1h", "--prices",
              "article-000")
    assert (d["machines"], d["gpus_per_machine"]) == (1, 4)
    assert d["cost"]["typical"]["amount"] == 12.6  # 4 x $3.15 (S2)
    assert any("price per GPU" in a for a in d["assumptions"])
    big = _cost(cli, "--gpu", "h100-sxm", "--count", "1000", "--duration", "1h", "--prices",
                "article-000")
    assert (big["machines"], big["gpus_per_machine"], big["spread"]) == (125, 8, "cluster")


def test_rest_gives_the_same_machines(web, cli):
    api = web.get("/api/v1/cost?gpu=h100-sxm&count=8&duration=1w").json()
    c = _cost(cli, "--gpu", "h100-sxm", "--count", "8", "--duration", "1w")
    assert {k: api[k] for k in ("machines", "gpus_per_machine", "spread", "shape")} == \
        {k: c[k] for k in ("machines", "gpus_per_machine", "spread", "shape")}
