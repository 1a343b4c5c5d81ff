"""A throwaway local PostgreSQL cluster for the tests and benchmarks (no Docker, no network).

``initdb`` in a fresh temporary folder, then ``postgres`` listening on a Unix socket in that
folder only (no TCP port, so clusters of parallel runs never clash), trust authentication
for its own socket, durability off (``fsync``, ``synchronous_commit``: nothing in it needs to
survive a crash). ``stop()`` shuts it down and deletes the folder.

PostgreSQL refuses to run as root, and CI and the development machine run as root: there
``initdb`` and the server run as the ``postgres`` user that Debian's ``postgresql`` package
creates (else ``nobody``; the child process changes user before it starts them), and the
folder is handed to that user. As any other user they run as that user. The server is our
child process (not daemonised) and is told to stop if we die.

The binaries are found through ``$WHICHGPU_PG_BINDIR``, ``pg_config --bindir``, Debian's
``/usr/lib/postgresql/<version>/bin`` (newest first) or ``PATH``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

REQUIRE_ENV = "WHICHGPU_REQUIRE_POSTGRES"  # set by .ci/run: a missing PostgreSQL fails the tests
BINDIR_ENV = "WHICHGPU_PG_BINDIR"


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``, or None when PostgreSQL is not installed."""
    candidates: list[str] = []
    if os.environ.get(BINDIR_ENV):
        candidates.append(os.environ[BINDIR_ENV])
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            candidates.append(subprocess.run([pg_config, "--bindir"], capture_output=True,
                                             text=True, timeout=10).stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    debian = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(debian, key=lambda p: int(Path(p).parent.name)
                         if Path(p).parent.name.isdigit() else 0, reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "postgres").exists():
            return Path(folder)
    return None


def _user() -> pwd.struct_passwd | None:
    """The user to run PostgreSQL as: None when not root (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL as")


def _as(user: pwd.struct_passwd | None, *, die_with_parent: bool = False):
    """A preexec_fn: become ``user`` and, for the server, get SIGINT (PostgreSQL's fast
    shutdown) when the process that started it dies, however it dies, so that no server
    outlives a killed test run. Linux clears that setting when the user changes, so it is
    set after. (Everything it needs is loaded before the fork: as another user the child may
    not read this Python's files.)"""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    deathsig = int(signal.SIGINT)

    def become() -> None:
        if user is not None:
            os.setgid(user.pw_gid)
            os.setgroups([])
            os.setuid(user.pw_uid)
        if die_with_parent and sys.platform.startswith("linux"):
            libc.prctl(1, deathsig)  # PR_SET_PDEATHSIG
    return become


@dataclass
class Cluster:
    """A running throwaway cluster: ``url(dbname)`` connects to it over its Unix socket."""

    root: Path
    process: subprocess.Popen

    @property
    def socket_dir(self) -> Path:
        return self.root

    def url(self, dbname: str = "postgres", **options: str) -> str:
        """A libpq URL for this cluster (``options``: extra query parameters)."""
        query = "&".join(f"{k}={quote(v, safe='')}" for k, v in
                         {"host": str(self.socket_dir), "user": "postgres", **options}.items())
        return f"postgresql:///{dbname}?{query}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster(bindir: Path | None = None, *, max_connections: int = 200) -> Cluster:
    """initdb, then the server as a child process; raises RuntimeError with PostgreSQL's own
    output on failure."""
    bindir = bindir or find_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL binaries (initdb, postgres) not found")
    user = _user()
    root = Path(tempfile.mkdtemp(prefix="whichgpu-pg-"))
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    os.chmod(root, 0o755)  # the socket lives here: its owner and we both reach it
    data = root / "data"
    done = subprocess.run(
        [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
         "--encoding=UTF8", "--locale=C", "--no-sync"], capture_output=True, text=True,
        timeout=120, cwd=root, preexec_fn=_as(user))
    if done.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {done.stderr or done.stdout}")
    settings = {"listen_addresses": "", "unix_socket_directories": str(root),
                "max_connections": str(max_connections), "shared_buffers": "32MB",
                "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                "log_min_messages": "warning"}
    args = [str(bindir / "postgres"), "-D", str(data)]
    for k, v in settings.items():
        args += ["-c", f"{k}={v}"]
    log = open(root / "server.log", "wb")
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=root,
                               preexec_fn=_as(user, die_with_parent=True))
    log.close()
    cluster = Cluster(root, process)
    deadline = time.monotonic() + 60
    while subprocess.run([str(bindir / "pg_isready"), "-q", "-h", str(root), "-U", "postgres"],
                         timeout=30).returncode != 0:  # accepting connections
        if process.poll() is not None or time.monotonic() > deadline:
            text = (root / "server.log").read_text(errors="replace")
            cluster.stop()
            raise RuntimeError(f"PostgreSQL did not start: {text[-2000:]}")
        time.sleep(0.05)
    return cluster
