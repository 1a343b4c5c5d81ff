"""Shared fixtures: run the CLI in-process and capture what it prints and its exit status."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from whichgpu.cli import main

# The price store on both engines (fixtures store, store_url, pg_url): store_backends.py.
pytest_plugins = ["store_backends"]


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Every test gets its own whichgpu home (so its own price store), no network price
    source, and an offline, empty Hugging Face cache."""
    monkeypatch.setenv("WHICHGPU_HOME", str(tmp_path / "whichgpu-home"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    # Prices: no network source may run; nothing of the developer's own setup leaks in.
    monkeypatch.setenv("WHICHGPU_OFFLINE", "1")
    for name in ("WHICHGPU_PRICE_STORE", "WHICHGPU_PRICE_MAX_AGE_DAYS", "GPUHUNT_CATALOG_DIR",
                 "GPUHUNT_CATALOG_URL", "WHICHGPU_DATABASE_URL", "WHICHGPU_ACCESS_LOG"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cli(capsys, monkeypatch):
    """``cli("gpus", "--json")`` runs whichgpu and returns its exit code, stdout and stderr."""
    monkeypatch.setenv("COLUMNS", "100")

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def web():
    """A client of the web app (in-process, no socket), with a fresh price cache."""
    from fastapi.testclient import TestClient

    from whichgpu.web import resolve, services, work
    from whichgpu.web.app import create_app

    services.clear_cache()
    resolve.clear_hub_cache()  # Hub answers and failures kept by an earlier test
    work.clear_refused()
    with TestClient(create_app(), raise_server_exceptions=False) as client:
        yield client
    services.clear_cache()
    resolve.clear_hub_cache()
    work.clear_refused()
