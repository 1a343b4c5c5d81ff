"""How long the answers take (not a test): in-process warm medians for a fixed question set,
and the CPU seconds of whole CLI processes.

    python benchmarks/recommend_time.py              # both parts
    python benchmarks/recommend_time.py --runs 5 --cli-runs 3
    python benchmarks/recommend_time.py --no-cli     # in-process only
    python benchmarks/recommend_time.py --cli-only   # CLI processes only
    python benchmarks/recommend_time.py --calls      # and each answer's Python calls
    python benchmarks/recommend_time.py --cli-split  # CLI recommend questions by phase
    python benchmarks/recommend_time.py --no-cli --other-amount   # and another amount each run

Each in-process row also says how much of the CPU time the garbage collector took (mean
per run; a full collection costs tens of ms once many objects are alive, see GcClock).

``--other-amount`` also asks each recommendation again with a new amount of work on every run
(10M tokens -> 10,137,000, 10,274,000 ...; users + 1, + 2 ...): what a question nobody asked
before costs when only its amount is new, as on the web where people try amounts. The
amount-free work (sizes, speeds, a request rate's layouts, memory changes) is kept by value
across answers (advise/evaluate.py, advise/serving.py, estimate/memory/changes.py), so such
a question only reprices; a new model or setting still works everything out.

The questions are tests/answer_set.py's (every task family and amount of work over the whole
catalog, market and shipped prices, memory and speed), the set whose answers
tests/answers/test_answers_identical.py keeps identical. In-process: each question once to warm the
shared caches (catalog, presets, constants, offers), then the median of ``--runs`` runs, wall
and CPU, of what a REST answer costs: the answer, its JSON and the JSON text (not the
normalisation the fixture applies before comparing: a JSON round trip and the removal of
the store's path and dates, up to a quarter of the time of a large answer). CLI:
``whichgpu --help``, a ``memory`` question and the issue's ``recommend``
questions as fresh processes run the way the ``whichgpu`` script runs them (``main()``, so
with cli/process.py's start and end), the median and the least of their user + system CPU
seconds (load on a shared machine inflates CPU seconds much less than wall time). Targets
(issue 27): every question <= 100 ms warm (serving at a rate <= 200 ms); CLI --help
<= 0.25 s, memory <= 0.35 s, recommend <= 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from answer_set import QUESTIONS, environment, request  # noqa: E402


def answer(command: str, fields: dict) -> str:
    """One question's answer as a REST response carries it: the JSON text."""
    import whichgpu.answers as answers

    return json.dumps(getattr(answers, command)(request(command, fields)).to_json())

CLI = {
    "--help": ["--help"],
    "memory 70b q4_k_m 8k": ["memory", "llama-3.1-70b", "--quant", "q4_k_m", "--context", "8k"],
    "recommend 8b 10M tokens": ["recommend", "llama-3.1-8b", "--tokens", "10M"],
    "recommend flux 1000 images": ["recommend", "flux.1-dev", "--task", "image",
                                   "--images", "1000"],
    "recommend 70b 50 users": ["recommend", "llama-3.3-70b", "--users", "50",
                               "--tokens-per-s-each", "20"],
    "recommend 8b 20 req/s": ["recommend", "llama-3.1-8b", "--engine", "vllm",
                              "--requests-per-s", "20", "--prompt-tokens", "1000",
                              "--output-tokens", "200"],
    "recommend 7b lora": ["recommend", "llama-2-7b", "--task", "lora", "--context", "512",
                          "--steps", "2000"],
    "recommend 70b pretrain": ["recommend", "llama-3.1-70b", "--task", "pretrain",
                               "--train-tokens", "2B"],
    "recommend wan video": ["recommend", "wan-2.2-5b", "--task", "video", "--videos", "10"],
}
TARGET_MS = {"8b-rate-20": 200.0}  # serving at a request rate; the others 100 ms


def python_calls(command: str, fields: dict) -> int:
    """Python function calls of one warm answer: a figure load on a shared machine does not
    move (CPU seconds move with the other processes' use of the caches and the clock)."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    answer(command, fields)
    profile.disable()
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


class GcClock:
    """CPU seconds the cyclic garbage collector spends, by generation (gc.callbacks): a full
    (generation 2) collection walks every tracked object, catalog and memos included, and
    lands on whichever answer happens to allocate when it is due."""

    def __init__(self) -> None:
        import gc

        self.spent = [0.0, 0.0, 0.0]
        self._start = 0.0
        gc.callbacks.append(self._tick)

    def _tick(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.spent[info["generation"]] += time.process_time() - self._start

    def total(self) -> float:
        return sum(self.spent)


def in_process(runs: int, calls: bool) -> None:
    print(f"in process, warm: median of {runs} runs (wall ms / CPU ms / of which the garbage "
          "collector, mean ms per run" + (" / Python calls" if calls else "") + ")")
    clock = GcClock()
    for name, (command, fields) in QUESTIONS.items():
        answer(command, fields)  # warm
        wall, cpu = [], []
        gc_before = clock.total()
        for _ in range(runs):
            t0, c0 = time.perf_counter(), time.process_time()
            answer(command, fields)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        gc_ms = (clock.total() - gc_before) / runs * 1e3
        target = TARGET_MS.get(name, 100.0) if command == "recommend" else 100.0
        w, c = statistics.median(wall) * 1e3, statistics.median(cpu) * 1e3
        n = f" {python_calls(command, fields):>10,}" if calls else ""
        print(f"  {name:24s} {w:8.0f} {c:8.0f} {gc_ms:6.0f}{n}   "
              f"{'ok' if c <= target else 'over'} (target {target:.0f} ms)")
    full = clock.spent[2] * 1e3
    print(f"  garbage collector: {clock.total() * 1e3:.0f} ms in all, {full:.0f} ms of it in "
          "full (generation 2) collections")


#: the request fields that hold a question's amount of work (one per question of the set)
AMOUNT_FIELDS = ("tokens", "images", "videos", "steps", "train_tokens", "tokens_per_day",
                 "requests_per_s", "users")


def other_amount(fields: dict, run: int) -> dict | None:
    """The same question with another amount of work (1.37 % more per run: 10M tokens ->
    10,137,000, 1000 images -> 1013; users + run + 1), or None when it has no amount."""
    for name in AMOUNT_FIELDS:
        if name in fields:
            text = str(fields[name])
            scale = {"k": 1e3, "M": 1e6, "B": 1e9}.get(text[-1], 1.0)
            base = float(text[:-1]) * scale if scale != 1.0 else float(text)
            value = (int(base) + run + 1 if name == "users"
                     else str(int(base * (1 + 0.0137 * (run + 1)))))
            return {**fields, name: value}
    return None


def other_amounts(runs: int, calls: bool) -> None:
    """What a question nobody asked before costs when only its amount of work is new (the web's
    all-different load varies the amount): each question warmed once, then asked ``runs``
    times, each with another amount (advise/evaluate.py keeps the amount-free work by value)."""
    print(f"in process, the same question with another amount each time: median of {runs} "
          "runs (wall ms / CPU ms" + (" / Python calls of one more" if calls else "") + ")")
    for name, (command, fields) in QUESTIONS.items():
        if command != "recommend" or other_amount(fields, 0) is None:
            continue
        answer(command, fields)  # warm
        wall, cpu = [], []
        for run in range(runs):
            changed = other_amount(fields, run)
            assert changed is not None
            t0, c0 = time.perf_counter(), time.process_time()
            answer(command, changed)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        target = TARGET_MS.get(name, 100.0)
        w, c = statistics.median(wall) * 1e3, statistics.median(cpu) * 1e3
        n = f" {python_calls(command, other_amount(fields, runs) or fields):>10,}" if calls \
            else ""
        print(f"  {name:24s} {w:8.0f} {c:8.0f}{n}   "
              f"{'ok' if c <= target else 'over'} (target {target:.0f} ms)")


def cli_cpu(args: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "from whichgpu.cli import main; main()", *args],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _seed(env: dict[str, str]) -> None:
    """Seed the price store (``whichgpu gpus``) before the timed processes."""
    subprocess.run([sys.executable, "-c", "from whichgpu.cli import main; main()", "gpus"],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)


def cli(runs: int, home: str) -> None:
    env = {**os.environ, **environment(home)}
    # as an installed command runs: with its bytecode cache (PYTHONDONTWRITEBYTECODE in a
    # shell's environment would make every run compile the modules edited since the last one)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    _seed(env)
    print(f"CLI processes: CPU seconds (user + system) of {runs} runs, median and least, "
          "after one untimed run (bytecode and parse caches written, as after the first use); "
          "the least is what load on a shared machine inflates least")
    for name, args in CLI.items():
        cli_cpu(args, env)  # untimed
        times = [cli_cpu(args, env) for _ in range(runs)]
        med = statistics.median(times)
        target = 0.25 if name == "--help" else 0.35 if name.startswith("memory") else 0.5
        print(f"  {name:28s} {med:6.2f} s  (least {min(times):4.2f})   "
              f"{'ok' if med <= target else 'over'} (target {target:.2f} s)")


#: Run in a fresh process before ``whichgpu.cli.main()``: charges each CPU second to the
#: phase under way, written as JSON to the file named by $WHICHGPU_BENCH_SPLIT. Imports are
#: timed at the import system's entry (``_frozen_importlib._find_and_load``, which the import
#: statement calls), data files at the parse cache's (``parse_cache.cached_parse`` and
#: ``cached_toml``: TOML catalog, presets index, constants, market feeds), the ranking at
#: ``advise.recommend._recommend_paced`` and its explanation at ``advise.recommend.explain``
#: (each without the imports and data loading inside it); "rest" is the interpreter's own
#: start, parsing the command line, the price store and the printing.
SPLIT = r"""
import json, os, sys, time
import _frozen_importlib as boot
clock = time.process_time
spent = {"imports": 0.0, "data": 0.0, "ranking": 0.0, "explain": 0.0, "rest": clock()}
now = ["rest", clock()]

def switch(phase):
    t = clock()
    spent[now[0]] += t - now[1]
    before, now[0], now[1] = now[0], phase, t
    return before

def timed(f, phase):
    def run(*args, **kwargs):
        if now[0] in ("imports", "data") or now[0] == phase:
            return f(*args, **kwargs)
        before = switch(phase)
        try:
            return f(*args, **kwargs)
        finally:
            switch(before)
    return run

boot._find_and_load = timed(boot._find_and_load, "imports")
import whichgpu.parse_cache as pc
pc.cached_parse = timed(pc.cached_parse, "data")
pc.cached_toml = timed(pc.cached_toml, "data")
import whichgpu.advise.recommend as rec
rec._recommend_paced = timed(rec._recommend_paced, "ranking")
rec.explain = timed(rec.explain, "explain")

def dump():
    switch("rest")
    with open(os.environ["WHICHGPU_BENCH_SPLIT"], "w") as out:
        json.dump(spent, out)

import atexit
atexit.register(dump)
from whichgpu.cli import main
main()
"""


def cli_split(runs: int, home: str) -> None:
    """Each CLI recommend question's CPU seconds by phase (SPLIT), median of ``runs`` fresh
    processes after one untimed run."""
    env = {**os.environ, **environment(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    _seed(env)
    phases = ("imports", "data", "ranking", "explain", "rest")
    print(f"CLI processes by phase: CPU seconds, median of {runs} runs of each phase (the "
          "whole is the median of the sums)")
    print(f"  {'':28s} {'whole':>6s} " + " ".join(f"{p:>8s}" for p in phases))
    with tempfile.TemporaryDirectory() as out_dir:
        out = os.path.join(out_dir, "split.json")
        for name, args in CLI.items():
            if args[0] != "recommend":
                continue
            got = []
            for i in range(runs + 1):
                subprocess.run([sys.executable, "-c", SPLIT, *args],
                               env={**env, "WHICHGPU_BENCH_SPLIT": out},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True)
                if i:  # the first run writes the bytecode and parse caches
                    got.append(json.loads(Path(out).read_text()))
            whole = statistics.median(sum(g.values()) for g in got)
            print(f"  {name:28s} {whole:6.2f} " + " ".join(
                f"{statistics.median(g[p] for g in got):8.2f}" for p in phases))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cli-runs", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true")
    parser.add_argument("--cli-only", action="store_true",
                        help="only the CLI processes' CPU seconds (no in-process answers)")
    parser.add_argument("--cli-split", action="store_true",
                        help="only the CLI recommend questions' CPU seconds by phase: "
                             "imports, data files, ranking, explanation and the rest")
    parser.add_argument("--calls", action="store_true",
                        help="also count each warm answer's Python calls (one profiled run)")
    parser.add_argument("--other-amount", action="store_true",
                        help="also time each question asked again with another amount of "
                             "work (a new question whose amount-free work is kept)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as home:
        os.environ.update(environment(home))
        if not args.cli_only and not args.cli_split:
            in_process(args.runs, args.calls)
            if args.other_amount:
                other_amounts(args.runs, args.calls)
        if args.cli_split:
            cli_split(args.cli_runs, home)
        elif not args.no_cli:
            cli(args.cli_runs, home)


if __name__ == "__main__":
    main()
