"""A laptop GPU is refused with how to describe it, never answered as the desktop card whose
name is nearest: an "RTX 5090 Laptop" is a GB203 with 24 GB at 896 GB/s, not the desktop RTX
5090's GB202 with 32 GB at 1,792 GB/s, so a speed or fit for the desktop card would be wrong."""

import pytest

from whichgpu.catalog.gpus import LaptopGPU, resolve_gpu


@pytest.mark.parametrize("name", ["rtx-5090-laptop", "RTX 4090 Laptop GPU",
                                  "GeForce RTX 4080 Max-Q", "rtx 3080 mobile"])
def test_a_laptop_part_is_refused_with_how_to_describe_it(name):
    with pytest.raises(LaptopGPU) as info:
        resolve_gpu(name)
    text = str(info.value)
    assert "laptop GPU" in text and "gpu_spec" in text.replace("-", "_")
    # the desktop cards are named as the nearest names, never silently taken
    assert info.value.suggestions and info.value.suggestions[0].startswith("rtx-")


@pytest.mark.parametrize(("name", "gpu_id"), [("rtx-pro-6000-max-q", "rtx-pro-6000-maxq"),
                                              ("RTX 5090", "rtx-5090")])
def test_a_catalog_max_q_card_and_the_desktop_card_still_resolve(name, gpu_id):
    assert resolve_gpu(name).gpu.id == gpu_id


def test_the_cli_exits_2_with_the_reason(cli):
    r = cli("speed", "qwen3-8b", "--gpu", "rtx-5090-laptop")
    assert r.code == 2 and "laptop GPU" in r.err and "--gpu-spec" in r.err
    assert "Traceback" not in r.err


def test_the_rest_api_answers_422_and_the_page_says_it_in_french(web):
    r = web.get("/api/v1/speed", params={"model": "qwen3-8b", "gpu": "rtx-5090-laptop"})
    assert r.status_code == 422
    assert "laptop GPU" in r.json()["detail"]
    # the advisor page says it in French, in the page's words (no command-line flag)
    page = web.get("/", params={"model": "qwen3-8b", "gpu": "rtx-5090-laptop", "lang": "fr"})
    assert "ordinateur portable" in page.text and "--gpu-spec" not in page.text
