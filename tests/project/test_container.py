"""The container recipe: Dockerfile and compose.yaml.

No Docker daemon runs on the development machine or in CI, so no image is built here. What
is checked instead: the Dockerfile's key properties (two stages, wheels built in the first,
installed without a registry in the second, a non-root user, no script piped from the
network, the entry point and the health check), and compose.yaml read as YAML with the
expected services, their wiring and health checks. Where a Compose CLI is installed
(``docker compose`` v2, or Debian's ``docker-compose`` v1) it must also accept the file
(``config``); where none is, that part is skipped, saying so.
"""

import re
import shlex
import shutil
import subprocess

import pytest
import yaml

from paths import ROOT


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_dockerfile_builds_wheels_apart_and_runs_slim_and_non_root():
    steps = _instructions()
    froms = [a for w, a in steps if w == "FROM"]
    assert len(froms) == 2 and froms[0].endswith("AS build")  # a builder stage, then the app
    base = dict(re.findall(r"ARG (\w+)=(\S+)", (ROOT / "Dockerfile").read_text()))
    assert "slim" in base["PYTHON_IMAGE"]
    runs = [a for w, a in steps if w == "RUN"]
    assert any("pip wheel" in r for r in runs[:1])
    final = runs[-1]
    assert "--no-index" in final and "--find-links /wheels" in final  # no registry at install
    assert "whichgpu[postgres,prices,mcp]" in final  # /mcp served by the image
    users = [a for w, a in steps if w == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    text = (ROOT / "Dockerfile").read_text()
    assert not re.search(r"(curl|wget)[^\n|]*\|\s*(ba)?sh", text)  # nothing piped into a shell
    assert not any(w == "ADD" for w, _ in steps)  # no remote ADD
    entry = [a for w, a in steps if w == "ENTRYPOINT"]
    assert entry == ['["whichgpu"]']  # exec form: signals reach the server
    cmd = [a for w, a in steps if w == "CMD"][-1]
    assert '"serve"' in cmd and '"0.0.0.0"' in cmd
    assert any(w == "HEALTHCHECK" and "/healthz" in a for w, a in steps)
    env = " ".join(a for w, a in steps if w == "ENV")
    assert "HF_HUB_OFFLINE=1" in env  # no network needed at run time


def test_dockerignore_sends_only_the_sources():
    rules = [x.strip() for x in (ROOT / ".dockerignore").read_text().splitlines()
             if x.strip() and not x.startswith("#")]
    assert rules[0] == "*"  # everything out (.venv, .git, artifacts), then only these back
    assert {r for r in rules if r.startswith("!")} == {"!pyproject.toml", "!README.md", "!src/"}


REQUIRED_PASSWORD = "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD (docs/deploy.md)}"


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_runs_the_app_postgresql_and_a_scheduled_refresh():
    doc = _compose()
    services = doc["services"]
    assert set(services) == {"app", "db", "refresh"}
    db = services["db"]
    assert db["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"])  # kept
    for name in ("app", "refresh"):
        s = services[name]
        url = s["environment"]["WHICHGPU_DATABASE_URL"]
        assert url.startswith("postgresql://") and "@db:5432/" in url
        assert ":" not in url.split("://", 1)[1].split("@", 1)[0]  # no password in the URL
        assert s["environment"]["PGPASSWORD"] == REQUIRED_PASSWORD  # libpq reads it
        assert s["depends_on"]["db"]["condition"] == "service_healthy"
    # No default password: a forgotten POSTGRES_PASSWORD stops Compose, saying so.
    assert db["environment"]["POSTGRES_PASSWORD"] == REQUIRED_PASSWORD
    assert "POSTGRES_PASSWORD:-" not in (ROOT / "compose.yaml").read_text()
    app = services["app"]
    assert app["command"][0] == "serve" and "--workers" in app["command"]
    assert "/readyz" in " ".join(app["healthcheck"]["test"])
    assert all(p.startswith("127.0.0.1:") for p in app["ports"])  # this machine only
    job = " ".join(services["refresh"]["command"])
    assert "whichgpu prices refresh" in job and "sleep" in job and "while true" in job
    assert services["refresh"]["healthcheck"] == {"disable": True}
    # the job is a shell loop: without an init as PID 1 the shell ignores SIGTERM
    assert services["refresh"].get("init") is True and app.get("init") is True


def test_a_compose_cli_accepts_the_file_where_one_is_installed():
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"],
                                                 capture_output=True).returncode == 0:
        command = ["docker", "compose", "-f", str(ROOT / "compose.yaml"), "config", "-q"]
    elif shutil.which("docker-compose"):
        command = ["docker-compose", "-f", str(ROOT / "compose.yaml"), "config", "-q"]
    else:
        pytest.skip("no Compose CLI here (docker compose, docker-compose): compose.yaml was "
                    "checked as YAML only")
    import os

    env = {**os.environ, "POSTGRES_PASSWORD": "p@ss:w/rd#1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env=env)
    assert done.returncode == 0, f"{shlex.join(command)}: {done.stderr}"
    env.pop("POSTGRES_PASSWORD")
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT,
                             env=env)
    assert refused.returncode != 0 and "set POSTGRES_PASSWORD" in refused.stderr
