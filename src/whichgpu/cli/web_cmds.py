"""``whichgpu serve``: the web app and REST API on this machine (FastAPI + uvicorn)."""

from __future__ import annotations

import typer

from whichgpu.cli.common import note


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on. The default "
                             "serves this machine only."),
    port: int = typer.Option(8000, "--port", help="TCP port.", min=1, max=65535),
    workers: int = typer.Option(1, "--workers", min=1, max=64,
                                help="Server processes (one per CPU core serves the most)."),
    log_level: str = typer.Option("warning", "--log-level",
                                  help="uvicorn's log level: info shows each request."),
) -> None:
    """Serve the web pages (advisor, VRAM selector, catalog, cost, rent vs buy, prices) and
    the REST API (/api/v1, OpenAPI at /docs), with the shipped catalog and the local prices."""
    import uvicorn

    from whichgpu.web.app import create_app

    if host not in ("127.0.0.1", "localhost", "::1"):
        note(f"listening on {host}: other machines can reach this server")
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"whichgpu web app: http://{shown}:{port}/  (REST API: /api/v1, docs: /docs; "
               "Ctrl+C to stop)")
    if workers > 1:  # each process builds its own app (and its own memory of answers)
        uvicorn.run("whichgpu.web.app:create_app", factory=True, workers=workers, host=host,
                    port=port, log_level=log_level, access_log=False)
    else:
        uvicorn.run(create_app(), host=host, port=port, log_level=log_level, access_log=False)
