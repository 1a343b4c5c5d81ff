"""Issue 27: the generated controls of "All settings" are made once per request model and
field (a bounded memo), and are what making them again gives."""

from __future__ import annotations

from whichgpu.answers import requests as r
from whichgpu.answers.request import for_web
from whichgpu.web import controls


def test_a_control_is_made_once_and_is_what_making_it_again_gives():
    model = for_web(r.Recommend)
    for name in model.model_fields:
        made = controls.control(model, name)
        assert controls.control(model, name) is made
        assert controls.control.__wrapped__(model, name) == made
    assert controls.control(model, "quant") != controls.control(model, "context")
    memory = for_web(r.Memory)
    assert controls.control(memory, "batch").name == "batch"


def test_the_control_memo_is_bounded():
    info = controls.control.cache_info()
    assert info.maxsize == 1024
    assert info.currsize <= info.maxsize
