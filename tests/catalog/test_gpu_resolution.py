import pytest

from whichgpu.catalog.gpus import family_ids, resolve_gpu
from whichgpu.errors import NotFoundError


@pytest.mark.parametrize(("text", "gpu_id"), [
    ("h100-sxm", "h100-sxm"), ("H100-SXM", "h100-sxm"), ("nvidia-h100-sxm5-80gb", "h100-sxm"),
    ("H100 PCIE", "h100-pcie"), ("h100 nvl", "h100-nvl"), ("A100-80GB-SXM", "a100-80gb-sxm"),
    ("a100 40gb", "a100-40gb"), ("RTX 4090 24GB", "rtx-4090"), ("4090", "rtx-4090"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"), ("rtx a6000", "rtx-a6000"), ("MI300X", "mi300x"),
    ("amd instinct mi355x", "mi355x"), ("L40S", "l40s"), ("l4", "l4"), ("B200", "b200"),
    ("tesla t4", "t4"), ("A100-PCIE-80GB", "a100-80gb-pcie"),
    ("A100-PCIE-40GB", "a100-40gb-pcie"), ("NVIDIA A10G", "a10g"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
])
def test_forgiving_ids_resolve(text, gpu_id):
    assert resolve_gpu(text).gpu.id == gpu_id


def test_ambiguous_family_picks_the_default_and_says_so():
    res = resolve_gpu("H100")
    assert res.gpu.id == "h100-sxm"
    assert set(res.candidates) == {"h100-sxm", "h100-pcie", "h100-nvl"}
    assert "ambiguous" in res.note and "h100-pcie" in res.note


def test_strict_resolution_refuses_to_guess_the_variant():
    with pytest.raises(NotFoundError, match="ambiguous"):
        resolve_gpu("H100", strict=True)


def test_unknown_gpu_suggests_the_closest_names():
    with pytest.raises(NotFoundError) as info:
        resolve_gpu("h10")
    assert {"h100-sxm", "h100-pcie", "h100-nvl"} == set(info.value.suggestions)
    assert info.value.suggestions[0] == "h100-sxm"  # the family's default variant first
    assert "did you mean h100-sxm" in str(info.value)


def test_a_typo_in_the_family_still_gets_its_variants_suggested():
    # "h1OO" (letters O) is far from every id but close to the family name "h100".
    with pytest.raises(NotFoundError) as info:
        resolve_gpu("h1OO")
    assert set(info.value.suggestions) == {"h100-sxm", "h100-pcie", "h100-nvl"}


def test_nonsense_gets_no_suggestion_rather_than_a_random_one():
    with pytest.raises(NotFoundError) as info:
        resolve_gpu("zzz")
    assert info.value.suggestions == [] and "did you mean" not in str(info.value)


def test_family_ids_cover_every_variant_of_a_family_and_one_id_otherwise():
    ids, note = family_ids("h100")
    assert ids == ["h100-sxm", "h100-pcie", "h100-nvl"] and "covers" in note
    assert family_ids("a10g") == (["a10g"], None)
    assert family_ids(None) == (None, None)


# ---------------------------------------------------------------- issue 14: the family first

@pytest.mark.parametrize(("text", "gpu_id"), [
    ("4060ti", "rtx-4060-ti-16gb"), ("RTX 4060 Ti", "rtx-4060-ti-16gb"),
    ("NVIDIA GeForce RTX 4060 Ti 16GB", "rtx-4060-ti-16gb"), ("5080", "rtx-5080"),
    ("rtx5070ti", "rtx-5070-ti"), ("4070 super", "rtx-4070-super"), ("4070s", "rtx-4070-super"),
    ("RTX 4070 Ti SUPER", "rtx-4070-ti-super"), ("3060", "rtx-3060-12gb"),
    ("RTX 3080 12GB", "rtx-3080-12gb"), ("3090ti", "rtx-3090-ti"),
    ("m4max", "apple-m4-max"), ("MacBook M4 Max", "apple-m4-max"),
    ("mac mini m4 pro", "apple-m4-pro"), ("Apple M3 Ultra", "apple-m3-ultra"),
    ("spark", "dgx-spark"), ("GB10", "dgx-spark"), ("strix halo", "ryzen-ai-max-395"),
    ("RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server"),
    ("rtx pro 6000 max-q", "rtx-pro-6000-maxq"), ("A5000", "rtx-a5000"),
    ("RTX 5000 Ada", "rtx-5000-ada"), ("NVIDIA H20", "h20"), ("B300", "b300"),
    ("Intel Gaudi 3", "gaudi3"), ("MI250X", "mi250x"), ("7900xtx", "rx-7900-xtx"),
    ("R9700", "radeon-ai-pro-r9700"), ("Intel Arc B580", "arc-b580"),
    ("arc pro b60", "arc-pro-b60"),
])
def test_new_cards_resolve_by_the_names_people_type(text, gpu_id):
    assert resolve_gpu(text).gpu.id == gpu_id


def test_a_family_with_several_editions_picks_the_default_and_names_the_others():
    res = resolve_gpu("pro6000")
    assert res.gpu.id == "rtx-pro-6000-ws" and "rtx-pro-6000-server" in res.note
    assert resolve_gpu("3080").candidates == ("rtx-3080-10gb", "rtx-3080-12gb")
    with pytest.raises(NotFoundError, match="ambiguous"):
        resolve_gpu("rtx pro 6000", strict=True)  # price feeds must name the edition


@pytest.mark.parametrize(("typo", "first", "not_first"), [
    ("rtx4060tii", "rtx-4060-ti-16gb", "rtx-4090"),
    ("4060 tie", "rtx-4060-ti-16gb", "rtx-4090"),
    ("5080s", "rtx-5080", "rtx-4090"),
    ("rtx 5080 super", "rtx-5080", "rtx-5090"),
    ("4070 ti supr", "rtx-4070-ti-super", "rtx-4070"),
    ("pro 6000 blackwel", "rtx-pro-6000-ws", "rtx-6000-ada"),
    ("m4 maxx", "apple-m4-max", "rtx-4090"),
    ("sparkk", "dgx-spark", "rtx-4090"),
    ("3090tii", "rtx-3090-ti", "rtx-3090"),
    ("a6OOO", "rtx-a6000", "rtx-6000-ada"),
    ("mi250", "mi250x", "mi300x"),
    ("7900 xt", "rx-7900-xtx", "mi300x"),
    ("arc b570", "arc-b580", "rtx-5070"),
])
def test_did_you_mean_finds_the_family_people_meant(typo, first, not_first):
    with pytest.raises(NotFoundError) as info:
        resolve_gpu(typo)
    suggestions = info.value.suggestions
    assert suggestions[0] == first and suggestions[0] != not_first
    assert f"did you mean {first}" in str(info.value)


def test_a_word_that_changes_the_card_is_not_dropped():
    # "RTX 5080 SUPER" is not an RTX 5080: suggest, do not resolve silently
    with pytest.raises(NotFoundError):
        resolve_gpu("rtx 5080 super")


def test_suggestions_are_the_same_under_every_hash_seed():
    """Ties between families are broken by name, not by set order (the shipped market
    snapshot records these suggestions, and a rebuild must reproduce it byte for byte)."""
    import subprocess
    import sys

    code = ("from whichgpu.catalog.gpus import gpu_suggestions as s;"
            "print([s(t) for t in ('RTX6000', '3080', 'pro6000', 'A4500', 'V100')])")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}, check=True).stdout
            for seed in (1, 2, 3, 4, 5)}
    assert len(outs) == 1


# ---------------------------------------------------------------- a memory size in the name

@pytest.mark.parametrize(("text", "mem", "catalog_card"), [
    ("rtx-4060-ti-8gb", 8, "rtx-4060-ti-16gb"),  # the 8 GB card exists; the catalog has 16 GB
    ("m4 max 36gb", 36, "apple-m4-max"),  # 32-core GPU at 410 GB/s, not the 128 GB machine
    ("m3 ultra 96gb", 96, "apple-m3-ultra"),
    ("4090 48gb", 48, "rtx-4090"),  # the modded 48 GB boards
    ("3060 8gb", 8, "rtx-3060-12gb"),  # 128-bit, 240 GB/s: another card than the 12 GB one
])
def test_a_memory_size_no_variant_has_is_refused_not_swapped(text, mem, catalog_card):
    with pytest.raises(NotFoundError) as info:
        resolve_gpu(text)
    message = str(info.value)
    assert f"no {mem} GB variant" in message and catalog_card in message
    assert f"--gpu {mem}GB" in message and f"--gpu-spec memory={mem}GB" in message
    assert info.value.suggestions == [catalog_card]


def test_a_memory_size_a_variant_has_picks_that_variant():
    assert resolve_gpu("rtx 3080 12gb").gpu.id == "rtx-3080-12gb"
    assert resolve_gpu("RTX 3080 10GB").gpu.id == "rtx-3080-10gb"
    assert resolve_gpu("H100 94GB").gpu.id == "h100-nvl"
    assert resolve_gpu("a100 40gb").gpu.id == "a100-40gb"


def test_the_cli_refuses_a_card_whose_stated_memory_the_catalog_lacks(cli):
    r = cli("memory", "llama-3.1-8b", "--gpu", "rtx-4060-ti-8gb")
    assert r.code == 2 and "no 8 GB variant" in r.err and r.out == ""
    r = cli("gpu", "m4 max 36gb", "--json")
    assert r.code == 2 and "apple-m4-max (128 GB)" in r.err
