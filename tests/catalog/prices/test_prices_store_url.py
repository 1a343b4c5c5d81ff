"""Choosing the price store (WHICHGPU_DATABASE_URL, --database-url) and what is said when it
cannot be used: one line, no traceback, never a password."""

import re

import pytest

from whichgpu.catalog.prices import PriceStore
from whichgpu.catalog.prices.backends import parse_target, redact
from whichgpu.catalog.prices.backends.postgres import pg_store_error
from whichgpu.catalog.prices.store import StoreError
from whichgpu.errors import InputError


def test_unset_means_the_local_sqlite_file_and_a_url_is_read_by_its_scheme(tmp_path,
                                                                          monkeypatch):
    assert parse_target(None).path == tmp_path / "whichgpu-home" / "prices.sqlite"
    assert parse_target(str(tmp_path / "a.sqlite")).path == tmp_path / "a.sqlite"
    assert parse_target("sqlite:///rel/b.sqlite").path.as_posix() == "rel/b.sqlite"
    assert parse_target("sqlite:////abs/c.sqlite").path.as_posix() == "/abs/c.sqlite"
    for url in ("postgresql://u@db/whichgpu", "postgres://db/whichgpu"):
        assert parse_target(url).kind == "postgresql"
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", "postgresql://u@db/whichgpu")
    assert parse_target(None).kind == "postgresql"


@pytest.mark.parametrize("url", ["mysql://u@db/x", "sqlite://relative.db", "sqlite:///"])
def test_an_unsupported_database_url_is_bad_input(url):
    with pytest.raises(InputError, match=r"sqlite|postgresql"):
        parse_target(url)


def test_passwords_never_appear_where_the_store_is_named():
    assert redact("postgresql://app:s3cret@db:5432/w") == "postgresql://app:***@db:5432/w"
    assert redact("postgresql://db/w?sslmode=require&password=s3cret") == \
        "postgresql://db/w?sslmode=require&password=***"
    assert redact("postgresql:///w?host=/run/pg") == "postgresql:///w?host=/run/pg"
    assert "s3cret" not in repr(PriceStore("postgresql://app:s3cret@127.0.0.1:1/w"))


def test_without_the_postgres_extra_a_postgresql_url_says_what_to_install(monkeypatch):
    from whichgpu.catalog.prices.backends import postgres as backend_postgres

    monkeypatch.setattr(backend_postgres, "psycopg", None)
    with pytest.raises(InputError, match=r"pip install 'whichgpu\[postgres\]'"):
        PriceStore("postgresql://db/whichgpu")


def test_an_unreachable_server_is_one_line_without_the_password(cli, monkeypatch):
    """Port 1 on loopback: nothing listens, libpq is refused at once. The CLI says so in one
    line naming the database (password hidden); a priced answer falls back to the shipped
    prices and says why."""
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", "postgresql://app:s3cret@127.0.0.1:1/w")
    r = cli("prices", "history", "h100")
    assert r.code == 1 and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert "cannot connect to the PostgreSQL server" in r.err and "s3cret" not in r.err
    assert "postgresql://app:***@127.0.0.1:1/w" in r.err
    listed = cli("prices", "list", "h100", "--json")
    assert listed.code == 0
    warnings = listed.json()["prices"]["warnings"]
    assert any("cannot connect to the PostgreSQL server" in w for w in warnings)
    assert "s3cret" not in listed.out + listed.err


def test_database_url_option_and_environment_reach_every_command(cli, pg_url, monkeypatch):
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", "")  # restored after the test
    r = cli("--database-url", pg_url, "prices", "sources", "--json")
    assert r.code == 0, r.err
    data = r.json()
    assert data["store"] == pg_url and data["schema_version"] == 6
    assert cli("--database-url", "mysql://x/y", "prices", "list").code == 2
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", pg_url)
    cost = cli("cost", "--gpu", "rtx-4090", "--duration", "1h", "--json")
    assert cost.code == 0 and cost.json()["price_selection"]["store"] == pg_url


@pytest.mark.parametrize(("make", "words"), [
    (lambda e: e.DiskFull("could not extend file"), "disk is full"),
    (lambda e: e.ReadOnlySqlTransaction("cannot execute INSERT in a read-only transaction"),
     "only accepts reads"),
    (lambda e: e.InsufficientPrivilege("permission denied for table offer"),
     "lacks a permission (permission denied for table offer)"),
    (lambda e: e.TooManyConnections("sorry, too many clients already"), "no free connection"),
    (lambda e: e.InvalidSchemaName("schema \"prices\" does not exist"), "search_path"),
])
def test_postgresql_errors_are_said_accurately_without_advising_deletion(make, words):
    import psycopg

    err = pg_store_error("postgresql://db/w", make(psycopg.errors))
    assert isinstance(err, StoreError) and words in err.reason
    assert "postgresql://db/w" not in err.reason and "postgresql://db/w" in str(err)
    assert "delete" not in err.reason.lower() and "drop" not in err.reason.lower()


@pytest.mark.parametrize("url", [
    "postgresql://app:Zq9x@Kw7v@127.0.0.1:1/w",  # libpq cuts at the first '@': host 'Kw7v@…'
    "postgresql://app:Zq9x/Kw7v@127.0.0.1:1/w",  # ... or at the '/': host 'app', port 'Zq9x'
    "postgresql://app:Zq9x?Kw7v@127.0.0.1:1/w",
    "postgresql://app:Zq9x#Kw7v@127.0.0.1:1/w",
    "postgresql://app:12/Kw7v@127.0.0.1:1/w",  # a port '12', then the rest as a path
    "postgresql://app:Zq9xKw7v@[bad/w",  # not a URL at all
])
def test_a_password_that_libpq_would_misread_is_refused_without_showing_it(url, cli,
                                                                          monkeypatch):
    """A password with an unescaped '@', '/', '?' or '#' makes libpq read part of it as the
    host or port, and echo that part in its error: refused before any connection (exit 2),
    saying how to write it, with no piece of the password."""
    secret = url.split("://app:", 1)[1].rsplit("@", 1)[0]
    with pytest.raises(InputError, match=r"percent-encode|PGPASSWORD") as info:
        parse_target(url)
    pieces = {p for p in re.split(r"[@/?#\[]", secret) if len(p) > 2}
    assert not any(p in str(info.value) for p in pieces), str(info.value)
    assert not any(p in redact(url) for p in pieces), redact(url)
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", url)
    r = cli("prices", "history", "h100")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert not any(p in r.err for p in pieces), r.err


def test_a_percent_encoded_password_is_accepted_and_hidden():
    url = "postgresql://app:p%40ss%2Fw%3Fd%23@db:5432/w"
    assert parse_target(url).url == url
    assert redact(url) == "postgresql://app:***@db:5432/w"
    user_at_host = "postgresql://db/w?user=admin@server&password=s3cret"  # '@' in a parameter
    assert parse_target(user_at_host).kind == "postgresql"
    assert "s3cret" not in redact(user_at_host)
