"""What a person names that whichgpu does not model is said, never silently substituted:
xDiT (a multi-GPU diffusion engine people name) is refused with what is modelled instead
(its split, as SGLang Diffusion's), and an Unsloth GRPO plan says that Unsloth's Standby
mode (vLLM's memory handed back while training runs) is not what it models."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("name", ["xdit", "xDiT", "xfuser"])
def test_xdit_is_refused_with_what_is_modelled_instead(cli, name):
    r = cli("speed", "flux.1-dev", "--task", "image", "--engine", name, "--gpu", "h100-sxm",
            "--count", "2")
    assert r.code == 2 and r.out == ""
    assert "xdit is not modelled" in r.err and "--engine sglang" in r.err
    assert "unknown engine" not in r.err  # was: "unknown engine 'xdit'; use one of ..."


def test_xdit_on_the_rest_api_is_a_422_saying_so(web):
    r = web.get("/api/v1/speed", params={"model": "flux.1-dev", "task": "image",
                                         "engine": "xdit", "gpu": "h100-sxm"})
    assert r.status_code == 422 and "xdit is not modelled" in r.json()["detail"]


def _assumption_ids(cli, framework: str) -> list[str]:
    r = cli("memory", "llama-3.1-8b", "--task", "grpo", "--framework", framework, "--gpu",
            "t4", "--json")
    assert r.code == 0, r.err
    return [a for a in r.json()["assumptions"] if "Standby" in a]


def test_an_unsloth_grpo_plan_says_standby_is_not_modelled(cli):
    said = _assumption_ids(cli, "unsloth")
    assert len(said) == 1 and "not modelled" in said[0] and "95%" in said[0]
    assert _assumption_ids(cli, "trl") == []  # TRL has no such mode: nothing said
