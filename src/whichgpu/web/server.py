"""``whichgpu serve``: start the web app and REST API with uvicorn (the command line's one
way into the web package)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import uvicorn

from whichgpu.answers.requests import Serve
from whichgpu.bench.profile import default_profile_path, load_profile
from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.backends import parse_target
from whichgpu.catalog.prices.selection import ensure_shipped
from whichgpu.catalog.prices.store import StoreError
from whichgpu.errors import InputError
from whichgpu.web.app import CALIBRATION_ENV, create_app
from whichgpu.web.ops import ACCESS_LOG_ENV
from whichgpu.web.resolve import hub_status
from whichgpu.web.schedule import EVERY_ENV, every_s


def serve(q: Serve, note: Callable[[str], None]) -> None:
    """Check the calibration profile named, say where the server listens, then run it
    (``note`` says a remark on the terminal)."""
    check_serve_options(q)
    choice = q.calibration.strip()
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
    every = every_s()  # a bad WHICHGPU_REFRESH_EVERY stops the start here, in one line
    _open_store(note)
    if every is not None:
        print(f"Price refresh: every {every:g} s in the service ({EVERY_ENV}; one at a time "
              "across workers and machines)", flush=True)
    if q.access_log:
        os.environ[ACCESS_LOG_ENV] = "1"
    host = q.host
    if host not in ("127.0.0.1", "localhost", "::1"):
        note(f"listening on {host}: other machines can reach this server")
    shown = f"[{host}]" if ":" in host else host
    print(f"whichgpu web app: http://{shown}:{q.port}/  (REST API: /api/v1, docs: /docs; "
          "Ctrl+C to stop)", file=sys.stdout, flush=True)
    hub = hub_status()  # offline or not, stated at start (and at /api/v1/health)
    print(f"Hugging Face Hub: {hub['mode']} ({hub['detail']})", flush=True)
    os.environ.setdefault("WHICHGPU_WEB_WARM", "1")  # web/warm.py: before the first request
    if q.workers > 1:  # each process builds its own app (and its own memory of answers)
        from whichgpu.web.ops import workers_environment

        with workers_environment():  # shared metrics; workers end with this process
            uvicorn.run("whichgpu.web.app:create_app", factory=True, workers=q.workers,
                        host=host, port=q.port, log_level=q.log_level.lower(), access_log=False)
    else:
        uvicorn.run(create_app(choice), host=host, port=q.port, log_level=q.log_level.lower(),
                    access_log=False)


_LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")  # uvicorn's
_HOST_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def check_serve_options(q: Serve) -> None:
    """Refuse a log level uvicorn does not know and an address that is none, in one line,
    before anything is started or looked up (a name is never resolved here); the price
    store's location too (a libpq keyword/value string is refused before anything is said)."""
    parse_target(None)
    if q.log_level.lower() not in _LOG_LEVELS:
        raise InputError(f"unknown log level {q.log_level!r}: choose one of "
                         f"{', '.join(_LOG_LEVELS)}")
    if not host_is_valid(q.host):
        raise InputError(f"{q.host[:100]!r} is not an address to listen on: give an IP "
                         "address (127.0.0.1, 0.0.0.0, ::) or a host name")


def host_is_valid(host: str) -> bool:
    """An IPv4 or IPv6 address, or a name made of DNS labels; all-numeric dotted text that
    is no IPv4 address (999.1.1.1) is refused, as a resolver would try it as a name."""
    import ipaddress

    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    if not host or len(host) > 253 or not all(_HOST_LABEL.match(x) for x in labels):
        return False
    return not labels[-1].isdigit()  # a top-level label is never all digits


def _open_store(note: Callable[[str], None]) -> None:
    """Open the price store once before any worker starts: its migrations run and the
    shipped prices are seeded here, and where it is is said. A PostgreSQL store that cannot
    be used stops the start (a team's server must not quietly serve other prices); a local
    file that cannot be used is said, and the pages fall back to the shipped prices."""
    store = PriceStore(None)
    try:
        ensure_shipped(store)
        version = store.schema_version()
        problems = _left_out(store)
    except StoreError as exc:
        if store.dialect == "postgresql":
            raise
        note(f"{exc}; the pages use the prices shipped with whichgpu meanwhile")
        return
    finally:
        store.backend.close()  # the workers have their own connections; this one holds none
    print(f"Price store: {store.location} ({store.dialect}, schema {version})", flush=True)
    for problem in problems:
        note(problem)


def _left_out(store: PriceStore) -> list[str]:
    """What reading the store's current snapshots leaves out (a damaged stored value, an
    implausible offer), one line per feed: a damaged store serves everything else, and the
    operator is told what it does not serve."""
    snaps = store.current()
    if not snaps:
        return []
    snaps, _ = store.read([s.id for s in snaps], cheapest_only=True)
    return store.problems(snaps)
