"""Fuzzing the price commands' own checks: whatever GPU, feed, price source, snapshot or offer
file comes in, a refusal is exit 2 with one line on stderr ("error: ..."), never an internal
error, a traceback or a multi-line box; and a good answer is strict JSON.

Only what whichgpu reads itself is fuzzed here (positional names, free-text options, the
contents of an imported file). Options that typer parses as numbers (``--limit``,
``--max-age``) are refused by typer's own multi-line usage box: the CLI's owners are turning
those into one line (see the lead's list), and tests/cli/test_fuzz_cli.py covers their exit code.

``WHICHGPU_FUZZ_EXAMPLES=2000`` for a long run (fixed examples otherwise, so make test stays
quick).
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("WHICHGPU_FUZZ_EXAMPLES", "20"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck), print_blob=True)

NAMES = st.one_of(
    st.sampled_from(["h100", "h100-sxm", "zzz", "", " ", "x" * 300, "é" * 120, "a\x00b",
                     "../../etc/passwd", "/dev/zero", "skypilot/runpod", "skypilot/nope",
                     "article-000", "article-000@1", "skypilot@2026-12-01", "skypilot@9999",
                     "nope@", "@", "-", "--", "h100,rtx-4090", "1e400", "nan"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
)
HEADERS = ["provider", "gpu", "gpu_count", "price_per_hour", "currency", "observed_at",
           "billing_increment_s", "billing_minimum_s", "spot", "region"]
CELLS = st.sampled_from(["RunPod", "h100-sxm", "H100", "zzz", "1", "0", "-1", "nan", "inf",
                         "1e300", "1e-300", "2.5", "USD", "EUR", "ZZZ", "usd", "2026-11-30",
                         "9999-01-01", "yesterday", "true", "maybe", "", "x" * 200])


def _one_line_refusal(result, where: str) -> None:
    assert result.code in (0, 2), (where, result.code, result.err[-400:])
    assert "internal error" not in result.err and "Traceback" not in result.err, where
    if result.code == 2:
        lines = [line for line in result.err.strip().splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), (where, result.err)


@FUZZ
@given(name=NAMES)
def test_fuzzed_gpu_names_get_one_line_or_an_answer(cli, name):
    for args in (("prices", "list", name, "--json"), ("prices", "history", name, "--json")):
        result = cli(*args)
        _one_line_refusal(result, repr(args))
        if result.code == 0:
            json.loads(result.out, parse_constant=lambda c: pytest.fail(c))


@FUZZ
@given(name=NAMES)
def test_fuzzed_price_sources_and_feeds_get_one_line_or_an_answer(cli, name):
    for args in (("prices", "list", "--prices", name, "--json"),
                 ("prices", "history", "h100-sxm", "--feed", name, "--json"),
                 ("prices", "remove", name, "--json"),
                 ("cost", "--gpu", "h100-sxm", "--duration", "1h", "--prices", name)):
        _one_line_refusal(cli(*args), repr(args))


@FUZZ
@given(header=st.lists(st.sampled_from(HEADERS), min_size=1, max_size=10, unique=True),
       rows=st.lists(st.lists(CELLS, min_size=0, max_size=11), max_size=4))
def test_fuzzed_offer_files_are_imported_or_refused_in_one_line(cli, tmp_path_factory,
                                                                header, rows):
    path = tmp_path_factory.mktemp("offers") / "offers.csv"
    path.write_text("\n".join([",".join(header), *(",".join(r) for r in rows)]) + "\n",
                    encoding="utf-8")
    result = cli("prices", "import", str(path), "--name", "fuzz", "--json")
    _one_line_refusal(result, path.read_text()[:300])
    if result.code == 0:
        json.loads(result.out, parse_constant=lambda c: pytest.fail(c))
        # a stored feed never poisons the others: the market is still listed
        listed = cli("prices", "list", "--limit", "0", "--json")
        assert listed.code == 0 and json.loads(listed.out)["offers"]
        assert cli("prices", "remove", "fuzz").code == 0
