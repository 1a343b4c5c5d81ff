"""A card's power with its unit, the same way on --tdp and --gpu-spec tdp= (one reader)."""

import pytest

from whichgpu.catalog.user_gpu import parse_gpu_spec, user_gpu
from whichgpu.errors import InputError
from whichgpu.units import parse_power


@pytest.mark.parametrize(("text", "watts"), [
    ("170W", 170.0), ("170 W", 170.0), ("170", 170.0), ("1.1kW", 1100.0), ("350w", 350.0),
    ("600 watts", 600.0), (450, 450.0),
])
def test_a_power_reads_with_or_without_its_unit(text, watts):
    assert parse_power(text) == watts


@pytest.mark.parametrize("text", ["hot", "0W", "-5W", "170GB", "nanW", ""])
def test_a_power_that_is_not_one_is_refused(text):
    with pytest.raises(InputError):
        parse_power(text)


def test_tco_takes_a_tdp_with_its_unit(cli):
    args = ("tco", "rtx-3060-12gb", "--purchase-price", "329USD", "--rent-price", "0.10USD",
            "--json")
    bare, with_unit = cli(*args, "--tdp", "170"), cli(*args, "--tdp", "170W")
    assert bare.code == with_unit.code == 0, with_unit.err
    watts = [r.json()["inputs"]["tdp_watts"] for r in (bare, with_unit)]
    assert watts == [170.0, 170.0]
    assert cli(*args, "--tdp", "0.2kW").json()["inputs"]["tdp_watts"] == 200.0
    bad = cli(*args, "--tdp", "hot")
    assert bad.code == 2 and "170W" in bad.err and "Traceback" not in bad.err


def test_gpu_spec_reads_its_tdp_the_same_way():
    assert user_gpu(parse_gpu_spec("memory=24GB,tdp=0.35kW")).tdp_watts == 350.0
    with pytest.raises(InputError, match="tdp"):
        user_gpu(parse_gpu_spec("memory=24GB,tdp=lots"))
