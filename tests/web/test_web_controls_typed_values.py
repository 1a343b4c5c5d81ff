"""A request field typed as a number but written as text (issue 35: ``8k`` tokens, ``96GB``,
``1200/min``) keeps a text box on the page, so a reader can type what the command line
takes; a plain number field keeps its number box."""

from __future__ import annotations

import pytest

from whichgpu.answers import requests as r
from whichgpu.answers.request import for_web
from whichgpu.web.controls import control


@pytest.mark.parametrize("model,name", [
    (r.Memory, "context"), (r.Memory, "host_ram"), (r.Speed, "prompt_tokens"),
    (r.Speed, "requests_per_s"), (r.Speed, "lengths"), (r.Recommend, "output_tokens"),
    (r.Recommend, "requests_per_s"), (r.Recommend, "ttft"),
])
def test_a_value_written_as_text_gets_a_text_box(model, name):
    assert control(for_web(model), name).kind == "text"


def test_a_number_field_keeps_its_number_box():
    assert control(for_web(r.Memory), "batch").kind == "number"
