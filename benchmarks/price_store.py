"""Priced commands on a large price store (not a test): wall time and peak memory.

Builds price stores of ``--sizes`` current offers (synthetic offers over the real catalog ids,
``--periods`` price periods each, so the store also holds that much history: see
``synthetic_store.py``), then runs each priced command ``--repeat`` times as a user would (a new
``whichgpu`` process, offline) against each store and against a fresh store holding only the
shipped prices, and prints the median wall time and the peak RSS of each.

    python benchmarks/price_store.py                      # 20k and 200k offers
    python benchmarks/price_store.py --sizes 20000 --repeat 5 --out artifacts/bench-store.json

Target (issue 21): under 0.5 s per priced command on the 20k-offer store.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic_store

COMMANDS = {
    "recommend": ["recommend", "llama-3.1-70b", "--quant", "awq", "--tokens", "1M",
                  "--prompt-tokens", "512", "--output-tokens", "512", "--json"],
    "cost": ["cost", "--gpu", "h100-sxm", "--duration", "3h", "--json"],
    "tco": ["tco", "h100-sxm", "--json"],
    "gpus": ["gpus", "--json"],
    "checklist": ["checklist", "--workload", "inference", "--model", "70B",
                  "--budget-per-hour", "3USD", "--hours-per-month", "200",
                  "--horizon-months", "12", "--json"],
}
TARGET_S = 0.5


# Runs whichgpu's CLI and, at exit, writes the process's peak RSS (VmHWM: this process only;
# a forked child's rusage would also count the benchmark's own memory at the fork).
_CHILD = """
import atexit, sys
out = sys.argv.pop(1)
def peak():
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    open(out, "w").write(str(kb))
atexit.register(peak)
from whichgpu.cli import main
sys.argv[0] = "whichgpu"
main()
"""


def run_once(args: list[str], store: Path, home: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one ``whichgpu`` process."""
    env = {**os.environ, "WHICHGPU_PRICE_STORE": str(store), "WHICHGPU_HOME": str(home),
           "WHICHGPU_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        peak = Path(tmp) / "peak"
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(peak), *args], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        wall = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"whichgpu {' '.join(args)} failed ({proc.returncode}): "
                             f"{proc.stderr.decode()[-2000:]}")
        return wall, int(peak.read_text()) / 1024


#: The store reads behind the priced commands (run in this process, so without the CLI's start):
#: recommend, checklist and gpus read the cheapest offer of each kind of every GPU; cost and
#: tco the same for one GPU; the price list every offer of one GPU family.
LOOKUPS = {
    "every GPU, cheapest of each kind": {"cheapest_only": True},
    "one GPU, cheapest of each kind": {"gpus": ["h100-sxm"], "cheapest_only": True},
    "one GPU, every offer": {"gpus": ["h100-sxm"]},
}


def lookups(store: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Median seconds of each store read (``current_offers``) and the offers it returns."""
    from whichgpu.catalog.prices import PriceStore, current_offers

    st = PriceStore(store)
    out = {}
    for name, kw in LOOKUPS.items():
        current_offers(store=st, **kw)  # warm: the first read seeds an empty store
        times, n = [], 0
        for _ in range(repeat):
            t = time.perf_counter()
            n = len(current_offers(store=st, **kw).offers)
            times.append(time.perf_counter() - t)
        out[name] = {"s": statistics.median(times), "offers": n}
    return out


def measure(store: Path, home: Path, repeat: int) -> dict[str, dict[str, float]]:
    out = {}
    for name, args in COMMANDS.items():
        run_once(args, store, home)  # warm: seeds the store, compiles the .pyc files
        runs = [run_once(args, store, home) for _ in range(repeat)]
        out[name] = {"wall_s": statistics.median(r[0] for r in runs),
                     "wall_s_min": min(r[0] for r in runs),
                     "wall_s_max": max(r[0] for r in runs),
                     "peak_rss_mb": max(r[1] for r in runs)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20000,200000",
                    help="Current offers per store, comma-separated (default 20000,200000).")
    ap.add_argument("--periods", type=int, default=10, help="Price periods per store (10).")
    ap.add_argument("--repeat", type=int, default=3, help="Runs per command (median shown).")
    ap.add_argument("--dir", help="Where to build the stores (default: a temporary folder).")
    ap.add_argument("--out", help="Also write the figures to this JSON file.")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    folder = Path(args.dir or tempfile.mkdtemp(prefix="whichgpu-bench-store-"))
    folder.mkdir(parents=True, exist_ok=True)
    home = folder / "home"
    results: dict[str, dict] = {}
    stores = [("shipped only", folder / "shipped.sqlite", 0)]
    stores += [(f"{n:,} offers", folder / f"store-{n}.sqlite", n) for n in sizes]
    for label, path, n in stores:
        if n and not path.exists():
            t = time.perf_counter()
            synthetic_store.build(path, n, count=args.periods)
            print(f"built {label} x {args.periods} periods in {time.perf_counter() - t:.1f} s "
                  f"({path.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)
        results[label] = {"offers": n, "periods": args.periods if n else 0,
                          "commands": measure(path, home, args.repeat),
                          "lookups": lookups(path, max(args.repeat, 5))}
    cpu = os.cpu_count()
    load = os.getloadavg()[0]
    print(f"Priced commands, best and median of {args.repeat} runs each (a new process per "
          f"run, offline); {cpu} CPUs, load {load:.1f}; target < {TARGET_S} s on 20k offers")
    head = f"{'store':<16}" + "".join(f"{c:>22}" for c in COMMANDS)
    print(head)
    for label, r in results.items():
        cells = [f"{m['wall_s_min']:.2f}/{m['wall_s']:.2f} s {m['peak_rss_mb']:.0f} MB"
                 for m in r["commands"].values()]
        print(f"{label:<16}" + "".join(f"{c:>22}" for c in cells))
    print("Store reads behind them (in-process, median; offers returned):")
    print(f"{'store':<16}" + "".join(f"{c:>36}" for c in LOOKUPS))
    for label, r in results.items():
        cells = [f"{m['s'] * 1000:.0f} ms ({m['offers']:,} offers)" for m in r["lookups"].values()]
        print(f"{label:<16}" + "".join(f"{c:>36}" for c in cells))
    for r in results.values():
        if r["offers"] == 20000:
            worst = max(m["wall_s_min"] for m in r["commands"].values())
            print(f"20k offers: slowest command, best of {args.repeat}: {worst:.2f} s "
                  f"({'meets' if worst < TARGET_S else 'MISSES'} the {TARGET_S} s target; the "
                  "median shows how much other processes slowed the runs)")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"cpus": cpu, "load": load, "repeat": args.repeat,
                                              "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
