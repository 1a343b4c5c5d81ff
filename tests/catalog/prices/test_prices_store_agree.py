"""With WHICHGPU_DATABASE_URL at a fresh PostgreSQL, the price commands create their tables and
answer exactly what they answer on the SQLite file, from the same inputs.

The same sequence runs on each engine: seed (first use), refresh from the recorded gpuhunt
catalog, import an offer file, a refresh that fails, then read everything back. Only what
differs by nature is set aside: the store's location, when each snapshot was stored and how
old that makes it.
"""

from prices_support import GPUHUNT_DIR, normal, write_offers


def _session(cli, monkeypatch, url: str, tmp_path) -> dict[str, object]:
    monkeypatch.setenv("WHICHGPU_DATABASE_URL", url)
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(GPUHUNT_DIR))
    out: dict[str, object] = {}

    def run(name: str, *args: str, code: int = 0) -> None:
        r = cli(*args)
        assert r.code == code, (name, r.err)
        out[name] = normal(r.json())

    run("list-first", "prices", "list", "--limit", "0", "--json")
    run("refresh", "prices", "refresh", "--source", "gpuhunt", "--json")
    quotes = write_offers(tmp_path / f"quotes-{len(url)}.csv",
                          "acme,h100-sxm,1,2.10,USD,false,eu-west,2026-11-28",
                          "acme,h100-sxm,8,16.00,USD,false,eu-west,2026-11-28",
                          "acme,rtx-4090,1,0.31,USD,true,eu-west,2026-11-28")
    run("import", "prices", "import", str(quotes), "--name", "quotes", "--json")
    broken = tmp_path / "broken"
    broken.mkdir(exist_ok=True)
    (broken / "runpod.csv").write_text("instance_name,location\nNVIDIA H100 PCIe,US\n")
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(broken))
    run("refresh-failed", "prices", "refresh", "--source", "gpuhunt/runpod", "--json", code=1)
    run("list", "prices", "list", "--limit", "0", "--json")
    run("list-h100", "prices", "list", "h100", "--currency", "EUR", "--json")
    run("history", "prices", "history", "h100", "--json")
    run("sources", "prices", "sources", "--unmapped", "--json")
    run("cost", "cost", "--gpu", "h100-sxm", "--duration", "3h20m", "--json")
    run("recommend", "recommend", "llama-3.1-8b", "--task", "lora", "--steps", "500",
        "--json")
    return out


def test_every_price_command_answers_the_same_on_postgresql_and_sqlite(cli, monkeypatch,
                                                                       tmp_path, pg_url):
    import psycopg

    with psycopg.connect(pg_url) as con:
        assert con.execute("SELECT count(*) FROM information_schema.tables WHERE "
                           "table_schema = current_schema()").fetchone()[0] == 0
    on_sqlite = _session(cli, monkeypatch, str(tmp_path / "prices.sqlite"), tmp_path)
    on_postgres = _session(cli, monkeypatch, pg_url, tmp_path)
    with psycopg.connect(pg_url) as con:  # the commands created the tables
        assert con.execute("SELECT count(*) FROM offer").fetchone()[0] > 0
    assert on_postgres.keys() == on_sqlite.keys()
    for name in on_sqlite:
        assert on_postgres[name] == on_sqlite[name], name
    # and the answers hold what the steps stored
    assert any(o["offer_set"] == "quotes" for o in on_postgres["list"]["offers"])
    assert any(f["feed"].startswith("gpuhunt/") for f in on_postgres["list"]["prices"]["feeds"])
    assert any("last refresh failed" in w for w in on_postgres["list"]["prices"]["warnings"])
