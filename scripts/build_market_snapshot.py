"""Build whichgpu's shipped market snapshot from the recorded SkyPilot catalog files.

    python scripts/build_market_snapshot.py            # writes src/whichgpu/catalog/prices/data/market/
    python scripts/build_market_snapshot.py --check    # exit 1 if the shipped files differ

Input: ``scripts/data/skypilot-catalog/`` (``manifest.toml`` says which commit and path each
``<cloud>.csv`` was read at and how it was trimmed). Output: ``skypilot.csv`` (one offer per
cloud x instance type x on-demand/spot, cheapest region kept) and ``skypilot.json`` (per feed:
source commit, observation date, unmapped names with row counts, skipped rows). Deterministic:
the same input and catalog give the same bytes. Re-run it after the GPU catalog grows: names
listed as "catalog has no <id>" then map.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import tomllib
from pathlib import Path

from whichgpu.catalog.prices.market import write_snapshot
from whichgpu.catalog.prices.skypilot import feed_from_rows, read_vms_csv
from whichgpu.catalog.prices.sources import parse_time

ROOT = Path(__file__).resolve().parent.parent
INPUT = ROOT / "scripts" / "data" / "skypilot-catalog"
OUTPUT = ROOT / "src" / "whichgpu" / "catalog" / "prices" / "data" / "market"


def build(input_dir: Path = INPUT, output_dir: Path = OUTPUT) -> list[str]:
    """Build the snapshot into ``output_dir``; returns the feeds written."""
    manifest = tomllib.loads((input_dir / "manifest.toml").read_text("utf-8"))
    read_on = manifest["read_on"]
    now = parse_time(read_on)
    results, meta = [], {}
    for cloud, info in sorted(manifest["files"].items()):
        text = (input_dir / f"{cloud}.csv").read_text("utf-8")
        rows, skipped = read_vms_csv(text, path=input_dir / f"{cloud}.csv", cloud=cloud)
        source = f"{manifest['repository']}@{info['commit']}:{info['path']}"
        result = feed_from_rows(rows, cloud=cloud, observed_at=read_on, source=source,
                                version=info["commit"], skipped=skipped, now=now)
        if result.error:
            raise SystemExit(f"{cloud}: {result.error}")
        results.append(result)
        meta[result.feed] = {"cloud": cloud, "repository": manifest["repository"],
                             "path": info["path"], "version": info["commit"],
                             "observed_at": read_on, "trimmed": info["trimmed"]}
    write_snapshot(results, meta, output_dir)
    return [r.feed for r in results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare a rebuild with the shipped files instead of writing")
    args = parser.parse_args(argv)
    if not args.check:
        feeds = build()
        print(f"wrote {len(feeds)} feeds to {OUTPUT}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(output_dir=Path(tmp))
        differ = [p.name for p in Path(tmp).iterdir()
                  if p.read_bytes() != (OUTPUT / p.name).read_bytes()]
    if differ:
        print(f"the shipped snapshot differs from a rebuild: {', '.join(differ)}")
        return 1
    print("the shipped snapshot matches a rebuild")
    return 0


if __name__ == "__main__":
    sys.exit(main())
