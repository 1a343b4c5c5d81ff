"""Check the shipped per-token API price table (cost/data/api_prices.csv) against genai-prices'
data file: each mapped row's input, cached and output price
side by side with upstream's, and the rows upstream no longer lists.

    .venv/bin/python scripts/check_api_prices.py [FILE|URL]

Default: the recorded file of tests/data/api_prices/ (upstream commit 47df840a, the one the
shipped table was read from: every row must agree). Give genai-prices' URL (or a newer copy)
to see how far the shipped prices have drifted; no network unless a URL is given.
"""

from __future__ import annotations

import datetime as dt
import gzip
import sys
from pathlib import Path

from whichgpu.cost.api_prices import shipped
from whichgpu.cost.api_prices_refresh import UPSTREAM, convert, read_source

RECORDED = (Path(__file__).resolve().parent.parent / "tests" / "data" / "api_prices"
            / "genai_prices_47df840a_v2_data.json.gz")


def main(argv: list[str]) -> int:
    if argv:
        text, origin = read_source(argv[0])
    else:
        text, origin = gzip.decompress(RECORDED.read_bytes()).decode("utf-8"), RECORDED.name
    got = convert(text, origin=origin, day=dt.datetime.now(dt.UTC).date())
    fresh = {(p.provider, p.provider_model): p for p in got.rows}
    print(f"{origin}: {got.found} of {got.mapped} mapped rows found upstream")
    print(f"{'provider':<11} {'model':<30} {'shipped in/cached/out':>24} "
          f"{'upstream in/cached/out':>24}  same")
    same = 0
    for p in shipped():
        if not p.source.startswith(UPSTREAM):
            continue
        new = fresh.get((p.provider, p.provider_model))

        def trio(x):
            return "-" if x is None else (f"{x.input_per_mtok:g}/"
                                          f"{x.cached_input_per_mtok or 0:g}/"
                                          f"{x.output_per_mtok:g}")
        ok = new is not None and trio(new) == trio(p)
        same += ok
        print(f"{p.provider:<11} {p.model:<30} {trio(p):>24} {trio(new):>24}  "
              f"{'yes' if ok else 'NO'}")
    gone = ", ".join(got.missing) or "none"
    print(f"{same} of {got.mapped} rows agree; no longer listed: {gone}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
