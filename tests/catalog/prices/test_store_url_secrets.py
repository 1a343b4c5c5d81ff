"""Issue 36, item 1: the store location is a postgresql:// URL or a plausible file path, and
its password is never printed, whatever the form.

Before, ``WHICHGPU_DATABASE_URL='host=... user=... password=... dbname=...'`` (libpq's
keyword/value form) was taken for a SQLite *file name*: the password was printed on every
``Store:`` line, in the JSON ``store`` field and at server start, a file of that name appeared
in the working directory, and the team's database was never used.
"""

from __future__ import annotations

import pytest

from whichgpu.catalog.prices.backends import parse_target, redact
from whichgpu.errors import InputError

SECRET = "S3cr3tPa55XYZ"
KEYWORD_FORMS = [
    f"host=127.0.0.1 port=55432 user=whichgpu password={SECRET} dbname=whichgpu",
    f"dbname=whichgpu password={SECRET}",
    f"password = '{SECRET} x' host=db",
    "host=db dbname=whichgpu",  # no password, still not a file
    f"sqlite:///team password={SECRET}",
    f"/srv/whichgpu/password={SECRET}.sqlite",
]


@pytest.mark.parametrize("text", KEYWORD_FORMS)
def test_a_keyword_value_string_is_refused_without_repeating_it(text):
    with pytest.raises(InputError) as info:
        parse_target(text)
    said = str(info.value)
    assert "write it as a postgresql:// URL" in said
    assert SECRET not in said and "\n" not in said


@pytest.mark.parametrize("args", [("prices", "sources"), ("prices", "list", "h100", "--json"),
                                  ("recommend", "llama-3.1-8b", "--tokens", "1M"),
                                  ("serve", "--port", "8799")])
def test_every_command_refuses_it_in_one_line_and_creates_no_file(cli, tmp_path, monkeypatch,
                                                                    args):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", KEYWORD_FORMS[0])
    res = cli(*args)
    assert res.code == 2, (args, res.code, res.out, res.err)
    assert "write it as a postgresql:// URL" in res.err
    assert SECRET not in res.out + res.err
    assert len(res.err.strip().splitlines()) == 1, res.err
    assert {p.name for p in tmp_path.iterdir()} <= {"whichgpu-home"}  # no file named after it


@pytest.mark.parametrize("text, shown", [
    (f"host=db password={SECRET} dbname=x", "host=db password=*** dbname=x"),
    (f"password='{SECRET} \\' y' host=db", "password=*** host=db"),
    (f"PASSWORD={SECRET}", "PASSWORD=***"),
    (f"postgresql://u:{SECRET}@db/x", "postgresql://u:***@db/x"),
    (f"postgresql://u@db/x?sslmode=require&password={SECRET}",
     "postgresql://u@db/x?sslmode=require&password=***"),
])
def test_a_password_is_masked_in_every_form(text, shown):
    assert redact(text) == shown


def test_the_store_line_the_json_and_the_start_line_never_show_a_password(cli, capsys,
                                                                          monkeypatch, pg_url):
    url = pg_url + f"&password={SECRET}"  # the test cluster trusts its socket: ignored there
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", url)
    listed = cli("prices", "list", "h100", "--json")
    assert listed.code == 0, listed.err
    assert listed.json()["prices"]["store"].endswith("password=***")
    sources = cli("prices", "sources")
    assert sources.code == 0 and "password=***" in sources.out
    from whichgpu.web.server import _open_store

    notes: list[str] = []
    capsys.readouterr()
    _open_store(notes.append)
    started = capsys.readouterr().out
    assert "Price store: postgresql://" in started and "password=***" in started
    for text in (listed.out, listed.err, sources.out, sources.err, started, *notes):
        assert SECRET not in text
