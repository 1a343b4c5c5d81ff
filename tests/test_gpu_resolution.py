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
