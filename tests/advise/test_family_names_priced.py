"""Issue 26, part 3: a GPU family name ('a100', 'h100') picks the variant cheapest to rent, and
says which, wherever a GPU is priced: tco (and its --vs), compare, and --only in recommend
(where every variant is compared and the ranking names the winner)."""

from __future__ import annotations

A100 = ("a100-80gb-sxm", "a100-80gb-pcie", "a100-40gb", "a100-40gb-pcie")


def _rent(cli, gpu: str) -> float | None:
    """The on-demand rent tco reads for one variant (None: no offer)."""
    out = cli("tco", gpu, "--json")
    if out.code != 0:
        return None
    rent = out.json()["rent_price"]
    return None if rent is None else rent["amount"]


def test_tco_owns_the_variant_cheapest_to_rent_and_says_which(cli):
    rents = {v: r for v in A100 if (r := _rent(cli, v)) is not None}
    cheapest = min(rents, key=rents.__getitem__)
    family = cli("tco", "a100", "--json").json()
    assert family["gpu"] == cheapest
    assert family["rent_price"]["amount"] == rents[cheapest]
    assert f"priced the cheapest in these prices, {cheapest}" in family["resolution_note"]
    # a rent price given: nothing to choose by, the family's default variant as before
    given = cli("tco", "a100", "--rent-price", "2USD", "--json").json()
    assert given["gpu"] == "a100-80gb-sxm" and "ambiguous" in given["resolution_note"]


def test_tco_vs_a_family_rents_its_cheapest_variant(cli):
    vs = cli("tco", "rtx-4090", "--vs", "h100", "--json").json()["vs"]
    alone = {v: cli("tco", "rtx-4090", "--vs", v, "--json").json()["vs"]["rent_price"]["amount"]
             for v in ("h100-sxm", "h100-pcie", "h100-nvl")}
    assert vs["rent_price"]["amount"] == min(alone.values())
    assert vs["gpu"] == min(alone, key=alone.__getitem__)


def test_compare_prices_a_measured_family_as_its_cheapest_variant(cli):
    d = cli("compare", "--measured", "a100=12m", "--no-project", "--json").json()
    measured = [c for c in d["cards"] if c["measured"]]
    assert len(measured) == 1
    tco = cli("tco", "a100", "--json").json()
    assert measured[0]["gpu"] == tco["gpu"]  # the same variant tco and cost pick
    assert "priced the cheapest" in " ".join(d["notes"])


def test_only_with_a_family_compares_every_variant_and_names_the_winner(cli):
    d = cli("recommend", "llama-3.1-8b", "--tokens", "10M", "--only", "a100", "--json",
            "--top", "0").json()
    ranked = {o["gpu"] for o in d["options"]}
    assert ranked <= set(A100) and len(ranked) > 1  # not only the default variant
    assert d["options"][0]["gpu"] != "a100-80gb-sxm"  # the default variant is not cheapest
    assert any("'a100' covers" in n for n in d["notes"])
    one = cli("recommend", "llama-3.1-8b", "--tokens", "10M", "--only", "a100-80gb-sxm",
              "--json").json()
    assert {o["gpu"] for o in one["options"]} == {"a100-80gb-sxm"}
    assert not any("covers" in n for n in one["notes"])


def test_only_with_a_family_lists_every_variant_in_gpus(cli):
    got = {r["id"] for r in cli("gpus", "--only", "h100", "--json").json()["gpus"]}
    assert got == {"h100-sxm", "h100-pcie", "h100-nvl"}
