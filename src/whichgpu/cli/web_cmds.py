"""``whichgpu serve``: the web app and REST API on this machine (FastAPI + uvicorn)."""

from __future__ import annotations

from contextlib import contextmanager

import typer

from whichgpu.cli.common import note


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on. The default "
                             "serves this machine only."),
    port: int = typer.Option(8000, "--port", help="TCP port.", min=1, max=65535),
    workers: int = typer.Option(1, "--workers", min=1, max=64,
                                help="Server processes (one per CPU core serves the most). "
                                     "They share the price store (WHICHGPU_DATABASE_URL: "
                                     "PostgreSQL for several machines); each keeps its own "
                                     "cache of answers."),
    log_level: str = typer.Option("warning", "--log-level",
                                  help="uvicorn's log level: info shows each request."),
    access_log: bool = typer.Option(
        False, "--access-log/--no-access-log",
        help="One JSON line per request on stderr (time, method, route, status, duration, "
             "request id, worker pid); also WHICHGPU_ACCESS_LOG=1."),
    calibration: str = typer.Option(
        "default", "--calibration",
        help="The calibration profile that speed and recommend use when a request asks for "
             "calibration=default: 'default' (the one 'whichgpu bench' saved), a FILE, or "
             "'none'. Requests can never name a file."),
) -> None:
    """Serve the web pages (advisor, VRAM selector, catalog, cost, rent vs buy, prices) and
    the REST API (/api/v1, OpenAPI at /docs), with the shipped catalog and the local prices."""
    import os
    from pathlib import Path

    import uvicorn

    from whichgpu.bench.profile import default_profile_path, load_profile
    from whichgpu.web.app import CALIBRATION_ENV, create_app
    from whichgpu.web.ops import ACCESS_LOG_ENV

    choice = calibration.strip()
    if choice.lower() == "none":
        choice = "none"
    elif choice.lower() == "default":
        choice = "default"
        if default_profile_path().exists():
            load_profile(default_profile_path())  # a broken profile stops the start, not a page
        else:
            note(f"no calibration profile at {default_profile_path()} yet: requests with "
                 "calibration=default are refused until 'whichgpu bench' saves one")
    else:
        load_profile(choice)  # check it now: a missing or broken file is an error (exit 1)
        choice = str(Path(choice).resolve())
    os.environ[CALIBRATION_ENV] = choice  # each worker process builds its app from it
    _open_store()
    if access_log:
        os.environ[ACCESS_LOG_ENV] = "1"
    if host not in ("127.0.0.1", "localhost", "::1"):
        note(f"listening on {host}: other machines can reach this server")
    shown = f"[{host}]" if ":" in host else host
    typer.echo(f"whichgpu web app: http://{shown}:{port}/  (REST API: /api/v1, docs: /docs; "
               "Ctrl+C to stop)")
    from whichgpu.web.resolve import hub_status

    hub = hub_status()  # offline or not, stated at start (and at /api/v1/health)
    typer.echo(f"Hugging Face Hub: {hub['mode']} ({hub['detail']})")
    if workers > 1:  # each process builds its own app (and its own memory of answers)
        with _shared_metrics():
            uvicorn.run("whichgpu.web.app:create_app", factory=True, workers=workers,
                        host=host, port=port, log_level=log_level, access_log=False)
    else:
        uvicorn.run(create_app(choice), host=host, port=port, log_level=log_level, access_log=False)


def _open_store() -> None:
    """Open the price store once before any worker starts: its migrations run and the
    shipped prices are seeded here, and where it is is said. A PostgreSQL store that cannot
    be used stops the start (a team's server must not quietly serve other prices); a local
    file that cannot be used is said, and the pages fall back to the shipped prices."""
    from whichgpu.catalog.prices import PriceStore
    from whichgpu.catalog.prices.selection import ensure_shipped
    from whichgpu.catalog.prices.store import StoreError

    store = PriceStore(None)
    try:
        ensure_shipped(store)
        version = store.schema_version()
    except StoreError as exc:
        if store.dialect == "postgresql":
            raise
        note(f"{exc}; the pages use the prices shipped with whichgpu meanwhile")
        return
    typer.echo(f"Price store: {store.location} ({store.dialect}, schema {version})")


@contextmanager
def _shared_metrics():
    """prometheus-client's multiprocess mode for the workers: a fresh folder for their
    metric files (PROMETHEUS_MULTIPROC_DIR: the operator's, emptied, or a temporary one),
    so that /metrics, whichever worker answers, sums them all."""
    import glob
    import os
    import shutil
    import tempfile

    from whichgpu.web.ops import MULTIPROC_ENV

    given = os.environ.get(MULTIPROC_ENV)
    folder = given or tempfile.mkdtemp(prefix="whichgpu-metrics-")
    for stale in glob.glob(os.path.join(folder, "*.db")):  # files of an earlier run
        os.remove(stale)
    os.environ[MULTIPROC_ENV] = folder
    try:
        yield
    finally:
        if not given:
            shutil.rmtree(folder, ignore_errors=True)
