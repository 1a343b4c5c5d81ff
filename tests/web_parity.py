"""The REST API against the CLI: the same JSON less what depends on the clock or the server,
and the same one-line reason (422 against exit 2). Shared by the tests that compare them."""

from __future__ import annotations

VOLATILE = {"age_s", "stale"}  # how old a price is depends on the second it is asked
SERVER_PATH = {"store"}  # the CLI names its store file; the web never shows the server's path


def stable(data):
    """JSON without the keys that depend on the clock."""
    if isinstance(data, dict):
        return {k: stable(v) for k, v in data.items() if k not in VOLATILE | SERVER_PATH}
    if isinstance(data, list):
        return [stable(v) for v in data]
    return data


def cli_error(result) -> str:
    """The CLI's one-line reason (stderr 'error: ...')."""
    assert result.code == 2, result.err
    return result.err.strip().removeprefix("error: ")


def same_as_cli(web, cli, url: str, *args: str, server_only: tuple[str, ...] = ()) -> dict:
    """The API's JSON is the CLI's, less the keys that describe the server (``server_only``)."""
    r = web.get(url)
    assert r.status_code == 200, r.text
    c = cli(*args, "--json")
    assert c.code == 0, c.err
    expected = {k: v for k, v in c.json().items() if k not in server_only}
    assert stable(r.json()) == stable(expected)
    return r.json()


def same_error(web, cli, url: str, *args: str) -> str:
    r = web.get(url)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/json")
    reason = r.json()["detail"]
    assert reason == cli_error(cli(*args))
    return reason
