"""With no network and HF_HUB_OFFLINE unset, a Hub id fails at once with one line: one TCP probe
of the Hub's host, not huggingface_hub's five retries with back-off (24 s, 11 "Retrying" lines).

Nothing here touches the network: the probe's ``socket.create_connection`` is replaced by one
that fails the way a machine without DNS does (``socket.gaierror``), and the HTTP request it
guards is never sent.
"""

from __future__ import annotations

import socket

import pytest

from whichgpu.models import hub


@pytest.fixture
def no_network(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    from huggingface_hub import constants

    # huggingface_hub reads HF_HUB_OFFLINE once, when first imported (maybe by a test that set it)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setattr(hub, "_reachable", {})
    probes: list[tuple[str, int]] = []

    def refuse(address, timeout=None, *args, **kwargs):
        probes.append(address)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(hub.socket, "create_connection", refuse)
    from huggingface_hub.utils import _http

    sleeps: list[float] = []
    monkeypatch.setattr(_http.time, "sleep", sleeps.append)
    return probes, sleeps


def test_an_unreachable_hub_fails_once_in_one_line_without_retries(no_network, cli, caplog):
    probes, sleeps = no_network
    r = cli("model", "acme/not-a-preset-7b")
    assert r.code != 0 and r.out == ""
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert len(lines) == 1, r.err
    assert "cannot be reached" in lines[0] and "does not resolve" in lines[0]
    assert "HF_HUB_OFFLINE=1" in lines[0] and "preset" in lines[0]
    assert probes and {p[0] for p in probes} == {"huggingface.co"}
    assert len(probes) == 1  # remembered: the next request does not probe again
    assert sleeps == []  # huggingface_hub never backed off
    assert "Retrying" not in r.err + caplog.text


def test_the_probe_goes_to_the_proxy_when_one_is_set(no_network, monkeypatch, cli):
    probes, _ = no_network
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    r = cli("model", "acme/not-a-preset-7b")
    assert r.code != 0 and probes == [("proxy.internal", 3128)]
    assert "proxy.internal does not resolve" in r.err
