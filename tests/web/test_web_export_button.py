"""Issue 17: the advisor's launcher-export download button serves the file the command line's
``recommend --export`` prints, for the chosen option; a bad launcher or option is a 422 page."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

Q = "task=lora&model=llama-3.1-8b&amount=2000&unit=steps"


@pytest.fixture
def client():
    from whichgpu.web.app import create_app

    return TestClient(create_app())


def _body(text: str) -> list[str]:
    """The task file without its comment header (which names the command that wrote it)."""
    return [line for line in text.splitlines() if not line.lstrip().startswith("#")]


def test_the_advisor_offers_the_download_under_its_answer(client):
    page = client.get("/?" + Q).text
    form = re.search(r'<form method="get" action="/export".*?</form>', page, re.S).group(0)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    assert hidden["model"] == "llama-3.1-8b" and hidden["amount"] == "2000"
    assert 'name="export"' in form and 'name="export_option"' in form


@pytest.mark.parametrize(("launcher", "suffix"), [("skypilot", ".sky.yaml"),
                                                  ("dstack", ".dstack.yml")])
def test_the_download_is_the_command_lines_export(client, cli, launcher, suffix):
    res = client.get(f"/export?{Q}&export={launcher}")
    assert res.status_code == 200
    name = re.search(r'attachment; filename="([^"]+)"', res.headers["content-disposition"])
    assert name and name.group(1).endswith(suffix)
    out = cli("recommend", "llama-3.1-8b", "--task", "lora", "--steps", "2000",
              "--export", launcher)
    assert out.code == 0, out.err
    assert _body(res.text) == _body(out.out)


@pytest.mark.parametrize("query", ["export=slurm", "export=", "export=skypilot&export_option=x",
                                   "export=skypilot&export_option=9999"])
def test_a_bad_launcher_or_option_is_a_page_that_says_why(client, query):
    res = client.get(f"/export?{Q}&{query}")
    assert res.status_code == 422
    assert 'id="error"' in res.text
