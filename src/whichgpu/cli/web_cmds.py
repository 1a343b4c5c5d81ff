"""``whichgpu serve``: the web app and REST API on this machine (FastAPI + uvicorn)."""

from __future__ import annotations

import typer

from whichgpu.answers import requests as req
from whichgpu.cli.bind import bind
from whichgpu.cli.common import note


def register(app: typer.Typer) -> None:
    bind(app, req.Serve, serve)


def serve(q: req.Serve) -> None:
    from whichgpu.cli.process import long_running
    from whichgpu.web.server import serve as run  # the one import of the web package

    long_running()
    run(q, note)
