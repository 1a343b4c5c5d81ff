"""``whichgpu serve``: start the web app and REST API with uvicorn (the command line's one
way into the web package)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import uvicorn

from whichgpu.answers.requests import Serve
from whichgpu.bench.profile import default_profile_path, load_profile
from whichgpu.web.app import CALIBRATION_ENV, create_app
from whichgpu.web.resolve import hub_status


def serve(q: Serve, note: Callable[[str], None]) -> None:
    """Check the calibration profile named, say where the server listens, then run it
    (``note`` says a remark on the terminal)."""
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
    host = q.host
    if host not in ("127.0.0.1", "localhost", "::1"):
        note(f"listening on {host}: other machines can reach this server")
    shown = f"[{host}]" if ":" in host else host
    print(f"whichgpu web app: http://{shown}:{q.port}/  (REST API: /api/v1, docs: /docs; "
          "Ctrl+C to stop)", file=sys.stdout, flush=True)
    hub = hub_status()  # offline or not, stated at start (and at /api/v1/health)
    print(f"Hugging Face Hub: {hub['mode']} ({hub['detail']})", flush=True)
    if q.workers > 1:  # each process builds its own app (and its own memory of answers)
        uvicorn.run("whichgpu.web.app:create_app", factory=True, workers=q.workers, host=host,
                    port=q.port, log_level=q.log_level, access_log=False)
    else:
        uvicorn.run(create_app(choice), host=host, port=q.port, log_level=q.log_level,
                    access_log=False)
