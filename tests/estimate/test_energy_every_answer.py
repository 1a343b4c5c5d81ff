"""Every speed answer that has a GPU with a TDP gives its energy, whatever the task: tokens,
images, videos or training steps (an answer without a rate per token or image once failed
whole: issue 33 item 6 at integration)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args, key", [
    (("wan-2.2-5b", "--task", "video", "--gpu", "rtx-4090", "--resolution", "1280x704",
      "--frames", "121", "--offload", "model", "--vae-tiling"), "joules_per_video"),
    (("flux.1-dev", "--task", "image-lora", "--gpu", "h100-sxm", "--steps", "100"),
     "joules_per_step"),
    (("flux.1-dev", "--task", "image", "--gpu", "rtx-4090", "--quant", "fp8"),
     "joules_per_image"),
    (("llama-3.1-8b", "--task", "lora", "--gpu", "h100-sxm"), "joules_per_token"),
    (("llama-3.1-8b", "--gpu", "rtx-4090"), "joules_per_token"),
])
def test_speed_answers_carry_energy(cli, args: tuple[str, ...], key: str) -> None:
    r = cli("speed", *args, "--json")
    assert r.code == 0, r.err
    energy = r.json()["energy"]
    value = energy[key]
    assert 0 < value["low"] <= value["typical"] <= value["high"]


def test_a_video_at_a_power_cap_is_slower_and_says_its_energy(cli) -> None:
    base = ("wan-2.2-5b", "--task", "video", "--gpu", "rtx-4090", "--resolution", "832x480",
            "--frames", "33", "--json")
    free = cli("speed", *base).json()
    capped = cli("speed", *base, "--power-cap", "300W").json()
    assert capped["seconds_per_video"]["typical"] > free["seconds_per_video"]["typical"]
    assert capped["energy"]["joules_per_video"]["typical"] > 0
